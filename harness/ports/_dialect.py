"""The wire dialects a provider speaks, named once for the agent core, the fakes and scenarios.

Each dialect is one :class:`DialectSpec`: the facts about its API that both the
agent and the fake provider need alike (where a stream is requested, which
header carries the request id). The behaviour built on them lives beside its
user, in one registry each, keyed by :data:`Dialect`: the wire encoders in
``fakes._dialects``, the request builders and accumulators in
``harness.agent._dialects``.

>>> SPECS["gemini"].stream_path("fake-flash")
'/v1beta/models/fake-flash:streamGenerateContent'
>>> SPECS["openai-responses"].stream_path("any")
'/v1/responses'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from harness._errors import ConfigError, one_of

Dialect = Literal["openai", "anthropic", "openai-responses", "gemini"]
DIALECTS: tuple[Dialect, ...] = get_args(Dialect)

#: Whose conversation shape a dialect's request reads as (see ``fakes._dialects.chat_view``):
#: the Responses API's ``input`` items and Gemini's ``contents`` are read as Chat
#: Completions ``messages``, so the scripted model and the checkers know two shapes only.
Family = Literal["openai", "anthropic"]

#: Why the model stopped, in OpenAI's vocabulary (the other APIs' reasons are mapped onto
#: it): what a scenario scripts, what the fake provider sends and what the trace keeps.
FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "refusal"]
FINISH_REASONS: tuple[FinishReason, ...] = get_args(FinishReason)
#: Finishes that withhold the answer: none of its tool calls may run (seed 002 §19.1 ②).
WITHHELD_FINISHES: frozenset[FinishReason] = frozenset({"content_filter", "refusal"})

#: Request headers that carry the attempt's identity to the provider, so a provider-side
#: record (and the harness's per-attempt rows) joins the agent's own attempt records
#: (seed 002 §19.6: every record stream carries the attemptId), and the retry layer a
#: retry was made at. The world reads both into the trace.
ATTEMPT_ID_HEADER = "x-attempt-id"
RETRY_LAYER_HEADER = "x-retry-layer"


@dataclass(frozen=True)
class DialectSpec:
    """What an API looks like from outside: origin of its fake, paths, id header.

    ``path`` is the streaming path; ``{model}`` in it stands for the model name
    (Gemini names the model in the URL, the others in the body). ``sdk_base`` is
    what the official SDK's ``base_url`` adds to the origin; ``conversation`` the
    body field that holds the conversation; ``json_path`` the path of a request
    that does not stream, where the path decides (Gemini's ``:generateContent``).
    ``environment`` names the variables the official SDK reads its base URL and
    key from. ``{version}`` in a path stands for one of ``versions`` (Gemini serves
    ``v1beta`` and ``v1`` alike; the first is the one the agent calls).
    ``other_environment`` names the base-URL variables other mainstream clients of the
    API read instead, each with the path it adds to the origin (litellm's ``gemini/``
    models read ``GEMINI_API_BASE``, its version included, and not google-genai's
    ``GOOGLE_GEMINI_BASE_URL``: without it they would call the real host). Two
    dialects of one provider share its host (Chat Completions and Responses), as
    they share ``api.openai.com``; the path tells them apart.
    """

    name: Dialect
    host: str
    sdk_base: str
    path: str
    request_id_header: str
    family: Family
    environment: tuple[str, str]
    conversation: str = "messages"
    json_path: str = ""
    versions: tuple[str, ...] = ()
    # How an answer cut at the output limit ends, in the API's own words (a report names it so).
    cut_at_limit: str = "finish_reason 'length'"
    other_environment: tuple[tuple[str, str], ...] = ()

    @property
    def origin(self) -> str:
        """Scheme and host of the fake provider for this dialect."""
        return f"https://{self.host}"

    def stream_path(self, model: str) -> str:
        """The path a streaming request is POSTed to."""
        return self._filled(self.path).replace("{model}", model)

    def _filled(self, template: str) -> str:
        return template.replace("{version}", self.versions[0]) if self.versions else template


_OPENAI_ENVIRONMENT = ("OPENAI_BASE_URL", "OPENAI_API_KEY")

SPECS: dict[Dialect, DialectSpec] = {
    "openai": DialectSpec("openai", "openai.fake.test", "/v1", "/v1/chat/completions",
                          "x-request-id", "openai", _OPENAI_ENVIRONMENT),
    "anthropic": DialectSpec("anthropic", "anthropic.fake.test", "", "/v1/messages",
                             "request-id", "anthropic",
                             ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
                             cut_at_limit="stop_reason 'max_tokens'"),
    "openai-responses": DialectSpec("openai-responses", "openai.fake.test", "/v1",
                                    "/v1/responses", "x-request-id", "openai",
                                    _OPENAI_ENVIRONMENT, "input",
                                    cut_at_limit="status 'incomplete' (incomplete_details.reason "
                                    "'max_output_tokens')"),
    "gemini": DialectSpec("gemini", "gemini.fake.test", "",
                          "/{version}/models/{model}:streamGenerateContent",
                          "x-goog-request-id", "openai",
                          ("GOOGLE_GEMINI_BASE_URL", "GOOGLE_API_KEY"), "contents",
                          json_path="/{version}/models/{model}:generateContent",
                          versions=("v1beta", "v1"), cut_at_limit="finishReason 'MAX_TOKENS'",
                          other_environment=(("GEMINI_API_BASE", "/v1beta"),)),
}
"""Every dialect's spec; a dialect is added here and in the two behaviour registries."""


def family_of(dialect: str) -> Family:
    """Whose conversation shape ``dialect``'s requests read as; unknown names read as OpenAI.

    >>> family_of("gemini"), family_of("anthropic")
    ('openai', 'anthropic')
    """
    return next((spec.family for spec in SPECS.values() if spec.name == dialect), "openai")


def cut_at_limit(dialect: str) -> str:
    """How ``dialect`` says an answer was cut at the output limit; unknown names read as OpenAI.

    >>> cut_at_limit("anthropic"), cut_at_limit("gemini")
    ("stop_reason 'max_tokens'", "finishReason 'MAX_TOKENS'")
    """
    spec = next((spec for spec in SPECS.values() if spec.name == dialect), SPECS["openai"])
    return spec.cut_at_limit


def check_dialect(dialect: object) -> Dialect:
    """Return ``dialect`` if known, else raise :class:`~harness.ConfigError`."""
    for known in DIALECTS:
        if dialect == known:
            return known
    raise ConfigError("dialect", dialect, one_of(DIALECTS))
