"""Truncation level 1: a cut answer asked for again with a raised output limit.

Seed 002 §19.1 ①: "第 1 级:完整 attempt 尚未提交且没有副作用 → 丢弃并提高上限重采样",
and grok-build: "重采样同样的 max_tokens 只会再截断" — fix the limit before retrying. An
answer cut at the request's own output limit, not yet committed (nothing of it ran), is
dropped and asked for again with the model's ceiling (``Task.output_ceiling``: output is
billed as used, so the higher limit costs nothing unless the answer needs it); cut again
there, level 2 (continue cut text) and level 3 (answer cut calls with an error) take over.

Example::

    output_limit({"max_completion_tokens": 1024}, "openai")            # 1024
    with_output_limit({"max_tokens": 1024}, "anthropic", 2048)         # {'max_tokens': 2048}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.ports import Dialect

# Where each dialect's request names its output limit (Gemini's is in generationConfig).
_LIMIT_KEYS: Mapping[Dialect, str] = {
    "openai": "max_completion_tokens",
    "anthropic": "max_tokens",
    "openai-responses": "max_output_tokens",
    "gemini": "maxOutputTokens",
}


def output_limit(body: Mapping[str, Any], dialect: Dialect) -> int | None:
    """The output limit ``body`` asks for, or ``None`` when it sets none.

    >>> output_limit({"generationConfig": {"maxOutputTokens": 512}}, "gemini")
    512
    """
    holder = body.get("generationConfig", {}) if dialect == "gemini" else body
    value = holder.get(_LIMIT_KEYS[dialect]) if isinstance(holder, Mapping) else None
    return value if isinstance(value, int) else None


def with_output_limit(body: Mapping[str, Any], dialect: Dialect, limit: int) -> dict[str, Any]:
    """``body`` asking for ``limit`` output tokens.

    >>> with_output_limit({"generationConfig": {"temperature": 1}}, "gemini", 9)
    {'generationConfig': {'temperature': 1, 'maxOutputTokens': 9}}
    """
    new = dict(body)
    if dialect == "gemini":
        new["generationConfig"] = {**new.get("generationConfig", {}), "maxOutputTokens": limit}
    else:
        new[_LIMIT_KEYS[dialect]] = limit
    return new


def raised_limit(limit: int | None, ceiling: int | None) -> int | None:
    """The limit to ask for after an answer cut at ``limit``; ``None``: no headroom known.

    >>> raised_limit(1024, 4096), raised_limit(4096, 4096), raised_limit(1024, None)
    (4096, None, None)
    """
    if limit is None or ceiling is None or limit >= ceiling:
        return None
    return ceiling
