"""Which goal revisions a request told the model (I5:context; seed 002 §19.3).

"压缩前后都从 Goal 服务重新读取 objective、验收条件……每轮动态注入": a request carries a
revision when its body holds the revision's objective and every acceptance criterion,
wherever the agent put them (system prompt, a user message, an instructions field). The
strings are looked for as JSON encodes them, so a criterion with a quote or a newline is
found in the body as sent.

>>> from harness.ports import Goal
>>> goal = Goal("g", 1, "ship the release", ("the tests pass",))
>>> revisions_in((goal,), {"system": "Goal g: ship the release. Done when: the tests pass"})
(1,)
>>> revisions_in((goal,), {"system": "ship the release"})
()
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from harness.ports import Goal


def revisions_in(revisions: Iterable[Goal], body: Mapping[str, object] | None) -> tuple[int, ...]:
    """The revisions among ``revisions`` whose objective and criteria ``body`` carries."""
    if body is None:
        return ()
    text = json.dumps(body, ensure_ascii=False)
    return tuple(goal.revision for goal in revisions
                 if all(_encoded(s) in text for s in (goal.objective, *goal.acceptance)))


def _encoded(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)[1:-1]
