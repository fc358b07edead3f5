"""Token usage of one attempt: what an agent reports and the checkers and budgets add up.

It belongs to the contract (an :class:`~harness.ports.AgentOutcome` carries the
billed usage), so it lives here, beside it, not in the reference agent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one attempt, as the provider reported it.

    ``input_tokens`` counts *all* prompt tokens, cached or not (OpenAI
    ``prompt_tokens``; Anthropic ``input_tokens + cache_read_input_tokens +
    cache_creation_input_tokens``), so billed and context tokens compare across
    dialects. ``None`` in a cache field means "not reported", never zero.

    >>> Usage(10, 2, 4, None) + Usage(5, 1, None, None)
    Usage(input_tokens=15, output_tokens=3, cache_read_tokens=4, cache_write_tokens=None)
    """

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            _add_optional(self.cache_read_tokens, other.cache_read_tokens),
            _add_optional(self.cache_write_tokens, other.cache_write_tokens),
        )

    @staticmethod
    def total(usages: Iterable[Usage | None]) -> Usage | None:
        """Sum the reported usages; ``None`` when none was reported.

        >>> Usage.total([None, Usage(1, 1)])
        Usage(input_tokens=1, output_tokens=1, cache_read_tokens=None, cache_write_tokens=None)
        """
        result: Usage | None = None
        for usage in usages:
            if usage is not None:
                result = usage if result is None else result + usage
        return result


def _add_optional(left: int | None, right: int | None) -> int | None:
    if left is None:
        return right
    if right is None:
        return left
    return left + right
