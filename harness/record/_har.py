"""One entry of a HAR file (a browser's or a proxy's export) as an :class:`Exchange`.

HAR 1.2 keeps the whole body and three timings of each entry: ``wait`` (request
sent to first byte) and ``receive`` (first byte to last). It keeps no per-read
timing, so the body becomes one read at ``wait + receive``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

from harness._errors import CaptureError
from harness.record._capture import Chunk, Exchange, Headers

_STREAM_TYPES = ("text/event-stream", "application/json")


def exchange_from_har(log: Mapping[str, Any], path: str,
                      entry: int | None) -> tuple[int, Exchange]:
    """The ``entry``-th entry (from 0), or else the first stream, or else the first JSON answer."""
    entries = log.get("entries")
    if not isinstance(entries, list) or not entries:
        raise CaptureError("a HAR file without entries; expected log.entries to hold the "
                           "exchange with the model (export it again with the request in it)",
                           path)
    index = _chosen(entries, path, entry)
    try:
        return index, _exchange(entries[index])
    except (KeyError, TypeError, ValueError, binascii.Error) as error:
        raise CaptureError(f"HAR entry {index} is malformed ({error!r}); expected request."
                           "method/url/headers and response.status/headers/content as HAR 1.2 "
                           "writes them", path) from error


def _chosen(entries: Sequence[object], path: str, entry: int | None) -> int:
    if entry is not None:
        if not 0 <= entry < len(entries):
            raise CaptureError(f"no HAR entry {entry}; expected --entry from 0 to "
                               f"{len(entries) - 1}", path)
        return entry
    for types in (("text/event-stream",), _STREAM_TYPES):
        for index, item in enumerate(entries):
            if _mime(item).startswith(types):
                return index
    raise CaptureError(f"none of the {len(entries)} HAR entries answered with "
                       "text/event-stream or JSON; expected the exchange with the model "
                       "(choose one with --entry N)", path)


def _mime(item: object) -> str:
    if not isinstance(item, dict):
        return ""
    content = item.get("response", {}).get("content", {})
    return str(content.get("mimeType", "")).lower() if isinstance(content, dict) else ""


def _exchange(item: Mapping[str, Any]) -> Exchange:
    request, response = item["request"], item["response"]
    timings = item.get("timings", {})
    wait = _seconds(timings.get("wait")) + _seconds(timings.get("send"))
    done = wait + _seconds(timings.get("receive"))
    post = request.get("postData") or {}
    return Exchange(
        method=str(request["method"]), url=str(request["url"]),
        request_headers=_headers(request["headers"]),
        request_body=str(post.get("text", "")).encode("utf-8"),
        status=int(response["status"]),
        response_headers=_headers(response["headers"]),
        chunks=(Chunk(done, _content(response["content"])),),
        headers_at=wait, timed=False,
    )


def _seconds(millis: object) -> float:
    # HAR writes -1 for a timing that does not apply.
    return max(0.0, float(millis)) / 1000 if isinstance(millis, int | float) else 0.0


def _headers(value: object) -> Headers:
    if not isinstance(value, list):
        raise TypeError("headers is not a list of {name, value} objects")
    return tuple((str(h["name"]).lower(), str(h["value"])) for h in value)


def _content(content: Mapping[str, Any]) -> bytes:
    text = str(content.get("text", ""))
    if content.get("encoding") == "base64":
        return base64.b64decode(text, validate=True)
    return text.encode("utf-8")
