"""Tool declarations: what each fake tool does to the world, and how it misbehaves.

Behaviour kinds and fields are exactly those of ``fakes.Behaviour``, so the
runner builds one with ``fakes.Behaviour(b.kind, **b.fake_fields())``.

    >>> ToolDeclaration(kind="read").is_concurrency_safe
    True
    >>> ToolDeclaration(kind="append", behaviour={"kind": "slow", "seconds": 2}).behaviour
    SlowBehaviour(kind='slow', seconds=2.0)
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, get_args

from pydantic import Field

from harness.ports import MAX_OUTPUT_CHARS, ToolKind
from harness.scenario._base import ScenarioModel
from harness.scenario._faults import Seconds, as_fake_fields
from harness.scenario._names import CONCURRENCY_SAFE_KINDS, TARGET_PATTERN


class _BehaviourBase(ScenarioModel):
    def fake_fields(self) -> dict[str, Any]:
        """The keyword arguments of ``fakes.Behaviour`` besides ``kind``.

        >>> SlowBehaviour(kind="slow", seconds=2).fake_fields()
        {'seconds': 2.0}
        """
        return as_fake_fields(self.model_dump(exclude={"kind"}))


class InstantBehaviour(_BehaviourBase):
    """The tool answers at once (the default when no behaviour is given)."""

    kind: Literal["instant"]


class SlowBehaviour(_BehaviourBase):
    """The tool takes this long (virtual time) before it answers."""

    kind: Literal["slow"]
    seconds: Seconds
    """Virtual seconds the tool runs."""


class FailingBehaviour(_BehaviourBase):
    """The tool raises an error on every call; the agent sees it as the tool's reply."""

    kind: Literal["failing"]


class ReplyLostBehaviour(_BehaviourBase):
    """The tool does its work, then the connection drops before its answer: the agent gets
    a connection reset (over HTTP, a connection closed without a response) and cannot tell
    whether the call took effect (seed 000 §4: 没有送出 or 是否送达还不清楚)."""

    kind: Literal["reply_lost"]


class HangingBehaviour(_BehaviourBase):
    """The tool never answers; only a timeout or cancellation ends it (rule J7)."""

    kind: Literal["hanging"]


class IgnoresCancellationBehaviour(_BehaviourBase):
    """The tool swallows cancellation and keeps running for ``seconds`` (rule J7)."""

    kind: Literal["ignores_cancellation"]
    seconds: Seconds
    """Virtual seconds it carries on after being cancelled."""


class SubprocessBehaviour(_BehaviourBase):
    """The tool runs a child process, which a timeout must kill with its group."""

    kind: Literal["subprocess"]
    argv: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
    """The command line of the child, such as [sleep, "5"]."""
    env: list[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]] = []  # noqa: RUF012
    """Environment variables the child gets besides PATH, HOME, LANG, TMPDIR and the like
    (fakes.CHILD_ENVIRONMENT); nothing else of the harness's environment reaches it."""


AnyBehaviour = Annotated[
    InstantBehaviour
    | SlowBehaviour
    | FailingBehaviour
    | ReplyLostBehaviour
    | HangingBehaviour
    | IgnoresCancellationBehaviour
    | SubprocessBehaviour,
    Field(discriminator="kind"),
]
"""Any behaviour; ``kind`` picks the model."""

BEHAVIOUR_MODELS: Final[tuple[type[_BehaviourBase], ...]] = get_args(get_args(AnyBehaviour)[0])
BEHAVIOUR_KINDS: Final[tuple[str, ...]] = tuple(
    get_args(model.model_fields["kind"].annotation)[0] for model in BEHAVIOUR_MODELS
)


class ToolDeclaration(ScenarioModel):
    """One fake tool: its kind of side effect, its concurrency and its misbehaviour."""

    kind: ToolKind
    """append, send and put change the world (counted in the ledger); read and inspect look."""
    concurrency_safe: bool | None = None
    """May run beside other calls; null or absent: true for read and inspect, false otherwise."""
    behaviour: AnyBehaviour | None = None
    """How the tool misbehaves; absent: it answers at once."""
    timeout_seconds: Seconds | None = None
    """The agent's timeout for this tool; absent: the agent's default."""
    target: Annotated[str, Field(pattern=TARGET_PATTERN)] | None = None
    """The agent's own function this tool stands for, 'module:function'; replaced during a case."""
    secret: list[Annotated[str, Field(min_length=1, max_length=200)]] = []  # noqa: RUF012
    """Arguments whose values are secret, such as [password]: they must stay out of the agent's
    durable files (J3), the results and the reports, like values under secret-looking keys."""
    output_chars: Annotated[int, Field(ge=1, le=MAX_OUTPUT_CHARS)] | None = None
    """The tool's result also carries this many characters of a build log (numbered lines,
    the same every run) under 'output': a long result (seed 002 §19.2: 超长输出有稳定引用).
    Absent: its result is the kind's own."""

    @property
    def is_concurrency_safe(self) -> bool:
        """The declared flag, or the default of the tool's kind."""
        if self.concurrency_safe is not None:
            return self.concurrency_safe
        return self.kind in CONCURRENCY_SAFE_KINDS
