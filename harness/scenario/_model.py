"""The scenario: one YAML file as plain, validated, immutable data.

A :class:`Scenario` does no I/O and runs nothing; the runner reads it. Every
check that spans fields lives in a model validator here, so a scenario built in
Python is held to the same rules as one loaded from YAML::

    >>> s = Scenario(name="hello", dialect="openai", model=[{"turn": 1, "text": "Hi."}],
    ...              expect={"stop_state": "complete"})
    >>> s.seed, s.crash.points, s.model[0].finish_reason
    (0, 'none', 'stop')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Final, Self, TypeGuard

from pydantic import Discriminator, Field, JsonValue, PrivateAttr, Tag, model_validator

from fakes import CRASH_CLASSES, CrashClass, Quota, quota_fields
from harness._errors import ConfigError
from harness._redact import MIN_SECRET_LENGTH, secret_leaves
from harness.ports import (
    FAULT_KINDS,
    MAX_OUTPUT_CHARS,
    MIN_INLINE_CHARS,
    PURE_TOOL_KINDS,
    Dialect,
    StopState,
    check_faults,
)
from harness.scenario._base import ScenarioModel
from harness.scenario._faults import AnyFault, Count, Seconds, value_model
from harness.scenario._goals import GoalDeclaration, VerifierRuleDeclaration, goal_problems
from harness.scenario._jobs import CancelFault, JobDeclaration, job_problems
from harness.scenario._long_run import (
    BreakerExpectation,
    ContextWindowTokens,
    ModelName,
    OutageDeclaration,
    backup_model_problems,
    outage_model_problems,
    unpriced_cost_budget,
)
from harness.scenario._names import (
    CRASH_POINT_PATTERN,
    DEFAULT_INVARIANTS,
    SCENARIO_NAME_PATTERN,
    TOOL_NAME_PATTERN,
    CrashPointSelection,
    InvariantId,
    ScriptedFinish,
    ToolOutcome,
)
from harness.scenario._problems import Loc, Problem, did_you_mean, quoted, raise_if_any, show
from harness.scenario._source import SourceMap
from harness.scenario._tools import ToolDeclaration

ToolName = Annotated[str, Field(pattern=TOOL_NAME_PATTERN)]
CrashPointId = Annotated[str, Field(pattern=CRASH_POINT_PATTERN)]
Tokens = Annotated[int, Field(ge=0, le=10_000_000_000)]


class ScriptedCall(ScenarioModel):
    """One tool call in a scripted reply."""

    tool: ToolName
    """The name of a tool declared under ``tools``."""
    args: dict[str, JsonValue] = {}  # noqa: RUF012
    """The call's arguments, sent to the agent as JSON."""


class ReplyCondition(ScenarioModel):
    """Pick a reply only when the request's last tool results match.

    ``tool`` and ``outcome`` set means one result must match both. ``applied``
    reads the world instead: the ledger must hold exactly these counts of side
    effects when the request arrives, what a real model learns from an inspect
    tool's result (so a script can send again only when the send never happened).
    """

    tool: ToolName | None = None
    """A tool whose result is among the request's last tool results."""
    outcome: ToolOutcome | None = None
    """The outcome that result must have, such as unknown_after_restart."""
    applied: dict[ToolName, Annotated[int, Field(ge=0, le=1_000_000)]] | None = None
    """Side effects the ledger holds per tool when the request arrives, such as {mail: 0}."""

    @model_validator(mode="after")
    def _not_empty(self) -> Self:
        if self.tool is None and self.outcome is None and not self.applied:
            raise_if_any([Problem((), "an empty 'when' matches nothing in particular",
                                  expected="'tool', 'outcome', 'applied' or a mix",
                                  hint="Remove 'when' to make this the turn's default reply")])
        return self


class ReplyUsage(ScenarioModel):
    """Token counts the provider reports for the reply."""

    input_tokens: Tokens
    """All input tokens of the request, cached ones included."""
    output_tokens: Tokens
    """Tokens generated."""
    cache_read_tokens: Tokens = 0
    """Input tokens served from the prompt cache."""
    cache_write_tokens: Tokens = 0
    """Input tokens written to the prompt cache."""


class Reply(ScenarioModel):
    """A scripted model reply, chosen by the conversation's turn and the ``when`` condition.

    The fake model is reactive (DESIGN §3): it answers a request from what the
    request contains, so a restarted agent that asks again gets the same answer.
    """

    turn: Count
    """The turn this reply answers, from 1."""
    when: ReplyCondition | None = None
    """Only when the last tool results match; absent: the turn's default reply."""
    text: Annotated[str, Field(max_length=1_000_000)] | None = None
    """The reply's text."""
    calls: list[ScriptedCall] = []  # noqa: RUF012
    """Tool calls, in the order the model emits them."""
    finish: ScriptedFinish | None = None
    """The finish reason; absent: tool_calls when there are calls, else stop."""
    usage: ReplyUsage | None = None
    """Reported usage; absent: the fake provider derives it from the text."""

    @property
    def finish_reason(self) -> ScriptedFinish:
        """``finish`` or its default."""
        if self.finish is not None:
            return self.finish
        return "tool_calls" if self.calls else "stop"

    @model_validator(mode="after")
    def _says_something(self) -> Self:
        if self.text is None and not self.calls:
            raise_if_any([Problem((), "a reply without 'text' or 'calls' says nothing",
                                  expected="'text', 'calls' or both",
                                  hint="An empty answer is written as text: \"\"")])
        return self


def _points_form(value: object) -> str | None:
    # Picking the branch by shape means a bad point id is reported once, as a bad
    # point id, instead of once per union member.
    if isinstance(value, str):
        return "selection"
    return "ids" if isinstance(value, list) else None


CrashPoints = Annotated[
    Annotated[CrashPointSelection, Tag("selection")]
    | Annotated[Annotated[list[CrashPointId], Field(min_length=1)], Tag("ids")],
    Discriminator(
        _points_form,
        custom_error_type="crash_points",
        custom_error_message="crash points are 'all', 'none' or a list of point ids",
    ),
]


class CrashSelection(ScenarioModel):
    """Where the crash explorer kills the agent, and how the disk looks afterwards."""

    points: CrashPoints = "none"
    """all, none, or point ids such as 'journal:fsync#3' (checked against a recorded run)."""
    classes: Annotated[list[CrashClass], Field(min_length=1)] = list(CRASH_CLASSES)  # noqa: RUF012
    """Crash states to try at each point; absent: every class."""
    during_recovery: bool = False
    """Also crash a second time while the restarted agent recovers."""
    then: CrashPointId | None = None
    """Crash a second time when a later incarnation reaches this point (a world event such as
    'after_tool:mail#1', or a point of the agent's own files), in the first crash's class: what
    a restart left behind (a torn last line) matters only at the next restart."""


class BudgetLimits(ScenarioModel):
    """The one budget every retry layer draws from (rule S8)."""

    max_turns: Count = 20
    """Model turns before the run stops as budget_limited."""
    max_attempts: Count = 40
    """Request attempts, retries included."""
    deadline_seconds: Seconds = 1800
    """Virtual seconds for the whole run."""
    max_tokens: Tokens | None = None
    """Billed tokens (input and output) the run may spend; absent: not capped (seed 002 §19.2)."""
    max_cost_usd: Annotated[float, Field(gt=0, le=1_000_000)] | None = None
    """Dollars the run may spend at the model's list price; absent: not capped."""
    max_tool_calls: Count | None = None
    """Tool calls the run may start; absent: not capped (seed 002 §19.2, ToolBudget(maxCalls)).
    A call the model asks for past the cap is not run, and the run ends budget_limited."""
    max_jobs: Count | None = None
    """Background jobs the run may start, across restarts; absent: not capped (seed 002 §19.2,
    BackgroundBudget(maxJobs)). A job the model asks for past the cap is not started, and the
    run ends budget_limited."""
    max_job_seconds: Seconds | None = None
    """How long a background job may run, in virtual seconds from its process's start, across
    restarts; absent: not capped (seed 002 §19.2, BackgroundBudget(maxRuntime)). A job still
    running then is stopped (TERM, then KILL), and the run ends budget_limited."""
    max_job_output_lines: Count | None = None
    """Lines of output a background job may write, counted from its first line, across restarts;
    absent: not capped (seed 002 §19.2, BackgroundBudget(maxOutput)). A job whose output an
    agent's read shows past it is stopped (TERM, then KILL), and the run ends budget_limited."""


class HookDeclaration(ScenarioModel):
    """A hook the agent runs after each tool call that returned (seed 002 §19.1 ③).

    The hook's own run is a tool call too, so it fires the hook again: 钩子又触发钩子.
    """

    run: ToolName
    """The tool the hook runs, a read or inspect tool the scenario declares (the hook
    looks; it changes nothing, so running it again after a restart is harmless)."""
    max_depth: Annotated[int, Field(ge=1, le=8)] = 1
    """How deep the hook may fire within its own runs: 1, it never fires after itself
    (the seed's 递归深度计数器)."""


if TYPE_CHECKING:
    class QuotaDeclaration(ScenarioModel):
        requests_per_minute: int | None
        tokens_per_minute: int | None
        input_tokens_per_minute: int | None
        output_tokens_per_minute: int | None
else:
    QuotaDeclaration = value_model(Quota, "QuotaDeclaration", __name__)
    """Requests and tokens per minute the provider admits, on virtual time."""

class Provider(ScenarioModel):
    """The fake provider: the model the requests name, and its prompt cache (DESIGN §7)."""

    model: ModelName = "fake-model"
    """The model name requests carry; it picks the price row and the cache's minimum length."""
    backup_model: ModelName | None = None
    """A second model the agent may switch to when this one keeps failing with retryable
    errors (5xx, 529, a stall or a reset) past its retry budget; told to the agent as
    ``Task.backup_model``, check retry:backup (seed 002 §19.2: 切备用线路). Absent: none."""
    prompt_cache: bool = False
    """Simulate the provider's prompt cache: OpenAI's automatic one, Anthropic's cache_control."""
    server_miss_rate: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 0.0
    """Share of cacheable requests that miss anyway, as routing does (seeded)."""
    latency: bool = False
    """Model time to first token: a base wait plus prefill of the uncached prompt tokens."""
    context_window: ContextWindowTokens | None = None
    """Prompt tokens the model takes; a longer request gets the dialect's context-length error."""
    max_output_tokens: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    """The most output tokens the model may be asked for. The agent is told it: an answer cut
    at the agent's own output limit (1,024 tokens) may be asked for again with a raised limit
    up to this one (truncation level 1, check S6:limit). Absent: no headroom is known."""
    outages: list[OutageDeclaration] = []  # noqa: RUF012
    """Windows of virtual time in which every request fails (a long outage)."""
    quota: QuotaDeclaration | None = None
    """Rate limits per minute of virtual time: a request over one gets the dialect's 429 with
    the exact wait in retry-after-ms (OpenAI) or retry-after (Anthropic)."""


class Expectation(ScenarioModel):
    """What a correct agent ends with."""

    stop_state: StopState
    """The stop state the run must end in (invariant I4)."""
    stop_state_after_disk_error: StopState = "infra_paused"
    """The stop state when the case's disk error (eio_*, enospc_*) was raised: the trusted log
    cannot be written, so the agent must stop before any further side effect (J6). Absent: a
    plain main(prompt), which can only return or raise, is expected to fail (failed)."""
    invariants: list[InvariantId] = list(DEFAULT_INVARIANTS)  # noqa: RUF012
    """Invariants to check; absent: all but I5."""
    side_effects: dict[ToolName, Annotated[int, Field(ge=0, le=1_000_000)]] = {}  # noqa: RUF012
    """Exact count of real side effects per tool in the ledger."""
    idle_bound_seconds: Seconds = 30
    """Longest silence an open stream may be waited on before the attempt is abandoned (S1)."""
    retry_after_cap_seconds: Seconds = 60
    """Retry-After waits up to this long must be honoured; longer ones may be surfaced (S5)."""
    max_consecutive_429: Count = 3
    """After this many 429 answers in a row the agent must stop asking (S5), usage_limited."""
    min_backoff_seconds: Annotated[float, Field(ge=0, le=3600)] = 1
    """A retry after a failure that asked for no wait comes this long after it at least (warn)."""
    breaker: BreakerExpectation | None = None
    """The circuit breaker the agent must keep during an outage; absent: not judged."""
    max_tool_result_chars: Annotated[int, Field(ge=MIN_INLINE_CHARS, le=MAX_OUTPUT_CHARS)] \
        | None = None
    """The most characters of one tool result a request may carry inline, as the model reads
    it; absent: not judged (seed 002 §19.2: 超长输出有稳定引用; §19.6: 只保存证据引用).
    A longer result is kept whole where the agent can read it again, and the model is sent a
    part of it and its reference (check context:tool-output). Told to an agent on the ports
    as Task.max_tool_result_chars; held to any agent, as real ones cut long output unasked."""


_LABEL: Final = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
HOST_PATTERN: Final = rf"^{_LABEL}(\.{_LABEL})*$"
"""A host name as ``absorb:`` takes it: no scheme, no port, no path."""


class Scenario(ScenarioModel):
    """One fault scenario: the tools, the scripted model, the faults, the crashes, the verdict."""

    name: Annotated[str, Field(pattern=SCENARIO_NAME_PATTERN, max_length=100)]
    """Unique id of the scenario, used in test ids and replay commands."""
    description: str = ""
    """What the scenario proves, for people."""
    dialect: Dialect
    """The provider API the fake speaks: openai (Chat Completions) or anthropic (Messages)."""
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)] = 0
    """Seed of every random choice in the run."""
    tools: dict[ToolName, ToolDeclaration] = {}  # noqa: RUF012
    """Tools by name."""
    model: Annotated[list[Reply], Field(min_length=1)]
    """The scripted model's replies."""
    faults: list[AnyFault] = []  # noqa: RUF012
    """Faults, each keyed to a turn and an attempt."""
    jobs: dict[ToolName, JobDeclaration] = {}  # noqa: RUF012
    """Tools that run as background jobs of the world's job runner (seed 002 §19.4)."""
    cancels: list[CancelFault] = []  # noqa: RUF012
    """Cancels the harness issues at virtual times, each with its target (seed 002 §19.4)."""
    crash: CrashSelection = CrashSelection()
    """Crash exploration; absent: no crashes."""
    budget: BudgetLimits = BudgetLimits()
    """Limits of the run."""
    provider: Provider = Provider()
    """The fake provider's model name and prompt cache."""
    goal: GoalDeclaration | None = None
    """A long task's goal, kept by the world's goal service (seed 002 §19.3)."""
    verifier: list[VerifierRuleDeclaration] = []  # noqa: RUF012
    """The scripted verifier's rules, first match wins (seed 002 §19.2)."""
    hook: HookDeclaration | None = None
    """A hook run after each tool call that returned; absent: none (seed 002 §19.1 ③)."""
    training_data: bool = False
    """The session is collected as training data, and the agent is told so: no placeholder
    reply may stand in for a tool result it does not have (a cut call, a call a crash left
    unsettled), so such a call stops the run instead (seed 002 §19.1 ①, truncation level 4;
    check train:no-patch)."""
    cache_breakpoints: bool = False
    """The deployment caches prompts at explicit breakpoints, and the agent is told so: it
    marks Anthropic's ``cache_control`` on its stable prefix and newest message, so the
    world's prompt cache (``provider.prompt_cache``) has something to keep across a crash
    (seed 002 §19.7; check cache:restart). Anthropic only, with a prompt cache."""
    expect: Expectation
    """The verdict a correct agent reaches."""
    absorb: list[Annotated[str, Field(pattern=HOST_PATTERN, max_length=253)]] = []  # noqa: RUF012
    """More hosts answered as telemetry (a 200 with ``{}``, listed, no verdict), beside the
    tracing and usage endpoints of the mainstream frameworks the harness knows."""

    _source: SourceMap | None = PrivateAttr(default=None)

    @property
    def last_turn(self) -> int:
        """The highest turn with a scripted reply."""
        return max(reply.turn for reply in self.model)

    def secret_values(self) -> dict[str, str]:
        """Every secret the script hands a tool, each with where it is passed (``mail.password``).

        Values under the arguments a tool marks ``secret`` and under secret-looking keys
        (:func:`harness._redact.is_secret_key`), at any depth.
        """
        found: dict[str, str] = {}
        for reply in self.model:
            for call in reply.calls:
                declared = self.tools.get(call.tool)
                marked = declared.secret if declared is not None else ()
                for key, value in secret_leaves(call.args, marked):
                    found.setdefault(value, f"{call.tool}.{key}")
        return found

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        raise_if_any(cross_field_problems(self))
        return self


def source_of(scenario: Scenario) -> SourceMap | None:
    """The file positions a loaded scenario came from; ``None`` if built in Python."""
    return scenario._source


def attach_source(scenario: Scenario, source: SourceMap) -> None:
    """Remember where ``scenario`` was loaded from (for errors found later)."""
    scenario._source = source


def cross_field_problems(scenario: Scenario) -> list[Problem]:
    """Every inconsistency between the scenario's parts, in document order."""
    return [
        *_reply_problems(scenario),
        *undeclared_tool_problems(scenario.model_dump(
            include={"tools", "jobs", "model", "expect", "verifier"})),
        *_fault_turn_problems(scenario),
        *_crash_point_problems(scenario),
        *_fault_combination_problems(scenario),
        *job_problems(scenario.tools, scenario.jobs, scenario.cancels,
                      has_goal=scenario.goal is not None),
        *_secret_problems(scenario),
        *goal_problems(scenario.goal, scenario.verifier),
        *unpriced_cost_budget(scenario.budget.max_cost_usd, scenario.provider.model),
        *_quota_problems(scenario),
        *_hook_problems(scenario),
        *_cache_breakpoint_problems(scenario),
        *backup_model_problems(scenario.provider.model, scenario.provider.backup_model),
        *outage_model_problems(scenario.provider.outages, scenario.provider.model,
                               scenario.provider.backup_model),
    ]


def _cache_breakpoint_problems(scenario: Scenario) -> list[Problem]:
    """Breakpoints asked for where nothing reads them: another API, or no prompt cache."""
    if not scenario.cache_breakpoints:
        return []
    if scenario.dialect != "anthropic":
        return [Problem(("cache_breakpoints",), "only the anthropic API caches at marked "
                        "breakpoints", True, f"true with dialect {scenario.dialect}",
                        "dialect: anthropic", f"Remove it: the {scenario.dialect} API caches "
                        "prompt prefixes without marks")]
    if not scenario.provider.prompt_cache:
        return [Problem(("cache_breakpoints",), "breakpoints mark what a prompt cache keeps",
                        True, "true without provider.prompt_cache",
                        "provider: {prompt_cache: true}",
                        "Add prompt_cache: true under provider:, or remove cache_breakpoints")]
    return []


def _hook_problems(scenario: Scenario) -> list[Problem]:
    """A hook that runs a tool the scenario does not declare, or one that changes the world."""
    hook = scenario.hook
    if hook is None:
        return []
    declared = scenario.tools.get(hook.run)
    if declared is None:
        return [Problem(("hook", "run"), "the hook runs a tool the scenario does not declare",
                        hook.run, show(hook.run),
                        f"a tool under tools: {quoted(sorted(scenario.tools), 'none')}",
                        did_you_mean(hook.run, scenario.tools) or "Declare it under tools:")]
    if declared.kind not in PURE_TOOL_KINDS:
        return [Problem(("hook", "run"), "a hook's tool must change nothing", hook.run,
                        f"{hook.run!r} of kind {declared.kind}", "a tool of kind read or inspect",
                        "Give the hook a read or inspect tool")]
    return []


def _quota_problems(scenario: Scenario) -> list[Problem]:
    """A limit the scenario's dialect does not have (OpenAI counts tokens as one)."""
    quota = scenario.provider.quota
    if quota is None:
        return []
    allowed = quota_fields(scenario.dialect)
    return [Problem(("provider", "quota", name), f"the {scenario.dialect} API has no such "
                    "limit", getattr(quota, name), show(getattr(quota, name)),
                    quoted(list(allowed), "none"),
                    "Use tokens_per_minute: this API counts input and output tokens together")
            for name in Quota.__dataclass_fields__
            if getattr(quota, name) is not None and name not in allowed]


def _reply_problems(scenario: Scenario) -> list[Problem]:
    turns = {reply.turn for reply in scenario.model}
    missing = [turn for turn in range(1, scenario.last_turn + 1) if turn not in turns]
    problems = []
    if missing:
        problems.append(Problem(("model",), f"no reply for turn {missing[0]}",
                                got=f"replies for turns {sorted(turns)}",
                                expected=f"a reply for every turn from 1 to {scenario.last_turn}"))
    seen = Counter(_choice_key(reply) for reply in scenario.model)
    for index, reply in enumerate(scenario.model):
        if seen[_choice_key(reply)] > 1:
            seen[_choice_key(reply)] = 0  # report each ambiguity once
            problems.append(Problem(("model", index), "two replies for the same turn and "
                                    "'when' leave the choice to chance",
                                    got=f"another reply for turn {reply.turn}",
                                    expected="a different 'when' on one of them"))
    return problems


def _choice_key(reply: Reply) -> tuple[object, ...]:
    """What tells two replies of a turn apart (``applied`` is a mapping: made hashable)."""
    when = reply.when
    if when is None:
        return (reply.turn, None)
    applied = tuple(sorted(when.applied.items())) if when.applied else None
    return (reply.turn, when.tool, when.outcome, applied)


def undeclared_tool_problems(data: Mapping[str, Any]) -> list[Problem]:
    """Every tool a reply calls, a ``when`` waits for, a verifier rule reads or
    ``expect.side_effects`` counts that ``tools`` does not declare.

    Reads plain data (a loaded file, or a validated scenario dumped), so the loader can
    report these beside a file's other mistakes instead of after they are fixed.
    """
    tools = data.get("tools")
    if tools is not None and not isinstance(tools, dict):
        return []  # 'tools' itself is wrong; that error says so
    jobs = data.get("jobs")
    declared = list(tools or {}) + list(jobs if isinstance(jobs, dict) else {})
    named: list[tuple[Loc, object]] = []
    for r, reply in _items(data.get("model")):
        for c, call in _items(reply.get("calls")):
            named.append((("model", r, "calls", c, "tool"), call.get("tool")))
        when = reply.get("when")
        if isinstance(when, dict):
            named.append((("model", r, "when", "tool"), when.get("tool")))
            applied = when.get("applied")
            named += [(("model", r, "when", "applied", name), name)
                      for name in (applied if isinstance(applied, dict) else {})]
    for v, rule in _items(data.get("verifier")):
        when = rule.get("when")
        applied = when.get("applied") if isinstance(when, dict) else None
        named += [(("verifier", v, "when", "applied", name), name)
                  for name in (applied if isinstance(applied, dict) else {})]
    problems = [_undeclared(loc, name, declared, at_key=loc[-2] == "applied")
                for loc, name in named if isinstance(name, str) and name not in declared]
    expect = data.get("expect")
    counted = expect.get("side_effects") if isinstance(expect, dict) else None
    return problems + [_undeclared(("expect", "side_effects", name), name, declared, at_key=True)
                       for name in (counted if isinstance(counted, dict) else {})
                       if name not in declared]


def _items(value: object) -> list[tuple[int, dict[str, Any]]]:
    """The mappings of a list, with their indexes; nothing for anything else."""
    if not isinstance(value, list):
        return []
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]


def _undeclared(loc: Loc, name: str, declared: list[str], *, at_key: bool = False) -> Problem:
    hint = did_you_mean(name, declared) or _declare_hint(name, counted=loc[0] == "expect")
    return Problem(loc, "tool is not declared", value=name, got=show(name),
                   expected=f"a tool under 'tools': {quoted(declared, 'none are declared')}",
                   hint=hint, at_key=at_key)


def _declare_hint(name: str, *, counted: bool) -> str:
    """How to declare an undeclared tool, with a kind that fits what is asked of it.

    A tool ``expect.side_effects`` counts must change the world (a side-effect kind); one
    the model only calls may have no effect at all (smolagents' ``final_answer``, a
    lookup), and a side-effect kind would count each call as an effect (I1, I10).
    """
    if counted:
        return (f"Declare it under 'tools' with the kind of effect it has, such as '{name}: "
                "{kind: send}' (or append, put): side_effects counts only those")
    return (f"Declare it under 'tools': '{name}: {{kind: read}}' for a tool with no side "
            "effect (a final answer, a lookup; 'inspect' for one that looks at the real state "
            "after a crash), or a side-effect kind ('send', 'append', 'put') only when each "
            "run of it changes the world and the ledger should count it")


def _fault_turn_problems(scenario: Scenario) -> list[Problem]:
    return fault_turn_problems(scenario.model_dump(include={"model", "faults"}))


def fault_turn_problems(data: Mapping[str, Any]) -> list[Problem]:
    """Every fault keyed to a turn past the last scripted one.

    Reads plain data, like :func:`undeclared_tool_problems`, so the loader reports these
    beside an entry's other mistakes.
    """
    turns = [reply.get("turn") for _, reply in _items(data.get("model"))]
    last = max((t for t in turns if _is_count(t)), default=None)
    if last is None:
        return []  # no usable script: its own error says so
    problems = []
    for index, fault in _items(data.get("faults")):
        at = fault.get("at")
        turn = at.get("turn") if isinstance(at, dict) else None
        if _is_count(turn) and turn > last:
            problems.append(Problem(("faults", index, "at", "turn"),
                                    "turn is never reached by the script", value=turn,
                                    got=str(turn),
                                    expected=f"a turn from 1 to {last} (the last scripted turn)"))
    return problems


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _crash_point_problems(scenario: Scenario) -> list[Problem]:
    """World-event crash points no run of the script reaches: an undeclared tool, a turn
    past the script. Found here, each is an error at its line, not an ``unknown`` case."""
    points = scenario.crash.points
    problems = _second_crash_problems(scenario.crash)
    then = scenario.crash.then
    unreachable = None if then is None else _unreachable_world_point(scenario, then)
    if then is not None and unreachable is not None:
        problems.append(Problem(("crash", "then"), unreachable[0], then, show(then),
                                unreachable[1], unreachable[2]))
    if isinstance(points, str):
        return problems
    for index, point in enumerate(points):
        problem = _unreachable_world_point(scenario, point)
        if problem is not None:
            problems.append(Problem(("crash", "points", index), problem[0], point, show(point),
                                    problem[1], problem[2]))
    return problems


def _second_crash_problems(crash: CrashSelection) -> list[Problem]:
    """A ``then`` with no first crash to follow, or beside ``during_recovery``."""
    if crash.then is None:
        return []
    if crash.points == "none":
        return [Problem(("crash", "then"), "a second crash needs a first one", crash.then,
                        show(crash.then), "crash points besides 'none'",
                        "Set crash.points (such as 'all') or remove 'then'")]
    if crash.during_recovery:
        return [Problem(("crash", "then"), "'then' and 'during_recovery' both place the "
                        "second crash", crash.then, show(crash.then), "one of them",
                        "Keep 'then' to crash at a chosen point, or 'during_recovery' to "
                        "crash at the first point the recovery reaches")]
    return []


def _unreachable_world_point(scenario: Scenario, point: str) -> tuple[str, str, str] | None:
    """Why world point ``point`` is never reached, what is expected, a hint; None if it may be."""
    kind, _, rest = point.partition(":")
    if kind == "after_signal":
        job, _, number = rest.rpartition("#")
        if job in scenario.jobs:
            return None
        return ("the crash point names a job the scenario does not declare",
                quoted([f"after_signal:{name}#{number}" for name in scenario.jobs],
                       "no job (none is declared)"),
                did_you_mean(point, [f"after_signal:{name}#{number}" for name in scenario.jobs]))
    if kind == "after_tool":
        tool, _, number = rest.rpartition("#")
        declared = [*scenario.tools, *scenario.jobs]
        if tool in declared:
            return None
        return ("the crash point names a tool the scenario does not declare",
                quoted([f"after_tool:{name}#{number}" for name in declared], "no tool (none "
                       "is declared)"),
                did_you_mean(point, [f"after_tool:{name}#{number}" for name in declared]))
    if kind in _TURN_POINT_KINDS and int(rest) > scenario.last_turn:
        last = scenario.last_turn
        return ("the crash point's turn is past the script",
                f"a turn from 1 to {last} (the last scripted turn)",
                f"Did you mean '{kind}:{last}'?")
    return None


_TURN_POINT_KINDS: Final = frozenset({"before_request", "mid_stream", "after_response"})


def _fault_combination_problems(scenario: Scenario) -> list[Problem]:
    """The faults of one request, built and checked as the fake provider will at run time."""
    by_request: dict[tuple[int, int], list[int]] = {}
    for index, fault in enumerate(scenario.faults):
        by_request.setdefault((fault.at.turn, fault.at.attempt), []).append(index)
    problems = []
    for (turn, attempt), indexes in by_request.items():
        try:
            check_faults([FAULT_KINDS[scenario.faults[i].kind](**scenario.faults[i].fake_fields())
                          for i in indexes])
        except ConfigError as error:
            # The last fault of the request is the one that does not fit beside the others.
            problems.append(Problem(
                ("faults", indexes[-1]), f"the faults of turn {turn}, attempt {attempt} cannot "
                "be combined", error.value, show(error.value), error.allowed,
                "Move one fault to another attempt (at: {turn: ..., attempt: ...})"))
    return problems


def _secret_problems(scenario: Scenario) -> list[Problem]:
    """A marked argument no call passes (a typo marks nothing) or whose value is too short."""
    problems = []
    for name, tool in scenario.tools.items():
        passed = _arguments_passed(scenario, name)
        for index, argument in enumerate(tool.secret):
            if argument not in passed:
                problems.append(Problem(
                    ("tools", name, "secret", index), "no call of the script passes this argument",
                    argument, show(argument),
                    f"an argument a call of '{name}' passes: {quoted(sorted(passed), 'none')}",
                    did_you_mean(argument, passed) or "Remove it, or pass it in a call"))
    return problems + _short_secret_problems(scenario)


def _arguments_passed(scenario: Scenario, tool: str) -> set[str]:
    return {key for reply in scenario.model for call in reply.calls if call.tool == tool
            for key in call.args}


def _short_secret_problems(scenario: Scenario) -> list[Problem]:
    problems = []
    for r, reply in enumerate(scenario.model):
        for c, call in enumerate(reply.calls):
            declared = scenario.tools.get(call.tool)
            for key in declared.secret if declared is not None else ():
                value = call.args.get(key)
                if key in call.args and not _searchable(value):
                    problems.append(Problem(
                        ("model", r, "calls", c, "args", key), "a secret too short to look for",
                        value, show(value),
                        f"a text of {MIN_SECRET_LENGTH} characters or more (or a mapping or "
                        "list of such texts)", "Make the secret longer, or do not mark it"))
    return problems


def _searchable(value: object) -> bool:
    """Whether a marked value has text that can be searched for: ``"1"`` is found everywhere."""
    if isinstance(value, dict | list):
        return any(True for _ in secret_leaves({"value": value}, {"value"}))
    return isinstance(value, str) and len(value) >= MIN_SECRET_LENGTH
