"""The reference stream client: one model call that recovers correctly (S1 to S10).

This is seed 002 "自建起步" made concrete, for every dialect of
:mod:`._dialects` (Chat Completions, Anthropic Messages, OpenAI Responses, Gemini):

① the first-byte timeout and the idle watchdog are separate; every chunk
  refreshes the watchdog; on expiry the attempt is aborted as a transient
  transport error (S1). A keep-alive comment or an Anthropic ``ping`` is a
  chunk too: the watchdog detects a dead connection, not a slow model (it is
  what an HTTP read timeout measures, and servers send keep-alives precisely
  to stay under it). A stream that only ever keeps alive is ended by the
  shared deadline (S8), which bounds every attempt;
② only a complete attempt is returned as a message; deltas never are (S2);
③ SSE frames and UTF-8 are decoded across reads (S3, :mod:`._sse`);
④ tool arguments are gathered per index / block, parsed once complete (S4);
⑤ the pure classifier decides retries; the client only waits (S5); retry
  events are persisted before the sleep and when the retry starts (S7); every
  wait and attempt draws on the shared :class:`Budget` (S8);
⑥ truncation: a cut message's tool calls are all rejected; cut plain text gets
  at most one continuation, whose input carries the text so far (S6);
⑦ each attempt has its own id; a failed attempt's partial text stays on its
  :class:`AttemptRecord` as interrupted and is never joined to a retry (S2).

A stream that ends without its terminal event is truncated (S9); an error
inside a 200 stream is classified like an HTTP error (S10). Nothing of an
attempt is committed before it completes, so an in-stream error is always
met before any commit and may be retried.

Example (see ``tests/agent/test_stream_client.py`` for a respx endpoint)::

    client = StreamClient(http, dialect="openai", endpoint="https://api.test/v1/chat/completions",
                          config=StreamConfig(), clock=LoopClock(), seed=7,
                          retry_log=MemoryRetryLog(), budget=Budget(deadline=600, max_attempts=20))
    result = await client.complete({"model": "m", "messages": [...]})
    if result.outcome == "committed":
        run_tools(result.message.tool_calls)
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias, final

import httpx

from harness.agent._breaker import CircuitBreaker
from harness.agent._budget import Budget
from harness.agent._classify import (
    ProviderError,
    RetryContext,
    RetryDecision,
    RetryLayer,
    StreamFailure,
    classify,
)
from harness.agent._defaults import StreamConfig
from harness.agent._dialects import (
    AGENT_DIALECTS,
    Accumulator,
    continuation_body,
    request_target,
    streaming_body,
)
from harness.agent._doom_loop import looping_unit, resampled
from harness.agent._messages import AssistantMessage, ToolCall
from harness.agent._output_limit import output_limit, raised_limit, with_output_limit
from harness.agent._retry_log import RetryEvent, RetryEventKind, RetryLog
from harness.ports import (
    ATTEMPT_ID_HEADER,
    RETRY_LAYER_HEADER,
    SPECS,
    Clock,
    Dialect,
    IdSource,
    SSEDecoder,
    SSEEvent,
    Usage,
    check_dialect,
    rng_stream,
)

Outcome: TypeAlias = Literal["committed", "truncated", "failed"]
AttemptStatus: TypeAlias = Literal["complete", "truncated", "interrupted", "failed"]
AttemptKind: TypeAlias = Literal["first", "retry", "continuation"]

#: What replaces an image when a 413 makes the client drop images (S5).
IMAGE_PLACEHOLDER = "[image removed: the request was too large]"


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """One request attempt, whatever became of it.

    ``status``: ``complete`` (its message was committed or merged), ``truncated``
    (complete stream, finish ``length``), ``interrupted`` (the stream started
    and broke; ``partial_text`` is what was shown, never reused) or ``failed``
    (no stream: an HTTP error, a connect error). Times are virtual seconds.
    """

    attempt_id: str
    kind: AttemptKind
    status: AttemptStatus
    partial_text: str
    usage: Usage | None
    error: ProviderError | None
    decision: RetryDecision | None
    started_at: float
    ended_at: float


@dataclass(frozen=True, slots=True)
class CompletionResult:
    """The outcome of :meth:`StreamClient.complete`.

    ``committed``: ``message`` is complete and its tool calls may run.
    ``truncated``: the model hit its output limit; ``message`` holds the text
    (finish ``length``) and no tool call — those are in ``rejected_tool_calls``
    and must not run (S6). ``failed``: ``error`` is the last classified error
    and ``stop_reason`` says why the client stopped. ``usage_total`` counts each
    attempt once, failed attempts included (L6, I6).
    """

    outcome: Outcome
    message: AssistantMessage | None
    error: ProviderError | None
    attempts: tuple[AttemptRecord, ...]
    usage_total: Usage | None
    stop_reason: str
    rejected_tool_calls: tuple[ToolCall, ...] = ()


@dataclass
class _Run:
    """Mutable state of one ``complete`` call."""

    body: dict[str, Any]
    records: list[AttemptRecord] = field(default_factory=list)
    retries: int = 0
    consecutive_429: int = 0
    images_dropped: bool = False
    resamples: int = 0  # of a looping answer (DoomLoop)
    output_ceiling: int | None = None  # the model's most output tokens, if known
    prefix: AssistantMessage | None = None  # the truncated text being continued
    # A backup model waits (seed 002 §19.2, 切备用线路): an open breaker ends this call
    # instead of waiting out its cooldown, and the caller switches.
    backup_waiting: bool = False


@dataclass
class _Progress:
    """How far an attempt got: a 200 stream that began and broke is ``interrupted``."""

    stream_began: bool = False


@dataclass
class _Pending:
    """The next attempt: its id, why it happens, and at which layer."""

    attempt_id: str
    kind: AttemptKind
    layer: RetryLayer
    previous_id: str | None = None
    reason: str = ""
    delay: float = 0.0


def _correlation(pending: _Pending) -> dict[str, str]:
    headers = {ATTEMPT_ID_HEADER: pending.attempt_id}
    if pending.kind == "retry":
        headers[RETRY_LAYER_HEADER] = pending.layer
    return headers


@final
class StreamClient:
    """Streams one assistant message over ``http``; see the module docstring."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        dialect: Dialect,
        endpoint: str,
        config: StreamConfig,
        clock: Clock,
        seed: int,
        retry_log: RetryLog,
        budget: Budget,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self._http = http
        self._dialect: Dialect = check_dialect(dialect)
        self._endpoint = endpoint
        self._config = config
        self._clock = clock
        self._retry_log = retry_log
        self._budget = budget
        self._breaker = breaker
        self._ids = IdSource(seed, "att")
        self._jitter = rng_stream(seed, "backoff")
        self._policy_key = f"{dialect}:{endpoint}"
        # The task running the attempt now, and whether a cancel named the attempt
        # (seed 002 §19.4: an attempt cancel ends this request only, not the turn).
        self._attempt_task: asyncio.Task[Any] | None = None
        self._attempt_cancelled = False
        #: 429s in a row so far, carried into the next call: a restart seeds it from the
        #: log, so a crash between rate limits does not buy a fresh run of them (S5).
        self.rate_limits_in_a_row = 0

    def cancel_attempt(self) -> bool:
        """Drop the provider request in flight; the turn retries it. False when none is."""
        task = self._attempt_task
        if task is None or self._attempt_cancelled:
            return False
        self._attempt_cancelled = True
        task.cancel()
        return True

    @property
    def budget(self) -> Budget:
        """The shared budget this client draws on (other layers draw on it too)."""
        return self._budget

    async def complete(self, request_body: Mapping[str, Any], *,
                       output_ceiling: int | None = None,
                       backup_waiting: bool = False) -> CompletionResult:
        """Send ``request_body`` as a streaming request until an outcome is reached.

        ``output_ceiling``: the model's most output tokens; an answer cut below it is asked
        for again with a raised limit first (truncation level 1). ``backup_waiting``: a
        backup model may take over, so a breaker that opens ends the call (failed) rather
        than spacing more attempts on this model by its cooldown.
        """
        run = _Run(body=self._streaming_body(request_body), output_ceiling=output_ceiling,
                   backup_waiting=backup_waiting, consecutive_429=self.rate_limits_in_a_row)
        pending = _Pending(self._ids.next(), "first", "request")
        while True:
            refusal = await self._wait_for_breaker(run) or self._start(run, pending)
            if refusal is not None:
                return refusal
            lease = self._breaker.acquire() if self._breaker is not None else None
            record, message = await self._attempt(run.body, pending)
            if self._breaker is not None and lease is not None:
                self._breaker.release(lease, record.error)
            self._budget.charge(record.usage)
            if message is not None:
                run.consecutive_429 = self.rate_limits_in_a_row = 0  # a run of 429s ends
                run.records.append(record)
                result_or_next = self._settle(run, message)
                if isinstance(result_or_next, CompletionResult):
                    return result_or_next
                pending = result_or_next
                continue
            assert record.error is not None
            decision = self._decide(run, record.error)
            run.records.append(replace(record, decision=decision))
            verdict = self._may_retry(run, decision)
            if verdict is not None:
                return self._failed(run, record.error, verdict)
            pending = await self._schedule_retry(run, record, decision)

    # -- budget and retry bookkeeping -------------------------------------------------

    async def _wait_for_breaker(self, run: _Run) -> CompletionResult | None:
        """Wait while the circuit breaker is open (seed 002 §19.1), unless past the deadline."""
        breaker = self._breaker
        wait = breaker.wait_seconds() if breaker is not None else 0.0
        if wait <= 0:
            return None
        if not self._budget.can_wait(now=self._clock.now(), seconds=wait):
            last = run.records[-1].error if run.records else None
            reason = (f"the circuit breaker stays open {wait:g}s more, past the deadline "
                      f"{self._budget.deadline:g}s")
            return self._failed(run, last or ProviderError("connect_error", reason), reason)
        await self._clock.sleep(wait)
        return None

    def _start(self, run: _Run, pending: _Pending) -> CompletionResult | None:
        now = self._clock.now()
        if not self._budget.acquire_attempt(pending.layer, now=now):
            reason = self._budget.exhausted_reason(now) or "budget exhausted"
            return self._budget_failure(run, reason)
        if pending.kind == "retry":
            self._log("retry_started", pending, at=now, retry_number=run.retries)
        return None

    def _budget_failure(self, run: _Run, reason: str) -> CompletionResult:
        kind: Literal["deadline_exceeded", "budget_exhausted"] = (
            "deadline_exceeded" if reason.startswith("deadline") else "budget_exhausted"
        )
        last = run.records[-1].error if run.records else None
        return self._failed(run, last or ProviderError(kind, reason), reason)

    def _decide(self, run: _Run, error: ProviderError) -> RetryDecision:
        run.consecutive_429 = run.consecutive_429 + 1 if error.effective_status == 429 else 0
        self.rate_limits_in_a_row = run.consecutive_429
        context = RetryContext(
            retry_number=run.retries + 1,
            consecutive_429=run.consecutive_429,
            jitter=self._jitter.random(),
            now_unix=self._config.clock_epoch_unix + self._clock.now(),
            images_dropped=run.images_dropped,
            resamples=run.resamples,
        )
        return classify(error, context, self._config)

    def _may_retry(self, run: _Run, decision: RetryDecision) -> str | None:
        """Why the client must stop instead of retrying, or ``None``."""
        if not decision.should_retry:
            return decision.reason
        if len(run.records) >= self._config.max_attempts:
            return f"local cap of {self._config.max_attempts} attempts reached"
        now = self._clock.now()
        # An open breaker spaces the attempts by its cooldown (seed 002 §19.1).
        breaker = self._breaker
        if run.backup_waiting and breaker is not None and breaker.state == "open":
            return "the circuit breaker opened on this model: its backup takes over"
        wait = max(decision.delay, breaker.wait_seconds() if breaker is not None else 0.0)
        if not self._budget.can_wait(now=now, seconds=wait):
            return f"waiting {wait:g}s would pass the deadline {self._budget.deadline:g}s"
        return self._budget.exhausted_reason(now)

    async def _schedule_retry(
        self, run: _Run, failed: AttemptRecord, decision: RetryDecision
    ) -> _Pending:
        run.retries += 1
        pending = _Pending(
            self._ids.next(),
            "retry",
            decision.layer,
            failed.attempt_id,
            decision.reason,
            decision.delay,
        )
        # S7: the event is durable before the sleep, so a crash mid-wait resumes the count.
        now = self._clock.now()
        self._log("retry_scheduled", pending, at=now, retry_number=run.retries)
        await self._clock.sleep(decision.delay)
        if decision.modification == "drop_images":
            run.body = drop_images(run.body)
            run.images_dropped = True
        if decision.modification == "resample":
            run.resamples += 1
            run.body = resampled(run.body, self._dialect, run.resamples)
        return pending

    def _log(
        self, kind: RetryEventKind, pending: _Pending, *, at: float, retry_number: int
    ) -> None:
        # A scheduled event is about the failed attempt; a started one about the new.
        started = kind == "retry_started"
        attempt_id = pending.attempt_id if started else pending.previous_id
        assert attempt_id is not None
        event = RetryEvent(
            kind,
            pending.layer,
            self._policy_key,
            attempt_id,
            pending.previous_id if started else None,
            retry_number,
            at,
            0.0 if started else pending.delay,
            pending.reason,
            self._budget.attempts_used,
            self._budget.deadline,
        )
        self._retry_log.record(event)

    # -- settling a complete attempt (S6) ---------------------------------------------

    def _settle(self, run: _Run, message: AssistantMessage) -> CompletionResult | _Pending:
        if run.prefix is not None:
            message = _merge(run.prefix, message)
        if message.finish != "length":
            return self._result(run, "committed", message, None, reason="complete")
        raised = self._raise_limit(run, message)
        if raised is not None:
            return raised
        if message.tool_calls:
            kept = replace(message, tool_calls=())
            reason = (
                f"output limit hit with {len(message.tool_calls)} tool call(s): every call "
                "of this message is rejected and none runs (S6)"
            )
            return self._result(
                run, "truncated", kept, None, reason=reason, rejected=message.tool_calls
            )
        continuations = sum(1 for r in run.records if r.kind == "continuation")
        if continuations >= self._config.max_continuations:
            return self._result(
                run, "truncated", message, None, reason="text truncated; no continuation left"
            )
        run.prefix = message
        run.body = continuation_body(run.body, message.text, self._dialect)
        return _Pending(self._ids.next(), "continuation", "request", message.attempt_id)

    def _raise_limit(self, run: _Run, message: AssistantMessage) -> _Pending | None:
        """Level 1 (seed 002 §19.1 ①): drop an uncommitted cut answer, ask with a raised limit.

        Not for a continuation's part (its prefix is already held), and only while the
        model allows more than the request asked for: once, since it asks for the ceiling.
        """
        if run.prefix is not None or not self._config.raise_output_limit:
            return None
        limit = output_limit(run.body, self._dialect)
        raised = raised_limit(limit, run.output_ceiling)
        if raised is None:
            return None
        run.retries += 1
        run.body = with_output_limit(run.body, self._dialect, raised)
        pending = _Pending(self._ids.next(), "retry", "request", message.attempt_id,
                           f"cut at the output limit of {limit} tokens: asked again with "
                           f"{raised} (level 1)")
        self._log("retry_scheduled", pending, at=self._clock.now(), retry_number=run.retries)
        return pending

    def _failed(self, run: _Run, error: ProviderError, reason: str) -> CompletionResult:
        return self._result(run, "failed", None, error, reason=reason)

    def _result(
        self,
        run: _Run,
        outcome: Outcome,
        message: AssistantMessage | None,
        error: ProviderError | None,
        *,
        reason: str,
        rejected: tuple[ToolCall, ...] = (),
    ) -> CompletionResult:
        usage = Usage.total(record.usage for record in run.records)
        return CompletionResult(
            outcome, message, error, tuple(run.records), usage, reason, rejected
        )

    # -- one attempt on the wire (S1, S3, S9, S10) ------------------------------------

    async def _attempt(
        self, body: dict[str, Any], pending: _Pending
    ) -> tuple[AttemptRecord, AssistantMessage | None]:
        started = self._clock.now()
        accumulator = AGENT_DIALECTS[self._dialect].accumulator()
        progress = _Progress()
        error: ProviderError | None = None
        message: AssistantMessage | None = None
        self._attempt_task, self._attempt_cancelled = asyncio.current_task(), False
        try:
            async with asyncio.timeout(self._budget.remaining(started)):
                await self._stream(body, accumulator, progress, _correlation(pending))
        except asyncio.CancelledError:
            if not self._attempt_cancelled:
                raise
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()  # our own cancel of this attempt, not of the turn
            error = ProviderError("reset", "the attempt was cancelled by request")
        except StreamFailure as failure:
            error = failure.error
        except TimeoutError:
            error = ProviderError("deadline_exceeded", "the shared deadline passed mid-attempt")
        except (httpx.TransportError, OSError) as exc:
            error = _transport_error(exc)
        finally:
            self._attempt_task = None
        if accumulator.done:
            # S9: the terminal event completed the attempt. The rest of the body is
            # still read (the provider sees it delivered), but a stall or a reset
            # after the terminal event cannot undo a complete message.
            error = None
        if error is None:
            error = self._looping(accumulator)  # a loop that arrived in one piece
        if error is None:
            try:
                message = accumulator.finish(pending.attempt_id)
            except StreamFailure as failure:
                error = failure.error
        status = _status_of(message, error, progress.stream_began)
        text = message.text if message is not None else accumulator.partial_text
        record = AttemptRecord(
            pending.attempt_id,
            pending.kind,
            status,
            text,
            accumulator.usage,
            error,
            None,
            started,
            self._clock.now(),
        )
        return record, message

    async def _stream(
        self,
        body: dict[str, Any],
        accumulator: Accumulator,
        progress: _Progress,
        correlation: Mapping[str, str],
    ) -> None:
        """Send the request and feed the accumulator, noting when a 200 stream began."""
        loop = asyncio.get_running_loop()
        decoder = SSEDecoder()
        phase = "first_byte"
        url, sent = request_target(self._endpoint, body)
        request = self._http.build_request(
            "POST", _endpoint_url(url), json=sent,
            headers={"accept": "text/event-stream", **correlation},
        )
        try:
            # One timer serves both phases: first byte, then the idle watchdog
            # that every chunk pushes forward ("每收到一个 chunk → 刷新时间戳").
            async with asyncio.timeout(self._config.first_byte_timeout) as watchdog:
                response = await self._http.send(request, stream=True)

                async def watched_chunks() -> AsyncIterator[bytes]:
                    nonlocal phase
                    armed_at: float | None = None
                    async for chunk in response.aiter_bytes():
                        phase = "idle"
                        # Chunks of one burst share an instant: pushing the deadline to
                        # where it already is would only trade one timer for another.
                        now = loop.time()
                        if now != armed_at:
                            watchdog.reschedule(now + self._config.idle_timeout)
                            armed_at = now
                        yield chunk

                try:
                    if response.status_code != 200:
                        # An error body is read under the same watchdog: it can stall too.
                        error_body = b"".join([chunk async for chunk in watched_chunks()])
                        raise StreamFailure(_status_error(response, error_body))
                    progress.stream_began = True
                    async for chunk in watched_chunks():
                        _feed_all(accumulator, decoder.feed(chunk))
                        looping = self._looping(accumulator)
                        if looping is not None:
                            raise StreamFailure(looping)  # the rest would only be billed
                    _feed_all(accumulator, decoder.close())
                finally:
                    await response.aclose()
        except TimeoutError as exc:
            kind: Literal["first_byte_timeout", "idle_timeout"] = (
                "first_byte_timeout" if phase == "first_byte" else "idle_timeout"
            )
            limit = (
                self._config.first_byte_timeout
                if phase == "first_byte"
                else self._config.idle_timeout
            )
            raise StreamFailure(ProviderError(kind, f"no data for {limit:g}s")) from exc

    def _looping(self, accumulator: Accumulator) -> ProviderError | None:
        """A DoomLoop in the text so far (seed 002 §19.1), or ``None``."""
        if not self._config.detect_loops:
            return None
        unit = looping_unit(accumulator.partial_text)
        if unit is None:
            return None
        return ProviderError("doom_loop", f"the answer keeps repeating {unit.strip()!r}")

    def _streaming_body(self, request_body: Mapping[str, Any]) -> dict[str, Any]:
        return streaming_body(self._dialect, request_body)


@functools.lru_cache(maxsize=64)
def _endpoint_url(endpoint: str) -> httpx.URL:
    """``endpoint`` parsed once per process, at a first request (where httpx would reject it).

    A client lives for one incarnation and sends one or two requests, so the
    parse is remembered across clients; a bad endpoint raises on every request.
    """
    return httpx.URL(endpoint)


def _feed_all(accumulator: Accumulator, events: list[SSEEvent]) -> None:
    for event in events:
        accumulator.feed(event)


def _status_of(
    message: AssistantMessage | None, error: ProviderError | None, streamed: bool
) -> AttemptStatus:
    if message is not None:
        return "truncated" if message.finish == "length" else "complete"
    if error is not None and error.kind == "http_status":
        return "failed"
    return "interrupted" if streamed else "failed"


def _status_error(response: httpx.Response, raw: bytes) -> ProviderError:
    """A non-200 answer and its body ``raw`` as a :class:`ProviderError` (headers kept)."""
    headers = {name.lower(): value for name, value in response.headers.items()}
    message, error_type, error_code = _error_fields(raw)
    delay = _retry_info_delay(raw)
    if delay is not None and not {"retry-after", "retry-after-ms"} & set(headers):
        # Gemini asks for its wait in the body (google.rpc.RetryInfo), not in a header.
        headers["retry-after-ms"] = str(round(delay * 1000))
    return ProviderError(
        "http_status",
        message or f"HTTP {response.status_code}",
        response.status_code,
        error_type,
        error_code,
        headers,
    )


def _retry_info_delay(raw: bytes) -> float | None:
    """Seconds of a ``google.rpc.RetryInfo`` ``retryDelay`` (``"7s"``) in an error body.

    >>> _retry_info_delay(b'{"error":{"details":[{"@type":"type.googleapis.com/'
    ...                   b'google.rpc.RetryInfo","retryDelay":"7.5s"}]}}')
    7.5
    """
    if b"RetryInfo" not in raw:
        return None
    try:
        details = json.loads(raw)["error"]["details"]
        delays = [d["retryDelay"] for d in details if str(d.get("@type", "")).endswith(
            "google.rpc.RetryInfo")]
        return float(str(delays[0]).removesuffix("s"))
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def _error_fields(raw: bytes) -> tuple[str, str | None, str | None]:
    try:
        body = json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")[:500], None, None
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return str(body)[:500], None, None
    code = error.get("code")
    kind = error.get("type") or error.get("status")  # Gemini: a google.rpc status word
    return (
        str(error.get("message", "")),
        None if kind is None else str(kind),
        None if code is None else str(code),
    )


def _transport_error(exc: Exception) -> ProviderError:
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
        return ProviderError("connect_error", f"{type(exc).__name__}: {exc}")
    if isinstance(exc, httpx.ReadTimeout):
        return ProviderError("idle_timeout", f"ReadTimeout: {exc}")
    return ProviderError("reset", f"{type(exc).__name__}: {exc}")


def _merge(prefix: AssistantMessage, continuation: AssistantMessage) -> AssistantMessage:
    """Join a truncated text with its one continuation (the only sanctioned join, S6)."""
    return AssistantMessage(
        prefix.text + continuation.text,
        continuation.tool_calls,
        continuation.finish,
        Usage.total([prefix.usage, continuation.usage]),
        continuation.attempt_id,
        continuation.model or prefix.model,
        continuation_of=prefix.attempt_id,
    )


def drop_images(body: Mapping[str, Any]) -> dict[str, Any]:
    """Replace every image part of the conversation with a text placeholder (413, S5).

    Every dialect: OpenAI ``image_url`` / ``input_image`` parts, Anthropic
    ``image`` blocks (also inside ``tool_result`` content), Gemini ``inlineData``
    and ``fileData`` parts.

    >>> body = {"messages": [{"role": "user", "content": [{"type": "image"}]}]}
    >>> drop_images(body)["messages"][0]["content"][0]["type"]
    'text'
    """
    keys = {spec.conversation for spec in SPECS.values()} & set(body)
    return {**body, **{key: [_without_images(turn) for turn in body.get(key) or []]
                       for key in keys}}


def _without_images(node: Any) -> Any:
    if isinstance(node, list):
        return [_without_images(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("type") in ("image", "image_url", "input_image"):
        return {"type": "text", "text": IMAGE_PLACEHOLDER}
    if "inlineData" in node or "fileData" in node:
        return {"text": IMAGE_PLACEHOLDER}
    return {key: _without_images(value) for key, value in node.items()}
