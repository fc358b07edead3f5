"""The catalogue: realistic broken agents, each named after the rule it breaks.

Each :class:`Mutant` is the reference agent with one bug the seeds warn about,
and names the shipped cases that kill it: the scenario file, the crash case
(``None``: the crash-free one) and the check whose ``fail`` proves the kill. A
check exists only with the broken agent it catches; this table is that pairing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import posixpath
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, cast

import httpx

from harness import DiskError
from harness.agent import (
    BreakerConfig,
    BudgetPolicy,
    CompactionConfig,
    Discipline,
    GuardLimits,
    ReferenceAgent,
    StreamConfig,
)
from harness.mutants._build import (
    AppendWrapper,
    DiskWrapper,
    GoalPortWrapper,
    OutcomeRewrite,
    ToolWrapper,
    reference,
    retasking,
    rewriting,
    with_files,
    with_goals,
    with_ports,
    with_requests,
    with_responses,
    with_tools,
)
from harness.mutants._jobs import (
    cancel_not_idempotent,
    cancelled_waiter_claims,
    goal_cancel_as_turn_cancel,
    goal_cancel_leaves_run_armed,
    invents_exit_codes,
    job_output_counted_per_process,
    job_output_not_capped,
    job_runtime_from_restart,
    job_runtime_not_capped,
    jobs_counted_per_process,
    jobs_get_the_whole_environ,
    jobs_not_capped,
    never_claims,
    reruns_jobs_after_restart,
    waits_for_stopping_jobs,
)
from harness.ports import (
    Agent,
    AgentFactory,
    AgentOutcome,
    AgentPorts,
    CriterionVerdict,
    Goal,
    Lease,
    RecoveryReport,
    StopState,
    Task,
    Tool,
    ToolContext,
    TranscriptMessage,
    Usage,
    Verification,
)


@dataclass(frozen=True)
class Kill:
    """A case that kills a mutant: the check ``check`` fails on it."""

    scenario: str  # path from the project root, such as scenarios/streaming/stall-then-429.yaml
    check: str
    crash: str | None = None  # a crash label such as journal:fsync#2:after:unsynced_lost


@dataclass(frozen=True)
class Mutant:
    """One broken agent: its name (rule first), the seed section, the bug, its killers."""

    name: str
    seed: str
    bug: str
    factory: AgentFactory
    kills: tuple[Kill, ...]


class _Idle:
    """Does nothing at all and says it finished: the laziest agent there is."""

    def __init__(self, ports: AgentPorts) -> None:
        self._ports = ports

    async def recover(self) -> RecoveryReport:
        return RecoveryReport()

    async def run(self, task: Task) -> AgentOutcome:  # noqa: ARG002 - it reads nothing
        return AgentOutcome("complete", "done", (), None, None, 0)


def _none(*_: object) -> Any:
    return None


async def _without_retry_after(response: httpx.Response) -> httpx.Response:
    # As an HTTP layer that keeps only the status and body of an error answer.
    for name in ("retry-after", "retry-after-ms"):
        response.headers.pop(name, None)
    return response


async def _without_retry_after_ms(response: httpx.Response) -> httpx.Response:
    # As a client written against the RFC alone: Retry-After is read, retry-after-ms never.
    response.headers.pop("retry-after-ms", None)
    return response


_LENGTH = (b'"finish_reason":"length"', b'"stop_reason":"max_tokens"')


async def _length_resent(response: httpx.Response) -> httpx.Response:
    # As a client that treats a cut answer like a dropped stream: same request again.
    body = await response.aread()
    if any(marker in body for marker in _LENGTH):
        return httpx.Response(500, json={"error": {"message": "cut"}}, request=response.request)
    return httpx.Response(response.status_code, headers=response.headers, content=body,
                          request=response.request)


_WITHHELD = (b'"finish_reason":"content_filter"', b'"stop_reason":"refusal"')


async def _withheld_as_calls(response: httpx.Response) -> httpx.Response:
    # As a client that runs whatever calls arrived, not asking why the answer ended.
    body = await response.aread()
    for marker, done in zip(_WITHHELD, (b'"finish_reason":"tool_calls"',
                                        b'"stop_reason":"tool_use"'), strict=True):
        body = body.replace(marker, done)
    return httpx.Response(response.status_code, headers=response.headers, content=body,
                          request=response.request)


def _rebodied(request: httpx.Request, change: Any) -> httpx.Request:
    """``request`` with its JSON body changed in place by ``change``."""
    body = json.loads(request.content)
    change(body)
    headers = {k: v for k, v in request.headers.items() if k.lower() != "content-length"}
    return httpx.Request(request.method, request.url, headers=headers, json=body)


def _tools_in_process_order(request: httpx.Request, ports: AgentPorts) -> httpx.Request:
    # As a tool list built from a set: its order is the process's (string hashing is
    # seeded per process), so a restarted agent offers the same tools in another order.
    if ports.incarnation < 2:
        return request
    return _rebodied(request, lambda body: body.get("tools", []).reverse())


def _sampling_left_as_it_was(request: httpx.Request, _: AgentPorts) -> httpx.Request:
    # As an agent whose retry of a looping answer sends the request it sent before: it
    # sees the loop and gives up on the answer, but asks for the same sampling again.
    return _rebodied(request, lambda body: body.pop("temperature", None))


def _arguments_rerendered(request: httpx.Request, ports: AgentPorts) -> httpx.Request:
    # As a history rebuilt after a restart from parsed tool calls, its arguments dumped
    # again with the JSON library's default spacing instead of the bytes the model sent;
    # Anthropic's tool_use input is an object, rebuilt with its keys sorted (as a log
    # that stores arguments as canonical JSON gives them back), not in the model's order.
    def rerender(body: dict[str, Any]) -> None:
        for message in body.get("messages", []):
            for call in message.get("tool_calls") or []:
                function = call.get("function", {})
                function["arguments"] = json.dumps(json.loads(function.get("arguments") or "{}"))
            for block in _blocks(message, "tool_use"):
                block["input"] = dict(sorted(block.get("input", {}).items()))

    return _rebodied(request, rerender) if ports.incarnation > 1 else request


def _cache_key_per_process(request: httpx.Request, ports: AgentPorts) -> httpx.Request:
    # As a cache key made of a session id drawn at each start, not kept with the history:
    # OpenAI's prompt_cache_key, Anthropic's metadata.user_id.
    def key(body: dict[str, Any]) -> None:
        body["prompt_cache_key"] = f"process-{ports.incarnation}"

    def user(body: dict[str, Any]) -> None:
        body["metadata"] = {"user_id": f"process-{ports.incarnation}"}

    if "/chat/completions" in request.url.path:
        return _rebodied(request, key)
    return _rebodied(request, user) if request.url.path.endswith("/messages") else request


def _system_prompt_stamped_per_process(ports: AgentPorts) -> Agent:
    # As a system prompt rendered once at each start with the time it started, as many
    # carry "the current time": the first process's prefix is stable, but a restarted one
    # puts a new stamp at the top of the prefix the crashed one had cached.
    started = ports.clock.now()

    def stamped(current: AgentPorts) -> str:
        return (f"You are an operations agent (process {current.incarnation}, started at "
                f"{started:.3f} s). Use the tools; report what you did.")

    return ReferenceAgent(ports, system=stamped)


def _text_dropped_after_restart(request: httpx.Request, ports: AgentPorts) -> httpx.Request:
    # As a history rebuilt after a restart from a log that kept the tool calls but not the
    # prose beside them: the restored assistant messages lose their text.
    def drop(body: dict[str, Any]) -> None:
        for message in body.get("messages", []):
            if message.get("role") == "assistant" and message.get("tool_calls"):
                message["content"] = None
            if message.get("role") == "assistant" and _blocks(message, "tool_use"):
                message["content"] = [b for b in message["content"] if b.get("type") != "text"]

    return _rebodied(request, drop) if ports.incarnation > 1 else request


def _marks_dropped_after_restart(request: httpx.Request, ports: AgentPorts) -> httpx.Request:
    # As an agent that turns its Anthropic cache marks on while it opens a new session,
    # not when it resumes one: a restarted process sends no cache_control at all.
    def unmark(value: Any) -> None:
        if isinstance(value, dict):
            value.pop("cache_control", None)
            for inner in value.values():
                unmark(inner)
        elif isinstance(value, list):
            for inner in value:
                unmark(inner)

    return _rebodied(request, unmark) if ports.incarnation > 1 else request


def _blocks(message: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
    """The content blocks of ``kind`` in an Anthropic message (none for a string content)."""
    content = message.get("content")
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind] \
        if isinstance(content, list) else []


# The goal block the reference agent puts at the end of its system prompt (seed 002 §19.3).
_GOAL_BLOCK = re.compile(r"Goal \S+ \(revision \d+\): [^\n]*\nAcceptance criteria:(?:\n- [^\n]*)*")
# What the reference agent's compaction leaves in place of what it replaced.
_COMPACTED = "[compacted]"


def _system_message(body: dict[str, Any]) -> dict[str, Any] | None:
    messages = body.get("messages")
    first = messages[0] if isinstance(messages, list) and messages else None
    return first if isinstance(first, dict) and first.get("role") == "system" \
        and isinstance(first.get("content"), str) else None


def _goal_compacted_away(request: httpx.Request, _: AgentPorts) -> httpx.Request:
    # As an agent that keeps the goal in its history, not in a prompt it re-reads: the
    # first compaction summarises the goal away with the rest.
    def drop(body: dict[str, Any]) -> None:
        system = _system_message(body)
        if system is not None and _COMPACTED in json.dumps(body["messages"][1:]):
            system["content"] = _GOAL_BLOCK.sub("", system["content"]).rstrip()

    return _rebodied(request, drop)


async def _overflow_as_outage(response: httpx.Response) -> httpx.Response:
    # As a gateway that turns a rejected request into a bare "upstream error": the
    # overflow's wording is lost and it is retried like an outage, the same input again.
    body = await response.aread()
    if response.status_code != 400:
        return httpx.Response(response.status_code, headers=response.headers, content=body,
                              request=response.request)
    return httpx.Response(503, json={"error": {"message": "upstream error"}},
                          request=response.request)


async def _length_as_done(response: httpx.Response) -> httpx.Response:
    # As a client that reads only whether the stream ended, not why it ended.
    body = await response.aread()
    for marker, done in zip(_LENGTH, (b'"finish_reason":"tool_calls"',
                                      b'"stop_reason":"tool_use"'), strict=True):
        body = body.replace(marker, done)
    return httpx.Response(response.status_code, headers=response.headers, content=body,
                          request=response.request)


_TERMINAL = (b"data: [DONE]", b"event: message_stop")


async def _usage_only_when_done(response: httpx.Response) -> httpx.Response:
    # As a client that adds up usage only for streams that ended properly.
    body = await response.aread()
    if not any(marker in body for marker in _TERMINAL):
        body = body.replace(b'"usage":{', b'"ignored":{')
    return httpx.Response(response.status_code, headers=response.headers, content=body,
                          request=response.request)


class _WalksAway(ToolWrapper):
    """On a timeout, asks the call to stop and returns at once (Promise.race)."""

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        work = asyncio.ensure_future(self.inner.run(arguments, context))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            work.cancel()  # asked to stop, never waited for
            raise


class _HandsItsWholeEnvironment(ToolWrapper):
    """Starts a tool's child with a copy of its own os.environ (subprocess's default)."""

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        return await self.inner.run(arguments, replace(context, env=dict(os.environ)))


class _ClaimsSafe(ToolWrapper):
    """Declares every tool safe to run beside others."""

    @property
    def concurrency_safe(self) -> bool:
        return True


def _stop_as(wrong: dict[str, str]) -> OutcomeRewrite:
    """Report some stop states as others (a stop-state mapping with a wrong row)."""

    def rewrite(outcome: AgentOutcome, *_: object) -> AgentOutcome:
        state = wrong.get(outcome.stop_state, outcome.stop_state)
        return replace(outcome, stop_state=cast(StopState, state))

    return rewrite


def _answered_is_complete(outcome: AgentOutcome, *_: object) -> AgentOutcome:
    """A stop for a failed log write, once the model's final answer is in hand, as complete."""
    last = outcome.transcript[-1] if outcome.transcript else None
    answered = last is not None and last.role == "assistant" and not last.tool_calls
    if outcome.stop_state == "infra_paused" and answered and "written" in outcome.reason:
        return replace(outcome, stop_state="complete", infra_failure=False)
    return outcome


def _context_is_total(outcome: AgentOutcome, *_: object) -> AgentOutcome:
    billed = outcome.billed_usage
    return replace(outcome, context_tokens=billed.input_tokens if billed else None)


def _billed_twice(outcome: AgentOutcome, *_: object) -> AgentOutcome:
    billed = outcome.billed_usage
    return replace(outcome, billed_usage=Usage.total([billed, billed]) if billed else None)


def _billed_nothing(outcome: AgentOutcome, *_: object) -> AgentOutcome:
    return replace(outcome, billed_usage=None)


def _last_reply_dropped(outcome: AgentOutcome, *_: object) -> AgentOutcome:
    replies = [i for i, m in enumerate(outcome.transcript) if m.role == "tool"]
    if not replies:
        return outcome
    kept = tuple(m for i, m in enumerate(outcome.transcript) if i != replies[-1])
    return replace(outcome, transcript=kept)


def _unsure_said_done(outcome: AgentOutcome, *_: object) -> AgentOutcome:
    # As recovery that closes every dangling call with a plain "ok".
    def fixed(m: TranscriptMessage) -> TranscriptMessage:
        return replace(m, status="ok") if m.synthetic else m

    return replace(outcome, transcript=tuple(fixed(m) for m in outcome.transcript))


class _UnsyncedFile(AppendWrapper):
    """Writes but never fsyncs: durable only by luck."""

    def fsync(self) -> None:
        """Skipped: the bug."""


class _NoStartRecord(AppendWrapper):
    """Drops the journal's execution_started lines: a tool runs with only its intent durable."""

    def write(self, data: bytes) -> None:
        if b'"execution_started"' not in data:
            self.inner.write(data)


class _StartedReadAsIntent(DiskWrapper):
    """Reads every execution_started line of the journal back as an intent.

    As recovery that asks only "was there a result?": a call that started and
    may have run is taken for one that never started, and is sent again.
    """

    def read(self, path: str) -> bytes:
        data = self.inner.read(path)
        # Same length, so the journal's idea of its size stays right.
        return data.replace(b'"execution_started"', b'"intent"' + b" " * 11)


def _started_read_as_intent(ports: AgentPorts) -> AgentPorts:
    return replace(ports, disk=_StartedReadAsIntent(ports.disk, lambda f, _: f))


class _IntentReadAsStarted(DiskWrapper):
    """Reads every intent line of the journal back as an execution_started one.

    As recovery that asks only "was there a result?" and, to be safe, takes every call
    without one for a call that may have run: a call that never started is reported
    unknown_after_restart, and the model is sent to inspect what never happened.
    """

    def read(self, path: str) -> bytes:
        data = self.inner.read(path)
        return b"\n".join(_as_started(line) for line in data.split(b"\n"))


def _as_started(line: bytes) -> bytes:
    """An intent line as a started one, of the same length (the argument hash gives way).

    The journal's idea of its size must stay right, or its next append cuts a good line.
    """
    state, longer = b'"state":"intent"', b'"state":"execution_started"'
    # As many hex digits of the hash as the state grows by (11).
    hashed = re.search(rb'"argsSha256":"([0-9a-f]{%d})' % (len(longer) - len(state)), line)
    if state not in line or hashed is None:
        return line
    return (line[:hashed.start(1)] + line[hashed.end(1):]).replace(state, longer)


def _intent_read_as_started(ports: AgentPorts) -> AgentPorts:
    return replace(ports, disk=_IntentReadAsStarted(ports.disk, lambda f, _: f))


class _LogsRawArguments(ToolWrapper):
    """Appends each call, arguments and all, to a diagnostic log before it runs."""

    def __init__(self, inner: Tool, ports: AgentPorts) -> None:
        super().__init__(inner)
        self._disk = ports.disk
        self._path = posixpath.join(ports.state_dir, "tool-calls.log")

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        line = json.dumps({"tool": self.name, "arguments": dict(arguments)}) + "\n"
        with self._disk.open_append(self._path) as file:
            file.write(line.encode())
        return await self.inner.run(arguments, context)


def _tool_calls_logged(ports: AgentPorts) -> AgentPorts:
    tools = {name: _LogsRawArguments(tool, ports) for name, tool in ports.tools.items()}
    return replace(ports, tools=tools)


def _one_attempt_id(outcome: AgentOutcome, *_: object) -> AgentOutcome:
    # As an agent that names attempts after the run instead of giving each its own id.
    def renamed(m: TranscriptMessage) -> TranscriptMessage:
        return replace(m, attempt_id="attempt") if m.role == "assistant" else m

    return replace(outcome, transcript=tuple(renamed(m) for m in outcome.transcript))


class _MarksEveryRecovery:
    """Appends a "recovered" line on every recover(): recovering twice is not once."""

    def __init__(self, ports: AgentPorts) -> None:
        self._inner = reference()(ports)
        self._ports = ports

    async def recover(self) -> RecoveryReport:
        report = await self._inner.recover()
        with self._ports.disk.open_append(f"{self._ports.state_dir}/recovered.log") as marker:
            marker.write(b"recovered\n")
            marker.fsync()
        return report

    async def run(self, task: Task) -> AgentOutcome:
        return await self._inner.run(task)


def _seed_from_entropy(ports: AgentPorts) -> AgentPorts:
    # As an agent that draws its ids from uuid4 or the wall clock, not from its seed.
    return replace(ports, seed=random.SystemRandom().randrange(2**32))


class _ShrugsOffDiskErrors(AppendWrapper):
    """Treats every log like the metrics stream: a failed write is dropped, the run goes on."""

    def write(self, data: bytes) -> None:
        with contextlib.suppress(DiskError):
            self.inner.write(data)

    def fsync(self) -> None:
        with contextlib.suppress(DiskError):
            self.inner.fsync()


class _Finished:
    """What the tools of one incarnation returned, in the order they finished."""

    def __init__(self) -> None:
        self.started = 0
        self.results: list[Any] = []
        self.changed: asyncio.Condition | None = None


class _InCompletionOrder(ToolWrapper):
    """Hands the k-th call to start the k-th result to finish: zip(calls, as_completed(...))."""

    def __init__(self, inner: Tool, finished: _Finished) -> None:
        super().__init__(inner)
        self.finished = finished

    async def run(self, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        finished = self.finished
        mine = finished.started
        finished.started += 1
        changed = finished.changed = finished.changed or asyncio.Condition()
        try:
            result: Any = await self.inner.run(arguments, context)
        except Exception as error:  # an error is a result too, in its place
            result = error
        async with changed:
            finished.results.append(result)
            changed.notify_all()
            await changed.wait_for(lambda: len(finished.results) > mine)
        handed = finished.results[mine]
        if isinstance(handed, Exception):
            raise handed
        return handed


def _completion_order(ports: AgentPorts) -> Agent:
    finished = _Finished()
    tools = {name: _InCompletionOrder(tool, finished) for name, tool in ports.tools.items()}
    return reference()(replace(ports, tools=tools))


def _as_product_session(task: Task, _ports: AgentPorts) -> Task:
    # As an agent whose repair code never asks what the session is collected for.
    return replace(task, training_data=False)


def _without_backup(task: Task, _ports: AgentPorts) -> Task:
    # As an agent with no code for a second route: the backup it is told of goes unread.
    return replace(task, backup_model=None)


def _budget_per_restart(task: Task, ports: AgentPorts) -> Task:
    # As an agent whose attempt limit is per process: every restart grants it anew.
    return replace(task, max_attempts=task.max_attempts * ports.incarnation)


class _GoalReadOnce(GoalPortWrapper):
    """Reads the goal once per process and keeps it: a user's edit is never seen."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._kept: Goal | None = None

    def read(self) -> Goal:
        if self._kept is None:
            self._kept = self.inner.read()
        return self._kept


class _AdoptsFoundLease(GoalPortWrapper):
    """On a restart, carries on under the lease it finds instead of taking a new epoch."""

    def acquire(self) -> Lease:
        found = self.inner.current_lease()
        return found if found is not None else self.inner.acquire()


class _EveryStartIsFresh(GoalPortWrapper):
    """Takes the lease without noting whom it took it from: a restart looks like a first start."""

    def acquire(self) -> Lease:
        return replace(self.inner.acquire(), took_over=None)


class _LeaseWithoutEnd(GoalPortWrapper):
    """Reads the lease without its end time: once taken, it is held until the process ends."""

    def acquire(self) -> Lease:
        return replace(self.inner.acquire(), expires_at=float("inf"))


class _JudgesItself(GoalPortWrapper):
    """Never asks the verifier: the model's "done" is its own proof (self-review)."""

    def verify(self, goal: Goal, epoch: int) -> Verification:  # noqa: ARG002 - self-judged
        return _passed(goal, judge="self")


class _FailsOpen(GoalPortWrapper):
    """Asks the verifier, and takes an outage for a pass (grok's FailOpenAchieved branch)."""

    def verify(self, goal: Goal, epoch: int) -> Verification:
        verdict = self.inner.verify(goal, epoch)
        return _passed(goal, verdict.judge, verdict.round) if verdict.outcome == "unavailable" \
            else verdict


class _RoundInFingerprint(GoalPortWrapper):
    """Stamps each round's number into its gaps, so the same gap never looks the same twice."""

    def verify(self, goal: Goal, epoch: int) -> Verification:
        verdict = self.inner.verify(goal, epoch)
        return replace(verdict, gaps=tuple(f"{gap} (round {verdict.round})"
                                           for gap in verdict.gaps))


def _passed(goal: Goal, judge: str, round_: int = 1) -> Verification:
    criteria = tuple(CriterionVerdict(c, "pass", "the model says so") for c in goal.acceptance)
    return Verification(goal.goal_id, goal.revision, round_, "pass", (), criteria, (), "agent",
                        judge)


_STALL = "scenarios/streaming/stall-then-429.yaml"
_SETTLE = "scenarios/tools/timeouts-settle.yaml"
_WRITERS = "scenarios/tools/writers-take-turns.yaml"
_429S = "scenarios/streaming/rate-limited-in-a-row.yaml"
_BUDGET = "scenarios/crash/budget-spent-at-a-crash.yaml"
_OUTAGE = "scenarios/streaming/overloaded-infra-paused.yaml"
_SPENT = "scenarios/streaming/overloaded-until-budget.yaml"
_ABOVE_CAP = "scenarios/streaming/rate-limited-above-cap.yaml"
_UNAUTHORIZED = "scenarios/streaming/unauthorized-blocked.yaml"
_FOREVER = "scenarios/streaming/stall-forever-anthropic.yaml"
_REPEATS = "scenarios/tools/repeated-error-stops.yaml"
_PARALLEL = "scenarios/tools/parallel-reads-and-a-writer.yaml"
_INSPECTED = "scenarios/crash/unknown-send-is-inspected.yaml"
_EVERYWHERE = "scenarios/crash/notes-and-mail-everywhere.yaml"
_AFTER_SEND = "scenarios/crash/unknown-after-send.yaml"
_CUT_WHOLE_CALL = "scenarios/streaming/cut-answer-with-a-whole-call.yaml"
_WITHHELD_OPENAI = "scenarios/dialects/refused-answer-with-calls-openai.yaml"
_WITHHELD_ANTHROPIC = "scenarios/dialects/refused-answer-with-calls-anthropic.yaml"
_WITHHELD_CRASH = "scenarios/crash/refused-answer-across-a-crash.yaml"
_CUT_ALWAYS = "scenarios/streaming/truncated-on-every-attempt.yaml"
_CUT_STREAMS = "scenarios/streaming/cut-streams.yaml"
_BUILD = "scenarios/jobs/build-survives-a-crash.yaml"
_ORPHAN = "scenarios/jobs/orphan-lossy-and-unknown.yaml"
_RACE = "scenarios/cancel/race-and-session-cancel.yaml"
_CANCEL_CALL = "scenarios/cancel/cancel-the-build-call.yaml"
_STOPPING = "scenarios/cancel/stopping-job-after-restart.yaml"
_CANCEL_GOAL = "scenarios/cancel/cancel-the-goal.yaml"
_ROUNDS = "scenarios/goals/verifier-rounds-run-out.yaml"
_SECRETS = "scenarios/crash/secret-arguments-stay-out.yaml"
_EDITED = "scenarios/goals/edited-goal-is-reverified.yaml"
_VERIFIER_DOWN = "scenarios/goals/verifier-outage-is-not-complete.yaml"
_SAME_GAP = "scenarios/goals/same-gap-twice-pauses.yaml"
_PROTECTED = "scenarios/goals/tests-stay-protected.yaml"
_PARKED = "scenarios/goals/rate-limit-parks-the-goal.yaml"
_REPLY_LOST = "scenarios/tools/mail-reply-lost.yaml"
_PAUSES = "scenarios/goals/restart-pauses-the-goal.yaml"
_OVERFLOW = "scenarios/compaction/overflow-compacts-and-retries.yaml"
_APPENDED = "scenarios/compaction/appended-during-compaction-kept.yaml"
_LONG_OUTAGE = "scenarios/budgets/long-outage-breaker.yaml"
_TOKENS = "scenarios/budgets/token-budget-stops.yaml"
_COST = "scenarios/budgets/cost-budget-stops.yaml"
_TOOL_DEADLINE = "scenarios/budgets/tool-timeout-within-deadline.yaml"
_RPM = "scenarios/quotas/requests-per-minute-openai.yaml"
_RESTORED = "scenarios/crash/restored-prefix-hits-openai.yaml"
_RESTORED_RESPONSES = "scenarios/crash/restored-prefix-hits-openai-responses.yaml"
_RESTORED_GEMINI = "scenarios/crash/restored-prefix-hits-gemini.yaml"
_RESTORED_ANTHROPIC = "scenarios/crash/restored-prefix-hits-anthropic.yaml"
_GOAL_COMPACTED = "scenarios/goals/goal-survives-compactions.yaml"
_LEASE_LAPSES = "scenarios/goals/lease-lapses-during-a-long-call.yaml"
_CHILDREN = "scenarios/tools/children-get-a-clean-environment.yaml"
_ONE_PATH = "scenarios/tools/writes-of-one-path-queue.yaml"
_TOOL_CAP = "scenarios/budgets/tool-call-cap-stops.yaml"
_HOOK = "scenarios/tools/hook-never-fires-within-itself.yaml"
_LOOPS = "scenarios/streaming/looping-answer-resampled.yaml"
_CUT_LIMIT = "scenarios/streaming/cut-answer-raises-the-limit.yaml"
_BACKUP = "scenarios/streaming/backup-model-takes-over.yaml"
_BACKUP_STALLS = "scenarios/dialects/backup-model-after-stalls-gemini.yaml"
_BACKUP_BAD_REQUEST = "scenarios/streaming/backup-model-not-for-a-bad-request.yaml"
_TRAINING = "scenarios/streaming/training-session-never-patched.yaml"
_TRAINING_CUT = "scenarios/streaming/training-cut-call-stops.yaml"
_JOB_ENV = "scenarios/jobs/job-gets-a-clean-environment.yaml"
_JOB_RUNTIME = "scenarios/jobs/job-runtime-budget-stops.yaml"
_JOB_CAP = "scenarios/jobs/job-cap-stops.yaml"
_JOB_OUTPUT = "scenarios/jobs/job-output-budget-stops.yaml"
_LONG_OUTPUT = "scenarios/budgets/long-tool-output-by-reference.yaml"

MUTANTS: tuple[Mutant, ...] = (
    Mutant("I4-claims-success-doing-nothing", "seed 002 §19.2 (complete 状态本身不是证据)",
           "never calls the model or a tool and reports complete",
           _Idle, (Kill(_STALL, "I4"),)),
    Mutant("L5-no-outcome", "seed 002 §19.2 (不要用一个 error 覆盖所有可恢复状态)",
           "does the work but its run() returns None instead of a stop state",
           rewriting(reference(), _none), (Kill(_STALL, "outcome"),)),
    Mutant("S1-no-idle-watchdog", "seed 002 §19.1 ② and 自建起步 ① (空闲超时监视器)",
           "only a read timeout of an hour: a stalled stream is waited out",
           reference(config=StreamConfig(idle_timeout=3600.0)), (Kill(_STALL, "S1"),)),
    Mutant("S5-ignores-retry-after", "seed 002 §19.1 (尊重服务端 Retry-After)",
           "drops the Retry-After headers and retries on its own backoff",
           with_responses(reference(), _without_retry_after), (Kill(_STALL, "S5"),)),
    Mutant("S5-ignores-retry-after-ms", "seed 002 §19.1 (尊重服务端 Retry-After)",
           "reads Retry-After only, so a quota's 429 that states its wait in retry-after-ms "
           "is retried on its own backoff", with_responses(reference(), _without_retry_after_ms),
           (Kill(_RPM, "S5"),)),
    Mutant("J7-walks-away-from-timed-out-tool", "seed 002 §19.1 (工具超时为什么不能直接 "
           "Promise.race)", "a timed-out call is told to stop but never waited for",
           with_tools(reference(), _WalksAway), (Kill(_SETTLE, "J7"),)),
    Mutant("L2-runs-writers-in-parallel", "seed 002 §19.5 (isConcurrencySafe)",
           "treats every tool as concurrency-safe, so writers run side by side",
           with_tools(reference(), _ClaimsSafe), (Kill(_WRITERS, "L2"),)),
    Mutant("S5-no-429-cap", "seed 002 自建起步 ⑤ (限制连续 429 次数)",
           "waits out rate limits without a cap on how many come in a row",
           reference(config=StreamConfig(max_consecutive_429=100)),
           (Kill(_429S, "S5:429"), Kill(_429S, "I4"))),
    Mutant("S8-budget-resets-after-restart", "seed 002 §19.1 (dsh: 进程恢复后延续原计数)",
           "a restart grants the attempt budget anew on top of what was spent",
           retasking(reference(), _budget_per_restart),
           (Kill(_BUDGET, "I9", "session:fsync#5:after:unsynced_lost"),)),
    Mutant("L6-context-is-billed-total", "seed 000 §5 (累计账单 token / 上下文 token)",
           "reports the run's billed input as the context size",
           rewriting(reference(), _context_is_total), (Kill(_WRITERS, "L6"),)),
    Mutant("L6-bills-every-attempt-twice", "seed 002 §19.6 (usage 只提交一次)",
           "adds each attempt's usage twice to the bill",
           rewriting(reference(), _billed_twice), (Kill(_STALL, "I6"),)),
    Mutant("L6-bills-nothing", "seed 002 §19.6 (usage 只提交一次)",
           "never adds up usage: the bill is empty",
           rewriting(reference(), _billed_nothing), (Kill(_STALL, "I6"),)),
    Mutant("L5-complete-after-outage", "seed 002 §19.2 (不会把基础设施故障标成 complete)",
           "an outage that stops the run is reported as complete",
           rewriting(reference(), _stop_as({"infra_paused": "complete"})), (Kill(_OUTAGE, "I4"),)),
    Mutant("L5-budget-limit-as-failure", "seed 002 §19.2 (budget_limited)",
           "a spent budget is reported as failed",
           rewriting(reference(), _stop_as({"budget_limited": "failed"})), (Kill(_SPENT, "I4"),)),
    Mutant("L5-rate-limit-as-outage", "seed 002 §19.2 (usage_limited)",
           "a rate limit is reported as an infrastructure pause",
           rewriting(reference(), _stop_as({"usage_limited": "infra_paused"})),
           (Kill(_ABOVE_CAP, "I4"),)),
    Mutant("L5-auth-failure-as-failed", "seed 002 §19.1 (认证/配额/余额: 立即上报用户)",
           "a refused credential is reported as failed, not blocked",
           rewriting(reference(), _stop_as({"blocked": "failed"})), (Kill(_UNAUTHORIZED, "I4"),)),
    Mutant("S5-waits-out-any-retry-after", "seed 002 §19.1 (pi: 超过 60 秒直接上抛)",
           "waits for any Retry-After, an hour included",
           reference(config=StreamConfig(retry_after_cap=7200.0)), (Kill(_ABOVE_CAP, "I4"),)),
    Mutant("S5-never-retries", "seed 002 §19.1 (429/部分 5xx/断流: 退避重试)",
           "gives up on the first transient failure",
           reference(config=StreamConfig(max_attempts=1)), (Kill(_STALL, "I4"),)),
    Mutant("S1-no-first-byte-timeout", "seed 002 自建起步 ① (连接超时与空闲看门狗是两回事)",
           "waits an hour for the first byte of an answer",
           reference(config=StreamConfig(first_byte_timeout=3600.0)), (Kill(_FOREVER, "I4"),)),
    Mutant("L3-no-repetition-guard", "seed 002 §19.1 ③ (相同指纹连续出现且没有新证据)",
           "lets the same failing call repeat without a reminder or a stop",
           reference(limits=GuardLimits(repetitions_before_stop=100,
                                        fingerprint_repeats_before_stop=100)),
           (Kill(_REPEATS, "L3"),)),
    Mutant("I2-last-reply-dropped", "seed 000 §2.2 (需要有对应的工具回复)",
           "the last tool reply of the run never reaches the transcript",
           rewriting(reference(), _last_reply_dropped), (Kill(_PARALLEL, "I2"),)),
    Mutant("J5-unsure-reply-says-done", "seed 000 §2.2 (结果未知: 先检查现状)",
           "recovery closes a dangling call with an ok reply",
           rewriting(reference(), _unsure_said_done),
           (Kill(_INSPECTED, "I10", "journal:fsync#2:after:unsynced_lost"),)),
    Mutant("J2-no-fsync", "seed 000 §1.2 (fsyncSync() 请求把数据同步到底层存储)",
           "writes its journal and session log without fsync",
           with_files(reference(), _UnsyncedFile),
           (Kill(_EVERYWHERE, "I1", "journal:write#3:before:unsynced_lost"),)),
    Mutant("J1-start-record-never-written", "seed 000 §1.1 (开始记录写入失败时不运行)",
           "runs a tool with only its intent durable, no execution_started line",
           with_files(reference(), _NoStartRecord),
           (Kill(_EVERYWHERE, "I1", "journal:fsync#3:before:unsynced_lost"),)),
    Mutant("J4-unknown-as-not-started", "seed 000 §2.1 (最后状态仍是 execution_started … 直接重跑"
           "追加命令可能产生重复内容)", "recovery takes a started call for one that never started",
           with_ports(reference(), _started_read_as_intent),
           (Kill(_AFTER_SEND, "I1", "journal:write#3:before:unsynced_lost"),)),
    Mutant("J4-not-started-as-unknown", "seed 000 §2.1 (最后状态是 intent → interrupted_before_"
           "execution)", "recovery reports every call without a result unknown, one whose "
           "journal ends at its intent (it never started) included",
           with_ports(reference(), _intent_read_as_started),
           (Kill(_EVERYWHERE, "J4", "journal:write#2:before:unsynced_lost"),)),
    Mutant("S6-resends-truncated-answer", "seed 002 §19.1 ① (重采样同样的 max_tokens 只会再截断)",
           "re-sends the same request when an answer is cut at max_tokens",
           with_responses(reference(), _length_resent), (Kill(_CUT_ALWAYS, "I4"),)),
    Mutant("S6-ignores-length-finish", "seed 002 §19.1 ① (pi: length 全部工具调用都标记失败)",
           "takes an answer cut at max_tokens for a finished one",
           with_responses(reference(), _length_as_done), (Kill(_CUT_WHOLE_CALL, "I7"),)),
    Mutant("S2-runs-withheld-calls", "seed 002 §19.1 ② (确认没有拒绝、截断或流错误,再把 assistant "
           "消息作为最终返回)", "runs the tool calls of an answer that finished refusal or "
           "content_filter", with_responses(reference(), _withheld_as_calls),
           (Kill(_WITHHELD_OPENAI, "refusal"), Kill(_WITHHELD_ANTHROPIC, "refusal"),
            Kill(_WITHHELD_CRASH, "refusal", "session:fsync#3:after:unsynced_lost"))),
    Mutant("S2-one-attempt-id-per-run", "seed 002 §19.1 (每个 attempt 有独立 ID)",
           "commits every message under one attempt id",
           rewriting(reference(), _one_attempt_id), (Kill(_WRITERS, "I8"),)),
    Mutant("L3-guard-stop-as-complete", "seed 002 §19.2 (不要把\"本轮停止\"写成\"目标完成\")",
           "a run the repetition guard stopped is reported complete",
           rewriting(reference(), _stop_as({"failed": "complete"})), (Kill(_REPEATS, "I4"),)),
    Mutant("I11-recovery-writes-every-time", "seed 000 §2.1 (再次载入同一份记录,不会再恢复一遍)",
           "every recover() writes a marker line, so recovering twice differs from once",
           _MarksEveryRecovery, (Kill(_STALL, "I11"),)),
    Mutant("D3-ids-from-entropy", "seed 002 §19.6 (输出固定的假模型服务 … 确定性回归)",
           "draws its attempt, turn and execution ids from entropy, not its seed",
           with_ports(reference(), _seed_from_entropy), (Kill(_STALL, "determinism"),)),
    Mutant("J6-shrugs-off-log-errors", "seed 002 §19.6 (会话可信记录写入失败时 … 必须停止)",
           "a failed write to the trusted log is dropped like a metrics record",
           with_files(reference(), _ShrugsOffDiskErrors),
           (Kill(_EVERYWHERE, "J6", "session:fsync#2:after:eio_on_fsync"),)),
    Mutant("J6-log-failure-after-answer-is-complete",
           "seed 002 §19.6 (会话可信记录写入失败时 … 必须停止)",
           "a trusted-log write that fails after the model's final answer is reported complete",
           rewriting(reference(), _answered_is_complete),
           (Kill(_EVERYWHERE, "I4", "session:fsync#13:after:eio_on_fsync"),)),
    Mutant("L2-results-in-completion-order", "seed 002 §19.5 (结果仍按模型给出的顺序提交)",
           "pairs results with calls in the order the calls finished",
           _completion_order, (Kill(_WRITERS, "L2:results"),)),
    Mutant("S5-no-backoff", "seed 002 §19.1 (grok: 普通退避大致为 2、4、8、16 秒)",
           "retries a failing provider at once, without backoff",
           reference(config=StreamConfig(backoff_base=0.01, backoff_cap=0.01)),
           (Kill(_OUTAGE, "S5:backoff"),)),
    Mutant("L6-bills-only-finished-streams", "seed 002 §19.6 (完成事件和 usage 只提交一次)",
           "drops the usage of an attempt whose stream broke after its usage arrived",
           with_responses(reference(), _usage_only_when_done), (Kill(_CUT_STREAMS, "I6"),)),
    Mutant("JOBS-reruns-after-restart", "seed 002 §19.4 (重新 attach,从 outputOffset 补读)",
           "runs a job again after a restart instead of re-attaching to it",
           reruns_jobs_after_restart(),
           (Kill(_BUILD, "JOBS", "jobs:fsync#2:after:unsynced_lost"),)),
    Mutant("JOBS-waits-for-stopping-job", "seed 002 §19.4 (stopping 进程仍在: 继续 TERM→KILL 升级)",
           "after a restart, takes a job its record says is stopping for a running one and "
           "waits for it, so a build that ignores TERM is never killed",
           waits_for_stopping_jobs(),
           (Kill(_STOPPING, "JOBS", "after_signal:build#1:at:unsynced_lost"),)),
    Mutant("JOBS-exit-code-for-orphans", "seed 002 §19.4 (标记 orphaned,不得伪造 exit code)",
           "reads a vanished process as a clean exit, exit code 0",
           invents_exit_codes(), (Kill(_ORPHAN, "JOBS"),)),
    Mutant("JOBS-cancelled-waiter-claims",
           "seed 002 §19.4 (被取消的 waiter 不能让完成通知永久消失)",
           "a waiter cancelled as its job completes claims the completion, then drops it",
           cancelled_waiter_claims(), (Kill(_RACE, "JOBS:wakeup"),)),
    Mutant("JOBS-never-claims", "seed 002 §19.4 (只有真正拿到完成结果的 waiter 才能阻止自动唤醒)",
           "never tells the runner a waiter got the result: a wake-up repeats the reply",
           never_claims(), (Kill(_BUILD, "JOBS:wakeup"),)),
    Mutant("CANCEL-not-idempotent", "seed 002 §19.4 (取消请求应幂等)",
           "acts on a cancel request again each time it is sent",
           cancel_not_idempotent, (Kill(_CANCEL_CALL, "CANCEL"),)),
    Mutant("CANCEL-goal-treated-as-turn", "seed 002 §19.4 (goal: disarm 自动续跑)",
           "a goal cancel stops the turn like a turn cancel, and the goal service still holds "
           "the goal active, for the next session to resume",
           goal_cancel_as_turn_cancel, (Kill(_CANCEL_GOAL, "CANCEL:goal"),)),
    Mutant("JOBS-late-completion-wakes-cancelled-goal",
           "seed 002 §19.4 (迟到的完成事件仍要写入记录,但不能把已取消 Goal 自动唤醒)",
           "marks the goal cancelled and stops its job, but leaves the run's auto-continue "
           "armed: the job's late completion wakes the goal",
           goal_cancel_leaves_run_armed, (Kill(_CANCEL_GOAL, "JOBS:wakeup"),)),
    Mutant("J3-raw-arguments-in-a-log", "seed 000 §5 (诊断日志在持久化前对结构化敏感字段脱敏)",
           "keeps a diagnostic log of every tool call with its raw arguments, secrets included",
           with_ports(reference(), _tool_calls_logged), (Kill(_SECRETS, "J3"),)),
    Mutant("I5-continues-stale-auto-continue", "seed 002 §19.3 (已排队的自动续跑请求带着旧 "
           "revision,启动前发现不匹配就丢弃)", "reads the goal once, so a user's edit never "
           "stops the queued auto-continue of the old revision",
           with_goals(reference(), _GoalReadOnce), (Kill(_EDITED, "I5"),)),
    Mutant("I5-acts-under-old-epoch-after-recovery", "seed 002 §19.3 (恢复后只接受新版本号,旧进程"
           "的监视任务和自动续跑请求全部作废)", "after a restart, carries on under the lease "
           "it finds instead of taking a new epoch",
           with_goals(reference(), _AdoptsFoundLease),
           (Kill(_EDITED, "I5", "session:fsync#12:after:unsynced_lost"),)),
    Mutant("I4-resumes-despite-pause-policy", "seed 002 §19.3 (不要把\"会话恢复\"自动等同于"
           "\"任务继续\")", "takes every start for a first one, so a restart under the pause "
           "policy carries on with the goal",
           with_goals(reference(), _EveryStartIsFresh),
           (Kill(_PAUSES, "I4", "session:fsync#12:after:torn_append_zeros"),)),
    Mutant("I5-complete-without-proof", "seed 002 §19.2 (complete 状态本身不是证据; 同一 Agent "
           "自审)", "takes the model's \"done\" as its own proof, never asking the verifier",
           with_goals(reference(), _JudgesItself), (Kill(_EDITED, "I5:proof"),)),
    Mutant("I5-fails-open-on-verifier-outage", "seed 002 §19.2 (FailOpenAchieved … 进入 "
           "infra_paused)", "takes an unavailable verifier for a pass and completes",
           with_goals(reference(), _FailsOpen),
           (Kill(_VERIFIER_DOWN, "I5:proof"), Kill(_VERIFIER_DOWN, "I4"))),
    Mutant("L3-gap-fingerprint-counts-rounds", "seed 002 §19.2 (相同 gap 指纹连续出现则进入 "
           "NoProgressPaused)", "puts the round number into the gap fingerprint, so the same "
           "gap never looks repeated and the rework goes on",
           with_goals(reference(), _RoundInFingerprint),
           (Kill(_SAME_GAP, "I4"), Kill(_SAME_GAP, "L3:same-gap"))),
    Mutant("I5-makes-the-tests-green", "seed 002 §19.2 (防止\"把测试改绿\": 模型可能通过削弱断言、"
           "加 skip、删除失败用例来获得绿色结果; ④ 测试目录可设为敏感路径,高风险任务需人工批准)",
           "runs the model's edit of the goal's protected tests, so a skipped test passes the "
           "verifier and the goal completes on it",
           reference(discipline=Discipline(keep_protected_paths=False)),
           (Kill(_PROTECTED, "I5:protected"), Kill(_PROTECTED, "I4"))),
    Mutant("I5-leaves-the-goal-active-at-a-usage-limit", "seed 002 §19.2 (usage_limited: "
           "账号/速率限制, 否, 限制解除后再启动; 不要用一个 error 覆盖所有可恢复状态)",
           "stops the run usage_limited but leaves its goal active, for the next start to take "
           "up while the limit holds", reference(discipline=Discipline(park_goal_on_stop=False)),
           (Kill(_PARKED, "I5:status"),)),
    Mutant("S5-429-run-forgotten-at-restart", "seed 002 \"自建起步\" ⑤ (grok limits "
           "consecutive 429s) and §19.2 (子预算只能消费父预算,不能自行续杯)",
           "counts 429s in a row in memory only, so a crash between two rate limits buys a "
           "fresh run of them", reference(budget_policy=BudgetPolicy(
               count_rate_limits_durably=False)),
           (Kill(_PARKED, "S5:429", "session:fsync#18:after:unsynced_lost"),)),
    Mutant("J5-lost-reply-read-as-failed", "seed 000 §4 (如果请求可能已经送达,只是回执没回来,就不能"
           "直接恢复成\"可以再发一次\"; 区分\"没有送出\"和\"是否送达还不清楚\")",
           "answers a tool whose connection was reset after its request went out with a plain "
           "error, so the model sends the mail again",
           reference(discipline=Discipline(lost_replies_unknown=False)),
           (Kill(_REPLY_LOST, "I1"), Kill(_REPLY_LOST, "side_effects"))),
    Mutant("L7-compaction-overwrites-appended", "seed 000 §3.2 (还要检查历史有没有被追加)",
           "a compaction is written back over the history that arrived while it ran",
           reference(compaction=CompactionConfig(keep_appended=False)),
           (Kill(_APPENDED, "compaction"),)),
    Mutant("S5-overflow-retried-blindly", "seed 002 §19.1 (pi: 上下文溢出……先压缩上下文再重试一次)",
           "a context overflow is retried like a server error, the same input again",
           with_responses(reference(), _overflow_as_outage),
           (Kill(_OVERFLOW, "compaction:overflow"),)),
    Mutant("S5-overflow-never-compacted", "seed 002 §19.1 (上下文溢出走压缩而非普通重试)",
           "a context overflow ends the run failed; the history is never compacted",
           reference(compaction=CompactionConfig(enabled=False)), (Kill(_OVERFLOW, "I4"),)),
    Mutant("S5-no-circuit-breaker", "seed 002 §19.1 (熔断解决下游整体持续故障)",
           "a provider that stays down gets every retry at once, then the run gives up",
           reference(breaker=BreakerConfig(enabled=False)), (Kill(_LONG_OUTAGE, "breaker"),)),
    Mutant("L4-tokens-not-capped", "seed 002 §19.2 (GoalBudget token/time/cost/deadline)",
           "the token budget is recorded but never stops a request",
           reference(budget_policy=BudgetPolicy(cap_tokens=False)),
           (Kill(_TOKENS, "budget:spend"),)),
    Mutant("L4-verifier-rounds-not-capped", "seed 002 §19.3 (token/time/cost/round budgets)",
           "the goal's verifier-round budget is recorded but never stops another rework",
           reference(budget_policy=BudgetPolicy(cap_verifier_rounds=False)),
           (Kill(_ROUNDS, "budget:rounds"), Kill(_ROUNDS, "I4"))),
    Mutant("L4-cost-not-capped", "seed 002 §19.2 (GoalBudget token/time/cost/deadline)",
           "the cost budget is never charged against, so spending goes on",
           reference(budget_policy=BudgetPolicy(cap_cost=False)), (Kill(_COST, "budget:spend"),)),
    Mutant("L4-tool-timeout-past-deadline", "seed 002 §19.2 (子预算只能消费父预算,不能自行续杯)",
           "a tool keeps its own timeout even when the run's deadline comes first",
           reference(budget_policy=BudgetPolicy(tool_timeouts_within_deadline=False)),
           (Kill(_TOOL_DEADLINE, "budget:tools"),)),
    Mutant("CACHE-tool-order-per-process", "seed 002 §19.7 (只有模型、配置和重建出的前缀都一致时,"
           "它才保留命中机会)", "builds its tool list in the process's own order, so a "
           "restarted agent's first request changes the prefix it had cached",
           with_requests(reference(), _tools_in_process_order),
           (Kill(_RESTORED, "cache:restart", "journal:fsync#5:after:unsynced_lost"),
            Kill(_RESTORED_ANTHROPIC, "cache:restart", "journal:fsync#5:after:unsynced_lost"))),
    Mutant("CACHE-history-rerendered-after-restart", "seed 002 §19.7 (只有模型、配置和重建出的前缀"
           "都一致时,它才保留命中机会)", "rebuilds its history after a restart from parsed tool "
           "calls, their arguments dumped anew, so the restored prefix is not the one it sent",
           with_requests(reference(), _arguments_rerendered),
           # A crash once a request carried a call with arguments: that message is cached;
           # for Anthropic, the mail call whose two keys a sorted rebuild swaps.
           (Kill(_RESTORED, "cache:restart", "journal:fsync#7:after:unsynced_lost"),
            Kill(_RESTORED_ANTHROPIC, "cache:restart", "session:fsync#23:before:unsynced_lost"))),
    Mutant("CACHE-key-per-process", "seed 002 §19.7 (恢复会话后第一次请求 … 重建出的前缀都一致)",
           "keys its prompt cache by a session id drawn at each start, so a restarted agent "
           "finds nothing cached", with_requests(reference(), _cache_key_per_process),
           (Kill(_RESTORED, "cache:restart", "journal:fsync#5:after:unsynced_lost"),
            Kill(_RESTORED_ANTHROPIC, "cache:restart", "journal:fsync#5:after:unsynced_lost"))),
    Mutant("CACHE-system-prompt-stamped-per-process", "seed 002 §19.7 (缓存输入占比 … 系统说明"
           "、项目指令、工具清单或历史是否改变; 只有模型、配置和重建出的前缀都一致时,它才保留命中"
           "机会)", "renders its system prompt at each start with the time it started, so a "
           "restarted agent's first request changes the top of the prefix it had cached",
           _system_prompt_stamped_per_process,
           (Kill(_RESTORED, "cache:restart", "journal:fsync#5:after:unsynced_lost"),
            Kill(_RESTORED_RESPONSES, "cache:restart", "journal:fsync#5:after:unsynced_lost"),
            Kill(_RESTORED_GEMINI, "cache:restart", "journal:fsync#5:after:unsynced_lost"),
            Kill(_RESTORED_ANTHROPIC, "cache:restart", "journal:fsync#5:after:unsynced_lost"))),
    Mutant("CACHE-text-dropped-after-restart", "seed 002 §19.7 (只有模型、配置和重建出的前缀都一致"
           "时,它才保留命中机会)", "rebuilds its history after a restart from the tool calls "
           "alone, the text the model wrote beside them dropped, so the restored prefix is not "
           "the one it sent", with_requests(reference(), _text_dropped_after_restart),
           (Kill(_RESTORED, "cache:restart", "journal:fsync#5:after:unsynced_lost"),
            Kill(_RESTORED_ANTHROPIC, "cache:restart", "journal:fsync#5:after:unsynced_lost"))),
    Mutant("CACHE-marks-dropped-after-restart", "seed 002 §19.7 (只有模型、配置和重建出的前缀都一致"
           "时,它才保留命中机会)", "marks its Anthropic cache breakpoints when it opens a "
           "session, not when it resumes one, so a restarted agent's requests carry no "
           "cache_control and reach nothing the crashed process cached",
           with_requests(reference(), _marks_dropped_after_restart),
           (Kill(_RESTORED_ANTHROPIC, "cache:restart", "journal:fsync#5:after:unsynced_lost"),)),
    Mutant("I5-goal-compacted-away", "seed 002 §19.3 (持久保存的 Goal ──按需读取──> 每轮动态注入;"
           "会话事件 ──有损压缩──> 模型历史摘要)", "keeps the goal in its history instead of "
           "injecting it every turn, so the first compaction summarises the goal away",
           with_requests(reference(), _goal_compacted_away),
           (Kill(_GOAL_COMPACTED, "I5:context"),
            Kill(_GOAL_COMPACTED, "I5:context", "journal:fsync#5:after:unsynced_lost"))),
    Mutant("I5-acts-on-a-lapsed-lease", "seed 002 §19.3 (推荐单独保存一份带过期时间的执行授权)",
           "never reads the lease's end time, so after a call that outlived the lease it acts "
           "on authority that ran out", with_goals(reference(), _LeaseWithoutEnd),
           (Kill(_LEASE_LAPSES, "I5:lease"), Kill(_LEASE_LAPSES, "I4"))),
    Mutant("ENV-whole-environ-to-children",
           "seed 000 §5 (shell、后台任务、Hook 和 MCP 子进程使用清理过的环境变量)",
           "starts a tool's child process with a copy of its own os.environ, the model "
           "provider's API key in it", with_tools(reference(), _HandsItsWholeEnvironment),
           (Kill(_CHILDREN, "env:children"),
            Kill(_CHILDREN, "env:children", "journal:fsync#2:after:unsynced_lost"))),
    Mutant("L2-writes-one-path-side-by-side",
           "seed 002 §19.5 (同一真实文件路径的内部修改还会排队)",
           "runs every call of a batch of concurrency-safe tools at once, two edits of one "
           "file included", reference(discipline=Discipline(queue_writes_by_path=False)),
           (Kill(_ONE_PATH, "L2:path"),
            Kill(_ONE_PATH, "L2:path", "journal:fsync#1:after:unsynced_lost"))),
    Mutant("L4-tool-calls-not-capped", "seed 002 §19.2 (ToolBudget(maxCalls/perToolTimeout))",
           "the tool-call cap is recorded but never stops a call, so the model's every "
           "request for one more runs", reference(budget_policy=BudgetPolicy(cap_tool_calls=False)),
           (Kill(_TOOL_CAP, "budget:tool-calls"),)),
    Mutant("L4-tool-calls-counted-per-process",
           "seed 002 §19.2 (子预算只能消费父预算,不能自行续杯)",
           "counts its tool calls in memory, so each restart starts a fresh cap",
           reference(budget_policy=BudgetPolicy(count_tool_calls_durably=False)),
           (Kill(_TOOL_CAP, "budget:tool-calls", "journal:fsync#4:after:unsynced_lost"),)),
    Mutant("S5-doom-loop-continued", "seed 002 §19.1 (推理死循环(DoomLoop) 换法重采样)",
           "never looks for a loop in the answer, so a model that repeats one sentence to "
           "its output limit is read to the end and continued as any cut text",
           reference(config=StreamConfig(detect_loops=False)),
           (Kill(_LOOPS, "retry:doom-loop"),)),
    Mutant("S5-doom-loop-retried-unchanged", "seed 002 §19.1 (重试无意义,换参数重采样才有意义)",
           "drops a looping answer but asks again with the same sampling, so the same request "
           "meets the same loop", with_requests(reference(), _sampling_left_as_it_was),
           (Kill(_LOOPS, "retry:doom-loop"),)),
    Mutant("S5-no-backup-model", "seed 002 §19.2 (网络请求失败 … 同请求退避重试或切备用线路)",
           "never reads the backup model it is given, so a primary that stays overloaded "
           "ends the run though another model would answer",
           retasking(reference(), _without_backup),
           (Kill(_BACKUP, "retry:backup"), Kill(_BACKUP, "I4"),
            Kill(_BACKUP_STALLS, "retry:backup"))),
    Mutant("S5-backup-on-4xx", "seed 002 §19.2 (参数或方案错误 … 把确定性失败当瞬态故障)",
           "sends a request the primary refused with 400 to the backup model, as if another "
           "model could fix a bad request",
           reference(discipline=Discipline(backup_only_on_route_failures=False)),
           (Kill(_BACKUP_BAD_REQUEST, "retry:backup"), Kill(_BACKUP_BAD_REQUEST, "I4"))),
    Mutant("S6-output-limit-never-raised", "seed 002 §19.1 ① (第 1 级:完整 attempt 尚未提交且没有"
           "副作用 → 丢弃并提高上限重采样)", "answers an answer cut at its own output limit as "
           "cut (level 3) though the model allows more, so the model writes the call again",
           reference(config=StreamConfig(raise_output_limit=False)),
           (Kill(_CUT_LIMIT, "S6:limit"),)),
    Mutant("L3-hook-fires-past-its-depth",
           "seed 002 §19.1 ③ (钩子死循环防护 …… 解法:递归深度计数器)",
           "counts the hook's depth but compares it with <= one level too far, so the hook "
           "fires once more within its own run than the bound allows",
           reference(limits=GuardLimits(hook_depth_slack=1)),
           (Kill(_HOOK, "L3:hook"),
            Kill(_HOOK, "L3:hook", "journal:fsync#4:after:unsynced_lost"))),
    Mutant("S6-training-data-patched",
           "seed 002 §19.1 ① (训练数据收集模式则拒绝修补; 第 4 级:工具结果未知 → 停止)",
           "patches a session collected as training data as a product session: a cut call "
           "gets an error reply and a call a crash left unsettled a synthetic one, made-up "
           "replies that become training samples",
           retasking(reference(), _as_product_session),
           (Kill(_TRAINING_CUT, "train:no-patch"),
            Kill(_TRAINING, "train:no-patch", "journal:fsync#2:after:unsynced_lost"))),
    Mutant("ENV-whole-environ-to-jobs",
           "seed 000 §5 (shell、后台任务、Hook 和 MCP 子进程使用清理过的环境变量)",
           "starts a background job's process with a copy of its own os.environ, the model "
           "provider's API key in it", jobs_get_the_whole_environ(),
           (Kill(_JOB_ENV, "env:children"),
            Kill(_JOB_ENV, "env:children", "journal:fsync#2:after:unsynced_lost"))),
    Mutant("L4-job-runtime-not-capped",
           "seed 002 §19.2 (BackgroundBudget(maxJobs/maxRuntime/maxOutput))",
           "the runtime budget of background jobs is recorded but never read: a job is waited "
           "out however long it runs, and the run ends complete", job_runtime_not_capped(),
           (Kill(_JOB_RUNTIME, "budget:job-runtime"), Kill(_JOB_RUNTIME, "I4"))),
    Mutant("L4-job-runtime-counted-per-process",
           "seed 002 §19.2 (子预算只能消费父预算,不能自行续杯)",
           "times a job's runtime budget from when this process began to wait for it, so a "
           "restart that re-attaches to the job grants it the whole budget anew",
           job_runtime_from_restart(),
           (Kill(_JOB_RUNTIME, "budget:job-runtime", "jobs:fsync#3:after:unsynced_lost"),)),
    Mutant("L4-jobs-not-capped", "seed 002 §19.2 (BackgroundBudget(maxJobs/maxRuntime/maxOutput))",
           "the cap on background jobs is recorded but never read, so every job the model "
           "asks for starts", jobs_not_capped(),
           (Kill(_JOB_CAP, "budget:job-starts"), Kill(_JOB_CAP, "I4"))),
    Mutant("L4-jobs-counted-per-process", "seed 002 §19.2 (子预算只能消费父预算,不能自行续杯)",
           "counts the jobs it started in memory, so each restart starts a fresh cap",
           jobs_counted_per_process(),
           (Kill(_JOB_CAP, "budget:job-starts", "jobs:fsync#2:after:unsynced_lost"),)),
    Mutant("L4-job-output-not-capped",
           "seed 002 §19.2 (BackgroundBudget(maxJobs/maxRuntime/maxOutput))",
           "the output budget of background jobs is recorded but never read: a job writes on "
           "to its end, and the run ends complete", job_output_not_capped(),
           (Kill(_JOB_OUTPUT, "budget:job-output"), Kill(_JOB_OUTPUT, "I4"))),
    Mutant("L4-job-output-counted-per-process",
           "seed 002 §19.2 (子预算只能消费父预算,不能自行续杯)",
           "counts a job's output from the offset this process first read it at, so a restart "
           "that re-attaches to the job grants it the whole output budget anew",
           job_output_counted_per_process(),
           (Kill(_JOB_OUTPUT, "budget:job-output", "jobs:fsync#3:after:unsynced_lost"),)),
    Mutant("L4-tool-output-inline",
           "seed 002 §19.2 (超长输出有稳定引用); §19.6 (不要默认复制全部 prompt、源码和工具输出)",
           "sends the model every tool result whole, however long: a 60,000-character build "
           "log rides in every later request",
           reference(budget_policy=BudgetPolicy(inline_tool_result_chars=None)),
           (Kill(_LONG_OUTPUT, "context:tool-output"),)),
)
"""Every mutant of the catalogue, in the order of the README's table."""
