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
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Final

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


def host_environment() -> Mapping[str, str]:
    """The harness's environment: ``os.environ``, or the one a case put aside for its agent."""
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
    before = os.environ.get(PASS_ENV_VARIABLE)
    listed = passed_names(os.environ)
    wanted = tuple(dict.fromkeys([*listed, *(check_name(name) for name in names)]))
    if wanted != listed:
        os.environ[PASS_ENV_VARIABLE] = ",".join(wanted)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(PASS_ENV_VARIABLE, None)
        else:
            os.environ[PASS_ENV_VARIABLE] = before


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
