"""The adapter boundary: how any Python agent is run and judged by the harness (DESIGN §4).

The runner builds one :class:`AgentPorts` per incarnation and asks an
:data:`AgentFactory` for an agent. The agent touches the world only through the
ports: the HTTP client whose transport is the fake provider, the disk, the
tools, the clock and the seed. It never imports the runner, the explorer or the
checkers. A crash (``fakes.SimulatedCrash``) may interrupt any ``await``; the
agent is then thrown away and a new one is built from the same ports' durable
state, with the incarnation number one higher.

The reference core (:class:`harness.agent.ReferenceAgent`) is one
implementation; a second, minimal agent in the tests is another. Example::

    def build(ports: AgentPorts) -> Agent:
        return MyAgent(http=ports.http, endpoint=ports.endpoint, disk=ports.disk, ...)

    outcome = await build(ports).run(task)
    assert outcome.stop_state == "complete"
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, get_args

import httpx

from harness.ports._clock import Clock
from harness.ports._dialect import Dialect
from harness.ports._disk import Disk
from harness.ports._goals import GoalPort
from harness.ports._jobs import JobPort
from harness.ports._tools import Tool
from harness.ports._usage import Usage

#: How a run ended (DESIGN L5). An infrastructure failure never ends as ``complete``.
StopState = Literal[
    "complete",
    "blocked",
    "paused",
    "infra_paused",
    "usage_limited",
    "budget_limited",
    "failed",
    "cancelled",
]
STOP_STATES: tuple[StopState, ...] = get_args(StopState)

#: How a tool reply tells the model what happened (seed 002 §19.1 names the two that
#: matter: ``not_started`` is TOOL_NOT_STARTED, ``unknown`` is TOOL_OUTCOME_UNKNOWN);
#: a transcript's tool messages carry it, and the trace keeps it.
ReplyStatus = Literal["ok", "error", "not_started", "unknown", "timeout", "cancelled"]
REPLY_STATUSES: Final[tuple[ReplyStatus, ...]] = get_args(ReplyStatus)
#: What each status tells the model, in a sentence (the README's table is made from it).
REPLY_STATUS_MEANINGS: Final[dict[ReplyStatus, str]] = {
    "ok": "the tool ran; the content is its result",
    "error": "the tool ran, or refused the call, and failed",
    "not_started": "the call never started (TOOL_NOT_STARTED)",
    "unknown": "the call may or may not have taken effect (TOOL_OUTCOME_UNKNOWN)",
    "timeout": "the call ran past its timeout (TOOL_TIMEOUT)",
    "cancelled": "the call was cancelled",
}


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it (name, description, JSON Schema of its arguments).

    ``timeout_seconds`` is the agent's own limit for one call of it (J7);
    ``secret_arguments`` name the arguments whose values must never reach a durable
    file (J3), beside those under secret-looking keys (``password``, ``api_key`` …).
    """

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    timeout_seconds: float | None = None
    secret_arguments: tuple[str, ...] = ()


@dataclass(frozen=True)
class UsagePrices:
    """What the model costs, in dollars per million tokens of each bucket (for the cost budget).

    >>> UsagePrices(2.0, 0.5, 8.0).cost(Usage(1_000_000, 0))
    2.0
    """

    input: float
    cache_read: float
    output: float

    def cost(self, usage: Usage) -> float:
        cached = usage.cache_read_tokens or 0
        fresh = max(0, usage.input_tokens - cached)
        return (fresh * self.input + cached * self.cache_read
                + usage.output_tokens * self.output) / 1_000_000


@dataclass(frozen=True)
class Task:
    """What the agent is asked to do, and the budget it may spend doing it (L3, L4, S8).

    ``max_tokens`` and ``max_cost_usd`` (priced by ``prices``) cap the billed
    usage of the whole run (seed 002 §19.2, GoalBudget); ``context_window`` is the
    model's window in prompt tokens, which the agent compacts to stay under.
    """

    prompt: str
    model: str = "fake-model"
    tools: tuple[ToolSpec, ...] = ()
    max_turns: int = 8
    deadline_seconds: float = 900.0
    max_attempts: int = 30
    max_output_tokens: int = 1024
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    # Tool calls the run may start (seed 002 §19.2, ToolBudget(maxCalls)); None: no cap.
    max_tool_calls: int | None = None
    # Background jobs the run may start, across restarts (seed 002 §19.2,
    # BackgroundBudget(maxJobs)); None: no cap.
    max_jobs: int | None = None
    # How long a background job may run from its process's start, across restarts (seed 002
    # §19.2, BackgroundBudget(maxRuntime)); None: no cap.
    max_job_seconds: float | None = None
    # Lines of output a background job may write, across restarts (seed 002 §19.2,
    # BackgroundBudget(maxOutput)); None: no cap.
    max_job_output_lines: int | None = None
    # The most characters of one tool result a request may carry inline (seed 002 §19.2:
    # 超长输出有稳定引用); None: the agent's own setting. A longer result is kept whole where
    # the agent can read it again, and the model is sent a part of it and its reference.
    max_tool_result_chars: int | None = None
    # A tool run after each tool call that returned, and how deep a hook may fire within
    # its own hook (seed 002 §19.1 ③, 钩子死循环防护); None: no hook.
    after_tool_hook: str | None = None
    hook_max_depth: int = 1
    prices: UsagePrices | None = None
    context_window: int | None = None
    # The most output tokens the model may be asked for (None: not known); above
    # max_output_tokens, a cut answer may be resampled with a raised limit (seed 002 §19.1,
    # truncation level 1).
    output_ceiling: int | None = None
    # The session is collected as training data (seed 002 §19.1 ①: 训练数据收集模式则拒绝修补):
    # no placeholder reply may stand in for a result the agent does not have. A cut call or
    # a call a crash left without its result stops the run instead (truncation level 4).
    training_data: bool = False
    # The deployment caches prompts at explicit breakpoints (Anthropic's ``cache_control``):
    # mark the stable prefix and the newest message (seed 002 §19.7). The other APIs cache
    # without marks.
    cache_breakpoints: bool = False
    # A second model to switch to when ``model`` keeps failing with retryable errors (5xx,
    # 529, stalls, resets) past the retry budget (seed 002 §19.2: 切备用线路); None: none.
    backup_model: str | None = None


@dataclass(frozen=True)
class AgentPorts:
    """Everything an incarnation may touch. ``state_dir`` is where its durable files live.

    ``goals`` is the goal service (seed 002 §19.3), offered when the scenario
    declares a goal; an agent may ignore it and is then judged ``unknown`` on goals.
    """

    http: httpx.AsyncClient
    endpoint: str
    dialect: Dialect
    disk: Disk
    state_dir: str
    tools: Mapping[str, Tool]
    clock: Clock
    seed: int
    incarnation: int
    run_id: str
    jobs: JobPort | None = None
    """The world's job runner (seed 002 §19.4), when the scenario declares jobs."""
    goals: GoalPort | None = None


@dataclass(frozen=True)
class ToolCallView:
    """A tool call in an assistant message, as the checkers read it."""

    call_id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class TranscriptMessage:
    """One message of the agent's trusted transcript, dialect-neutral.

    ``role`` is ``user``, ``assistant`` or ``tool``. Assistant messages carry the
    ``attempt_id`` they were committed from and their ``tool_calls``; tool
    messages carry the ``call_id`` they answer, a :data:`ReplyStatus` (``ok``, ``error``,
    ``not_started``, ``unknown``, ``timeout``, ``cancelled``) and whether the harness of the
    agent made them up during recovery (``synthetic``).
    """

    role: Literal["user", "assistant", "tool"]
    turn_id: str
    text: str = ""
    tool_calls: tuple[ToolCallView, ...] = ()
    attempt_id: str | None = None
    call_id: str | None = None
    status: ReplyStatus | None = None
    synthetic: bool = False


@dataclass(frozen=True)
class AgentOutcome:
    """How a run ended, with the evidence the checkers read.

    ``billed_usage`` is the cumulative usage of every attempt, each counted once;
    ``context_tokens`` is the input size of the last request (L6).
    ``infra_failure`` says an infrastructure failure was met on the way (I4).
    An agent that reports no ``transcript`` is judged on the one the world saw
    (its requests); ``final_text`` is the answer it returned, kept beside the
    transcript, not in it (only the model's words are committed messages). ``agent_traceback``
    is the agent's own traceback when an exception of its code ended the run.
    """

    stop_state: StopState
    reason: str
    transcript: tuple[TranscriptMessage, ...]
    billed_usage: Usage | None
    context_tokens: int | None
    turns: int
    infra_failure: bool = False
    attempt_ids: tuple[str, ...] = ()
    final_text: str | None = None
    agent_traceback: str | None = None


@dataclass(frozen=True)
class RecoveryReport:
    """What one call of :meth:`Agent.recover` found and repaired (J4, J5)."""

    not_started: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    repaired_replies: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.not_started or self.unknown or self.repaired_replies)


class Agent(Protocol):
    """An agent the harness can run, crash, rebuild and judge."""

    async def recover(self) -> RecoveryReport:
        """Bring durable state to a consistent point; a second call changes nothing (I11)."""
        ...

    async def run(self, task: Task) -> AgentOutcome:
        """Recover if needed, then work on ``task`` until a stop state."""
        ...


AgentFactory = Callable[[AgentPorts], Agent]
