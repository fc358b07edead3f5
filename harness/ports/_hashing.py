"""Hashes both sides compute the same way: of JSON values, and of a side effect's identity.

The journal stores :func:`sha256_json` of arguments and results (J3); the fake
tools and the I1 checker key a side effect by :func:`idempotency_key`. One home
keeps the agent core, the fakes and the checkers agreeing byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

# A shared encoder: json.dumps builds a new one per call, and every record uses one.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_json(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON (sorted keys, no spaces).

    >>> sha256_json({"b": 1, "a": 2}) == sha256_json({"a": 2, "b": 1})
    True
    """
    text = _CANONICAL.encode(value)
    return hashlib.sha256(text.encode()).hexdigest()


def idempotency_key(tool: str, arguments: dict[str, Any]) -> str:
    """``arguments["idempotency_key"]`` if given, else a hash of tool and arguments.

    >>> idempotency_key("send", {"idempotency_key": "order-7"})
    'order-7'
    >>> idempotency_key("send", {"a": 1}) == idempotency_key("send", {"a": 1})
    True
    """
    given = arguments.get("idempotency_key")
    if isinstance(given, str):
        return given
    return f"{tool}:{sha256_json(arguments)[:16]}"
