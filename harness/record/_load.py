"""Reading a capture from a file: a recorded exchange, a HAR file or a raw SSE body.

Above both readers (:mod:`harness.record._capture` for the project's own format and
raw SSE, :mod:`harness.record._har` for HAR files), so neither imports the other.
"""

from __future__ import annotations

from pathlib import Path

from harness._errors import CaptureError
from harness.frontend import read_input
from harness.record._capture import (
    FORMAT,
    MAX_CAPTURE_BYTES,
    Capture,
    _exchange_from_json,
    _exchange_from_sse,
    _json_or_none,
    _looks_like_sse,
)
from harness.record._har import exchange_from_har


def load_capture(path: Path, *, entry: int | None = None) -> Capture:
    """Read a recorded exchange, a HAR file (``entry``: which one) or a raw SSE body."""
    try:
        raw = read_input(path, MAX_CAPTURE_BYTES)
    except OSError as error:
        raise CaptureError(f"cannot read it ({error.strerror or error}); expected a file "
                           "written by 'harness record', a HAR file or a raw SSE body",
                           str(path)) from error
    parsed = _json_or_none(raw)
    if isinstance(parsed, dict) and parsed.get("format") == FORMAT:
        return Capture(_exchange_from_json(parsed, str(path)), "exchange", str(path))
    if isinstance(parsed, dict) and isinstance(parsed.get("log"), dict):
        index, exchange = exchange_from_har(parsed["log"], str(path), entry)
        return Capture(exchange, "har", str(path), index)
    if parsed is None and _looks_like_sse(raw):
        return Capture(_exchange_from_sse(raw), "sse", str(path))
    what = "an empty file" if not raw.strip() else \
        "JSON that is neither a capture nor a HAR file" if parsed is not None \
        else "neither JSON nor text/event-stream bytes"
    raise CaptureError(f"not a capture: found {what}; expected a file written by 'harness "
                       "record' (\"format\": \"harness-capture/1\"), a HAR file ({\"log\": "
                       "{\"entries\": [...]}}) or a raw SSE body (lines such as 'data: {...}')",
                       str(path))
