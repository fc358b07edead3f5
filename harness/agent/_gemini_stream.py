"""Accumulating a Gemini ``streamGenerateContent?alt=sse`` stream into one message (S4, S9, S10).

Wire format: every ``data:`` frame is a whole ``GenerateContentResponse``; the
first candidate's ``content.parts`` carry ``text`` pieces and whole
``functionCall`` parts (``id``, ``name``, ``args`` as an object). There is no
``[DONE]``: the chunk whose candidate has a ``finishReason`` ends the answer,
with ``usageMetadata`` (``promptTokenCount`` including ``cachedContentTokenCount``).
An error is ``{"error": {"code", "message", "status"}}``.

S9: a stream that closes before a ``finishReason`` is truncated, never done.
``MALFORMED_FUNCTION_CALL`` (the model produced a call the API could not
parse) fails the attempt as an in-stream error: no call of it may run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, final

from harness.agent._classify import ProviderError, StreamFailure
from harness.agent._messages import AssistantMessage, ToolCall, with_call_ids
from harness.agent._openai_stream import OneTextState, load_frame, stream_error
from harness.ports import SSEEvent, Usage

#: ``finishReason`` → finish reason; ``STOP`` becomes ``tool_calls`` when calls came.
FINISH_REASONS: Mapping[str, str] = {
    "STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter",
    "RECITATION": "content_filter", "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter",
}
MALFORMED_CALL = "MALFORMED_FUNCTION_CALL"


@final
class GeminiAccumulator(OneTextState):
    """Feed the SSE events of one attempt; :meth:`finish` returns the message.

    >>> acc = GeminiAccumulator()
    >>> for data in ['{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}',
    ...              '{"candidates":[{"content":{"parts":[]},"finishReason":"STOP"}]}']:
    ...     acc.feed(SSEEvent("message", data, None, None))
    >>> acc.finish("att_1").finish
    'stop'
    """

    def __init__(self) -> None:
        super().__init__()
        self._calls: list[ToolCall] = []

    def feed(self, event: SSEEvent) -> None:
        """Take one event; raises :class:`StreamFailure` on an error or bad frame."""
        if self.done:
            return
        chunk = load_frame(event.data)
        if chunk.get("error"):
            raise StreamFailure(_error_of(chunk["error"]))
        self.take(self._take_chunk, chunk, event.data)

    def _take_chunk(self, chunk: dict[str, Any]) -> None:
        if isinstance(chunk.get("modelVersion"), str):
            self._model = chunk["modelVersion"]
        if isinstance(chunk.get("usageMetadata"), dict):
            self._usage = _usage_of(chunk["usageMetadata"])
        candidates = chunk.get("candidates") or []
        if not candidates:
            return
        candidate = candidates[0]
        for part in (candidate.get("content") or {}).get("parts") or ():
            self._take_part(part)
        reason = candidate.get("finishReason")
        if reason is not None:
            self._take_finish(str(reason), candidate)

    def _take_part(self, part: dict[str, Any]) -> None:
        if isinstance(part.get("text"), str) and not part.get("thought"):
            self._text.append(part["text"])
        call = part.get("functionCall")
        if isinstance(call, dict):
            arguments = json.dumps(call.get("args") or {}, ensure_ascii=False)
            self._calls.append(ToolCall.parse(str(call.get("id") or ""),
                                              str(call.get("name") or ""), arguments))

    def _take_finish(self, reason: str, candidate: dict[str, Any]) -> None:
        if reason == MALFORMED_CALL:
            message = str(candidate.get("finishMessage") or "malformed function call")
            raise StreamFailure(ProviderError("stream_error", message, error_type=reason))
        finish = FINISH_REASONS.get(reason, reason.lower())
        self._finish = "tool_calls" if finish == "stop" and self._calls else finish
        self.done = True

    def finish(self, attempt_id: str) -> AssistantMessage:
        """The complete message; a stream without a ``finishReason`` is truncated."""
        if not self.done or self._finish is None:
            raise StreamFailure(ProviderError(
                "truncated_stream", "stream ended without a finishReason"))
        calls = with_call_ids(tuple(self._calls), attempt_id)
        return AssistantMessage(self.partial_text, calls, self._finish, self._usage,
                                attempt_id, self._model)


def _error_of(error: object) -> ProviderError:
    fields = error if isinstance(error, dict) else {"message": str(error)}
    return stream_error({"message": fields.get("message"), "type": fields.get("status"),
                         "code": fields.get("status")})


def _usage_of(raw: dict[str, Any]) -> Usage:
    # Proto3 JSON leaves out a zero: no cachedContentTokenCount means nothing was cached.
    return Usage(int(raw.get("promptTokenCount") or 0),
                 int(raw.get("candidatesTokenCount") or 0),
                 int(raw.get("cachedContentTokenCount") or 0), None)
