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


def asked_for(asked: Any, ran: Any) -> bool:
    """Whether a tool that ran with ``ran`` did what the model ``asked``.

    Every argument the model sent, with its value, and nothing changed; an argument the
    agent added on top (an ``idempotency_key``, as payment and mail APIs ask for) does
    not make it another call. Arguments that are not objects must be equal.

    >>> asked_for({"to": "a", "body": "hi"}, {"to": "a", "body": "hi", "idempotency_key": "k"})
    True
    >>> asked_for({"to": "a", "body": "hi"}, {"to": "a", "body": "hello"})
    False
    >>> asked_for({"to": "a", "body": "hi"}, {"to": "a"})
    False
    """
    if not isinstance(asked, dict) or not isinstance(ran, dict):
        return _same_json(asked, ran)
    return all(key in ran and _same_json(ran[key], value) for key, value in asked.items())


def _same_json(a: Any, b: Any) -> bool:
    # default=str: a plain agent may pass a value JSON cannot hold (a date, a path).
    return bool(json.dumps(a, sort_keys=True, default=str)
                == json.dumps(b, sort_keys=True, default=str))
