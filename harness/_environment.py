"""The environment an agent sees during a case: an allow-list, never the harness's own.

The machine running the suite holds credentials (``AWS_SECRET_ACCESS_KEY``, a real
``OPENAI_API_KEY``, CI tokens) that the code under test must not read. While an agent
runs, in every form (a plain ``main``, a factory over the ports, a process started by
``--exec``), ``os.environ`` holds only

- what a program needs to start and import its libraries (:data:`AGENT_NAMES`, and
  the names that begin with one of :data:`AGENT_PREFIXES` unless they look secret):
  ``PATH``, ``HOME``, the locale, ``TZ``, the temporary folder, ``PYTHONPATH``, the
  virtual environment, the certificate bundles and the model caches the harness reads
  through (:mod:`harness.intercept._files`);
- the fake providers' base URLs and keys (``harness.intercept.PROVIDER_ENVIRONMENT``);
- the names listed in ``HARNESS_PASS_ENV`` (comma-separated; ``harness run --pass-env
  NAME`` adds to it), with the harness's values.

Nothing else: the harness's own environment is put back after the case. Code of the
harness that runs inside a case (a tool's child process, redaction) reads
:func:`host_environment`, the harness's environment whichever one the agent sees::

    with agent_environ(PROVIDER_ENVIRONMENT):
        os.environ.get("AWS_SECRET_ACCESS_KEY")     # None
        host_environment()["AWS_SECRET_ACCESS_KEY"]  # the harness's value

A process forked to run agent code (a case's worker, the contained planning run) first
calls :func:`become_guest`: from then on it holds none of the harness's environment but
the allow-list and the values its tools' child processes are given (``env:`` of a
subprocess tool), not in ``os.environ``, not in ``/proc/self/environ``, not here.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

from harness._errors import ConfigError

#: Variables an agent's process needs to run and import its libraries; their values are
#: paths and settings, not credentials. Proxies are left out on purpose: an in-process
#: client told of one would send its requests past the fake providers.
AGENT_NAMES: Final = frozenset({
    # the process and its user
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLUMNS", "LINES", "NO_COLOR",
    "TZ", "TMPDIR", "TMP", "TEMP", "LANG", "LANGUAGE", "LD_LIBRARY_PATH",
    # the interpreter and the environment the agent's packages are installed in
    "VIRTUAL_ENV", "CONDA_PREFIX", "NODE_PATH",
    # certificate bundles a client reads when it builds its SSL context
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    # model and tokenizer caches, read through from the real disk inside a case
    "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE", "TRANSFORMERS_CACHE",
    "TRANSFORMERS_OFFLINE", "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "TORCH_HOME",
    "SENTENCE_TRANSFORMERS_HOME",
})
#: Families of settings passed whole (the locale, the interpreter's own), except a name
#: among them that looks like a secret (:func:`harness._redact.is_secret_name`).
AGENT_PREFIXES: Final = ("LC_", "PYTHON")
#: Comma-separated names the agent gets besides the allow-list, with the harness's values.
PASS_ENV_VARIABLE: Final = "HARNESS_PASS_ENV"
NAME_PATTERN: Final = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME = re.compile(NAME_PATTERN)

# The harness's own environments, outermost first, while an agent sees another one.
_HOSTS: list[dict[str, str]] = []
# In a guest process (become_guest): what it kept of the harness's environment.
_GUEST_HOST: list[dict[str, str]] = []
#: Settings of the harness a guest keeps for its own code (redaction), never the agent's.
_HARNESS_SETTINGS: Final = ("HARNESS_SECRET_KEYS", PASS_ENV_VARIABLE)


def host_environment() -> Mapping[str, str]:
    """The harness's environment: ``os.environ``, or the one a case put aside for its agent;
    in a guest process, what it kept of it (:func:`become_guest`)."""
    if _GUEST_HOST:
        return _GUEST_HOST[0]
    return _HOSTS[0] if _HOSTS else os.environ


def passed_names(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The names ``environ``'s ``HARNESS_PASS_ENV`` lists, each checked (:func:`check_name`).

    >>> passed_names({"HARNESS_PASS_ENV": "A, B_2"})
    ('A', 'B_2')
    """
    text = environ.get(PASS_ENV_VARIABLE, "")
    return tuple(check_name(word.strip(), PASS_ENV_VARIABLE)
                 for word in text.split(",") if word.strip())


def check_name(name: str, where: str = "--pass-env") -> str:
    """``name`` if it can name an environment variable; else a :class:`ConfigError`.

    >>> check_name("MY_SETTING")
    'MY_SETTING'
    """
    if _NAME.fullmatch(name) is None:
        raise ConfigError(where, name, "the name of an environment variable "
                          "(letters, digits and '_', not starting with a digit)",
                          "List names only, such as --pass-env MY_SETTING: the value is "
                          "the harness's own")
    return name


@contextmanager
def passing(names: Iterable[str]) -> Iterator[None]:
    """``HARNESS_PASS_ENV`` checked, with ``names`` (``--pass-env``) added while the block runs.

    Set in the environment, not kept in a variable: the workers that run the cases
    inherit it however they are started.
    """
    listed = passed_names(os.environ)
    wanted = tuple(dict.fromkeys([*listed, *(check_name(name) for name in names)]))
    with environment_variable(PASS_ENV_VARIABLE, ",".join(wanted) if wanted != listed else None):
        yield


@contextmanager
def hiding(folder: str) -> Iterator[None]:
    """Keep ``folder`` (the run's results) out of every case's start folder while the block
    runs (:mod:`harness.intercept._start_folder`)."""
    from harness.intercept import HIDDEN_VARIABLE, hidden_folders

    listed = os.pathsep.join([*hidden_folders(), os.path.abspath(folder)])
    with environment_variable(HIDDEN_VARIABLE, listed):
        yield


@contextmanager
def environment_variable(name: str, value: str | None) -> Iterator[None]:
    """``name`` set to ``value`` in the harness's environment while the block runs (None:
    left as it is), then as it was: a run's setting its workers inherit."""
    before = os.environ.get(name)
    if value is not None:
        os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def allowed_environment(provider: Mapping[str, str]) -> dict[str, str]:
    """The whole environment an agent gets: the allow-list's variables of the harness's
    environment, the passed names (``HARNESS_PASS_ENV``), then ``provider`` over them."""
    from harness._redact import is_secret_name

    host = host_environment()
    # Unchecked here, in the middle of a case: a name no variable can have matches none.
    passed = {word.strip() for word in host.get(PASS_ENV_VARIABLE, "").split(",")}
    kept = {name: value for name, value in host.items()
            if name in AGENT_NAMES or name in passed
            or (name.startswith(AGENT_PREFIXES) and not is_secret_name(name))}
    return {**kept, **provider}


@contextmanager
def agent_environ(provider: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` as :func:`allowed_environment` while the block runs, then the harness's.

    The variables are set and unset through ``os.environ``, so a child process the agent
    starts and C code calling ``getenv`` see the same. Inside another such block the
    agent's environment is there already (a plain agent's incarnation within its case):
    nothing changes.
    """
    if _HOSTS:
        yield
        return
    saved = dict(os.environ)
    values = allowed_environment(provider)
    _HOSTS.append(saved)
    _replace(values)
    try:
        yield
    finally:
        _replace(saved)
        _HOSTS.pop()


def _replace(values: Mapping[str, str]) -> None:
    # Only the names that differ: putenv and unsetenv are system calls.
    for name in [name for name in os.environ if name not in values]:
        del os.environ[name]
    for name, value in values.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


def become_guest(tool_names: Iterable[str] = ()) -> None:
    """Make this forked process hold none of the harness's environment but what it needs.

    Called first thing in a process that will run agent code. ``os.environ`` (and the C
    environment under it) becomes :func:`allowed_environment` without the fake providers;
    what harness code in this process reads as :func:`host_environment` is that, the
    harness's settings and the values of ``tool_names`` (the variables subprocess tools
    pass to their children); the environment block the process was started with, which
    ``/proc/self/environ`` shows, keeps only the entries the agent sees anyway, the rest
    overwritten with zeros; and every copy of the harness's secrets (the values it redacts)
    left in the memory the fork shares with the harness is zeroed (:func:`_scrub_memory`).
    """
    from harness import _redact
    from harness.intercept import keep_hidden_folders

    keep_hidden_folders()  # read by the harness's file code, never in the agent's environment
    host = dict(host_environment())
    guest = allowed_environment({})
    kept = {name: host[name] for name in (*tool_names, *_HARNESS_SETTINGS) if name in host}
    hidden = _redact.host_secrets() - {*guest.values(), *kept.values()}
    _HOSTS.clear()
    _GUEST_HOST[:] = [{**guest, **kept}]
    _replace(guest)
    for name, value in os.environ.items():  # every C entry a heap copy, off the start block
        os.putenv(name, value)
    _scrub_start_block(guest)
    with contextlib.suppress(ImportError, AttributeError):
        import posix

        posix.environ.clear()  # the interpreter's copy from its start
        posix.environ.update({os.fsencode(k): os.fsencode(v) for k, v in guest.items()})
    _redact.forget_host_secrets()
    del host
    _scrub_memory(hidden)


def _scrub_memory(values: Iterable[str]) -> int:
    """Zero every copy of ``values`` left in this process's memory; how many there were.

    A fork holds the harness's memory as it was: the decoded and encoded copies of its
    environment, the redaction patterns built from its secrets, and the freed blocks that
    held them, none of which ``os.environ`` reaches. An agent reading its own memory (C,
    ``/proc/self/mem``) would find them. Each value is looked for in every form a process
    keeps text in (UTF-8 and Latin-1 bytes, and the 2- and 4-byte units of wide strings
    and compiled patterns), in the anonymous mappings, the heap and the stack, where
    environments, Python objects and C allocations live: a mapped file holds no copy, and
    reading one past its end would kill the process. Linux only (``/proc/self/maps``, glibc's
    ``memmem``); elsewhere nothing is done.
    """
    forms = {form for value in values for form in _forms(value)}
    needles = [ctypes.create_string_buffer(form, len(form)) for form in forms if len(form) > 1]
    if not needles:
        return 0
    try:
        libc = ctypes.CDLL(None)
        memmem = libc.memmem
    except (OSError, AttributeError):
        return 0
    memmem.restype = ctypes.c_void_p
    memmem.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
    found = [(hit, len(needle)) for low, high in _anonymous_mappings() for needle in needles
             for hit in _hits(memmem, low, high, needle)]
    for address, size in found:  # the needles' own buffers among them
        ctypes.memset(address, 0, size)
    return len(found)


def _forms(value: str) -> Iterator[bytes]:
    """``value`` as a process may hold it: its bytes in the environment, and the storage of a
    Python string of 1, 2 or 4 bytes a character (a compiled pattern's codes are 4 bytes).

    >>> sorted(set(_forms("ab")))
    [b'a\\x00\\x00\\x00b\\x00\\x00\\x00', b'a\\x00b\\x00', b'ab']
    """
    yield os.fsencode(value)
    with contextlib.suppress(UnicodeEncodeError):
        yield value.encode("latin-1")
    for codec in ("utf-16-le", "utf-32-le"):
        yield value.encode(codec, "surrogatepass")


def _hits(memmem: Any, low: int, high: int, needle: ctypes.Array[ctypes.c_char]) -> Iterator[int]:
    """Where ``needle`` starts in ``[low, high)``."""
    size = len(needle)
    at = low
    while at < high:
        hit = memmem(at, high - at, needle, size)
        if not hit:
            return
        yield hit
        at = hit + 1


def _anonymous_mappings() -> list[tuple[int, int]]:
    """The private writable mappings of this process backed by no file: ``[low, high)``."""
    found = []
    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as maps:
            for line in maps:
                fields = line.split()
                named = fields[5] if len(fields) > 5 else ""
                if fields[1] == "rw-p" and (not named or named in ("[heap]", "[stack]")):
                    low, high = (int(part, 16) for part in fields[0].split("-"))
                    found.append((low, high))
    except (OSError, ValueError, IndexError):
        return []
    return found


def _scrub_start_block(guest: Mapping[str, str]) -> None:
    """Zero the entries of the process's start environment block the agent does not see.

    Linux only (``/proc/self/stat`` names the block); elsewhere nothing is done.
    """
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        # env_start and env_end are fields 50 and 51 of proc(5); the split starts at field 3.
        start, end = int(fields[47]), int(fields[48])
    except (OSError, IndexError, ValueError):
        return
    if not 0 < start < end or not _writable(start, end):
        return
    block = ctypes.string_at(start, end - start)
    wanted = {os.fsencode(f"{name}={value}") for name, value in guest.items()}
    offset = 0
    for entry in block.split(b"\0"):
        if entry and entry not in wanted:
            ctypes.memset(start + offset, 0, len(entry))
        offset += len(entry) + 1


def _writable(start: int, end: int) -> bool:
    """Whether ``[start, end)`` lies in one writable mapping of this process: a block moved
    elsewhere by its embedder is left alone rather than written blind."""
    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as maps:
            for line in maps:
                span, perms = line.split()[:2]
                low, high = (int(part, 16) for part in span.split("-"))
                if low <= start and end <= high:
                    return "w" in perms
    except (OSError, ValueError):
        return False
    return False
