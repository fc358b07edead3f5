"""Keep secrets out of what the harness writes and prints: values under secret-looking keys,
and every secret value of its environment or of a scenario, bare or not.

Seed 000 redacts credentials before anything durable is written. The harness does
the same for its results, reports and failure text: a value whose key looks like a
secret (``api_key``, ``password``, ``token``, ``authorization``, ``secret`` …) is
replaced by :data:`REDACTED`, in mappings and in text such as ``api_key: "sk-1"``
or ``Authorization: Bearer sk-1``::

    >>> redact_text("to=cfo api_key='sk-123' Authorization: Bearer sk-456")
    "to=cfo api_key='[redacted]' Authorization: Bearer [redacted]"
    >>> redact({"to": "cfo", "headers": {"X-Api-Key": "sk-1"}})
    {'to': 'cfo', 'headers': {'X-Api-Key': '[redacted]'}}

More key words come from the ``HARNESS_SECRET_KEYS`` environment variable
(comma-separated, such as ``HARNESS_SECRET_KEYS=session_id,pin``). A scenario adds
the argument names it marks secret (``tools: {login: {secret: [pin]}}``): their keys
are redacted like the words' (``marked``), and their values wherever they appear
(:func:`redact_values`)::

    >>> redact({"pin": "4711", "to": "x"}, marked={"pin"})
    {'pin': '[redacted]', 'to': 'x'}
    >>> redact_values("login failed for 4711-9", {"4711-9"})
    'login failed for [redacted]'

A secret need not follow its key: an agent may print or raise the bare value. Every
value of the harness's environment under a secret-looking name
(:func:`is_secret_name`: ``AWS_SECRET_ACCESS_KEY``, ``GITHUB_TOKEN``, ``DB_PASSWORD``,
every ``AWS_*`` …) of :data:`MIN_HOST_SECRET_LENGTH` characters or more is one of
:func:`known_secrets`, with the values a scenario hands its tools; :func:`redact_text`
replaces each of them wherever it appears, bare or not::

    >>> import os; os.environ["CANARY_TOKEN"] = "tok-0123456789"
    >>> redact_text("the agent said tok-0123456789")
    'the agent said [redacted]'
    >>> del os.environ["CANARY_TOKEN"]
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any, Final

from harness._environment import host_environment

REDACTED = "[redacted]"
#: Words that make a key secret when one is a whole part of it (``access_token`` and
#: ``X-Api-Key`` are secret, ``max_tokens`` is not); case and ``-``/``_`` are ignored.
SECRET_KEY_WORDS: tuple[str, ...] = (
    "api_key", "apikey", "password", "passwd", "token", "authorization", "secret", "cookie",
    "private_key", "credential",
)
_ENV_WORDS = "HARNESS_SECRET_KEYS"
#: Shorter values are neither searched for nor replaced: "1" is found everywhere.
MIN_SECRET_LENGTH = 4
#: The same for the values of the harness's environment, which no scenario chose: a
#: short one (``AWS_REGION=eu-1``) is more likely a setting than a credential.
MIN_HOST_SECRET_LENGTH = 8
#: Parts of an environment variable's name (split at ``_``) that make it a secret.
SECRET_NAME_PARTS: Final = frozenset({
    "KEY", "KEYS", "APIKEY", "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD",
    "PASSWORDS", "PASSWD", "PASS", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS", "CREDS",
    "AUTH", "COOKIE", "SESSION", "PRIVATE", "SIGNATURE", "DSN",
})
#: Cloud providers whose every variable is taken for a secret (a region included).
SECRET_NAME_PREFIXES: Final = ("AWS_", "AZURE_", "GCP_")
#: Names that match the rules above and hold the harness's settings, not secrets.
_NOT_SECRET_NAMES: Final = frozenset({"HARNESS_SECRET_KEYS", "HARNESS_PASS_ENV"})


def secret_words() -> tuple[str, ...]:
    """:data:`SECRET_KEY_WORDS` and the words of ``HARNESS_SECRET_KEYS``."""
    return _words_with(host_environment().get(_ENV_WORDS, ""))


# Asked for every key and every line written out: the list is built once per setting.
@lru_cache(maxsize=8)
def _words_with(extra: str) -> tuple[str, ...]:
    return SECRET_KEY_WORDS + tuple(w.strip().lower() for w in extra.split(",") if w.strip())


def is_secret_key(key: object, words: Iterable[str] | None = None) -> bool:
    """Whether ``key`` names a secret.

    >>> is_secret_key("OPENAI_API_KEY"), is_secret_key("apiKey"), is_secret_key("max_tokens")
    (True, True, False)
    """
    chosen = secret_words() if words is None else tuple(words)
    return _is_secret(str(key), chosen)


# Agents log every call's arguments through here: a key is judged once per word list.
@lru_cache(maxsize=4096)
def _is_secret(key: str, words: tuple[str, ...]) -> bool:
    return _key_regex(words).fullmatch(key) is not None


@lru_cache(maxsize=8)
def _key_regex(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(_key_pattern(words), re.IGNORECASE)


def _key_pattern(words: tuple[str, ...]) -> str:
    alternatives = "|".join(re.escape(w).replace("_", "[_-]?") for w in words)
    part = "[A-Za-z0-9]+"
    return rf"(?:{part}[_-])*(?:{alternatives})(?:[_-]{part})*"


def redact(value: object, marked: Collection[str] = ()) -> object:
    """``value`` with every value under a secret or ``marked`` key replaced, at any depth."""
    if isinstance(value, dict):
        return {k: REDACTED if k in marked or is_secret_key(k) else redact(v, marked)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(item, marked) for item in value]
    return value


def secret_leaves(value: object, marked: Collection[str] = (),
                  key: str = "") -> Iterator[tuple[str, str]]:
    """``(key, text)`` of every string under a secret or ``marked`` key, at any depth.

    The key is the nearest secret one above the string; strings shorter than
    :data:`MIN_SECRET_LENGTH` are left out.

    >>> list(secret_leaves({"to": "cfo", "auth": {"password": "hunter2"}, "pin": "12"}))
    [('password', 'hunter2')]
    """
    # The word list is read from the environment once per walk, not once per key.
    return _secret_leaves(value, marked, key, secret_words())


def _secret_leaves(value: object, marked: Collection[str], key: str,
                   words: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            secret = str(k) in marked or _is_secret(str(k), words)
            yield from _secret_leaves(v, marked, str(k) if secret else key, words)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _secret_leaves(item, marked, key, words)
    elif key and isinstance(value, str) and len(value) >= MIN_SECRET_LENGTH:
        yield key, value


def value_forms(value: str) -> tuple[str, ...]:
    r"""How ``value`` reads in text: as it is, and escaped inside a JSON string.

    >>> value_forms('pé"w')
    ('pé"w', 'pé\\"w', 'p\\u00e9\\"w')
    """
    forms = [value]
    for ascii_only in (False, True):
        escaped = json.dumps(value, ensure_ascii=ascii_only)[1:-1]
        if escaped not in forms:
            forms.append(escaped)
    return tuple(forms)


def redact_values(text: str, values: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret value replaced (longest first)."""
    pattern = _values_pattern(frozenset(values))
    return text if pattern is None else pattern.sub(REDACTED, text)


# Asked for every line written out, with the same few values: one pattern per set.
@lru_cache(maxsize=64)
def _values_pattern(values: frozenset[str]) -> re.Pattern[str] | None:
    forms = {f for v in values if len(v) >= MIN_SECRET_LENGTH for f in value_forms(v)}
    if not forms:
        return None
    # Longest first: a value that contains another is replaced whole.
    return re.compile("|".join(re.escape(f) for f in sorted(forms, key=lambda f: (-len(f), f))))


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name looks like a secret's.

    >>> [is_secret_name(n) for n in ("AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "AWS_REGION")]
    [True, True, True]
    >>> [is_secret_name(n) for n in ("TOKENIZERS_PARALLELISM", "PATH", "PYTHONPATH")]
    [False, False, False]
    """
    upper = name.upper()
    if upper in _NOT_SECRET_NAMES:
        return False
    return upper.startswith(SECRET_NAME_PREFIXES) or any(
        part in SECRET_NAME_PARTS for part in re.split(r"[_\W]+", upper))


def host_secrets() -> frozenset[str]:
    """The values of the harness's environment under secret-looking names
    (:func:`is_secret_name`), those of :data:`MIN_HOST_SECRET_LENGTH` characters or more."""
    return _host_secrets(_environment_key(host_environment()))


def forget_host_secrets() -> None:
    """Drop every value remembered from the harness's environment (a guest process's first
    step, :func:`harness._environment.become_guest`): the caches below hold them."""
    for cached in (_host_secrets, _values_pattern, _words_with):
        cached.cache_clear()


def _environment_key(environ: Mapping[str, str]) -> tuple[tuple[Any, Any], ...]:
    # os.environ keeps its items encoded in ``_data``: copying those is a twentieth of the
    # cost of decoding every one, and this runs for every line the harness writes out.
    data = getattr(environ, "_data", environ)
    return tuple(data.items())


@lru_cache(maxsize=8)
def _host_secrets(items: tuple[tuple[Any, Any], ...]) -> frozenset[str]:
    found = set()
    for raw_name, raw_value in items:
        name, value = _text(raw_name), _text(raw_value)
        if len(value) >= MIN_HOST_SECRET_LENGTH and is_secret_name(name):
            found.add(value)
    return frozenset(found)


def _text(value: object) -> str:
    return os.fsdecode(value) if isinstance(value, bytes) else str(value)


def known_secrets(values: Iterable[str] = ()) -> frozenset[str]:
    """Every secret value the harness keeps out of what it writes and prints: those of
    its environment (:func:`host_secrets`) and ``values`` (a scenario's, a case's)."""
    host = host_secrets()
    extra = frozenset(values)
    return host | extra if extra else host


@lru_cache(maxsize=8)
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(
        rf"""(?P<key>(?<![\w-]){_key_pattern(words)}(?![\w-])["']?\s*[:=]\s*)
             (?:(?P<quote>["'])(?P<quoted>.*?)(?P=quote)
              |(?P<scheme>(?:bearer|basic|token)\s+)?(?P<bare>[^\s,;{{}}\[\])"']+))""",
        re.IGNORECASE | re.VERBOSE)


def redact_text(text: str, marked: Iterable[str] = (), values: Iterable[str] = ()) -> str:
    """``text`` with the value after each secret-looking or ``marked`` ``key: value`` or
    ``key=value`` replaced.

    A value that opens a list or a mapping is not one secret but a structure, such as a
    scenario's ``secret: [pin]``; it stays readable.

    >>> redact_text("mail: {kind: send, secret: [pin]}, token=abc")
    'mail: {kind: send, secret: [pin]}, token=[redacted]'

    Then every value of :func:`known_secrets` (``values`` among them), wherever it is.
    """
    text = _pattern(secret_words() + tuple(marked)).sub(_replacement, text)
    return redact_values(text, known_secrets(values))


def _replacement(match: re.Match[str]) -> str:
    if match.group("quote"):
        quote = match.group("quote")
        return f"{match.group('key')}{quote}{REDACTED}{quote}"
    return f"{match.group('key')}{match.group('scheme') or ''}{REDACTED}"
