"""The reference agent core: the model of what recovering correctly means.

It touches the world only through the ports in this package; it never imports
the explorer, the checkers or pytest.
"""

from harness.agent._ids import IdSource, rng_stream
from harness.agent._ports import Clock, LoopClock

__all__ = ["Clock", "IdSource", "LoopClock", "rng_stream"]
