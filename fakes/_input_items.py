"""A stored response's input items, as ``GET /v1/responses/{id}/input_items`` lists them.

The Responses API keeps every item a stored response was generated from: the items
of the conversation it continued (``previous_response_id``: that response's input
items and its output) and the request's own ``input``, each with an id and in the
API's item shape (a plain string or ``{"role": "user", "content": "hi"}`` becomes a
``message`` item with ``input_text`` content). The list is a cursor page: ``limit``
(1 to 100, default 20), ``order`` (``desc`` by default: newest first) and ``after``
(an item id: the items after it in that order), with ``first_id``, ``last_id`` and
``has_more``.

    >>> items = stored_items([{"role": "user", "content": "hi"}], "resp_1")
    >>> items[0]["type"], items[0]["content"], items[0]["id"].startswith("msg_")
    ('message', [{'type': 'input_text', 'text': 'hi'}], True)
    >>> import json
    >>> page = json.loads(listing(items, "limit=5&order=asc"))
    >>> page["object"], page["first_id"] == page["last_id"] == items[0]["id"], page["has_more"]
    ('list', True, False)
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from fakes._wire import compact_json

#: ``limit`` when the request names none, and the most it may name (the API's bounds).
DEFAULT_LIMIT, MAX_LIMIT = 20, 100
# Id prefixes of the items the API stores (an item the client sent with an id keeps it).
_PREFIXES = {"message": "msg_", "function_call": "fc_", "function_call_output": "fco_",
             "reasoning": "rs_"}


@dataclass(frozen=True)
class Refusal:
    """A query parameter the API refuses: its 400's message, ``param`` and ``code``."""

    message: str
    param: str
    code: str


def stored_items(new: Sequence[Any], response_id: str, start: int = 0) -> list[Any]:
    """``new`` input items as the API stores them: an id each (derived from the response's
    id and the item's place, ``start`` on, so the same in every run) and the item shape."""
    return [_stored(item, response_id, start + index) for index, item in enumerate(new)]


def listing(items: Sequence[Any], query: str) -> bytes | Refusal:
    """The list object for ``items`` (oldest first) under ``query``, or the
    :class:`Refusal` of a parameter out of the API's bounds."""
    params = parse_qs(query, keep_blank_values=True)
    limit = _limit(params.get("limit", [str(DEFAULT_LIMIT)])[-1])
    if isinstance(limit, Refusal):
        return limit
    order = params.get("order", ["desc"])[-1]
    if order not in ("asc", "desc"):
        return Refusal(f"Invalid value: '{order}'. Supported values are: 'asc' and 'desc'.",
                       "order", "invalid_value")
    ordered = list(items) if order == "asc" else list(reversed(items))
    after = params.get("after", [None])[-1]
    if after is not None:
        ids = [item.get("id") for item in ordered]
        if after not in ids:
            return Refusal(f"Invalid 'after': no input item with id '{after}' in this "
                           "response.", "after", "invalid_value")
        ordered = ordered[ids.index(after) + 1:]
    page = ordered[:limit]
    return compact_json({
        "object": "list", "data": page,
        "first_id": page[0]["id"] if page else None,
        "last_id": page[-1]["id"] if page else None,
        "has_more": len(ordered) > limit}).encode()


def _limit(raw: str) -> int | Refusal:
    try:
        limit = int(raw)
    except ValueError:
        return Refusal(f"Invalid 'limit': expected an integer, but got '{raw}' instead.",
                       "limit", "invalid_type")
    if limit < 1:
        return Refusal(f"Invalid 'limit': integer below minimum value. Expected a value >= 1, "
                       f"but got {limit} instead.", "limit", "integer_below_min_value")
    if limit > MAX_LIMIT:
        return Refusal(f"Invalid 'limit': integer above maximum value. Expected a value <= "
                       f"{MAX_LIMIT}, but got {limit} instead.", "limit",
                       "integer_above_max_value")
    return limit


def _stored(item: Any, response_id: str, place: int) -> Any:
    if isinstance(item, str):  # an input given as a bare string is one user message
        item = {"role": "user", "content": item}
    if not isinstance(item, Mapping):
        return item
    kind = item.get("type", "message")
    stored: dict[str, Any] = {"id": _item_id(kind, response_id, place), "type": kind, **item}
    if kind == "message" and isinstance(stored.get("content"), str):
        text = stored["content"]
        stored["content"] = [{"type": "output_text", "text": text, "annotations": []}
                             if stored.get("role") == "assistant"
                             else {"type": "input_text", "text": text}]
    stored.setdefault("status", "completed")
    return stored


def _item_id(kind: object, response_id: str, place: int) -> str:
    prefix = _PREFIXES.get(kind, "item_") if isinstance(kind, str) else "item_"
    digest = hashlib.sha256(f"{response_id}:input:{place}".encode()).hexdigest()
    return f"{prefix}{digest[:24]}"


__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "Refusal", "listing", "stored_items"]
