"""Keep secrets out of what the harness writes and prints: values under secret-looking keys.

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
(comma-separated, such as ``HARNESS_SECRET_KEYS=session_id,pin``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import lru_cache

REDACTED = "[redacted]"
#: Words that make a key secret when one is a whole part of it (``access_token`` and
#: ``X-Api-Key`` are secret, ``max_tokens`` is not); case and ``-``/``_`` are ignored.
SECRET_KEY_WORDS: tuple[str, ...] = (
    "api_key", "apikey", "password", "passwd", "token", "authorization", "secret", "cookie",
    "private_key", "credential",
)
_ENV_WORDS = "HARNESS_SECRET_KEYS"


def secret_words() -> tuple[str, ...]:
    """:data:`SECRET_KEY_WORDS` and the words of ``HARNESS_SECRET_KEYS``."""
    extra = os.environ.get(_ENV_WORDS, "")
    return SECRET_KEY_WORDS + tuple(w.strip().lower() for w in extra.split(",") if w.strip())


def is_secret_key(key: object, words: Iterable[str] | None = None) -> bool:
    """Whether ``key`` names a secret.

    >>> is_secret_key("OPENAI_API_KEY"), is_secret_key("apiKey"), is_secret_key("max_tokens")
    (True, True, False)
    """
    chosen = secret_words() if words is None else tuple(words)
    return re.fullmatch(_key_pattern(chosen), str(key), re.IGNORECASE) is not None


def _key_pattern(words: tuple[str, ...]) -> str:
    alternatives = "|".join(re.escape(w).replace("_", "[_-]?") for w in words)
    part = "[A-Za-z0-9]+"
    return rf"(?:{part}[_-])*(?:{alternatives})(?:[_-]{part})*"


def redact(value: object) -> object:
    """``value`` with every value under a secret key replaced, at any depth."""
    if isinstance(value, dict):
        return {k: REDACTED if is_secret_key(k) else redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    return value


@lru_cache(maxsize=8)
def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(
        rf"""(?P<key>(?<![\w-]){_key_pattern(words)}(?![\w-])["']?\s*[:=]\s*)
             (?:(?P<quote>["'])(?P<quoted>.*?)(?P=quote)
              |(?P<scheme>(?:bearer|basic|token)\s+)?(?P<bare>[^\s,;}}\])"']+))""",
        re.IGNORECASE | re.VERBOSE)


def redact_text(text: str) -> str:
    """``text`` with the value after each secret-looking ``key: value`` or ``key=value``."""
    return _pattern(secret_words()).sub(_replacement, text)


def _replacement(match: re.Match[str]) -> str:
    if match.group("quote"):
        quote = match.group("quote")
        return f"{match.group('key')}{quote}{REDACTED}{quote}"
    return f"{match.group('key')}{match.group('scheme') or ''}{REDACTED}"
