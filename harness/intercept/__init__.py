"""Interception of an unchanged agent's calls into the world.

Import from this package, never from its private modules.

Example::

    files = AgentFiles(CrashDisk())
    with files.active(generation=1):
        agent_main("summarise the inbox")     # its open/os/pathlib go to the crash disk
"""

from harness.intercept._files import REAL_FS_PACKAGES, AgentFiles

__all__ = ["REAL_FS_PACKAGES", "AgentFiles"]
