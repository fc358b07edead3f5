"""The outside world of a run: fake providers, counting tools, the virtual clock, the disk.

Import from this package, never from its private modules.
"""

from fakes._clock import VirtualClock

__all__ = ["VirtualClock"]
