"""A capture as a scenario: the model's turn, and what the stream did as faults.

``harness import CAPTURE`` reads a recorded exchange, a HAR entry or a raw SSE body
(:func:`~harness.record.load_capture`), reads the answer with its dialect's reader
(:data:`~harness.record.READERS`) and writes a commented scenario whose turn 1 is that
answer — text, tool calls, finish reason, usage, model — and whose faults replay what
the capture shows of the stream: an HTTP error with its retry headers, a wait before
the headers, a silence between two events (``stall``), a read that ended inside an
event (``split_at``), an error event inside the 200 stream, a stream cut before its
terminal event, tool arguments cut where the capture cut them. Every dialect is read
(Chat Completions, Messages, Responses, Gemini). The fake renders the answer in its
own deltas, so a captured position ("after event 12 of 40") becomes the place in the
fake's stream where as much of the answer had gone out, and before its finish reason
when the capture never got one. The file is loaded back before it is handed out: what
``harness import`` writes, ``harness validate`` and ``harness run`` accept.

Example::

    text = import_capture(Path("incident.json")).text   # a scenario, as YAML
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from fakes import HTTP_ERROR_STATUSES, FakeProvider, IncomingRequest, compact_json
from harness._errors import CaptureError, ScenarioError
from harness.ports import DIALECTS, SPECS, Dialect, SSEDecoder
from harness.record._capture import Capture, Chunk, Exchange
from harness.record._load import load_capture
from harness.record._readers import DONE, READERS, ImportedTurn
from harness.scenario import TOOL_NAME_PATTERN, Scenario, parse_scenario, retry_after_problems

#: A silence at least this long (seconds) becomes a fault; shorter ones are the network.
DEFAULT_STALL_SECONDS: Final = 5.0
_TOOL_NAME: Final = re.compile(TOOL_NAME_PATTERN)


@dataclass(frozen=True)
class TimedEvent:
    """One SSE event of the capture, when it arrived, its data parsed where it is JSON."""

    at: float
    event: str
    data: object


@dataclass(frozen=True)
class Imported:
    """The scenario a capture became: its YAML text and the parsed scenario."""

    text: str
    scenario: Scenario


def import_capture(path: Path, *, entry: int | None = None, name: str | None = None,
                   stall_seconds: float = DEFAULT_STALL_SECONDS) -> Imported:
    """The scenario of the capture at ``path``; :class:`CaptureError` when it has none."""
    capture = load_capture(path, entry=entry)
    events, cut = _events(capture.exchange)
    dialect, turn = _read(capture, events)
    scenario_name = name or _name(path)
    draft = _scenario_data(scenario_name, dialect, turn, capture)
    fake_body = _fake_body(_parsed(_yaml(draft, [], capture), path))
    scale = _Scale(_progress(dialect, events),
                   _progress(dialect, _events(_whole(fake_body))[0]))
    stream = _Stream(capture.exchange, events, turn, cut, scale, fake_body)
    faults = list(_faults(capture, stream, stall_seconds))
    text = _yaml(draft, faults, capture)
    return Imported(text, _parsed(text, path))


# ------------------------------------------------------------------ reading


def _events(exchange: Exchange) -> tuple[list[TimedEvent], bool]:
    """The events of a stream answer, and whether it ended inside one (a cut)."""
    decoder = SSEDecoder()
    events = [TimedEvent(chunk.at, e.event, _data(e.data))
              for chunk in exchange.chunks for e in decoder.feed(chunk.data)]
    cut = decoder.has_partial_event
    last = exchange.chunks[-1].at if exchange.chunks else exchange.headers_at
    events += [TimedEvent(last, e.event, _data(e.data)) for e in decoder.close()]
    return events, cut


def _data(text: str) -> object:
    if text.strip() == DONE:
        return DONE
    try:
        return json.loads(text)
    except ValueError:
        return text


def _read(capture: Capture, events: list[TimedEvent]) -> tuple[Dialect, ImportedTurn]:
    exchange = capture.exchange
    if exchange.status != 200:
        dialect = _dialect_of_error(capture)
        return dialect, ImportedTurn(dialect)
    if events:
        dialect = _dialect_of_events(capture, events)
        turn = ImportedTurn(dialect)
        for event in events:
            READERS[dialect].read_event(turn, event.event, event.data)
        return dialect, turn
    body = _json_body(exchange)
    known: list[Dialect] = [d for d, r in READERS.items()
                            if body is not None and r.recognises_body(body)]
    if not known or body is None:
        raise CaptureError("the answer is neither an SSE stream nor a JSON message of a "
                           f"known dialect ({', '.join(READERS)}); expected the model's answer "
                           "to a chat request", capture.path)
    turn = ImportedTurn(known[0])
    READERS[known[0]].read_body(turn, body)
    return known[0], turn


def _dialect_of_events(capture: Capture, events: list[TimedEvent]) -> Dialect:
    for event in events:
        for dialect, reader in READERS.items():
            if reader.recognises_event(event.event, event.data):
                return dialect
    raise CaptureError(f"an SSE stream of {len(events)} event(s) that no dialect reader "
                       f"recognises ({', '.join(READERS)}); expected OpenAI "
                       "'chat.completion.chunk' events, Anthropic 'message_start' … "
                       "'message_stop', Responses 'response.*' events or Gemini "
                       "'candidates' chunks", capture.path)


def _dialect_of_error(capture: Capture) -> Dialect:
    # An error body says little of its API; the request path and the headers say more.
    exchange = capture.exchange
    headers = {k.lower() for k, _ in exchange.request_headers + exchange.response_headers}
    path = urlsplit(exchange.url).path
    if path.endswith("/messages") or any(h.startswith("anthropic-") for h in headers):
        return "anthropic"
    if ":generatecontent" in path.lower() or ":streamgeneratecontent" in path.lower() \
            or any(h.startswith("x-goog-") for h in headers):
        return "gemini"
    if path.endswith("/responses"):
        return "openai-responses"
    body = _json_body(exchange) or {}
    if body.get("type") == "error":
        return "anthropic"
    if isinstance((body.get("error") or {}).get("status"), str):
        return "gemini"  # google.rpc's status word (RESOURCE_EXHAUSTED …)
    return DIALECTS[0]


def _json_body(exchange: Exchange) -> dict[str, Any] | None:
    try:
        body = json.loads(exchange.body)
    except (ValueError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) else None


# ------------------------------------------------------------------ the scenario


def _name(path: Path) -> str:
    name = re.sub(r"[^a-z0-9-]+", "-", path.stem.lower()).strip("-")
    return (name or "imported")[:90]


def _scenario_data(name: str, dialect: Dialect, turn: ImportedTurn,
                   capture: Capture) -> dict[str, Any]:
    calls = [_call(call.name, call.arguments) for call in turn.calls.values()]
    first: dict[str, Any] = {"turn": 1}
    if turn.text or not calls:
        first["text"] = turn.text if capture.exchange.status == 200 else \
            "(an answer after the captured error)"
    if calls:
        first["calls"] = calls
    if turn.finish is not None and turn.finish != ("tool_calls" if calls else "stop"):
        first["finish"] = turn.finish
    if _usable_usage(turn.usage):
        first["usage"] = {k: v for k, v in turn.usage.items()
                          if v or k in ("input_tokens", "output_tokens")}
    model = [first]
    if calls:
        model.append({"turn": 2, "text": "(the capture ends before the model's next turn)"})
    data: dict[str, Any] = {
        "name": name,
        "description": _description(capture),
        "dialect": dialect,
        "seed": 0,
    }
    if calls:
        data["tools"] = {c["tool"]: {"kind": "read"} for c in calls}
    if turn.model and re.fullmatch(r"[A-Za-z0-9._:-]{1,100}", turn.model):
        data["provider"] = {"model": turn.model}
    data["model"] = model
    data["expect"] = {"stop_state": _stop_state(capture.exchange.status)}
    return data


def _call(name: str, arguments: str) -> dict[str, Any]:
    if not _TOOL_NAME.fullmatch(name):  # a name the scenario format cannot hold, made fit
        name = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "tool"
    args = _arguments(arguments)
    if args is None:  # cut: the object it began, its cut fault gives back the captured part
        args = _completed(arguments)[0] or {}
    return {"tool": name, "args": args}


def _completed(text: str) -> tuple[dict[str, Any] | None, int]:
    """The JSON object a cut argument text began, closed where it broke off, and how many
    characters of its compact text the capture holds; (None, 0) when it began none.

    >>> _completed('{"to": "a@b", "bo')
    ({'to': 'a@b', 'bo': None}, 15)
    """
    head = _compact_prefix(text)
    for end in range(len(head), 0, -1):
        value = _closed(head[:end])
        if isinstance(value, dict) and compact_json(value).startswith(head[:end]):
            return value, end
    return None, 0


class _Strings:
    """Follows JSON text a character at a time: which characters belong to a string."""

    def __init__(self) -> None:
        self.quoted = self.escaped = False

    def inside(self, char: str) -> bool:
        """Whether ``char``, the next character, belongs to a string (its quotes included)."""
        if self.quoted:
            self.escaped = not self.escaped and char == "\\"
            self.quoted = self.escaped or char != '"'
            return True
        self.quoted = char == '"'
        return self.quoted


def _compact_prefix(text: str) -> str:
    """``text`` without the whitespace outside its strings: as the fake writes arguments."""
    strings = _Strings()
    return "".join(char for char in text if strings.inside(char) or not char.isspace())


def _closed(head: str) -> object:
    """``head`` made a JSON value by closing its string and brackets (None: it cannot be)."""
    closers: list[str] = []
    strings = _Strings()
    for char in head:
        if strings.inside(char):
            continue
        if char in "{[":
            closers.append("}" if char == "{" else "]")
        elif char in "}]" and closers:
            closers.pop()
    if strings.escaped:
        return None
    tail = '"' if strings.quoted else ""
    for ending in ("", ":null", "null"):
        try:
            return json.loads(head + tail + ending + "".join(reversed(closers)))
        except ValueError:
            continue
    return None


def _arguments(text: str) -> dict[str, Any] | None:
    """The arguments as an object; ``None`` when the text is none (cut, garbled)."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _usable_usage(usage: Mapping[str, int]) -> bool:
    return "input_tokens" in usage and "output_tokens" in usage


def _stop_state(status: int) -> str:
    # What the reference agent ends in (seed 002 §19.1's table): a credential refused
    # is blocked, a bad request failed; a transient error is retried to completion.
    if status in (401, 403):
        return "blocked"
    if status in (400, 404, 413, 422):
        return "failed"
    return "complete"


def _description(capture: Capture) -> str:
    exchange = capture.exchange
    where = f"{exchange.method} {urlsplit(exchange.url).path}" if exchange.url else "a stream"
    source = {"exchange": "a recorded exchange", "har": f"HAR entry {capture.entry}",
              "sse": "a raw SSE capture"}[capture.kind]
    return f"Imported from {source}: {where}, status {exchange.status}."


def _parsed(text: str, path: Path) -> Scenario:
    try:
        return parse_scenario(text.encode("utf-8"), f"{path.name} (imported)")
    except ScenarioError as error:
        raise CaptureError(f"the scenario it became does not load: {error}; the capture "
                           "holds something the scenario format cannot say", str(path)) from error


def _fake_body(scenario: Scenario) -> bytes:
    """Turn 1's stream as the fake renders it: where the captured positions are mapped."""
    from harness.runner import ScriptedModel

    provider = FakeProvider(scenario.dialect, ScriptedModel(scenario).respond)
    model = scenario.provider.model
    # Each dialect reads its own field of the conversation; the others are ignored.
    body = {"model": model, "stream": True, "max_tokens": 1024,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "go"}], "input": "go",
            "contents": [{"role": "user", "parts": [{"text": "go"}]}]}
    spec = SPECS[scenario.dialect]
    plan = provider.plan(IncomingRequest("POST", spec.origin + spec.stream_path(model), {},
                                         json.dumps(body).encode()))
    return plan.body


def _whole(body: bytes) -> Exchange:
    return Exchange("POST", "", (), b"", 200, (), (Chunk(0.0, body),))


def _progress(dialect: Dialect, events: list[TimedEvent]) -> list[tuple[int, bool]]:
    """After each number of events (0 … n): the answer's characters so far (text, call
    names and arguments) and whether it had said how it finished."""
    turn = ImportedTurn(dialect)
    progress = [(0, False)]
    for event in events:
        READERS[dialect].read_event(turn, event.event, event.data)
        said = len(turn.text) + sum(len(c.name) + len(c.arguments) for c in turn.calls.values())
        progress.append((said, turn.finish is not None or turn.terminal))
    return progress


# ------------------------------------------------------------------ the faults


Fault = tuple[dict[str, Any], str]  # the fault, and the comment that says what was captured


@dataclass(frozen=True)
class _Scale:
    """Maps "after k of the captured events" onto the fake's events by what they said.

    The fake cuts the same answer into its own deltas, so a position is where the
    same characters had been sent: the last of the fake's events by which no more
    of the answer had gone out than the capture had sent after k, and, when the
    capture had not yet said how it finished (an error or a reset before the finish
    reason), one before the fake says it. A fault there meets the client where the
    captured one did: no ``finish_reason: stop`` first.
    """

    captured: list[tuple[int, bool]]  # after 0 … n captured events: (characters, finished)
    fake: list[tuple[int, bool]]

    def __call__(self, k: int) -> int:
        said, finished = self.captured[min(k, len(self.captured) - 1)]
        last = len(self.fake) - 2  # a fault after every event would do nothing
        fits = [j for j, (sent, done) in enumerate(self.fake[:last + 1])
                if sent <= said and (finished or not done)]
        return max(0, max(fits, default=0))


@dataclass(frozen=True)
class _Stream:
    """A captured answer's events, what they said, and how they map onto the fake's."""

    exchange: Exchange
    events: list[TimedEvent]
    turn: ImportedTurn
    cut: bool  # it ended inside an event
    scale: _Scale
    fake_body: bytes = b""  # turn 1 as the fake renders it

    @property
    def end(self) -> int:
        """How many events came before an in-stream error (all of them without one)."""
        if self.turn.error is None:
            return len(self.events)
        return next((i for i, e in enumerate(self.events) if _is_error(e)), len(self.events))


def _faults(capture: Capture, stream: _Stream, stall_seconds: float) -> Iterator[Fault]:
    exchange = capture.exchange
    if exchange.status != 200:
        yield _http_error(capture)
        return
    if exchange.headers_at >= stall_seconds:
        yield ({"kind": "stall_before_headers", "seconds": _round(exchange.headers_at)},
               f"the headers came {exchange.headers_at:.2f} s after the request")
    yield from _splits(stream)
    if exchange.timed:
        yield from _stalls(stream, stall_seconds)
    yield from _cut_calls(stream.turn)
    yield from _ending(stream)


def _cut_calls(turn: ImportedTurn) -> Iterator[Fault]:
    """A call whose captured arguments are no JSON object: cut (at max_tokens) or invalid."""
    for index, call in enumerate(turn.calls.values()):
        if _arguments(call.arguments) is not None:
            continue
        kind = "truncated_tool_arguments" if turn.finish == "length" else \
            "invalid_tool_arguments"
        shown = call.arguments if len(call.arguments) <= 40 else call.arguments[:40] + "…"
        # The scripted call holds the object the text began; cut where the capture broke off.
        offset = max(1, _completed(call.arguments)[1])
        yield ({"kind": kind, "call_index": index, "offset": offset},
               f"the call's captured arguments were no JSON object: {shown!r}")


_EVENT_END: Final = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def _event_spans(body: bytes) -> list[tuple[int, int]]:
    """The byte spans of the SSE events that carry data (comments and blank ones left out)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for end in [m.end() for m in _EVENT_END.finditer(body)] + [len(body)]:
        if start < end and re.search(rb"(?m)^data:", body[start:end]):
            spans.append((start, end))
        start = end
    return spans


def _splits(stream: _Stream) -> Iterator[Fault]:
    """The reads of the capture that ended inside an event, as the same cuts of the fake's
    events: the same event by what it said, as many bytes in (a cut inside a UTF-8
    character stays inside one)."""
    body, fake = stream.exchange.body, stream.fake_body
    captured, rendered = _event_spans(body), _event_spans(fake)
    offsets: set[int] = set()
    end = 0
    for chunk in stream.exchange.chunks[:-1]:
        end += len(chunk.data)
        inside = [(i, s) for i, (s, e) in enumerate(captured) if s < end < e]
        if not inside or not rendered:
            continue  # a read that ended between events: any reader takes those
        index, start = inside[0]
        fake_start, fake_end = rendered[min(stream.scale(index), len(rendered) - 1)]
        at = fake_start + min(end - start, fake_end - fake_start - 1)
        if 0x80 <= body[end] < 0xC0:  # inside a multi-byte character: keep it so
            within = [q for q in range(fake_start + 1, fake_end) if 0x80 <= fake[q] < 0xC0]
            at = min(within, key=lambda q: abs(q - at), default=at)
        if 0 < at < len(fake):
            offsets.add(at)
    if offsets:
        yield ({"kind": "split_at", "offsets": sorted(offsets)},
               f"{len(offsets)} read(s) of the capture ended inside an event")


def _is_error(event: TimedEvent) -> bool:
    data = event.data
    return event.event == "error" or (isinstance(data, dict) and ("error" in data
                                                                  or data.get("type") == "error"))


def _stalls(stream: _Stream, threshold: float) -> Iterator[Fault]:
    previous, events, scale = stream.exchange.headers_at, stream.events[:stream.end], stream.scale
    for index, event in enumerate(events):
        gap = event.at - previous
        previous = event.at
        if gap < threshold:
            continue
        where: dict[str, Any] = {"after_bytes": 0} if index == 0 else \
            {"after_events": scale(index)}
        yield ({"kind": "stall", **where, "seconds": _round(gap)},
               f"{gap:.2f} s of silence after captured event {index} of {len(events)}")


def _ending(stream: _Stream) -> Iterator[Fault]:
    turn, events, end, scale = stream.turn, stream.events, stream.end, stream.scale
    if turn.error is not None:
        error_type, message = turn.error
        yield ({"kind": "error_in_stream", "after_events": scale(end),
                "message": message[:1000] or "error", "error_type": error_type[:100]},
               f"an error event after captured event {end} of {len(events)}")
    elif turn.terminal:
        return
    elif stream.exchange.ended == "reset" or stream.cut:
        yield ({"kind": "connection_reset", "after_events": scale(len(events))},
               f"the connection broke after captured event {len(events)}, mid-answer")
    elif events:
        yield ({"kind": "no_terminal_event"},
               f"the stream closed after {len(events)} event(s) without its terminal event")


def _http_error(capture: Capture) -> Fault:
    exchange = capture.exchange
    if exchange.status not in HTTP_ERROR_STATUSES:
        raise CaptureError(f"status {exchange.status} has no fault to replay it; the fake "
                           f"answers these error statuses: "
                           f"{', '.join(map(str, sorted(HTTP_ERROR_STATUSES)))}", capture.path)
    fault: dict[str, Any] = {"kind": "http_error", "status": exchange.status}
    fault.update(_retry_headers(exchange))
    message = _error_message(exchange)
    if message:
        fault["message"] = message[:1000]
    return fault, f"the answer was HTTP {exchange.status}"


def _retry_headers(exchange: Exchange) -> dict[str, Any]:
    found: dict[str, Any] = {}
    after, after_ms = exchange.header("retry-after"), exchange.header("retry-after-ms")
    if after is not None and after.strip().isdigit():
        found["retry_after"] = int(after)
    elif after is not None and not retry_after_problems(after.strip()):
        found["retry_after"] = after.strip()  # an HTTP date
    if after_ms is not None and after_ms.strip().isdigit():
        found["retry_after_ms"] = int(after_ms)
    should = exchange.header("x-should-retry")
    if should in ("true", "false"):
        found["should_retry"] = should == "true"
    return found


def _error_message(exchange: Exchange) -> str | None:
    error = (_json_body(exchange) or {}).get("error")
    message = error.get("message") if isinstance(error, dict) else None
    return message.strip() if isinstance(message, str) and message.strip() else None


def _round(seconds: float) -> float:
    return round(seconds, 3)


# ------------------------------------------------------------------ the text


_KEY_ORDER: Final = ("name", "description", "dialect", "seed", "tools", "provider", "model",
                     "faults", "expect")


def _yaml(data: Mapping[str, Any], faults: list[Fault], capture: Capture) -> str:
    from harness.fuzz import flow

    lines = [f"# Imported from {capture.path} by harness import: the model's turn as captured.",
             "# Layer more faults under 'faults' (at: {turn: 1, attempt: 2} for a retry), crash",
             "# points under 'crash', and set each tool's real kind (append | send | put | read",
             "# | inspect): 'read' is only a guess that no call has a side effect."]
    for key in (k for k in _KEY_ORDER if k in data):
        value = data[key]
        if key in ("tools", "provider", "expect"):
            lines.append(f"{key}:")
            lines += [f"  {flow(k)}: {flow(v)}" for k, v in value.items()]
        elif key == "model":
            lines.append("model:")
            lines += [f"  - {flow(reply)}" for reply in value]
        else:
            lines.append(f"{key}: {flow(value)}")
        if key == "model" and faults:
            lines.append("faults:")
            lines += [f"  - {flow({'at': {'turn': 1, 'attempt': 1}, **f})}   # {why}"
                      for f, why in faults]
    return "\n".join(lines) + "\n"
