"""A case worker sealed off by the kernel: the real file system read-only, no network.

The interception in :mod:`harness.intercept` keeps an agent's Python-level file,
socket and process calls in the world. C code does not pass through it: a C
extension, or ``ctypes`` calling libc's ``open`` and ``write``, reached the real
disk. So, where Linux allows it, each worker of ``harness run`` moves into a mount
namespace of its own, in which every real mount is read-only (a write fails with
``EROFS``, "Read-only file system", whatever made it), and into a network
namespace of its own, with no interface up (a connection fails with
``ENETUNREACH``). The worker talks to the harness over pipes it already holds, and
the agent's files and databases live on the crash disk in memory, so nothing of the
case needs the real disk or the network.

A user namespace first (mapping the worker's own user and group, one id each), even
for root: a capability held in a child namespace counts for nothing over the harness,
which lives in the namespace above. With the harness not dumpable while it runs agent
code (:func:`harness.runner._worker_process.adopting`), the kernel then refuses the
agent its parent's ``/proc/<pid>/environ`` and ``mem``, the harness's secrets, even when
the run is root's (whose ``CAP_SYS_PTRACE`` would otherwise open them). A root worker
that stays in the first namespace would keep it. The cost for root: files owned by
another user are to the agent as to that other user's neighbour (world permissions).
Where the kernel refuses, the worker runs unsealed and :func:`seal_worker` says why;
the interception still holds for Python code.

The processes that import and plan an agent, and run ``points`` and ``fuzz``
(:mod:`harness.runner._guest`), are sealed the same way; ``fuzz``'s hands back its repro
and example database's changes, which the harness writes. Where the seal is refused they
take only the user namespace (:func:`leave_host_powers`).
"""

from __future__ import annotations

import ctypes
import os
import tempfile
from typing import Final

from harness.runner._worker_process import PR_SET_DUMPABLE

_CLONE_NEWNS: Final = 0x00020000
_CLONE_NEWUSER: Final = 0x10000000
_CLONE_NEWNET: Final = 0x40000000
_MS_RDONLY: Final = 1
_MS_NOSUID: Final = 2
_MS_NODEV: Final = 4
_MS_NOEXEC: Final = 8
_MS_REMOUNT: Final = 32
_MS_BIND: Final = 4096
_MS_REC: Final = 16384
_MS_PRIVATE: Final = 1 << 18
_MS_NOATIME: Final = 1024
_MS_NODIRATIME: Final = 2048
_MS_RELATIME: Final = 1 << 21

_PR_CAPBSET_DROP: Final = 24
_PR_SET_NO_NEW_PRIVS: Final = 38
_PR_CAP_AMBIENT: Final = 47
_PR_CAP_AMBIENT_CLEAR_ALL: Final = 4
_LINUX_CAPABILITY_VERSION_3: Final = 0x20080522

# Mount options that a remount in a user namespace must keep (the kernel locks them).
_KEPT_OPTIONS: Final = {"nosuid": _MS_NOSUID, "nodev": _MS_NODEV, "noexec": _MS_NOEXEC,
                        "noatime": _MS_NOATIME, "nodiratime": _MS_NODIRATIME,
                        "relatime": _MS_RELATIME}
# Left writable: the kernel's own views, devices (/dev/null) and shared memory.
_LEFT_ALONE: Final = ("/proc", "/sys", "/dev")


def seal_worker() -> str | None:
    """Seal this (forked, single-threaded) worker; ``None`` when sealed, else the reason not."""
    temp = tempfile.gettempdir()  # found now: it is looked for by writing a probe file
    libc = ctypes.CDLL(None, use_errno=True)
    refused = _own_user_namespace(libc, _CLONE_NEWNS | _CLONE_NEWNET)
    if refused is not None:
        return refused
    try:
        _mount(libc, None, "/", _MS_REC | _MS_PRIVATE)
        for point, options in _mounts():
            if point.startswith(_LEFT_ALONE) or "ro" in options:
                continue
            kept = sum(flag for name, flag in _KEPT_OPTIONS.items() if name in options)
            _mount(libc, point, point, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | kept)
    except OSError as error:
        return f"the real file system could not be made read-only ({error})"
    refused = _powerless(libc)
    if refused is not None:
        return refused
    # pyfakefs forgets the cached folder after each incarnation, and tempfile would look
    # for one again by writing a probe file, which every real folder now refuses. The
    # name is all the harness needs: the agent's temporary files are on the crash disk.
    tempfile._get_default_tempdir = lambda: temp  # type: ignore[attr-defined]
    return None


def _powerless(libc: ctypes.CDLL) -> str | None:
    """Give up every capability for good; ``None`` when done, else why not.

    In its own user namespace the worker holds every capability there, enough to mount
    each read-only mount writable again (a C extension calling ``mount``) or to unmount
    what hides. Without them, and with no way back (an empty bounding set, so a program
    it runs gains none; ``no_new_privs``), the seal holds; a new user namespace inside this
    one gets its mounts locked as they are.
    """
    for capability in range(64):  # the kernel refuses numbers past its last: ignored
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    nothing = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable, twice (64 bits)
    if libc.capset(header, nothing) != 0 or libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
        return f"its capabilities could not be dropped ({os.strerror(ctypes.get_errno())})"
    return None


def leave_host_powers() -> str | None:
    """Move this process into a user namespace of its own; ``None`` when done, else why not."""
    return _own_user_namespace(ctypes.CDLL(None, use_errno=True), 0)


def _own_user_namespace(libc: ctypes.CDLL, flags: int) -> str | None:
    """Unshare a user namespace (and ``flags``' namespaces), being oneself inside it."""
    uid, gid = os.getuid(), os.getgid()
    # Dumpable again, as a fork of the harness is not (adopting): the maps below are
    # written through this process's /proc, which is root's while it is not dumpable.
    # This process holds nothing of the harness's environment (become_guest).
    libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    if libc.unshare(flags | _CLONE_NEWUSER) != 0:
        return f"the kernel refused new namespaces ({os.strerror(ctypes.get_errno())})"
    try:
        _map_ids(uid, gid)
    except OSError as error:
        return f"the kernel refused a user namespace's ids ({error})"
    return None


def _map_ids(uid: int, gid: int) -> None:
    """Be oneself inside the new user namespace, so one's own files stay readable."""
    with open("/proc/self/setgroups", "w") as setgroups:
        setgroups.write("deny")
    with open("/proc/self/uid_map", "w") as uids:
        uids.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as gids:
        gids.write(f"{gid} {gid} 1")


def _mounts() -> list[tuple[str, set[str]]]:
    """Every mount point with its per-mount options, from ``/proc/self/mountinfo``."""
    found = []
    with open("/proc/self/mountinfo") as table:
        for line in table:
            fields = line.split()
            point = fields[4].replace("\\040", " ")
            found.append((point, set(fields[5].split(","))))
    return found


def _mount(libc: ctypes.CDLL, source: str | None, target: str, flags: int) -> None:
    encoded = None if source is None else source.encode()
    if libc.mount(encoded, target.encode(), None, flags, None) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno), target)
