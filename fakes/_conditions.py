"""Conditions of the provider that no (turn, attempt) key describes: its context window
and its outages.

Faults (declared in :mod:`harness.ports._faults`, applied by :mod:`fakes._faults`) bend
one keyed response. These two hold for every request alike, so they stay true whatever
a restarted agent re-sends:

- :class:`ContextWindow`: a request whose prompt is longer than the model's
  window is refused with the dialect's real context-length error (seed 002 §19.1,
  pi: "上下文溢出不会落入普通网络重试,而是先压缩上下文再重试一次"). OpenAI answers 400
  with ``code: context_length_exceeded``; Anthropic 400 ``invalid_request_error``
  with "prompt is too long: N tokens > M maximum";
- :class:`Outage`: for a window of virtual time the provider answers every request
  with a server error or drops the connection (seed 002 §19.1, "熔断解决下游整体持续
  故障"), the long outage a circuit breaker is for.

Example::

    window = ContextWindow(tokens=4000)
    window.overflow_body("openai", prompt_tokens=5210, request_id="req_1")   # b'{"error":...}'
    Outage(start_seconds=10, end_seconds=300).covers(42.0)                    # True
"""

from __future__ import annotations

from dataclasses import dataclass

from fakes._wire import compact_json
from harness._errors import ConfigError, one_of
from harness.ports import OUTAGE_ANSWERS, Dialect, OutageAnswer, family_of


@dataclass(frozen=True)
class ContextWindow:
    """The model's context window in tokens (the fakes' tokenizer counts the prompt).

    >>> ContextWindow(100).overflows(101), ContextWindow(100).overflows(100)
    (True, False)
    """

    tokens: int

    def __post_init__(self) -> None:
        if isinstance(self.tokens, bool) or not isinstance(self.tokens, int) or self.tokens < 1:
            raise ConfigError("ContextWindow.tokens", self.tokens, "an int >= 1")

    def overflows(self, prompt_tokens: int) -> bool:
        return prompt_tokens > self.tokens

    def overflow_body(self, dialect: Dialect, prompt_tokens: int, request_id: str) -> bytes:
        """The 400 body the dialect's API sends for a prompt longer than the window."""
        if dialect == "gemini":
            message = (f"The input token count ({prompt_tokens}) exceeds the maximum number of "
                       f"tokens allowed ({self.tokens}).")
            return compact_json({"error": {"code": 400, "message": message,
                                           "status": "INVALID_ARGUMENT"}}).encode()
        if family_of(dialect) == "openai":
            message = (f"This model's maximum context length is {self.tokens} tokens. However, "
                       f"your messages resulted in {prompt_tokens} tokens. Please reduce the "
                       "length of the messages.")
            error = {"message": message, "type": "invalid_request_error", "param": "messages",
                     "code": "context_length_exceeded"}
            return compact_json({"error": error}).encode()
        message = f"prompt is too long: {prompt_tokens} tokens > {self.tokens} maximum"
        return compact_json({"type": "error", "request_id": request_id,
                             "error": {"type": "invalid_request_error",
                                       "message": message}}).encode()


@dataclass(frozen=True)
class Outage:
    """The provider is down from ``start_seconds`` (inclusive) to ``end_seconds`` (exclusive).

    ``model`` scopes it to the requests naming that model (one model overloaded, the
    others answering: what a backup model is for); ``None``: every request.

    >>> Outage(0, 60, 503).covers(60.0)
    False
    >>> Outage(0, 60, 529, model="big").strikes(5.0, "small")
    False
    """

    start_seconds: float
    end_seconds: float
    answer: OutageAnswer = 503
    model: str | None = None

    def __post_init__(self) -> None:
        for name in ("start_seconds", "end_seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"Outage.{name}", value, "a number of seconds >= 0")
        if self.end_seconds <= self.start_seconds:
            raise ConfigError("Outage.end_seconds", self.end_seconds,
                              f"a time after start_seconds ({self.start_seconds:g})")
        if self.answer not in OUTAGE_ANSWERS or isinstance(self.answer, bool):
            raise ConfigError("Outage.answer", self.answer, one_of(OUTAGE_ANSWERS))
        if self.model is not None and (not isinstance(self.model, str) or not self.model):
            raise ConfigError("Outage.model", self.model, "a model name, or None for every model")

    def covers(self, now: float) -> bool:
        return self.start_seconds <= now < self.end_seconds

    def strikes(self, now: float, model: str | None) -> bool:
        """Whether a request naming ``model`` at ``now`` meets this outage."""
        return self.covers(now) and (self.model is None or self.model == model)


@dataclass(frozen=True)
class ProviderConditions:
    """Everything :class:`~fakes.FakeProvider` checks before the script answers.

    ``now`` reads the world's clock (outages are windows of virtual time).
    """

    context_window: ContextWindow | None = None
    outages: tuple[Outage, ...] = ()

    def outage_at(self, now: float, model: str | None = None) -> Outage | None:
        """The outage a request naming ``model`` meets at ``now``, if any."""
        return next((o for o in self.outages if o.strikes(now, model)), None)
