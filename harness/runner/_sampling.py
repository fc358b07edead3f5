"""How a request asked the model to sample and how long an answer it allowed.

retry:doom-loop: how each request samples, and whether it carried a loop back;
S6:limit: the output limit each request asks for.

Seed 002 §19.1: a degenerate, repeating answer (DoomLoop) is not cured by sending the
same request again, only by a resample with other sampling parameters, and its text is
no answer to build on. The world notes both for each request of a scenario with a
``doom_loop`` fault; the check reads them from the trace.

Example::

    sampling_of({"model": "m", "temperature": 0.8, "messages": []})   # ('temperature=0.8',)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from harness.runner._observed import observed_transcript

# The sampling parameters of every dialect's request: top level (Chat Completions,
# Responses, Messages) or in Gemini's generationConfig, in either spelling.
_SAMPLING_KEYS = frozenset({
    "temperature", "top_p", "top_k", "frequency_penalty", "presence_penalty", "seed",
    "topP", "topK", "frequencyPenalty", "presencePenalty",
})


def sampling_of(body: Mapping[str, object] | None) -> tuple[str, ...]:
    """The sampling parameters a request set, as sorted ``name=value`` (empty: the defaults).

    >>> sampling_of({"temperature": 1, "generationConfig": {"topP": 0.9, "maxOutputTokens": 9}})
    ('temperature=1', 'topP=0.9')
    >>> sampling_of(None)
    ()
    """
    if body is None:
        return ()
    found = dict(_sampling_items(body))
    config = body.get("generationConfig")
    if isinstance(config, Mapping):
        found.update(_sampling_items(config))
    return tuple(sorted(f"{name}={value}" for name, value in found.items()))


def _sampling_items(mapping: Mapping[str, object]) -> Iterable[tuple[str, object]]:
    return ((k, v) for k, v in mapping.items() if k in _SAMPLING_KEYS and v is not None)


def carries_loop(dialect: str, body: Mapping[str, object] | None,
                 phrases: tuple[str, ...]) -> bool:
    """Whether a message of the request's conversation says one of ``phrases`` twice running.

    >>> body = {"messages": [{"role": "assistant", "content": "go. go. go. "}]}
    >>> carries_loop("openai", body, ("go.",)), carries_loop("openai", body, ("stop.",))
    (True, False)
    """
    doubled = tuple(f"{phrase} {phrase}" for phrase in phrases)
    return any(d in message.text for message in observed_transcript(dialect, body)
               for d in doubled)


# Where each dialect's request names its output limit (Gemini's in generationConfig).
_LIMIT_KEYS = ("max_completion_tokens", "max_tokens", "max_output_tokens")


def output_limit_of(body: Mapping[str, object] | None) -> int | None:
    """The output limit a request asks for, in any dialect's spelling (``None``: none).

    >>> output_limit_of({"max_tokens": 1024}), output_limit_of({"generationConfig":
    ...                                                         {"maxOutputTokens": 9}})
    (1024, 9)
    """
    if body is None:
        return None
    config = body.get("generationConfig")
    found = [body.get(key) for key in _LIMIT_KEYS]
    if isinstance(config, Mapping):
        found.append(config.get("maxOutputTokens"))
    return next((v for v in found if isinstance(v, int) and not isinstance(v, bool)), None)
