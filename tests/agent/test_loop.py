"""The reference agent loop (L1-L7) against the fake world, on virtual time.

Each test builds a small world (fake provider, crash-simulating disk, counting
tools on a ledger), runs :class:`ReferenceAgent` and reads the evidence the
checkers read: the outcome, the ledger, the provider's requests, the session log.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from fakes import (
    Behaviour,
    ConnectionReset,
    CrashDisk,
    CrashPlan,
    FakeProvider,
    Fault,
    HttpError,
    ProviderRequest,
    ScriptedResponse,
    ScriptedUsage,
    SimulatedCrash,
    Stall,
    Text,
    ToolLedger,
    ToolUse,
    TruncatedToolArguments,
    VirtualClock,
    WorldTool,
)
from harness import JournalCorruptError
from harness.agent import ReferenceAgent, StreamConfig
from harness.agent._disk import RealDisk
from harness.agent._metrics import FileMetrics, MemoryMetrics
from harness.agent._session_log import StaleEpochError
from harness.ports import (
    DIALECTS,
    AgentOutcome,
    AgentPorts,
    Dialect,
    RecoveryReport,
    Task,
    ToolSpec,
    TranscriptMessage,
)

CONFIG = StreamConfig(backoff_jitter=0.0)
USAGE = ScriptedUsage(100, 10)
TOOLS = (ToolSpec("append"), ToolSpec("send"), ToolSpec("read"), ToolSpec("inspect"))
TASK = Task("Write a note and send it.", tools=TOOLS)
Responder = Callable[[ProviderRequest], ScriptedResponse]


def calls(*uses: ToolUse, usage: ScriptedUsage = USAGE) -> ScriptedResponse:
    return ScriptedResponse(uses, "tool_calls", usage)


def answer(text: str = "Done.", usage: ScriptedUsage = USAGE) -> ScriptedResponse:
    return ScriptedResponse((Text(text),), "stop", usage)


def by_turn(*responses: ScriptedResponse) -> Responder:
    """A model that answers turn n with ``responses[n - 1]`` (the last one after that)."""
    return lambda request: responses[min(request.turn, len(responses)) - 1]


TWO_TURNS = by_turn(
    calls(ToolUse("call_1", "append", {"text": "hello"}), ToolUse("call_2", "send", {"to": "a"})),
    answer(),
)


class World:
    """The outside world of one run: provider, disk, ledger, tools, clock."""

    def __init__(
        self,
        dialect: Dialect,
        responder: Responder,
        faults: Mapping[tuple[int, int], Sequence[Fault]] | None = None,
        *,
        plan: CrashPlan | None = None,
        behaviours: Mapping[str, Behaviour] | None = None,
        seed: int = 0,
        disk: Any = None,
    ) -> None:
        self.clock = VirtualClock()
        self.provider = FakeProvider(dialect, responder, faults or {}, seed=seed)
        self.crash_disk = CrashDisk(plan=plan, seed=seed)
        self.real_disk = disk
        self.ledger = ToolLedger(self.clock, self.crash_disk.incarnations)
        kinds = ("append", "send", "read", "inspect", "put")
        self.tools = {
            kind: WorldTool(kind, self.ledger, behaviour=(behaviours or {}).get(kind))
            for kind in kinds
        }
        self.seed = seed
        self.agents: list[ReferenceAgent] = []

    def ports(self, http: Any) -> AgentPorts:
        disk = self.real_disk or self.crash_disk.view()
        return AgentPorts(
            http,
            self.provider.endpoint,
            self.provider.dialect,
            disk,
            "/state" if self.real_disk is None else str(self.real_disk.root),
            self.tools,
            self.clock,
            self.seed,
            self.crash_disk.incarnations.current,
            "run_1",
        )

    def run(self, task: Task = TASK, **options: Any) -> AgentOutcome:
        async def go() -> AgentOutcome:
            async with self.provider.httpx_client() as http:
                agent = ReferenceAgent(self.ports(http), config=CONFIG, **options)
                self.agents.append(agent)
                return await agent.run(task)

        return self.clock.run(go())

    def recover(self) -> RecoveryReport:
        async def go() -> RecoveryReport:
            async with self.provider.httpx_client() as http:
                return await ReferenceAgent(self.ports(http), config=CONFIG).recover()

        return self.clock.run(go())

    def crash(self, task: Task = TASK) -> SimulatedCrash:
        with pytest.raises(SimulatedCrash) as caught:
            self.run(task)
        self.crash_disk.plan = None
        self.crash_disk.restart()
        return caught.value

    def session_bytes(self) -> bytes:
        return self.crash_disk.files()["/state/session.jsonl"]

    def session(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.session_bytes().splitlines()]


def assert_well_formed(transcript: Sequence[TranscriptMessage]) -> None:
    """I2: every tool call has exactly one reply, right after its message, in order."""
    __tracebackhide__ = True
    expected: list[str] = []
    for message in transcript:
        if message.role == "tool":
            assert expected, f"reply {message.call_id} answers no open call"
            assert message.call_id == expected.pop(0)
        else:
            assert expected == [], f"calls {expected} have no reply"
            expected = [call.call_id for call in message.tool_calls]
    assert expected == []


def tool_results(request: ProviderRequest) -> list[str]:
    """The tool reply texts in a request, in order, for any dialect (read as its family)."""
    found: list[str] = []
    for message in (request.chat or {}).get("messages", []):  # type: ignore[union-attr]
        if message.get("role") == "tool":
            found.append(message["content"])
        elif isinstance(message.get("content"), list):
            found += [b["content"] for b in message["content"] if b["type"] == "tool_result"]
    return found


# -- a complete run (L1, L2) ---------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_two_turn_task_completes_and_each_effect_happens_once(dialect: Dialect) -> None:
    world = World(dialect, TWO_TURNS)
    outcome = world.run()
    assert (outcome.stop_state, outcome.turns, outcome.infra_failure) == ("complete", 2, False)
    assert [e.tool for e in world.ledger.effects] == ["append", "send"]
    assert world.ledger.duplicates() == {}
    assert [m.role for m in outcome.transcript] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert_well_formed(outcome.transcript)
    assert [m.status for m in outcome.transcript if m.role == "tool"] == ["ok", "ok"]
    assert outcome.transcript[-1].text == "Done."


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_second_request_carries_the_calls_and_their_replies(dialect: Dialect) -> None:
    world = World(dialect, TWO_TURNS)
    world.run()
    second = world.provider.requests[1].json
    assert second is not None
    messages: Any = second.get("messages")
    if dialect == "openai":
        assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
        assert [c["id"] for c in messages[1]["tool_calls"]] == ["call_1", "call_2"]
        assert messages[2]["tool_call_id"] == "call_1"
        assert second["tools"][0]["function"]["name"] == "append"
    elif dialect == "openai-responses":
        items: Any = second["input"]
        assert [i.get("type", i.get("role")) for i in items] == [
            "user", "function_call", "function_call", "function_call_output",
            "function_call_output"]
        assert items[1] == {"type": "function_call", "call_id": "call_1", "name": "append",
                            "arguments": '{"text":"hello"}'}
        assert items[3]["call_id"] == "call_1"
        assert second["tools"][0]["name"] == "append"
        assert second["max_output_tokens"] == 1024
    elif dialect == "gemini":
        contents: Any = second["contents"]
        assert [c["role"] for c in contents] == ["user", "model", "user"]
        assert contents[1]["parts"][0] == {
            "functionCall": {"id": "call_1", "name": "append", "args": {"text": "hello"}}}
        assert [p["functionResponse"]["id"] for p in contents[2]["parts"]] == ["call_1", "call_2"]
        assert contents[2]["parts"][0]["functionResponse"]["name"] == "append"
        assert "model" not in second  # named in the URL
        assert world.provider.requests[1].url.endswith("/fake-model:streamGenerateContent?alt=sse")
        assert second["tools"][0]["functionDeclarations"][0]["name"] == "append"
    else:
        assert [m["role"] for m in messages] == ["user", "assistant", "user"]
        assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "tool_result"]
        assert messages[1]["content"][0] == {
            "type": "tool_use",
            "id": "call_1",
            "name": "append",
            "input": {"text": "hello"},
        }
        assert second["tools"][0]["input_schema"] == {"type": "object"}
        assert second["max_tokens"] == 1024


def _marked(body: Any) -> list[str]:
    """Where a request body carries Anthropic's cache_control, as dotted paths."""
    found: list[str] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            found.extend([path] if "cache_control" in value else [])
            for key, inner in value.items():
                walk(inner, f"{path}.{key}" if path else key)
        elif isinstance(value, list):
            for index, inner in enumerate(value):
                walk(inner, f"{path}[{index}]")

    walk(body, "")
    return found


@pytest.mark.parametrize("told", [False, True])
def test_a_task_that_says_the_deployment_caches_at_breakpoints_gets_them_marked(
        told: bool) -> None:
    # Seed 002 §19.7: Anthropic caches only what a request marks; the scenario's
    # cache_breakpoints reaches the agent as Task.cache_breakpoints. Untold, nothing is marked.
    world = World("anthropic", TWO_TURNS)
    world.run(Task(TASK.prompt, tools=TOOLS, cache_breakpoints=told))
    bodies = [r.json for r in world.provider.requests]
    expected = [["messages[0].content[0]", "tools[3]"],
                ["messages[2].content[1]", "tools[3]"]] if told else [[], []]
    assert [_marked(body) for body in bodies] == expected
    assert all(body is not None and body["tools"][3]["name"] == "inspect" for body in bodies)


@pytest.mark.parametrize("dialect", [d for d in DIALECTS if d != "anthropic"])
def test_the_other_apis_get_no_marks_even_when_told(dialect: Dialect) -> None:
    world = World(dialect, TWO_TURNS)
    world.run(Task(TASK.prompt, tools=TOOLS, cache_breakpoints=True))
    assert [_marked(r.json) for r in world.provider.requests] == [[], []]

def test_concurrency_safe_reads_overlap_and_one_writer_makes_the_batch_sequential() -> None:
    slow = Behaviour("slow", seconds=5)
    reads = by_turn(calls(ToolUse("r1", "read"), ToolUse("r2", "inspect")), answer())
    world = World("openai", reads, behaviours={"read": slow, "inspect": slow})
    world.run()
    assert world.clock.now() == pytest.approx(5.0)  # both ran in the same 5 s
    mixed = by_turn(calls(ToolUse("r1", "read"), ToolUse("w1", "append", {"text": "x"})), answer())
    world = World("openai", mixed, behaviours={"read": slow, "append": slow})
    world.run()
    assert world.clock.now() == pytest.approx(10.0)


def test_replies_are_committed_in_model_order_and_one_failure_spares_the_other() -> None:
    model = by_turn(calls(ToolUse("a", "read"), ToolUse("b", "inspect")), answer())
    world = World(
        "openai",
        model,
        behaviours={"read": Behaviour("slow", seconds=3), "inspect": Behaviour("failing")},
    )
    outcome = world.run()
    replies = [(m.call_id, m.status) for m in outcome.transcript if m.role == "tool"]
    assert replies == [("a", "ok"), ("b", "error")]  # b finished first, a comes first
    assert outcome.stop_state == "complete"


# -- crash and recovery (J4, J5, I1, I3, I11) ------------------------------------------


def careful_model(request: ProviderRequest) -> ScriptedResponse:
    """Sends once; after an unknown outcome it inspects, never repeats; then answers."""
    results = tool_results(request)
    if not results:
        return calls(ToolUse("call_1", "send", {"to": "boss"}))
    if "TOOL_OUTCOME_UNKNOWN" in results[-1]:
        return calls(ToolUse("call_2", "inspect"))
    if "TOOL_NOT_STARTED" in results[-1]:
        return calls(ToolUse("call_3", "send", {"to": "boss"}))
    return answer()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_crash_after_execution_started_is_recovered_as_unknown_and_not_repeated(
    dialect: Dialect,
) -> None:
    # journal:fsync#2 is the execution_started record: durable, then the process dies.
    world = World(dialect, careful_model, plan=CrashPlan("journal:fsync#2", "after"))
    crash = world.crash()
    assert crash.point_id == "journal:fsync#2"
    outcome = world.run()
    assert outcome.stop_state == "complete"
    assert world.ledger.duplicates() == {}
    synthetic = [m for m in outcome.transcript if m.synthetic]
    assert [(m.call_id, m.status) for m in synthetic] == [("call_1", "unknown")]
    assert any("TOOL_OUTCOME_UNKNOWN" in r for r in tool_results(world.provider.requests[-2]))
    assert [c.name for m in outcome.transcript for c in m.tool_calls] == ["send", "inspect"]
    assert_well_formed(outcome.transcript)


def test_a_crash_after_intent_only_is_not_started_and_may_run_again() -> None:
    world = World("openai", careful_model, plan=CrashPlan("journal:fsync#1", "after"))
    world.crash()
    report = world.recover()
    assert (report.not_started, report.unknown, report.repaired_replies) == (
        ("call_1",),
        (),
        ("call_1",),
    )
    outcome = world.run()
    assert outcome.stop_state == "complete"
    assert [e.tool for e in world.ledger.effects] == ["send"]  # ran once, after the restart
    assert [m.status for m in outcome.transcript if m.role == "tool"] == ["not_started", "ok"]


def test_recovering_twice_changes_nothing() -> None:
    world = World("openai", careful_model, plan=CrashPlan("journal:fsync#2", "after"))
    world.crash()
    first = world.recover()
    after_first = world.crash_disk.files()
    second = world.recover()
    assert first.changed
    assert not second.changed
    assert world.crash_disk.files() == after_first


def test_a_crash_before_the_answer_is_saved_asks_again_and_completes() -> None:
    world = World("openai", TWO_TURNS)
    world.run()
    points = [p.id for p in world.crash_disk.points if p.role == "session" and p.op == "fsync"]
    world = World("openai", TWO_TURNS, plan=CrashPlan(points[-1], "before"))
    world.crash()
    outcome = world.run()
    assert outcome.stop_state == "complete"
    assert world.ledger.duplicates() == {}
    assert_well_formed(outcome.transcript)


def test_a_finished_run_is_not_run_again() -> None:
    world = World("openai", TWO_TURNS)
    first = world.run()
    again = world.run()
    assert (again.stop_state, again.transcript) == (first.stop_state, first.transcript)
    assert len(world.provider.requests) == 2


def test_works_on_a_real_disk(tmp_path: Any) -> None:
    class Folder(RealDisk):
        root = tmp_path / "state"

    world = World("anthropic", TWO_TURNS, disk=Folder())
    outcome = world.run()
    assert outcome.stop_state == "complete"
    assert (tmp_path / "state" / "session.jsonl").stat().st_mode & 0o777 == 0o600


# -- provider failures and stop states (S5, S6, L5) --------------------------------------


def test_a_429_with_retry_after_is_waited_out_then_the_run_completes() -> None:
    world = World("openai", TWO_TURNS, {(1, 1): (HttpError(429, retry_after=7),)})
    outcome = world.run()
    assert outcome.stop_state == "complete"
    assert len(outcome.attempt_ids) == 3
    retries = [r for r in world.session() if r["kind"] == "retry"]
    assert [r["event"]["kind"] for r in retries] == ["retry_scheduled", "retry_started"]
    assert retries[0]["event"]["delay"] == 7
    assert world.agents[-1].counters.transport_retry == 1


def test_a_stall_is_cut_by_the_watchdog_and_retried() -> None:
    world = World("anthropic", TWO_TURNS, {(2, 1): (Stall(after_events=2, seconds=None),)})
    outcome = world.run()
    assert outcome.stop_state == "complete"
    attempts = [r for r in world.session() if r["kind"] == "attempt"]
    assert [a["status"] for a in attempts] == ["complete", "interrupted", "complete"]
    assert attempts[1]["error"]["kind"] == "idle_timeout"


@pytest.mark.parametrize(
    ("faults", "state", "infra"),
    [
        ({(1, 1): (HttpError(401),)}, "blocked", False),
        ({(1, 1): (HttpError(403),)}, "blocked", False),
        ({(1, n): (HttpError(503),) for n in range(1, 10)}, "infra_paused", True),
        ({(1, n): (ConnectionReset(after_bytes=5),) for n in range(1, 10)}, "infra_paused", True),
        ({(1, n): (HttpError(429),) for n in range(1, 10)}, "usage_limited", False),
        ({(1, 1): (HttpError(429, retry_after=3600),)}, "usage_limited", False),
        ({(1, 1): (HttpError(400),)}, "failed", False),
    ],
)
def test_a_provider_failure_ends_in_its_stop_state(
    faults: dict[tuple[int, int], tuple[Fault, ...]], state: str, infra: bool
) -> None:
    world = World("openai", TWO_TURNS, faults)
    outcome = world.run()
    assert (outcome.stop_state, outcome.infra_failure) == (state, infra)
    assert world.ledger.effects == []
    stop = world.session()[-1]
    assert (stop["kind"], stop["stopState"], stop["infraFailure"]) == ("stop", state, infra)


def test_503_in_the_final_turn_never_ends_complete() -> None:
    faults = {(2, n): (HttpError(503),) for n in range(1, 10)}
    outcome = World("openai", TWO_TURNS, faults).run()
    assert (outcome.stop_state, outcome.infra_failure) == ("infra_paused", True)


def test_the_deadline_ends_the_run_budget_limited() -> None:
    faults = {(1, n): (HttpError(503, retry_after=20),) for n in range(1, 10)}
    outcome = World("openai", TWO_TURNS, faults).run(Task("go", deadline_seconds=50))
    assert outcome.stop_state == "budget_limited"


def test_the_attempt_budget_is_shared_across_turns() -> None:
    faults = {(2, 1): (HttpError(503),)}
    outcome = World("openai", TWO_TURNS, faults).run(Task("go", max_attempts=2, tools=TOOLS))
    assert outcome.stop_state == "budget_limited"
    assert len(outcome.attempt_ids) == 2


# Gemini sends a call whole or not at all (tests/integration/test_stream_faults.py).
@pytest.mark.parametrize("dialect", [d for d in DIALECTS if d != "gemini"])
def test_truncated_tool_arguments_run_nothing_and_the_next_turn_proceeds(
    dialect: Dialect,
) -> None:
    two_calls = calls(ToolUse("a", "append", {"text": "hello"}), ToolUse("b", "send", {"to": "x"}))
    world = World(
        dialect, by_turn(two_calls, two_calls, answer()), {(1, 1): (TruncatedToolArguments(),)}
    )
    outcome = world.run(Task("go", tools=TOOLS, max_turns=4))
    assert outcome.stop_state == "complete"
    cut = outcome.transcript[1]
    assert cut.role == "assistant"
    assert cut.tool_calls
    first_replies = outcome.transcript[2 : 2 + len(cut.tool_calls)]
    assert {m.status for m in first_replies} == {"error"}
    assert "arguments were cut at the output limit; not run" in first_replies[0].text
    assert [e.tool for e in world.ledger.effects] == ["append", "send"]  # from turn 2 only
    assert world.provider.requests[1].json != world.provider.requests[0].json
    assert world.agents[-1].counters.argument_repair == 1
    assert_well_formed(outcome.transcript)


def test_identical_calls_get_a_reminder_then_a_stop() -> None:
    model = by_turn(calls(ToolUse("c", "read", {"path": "x"})))
    world = World("openai", model)
    outcome = world.run(Task("go", tools=TOOLS, max_turns=8))
    assert (outcome.stop_state, outcome.turns) == ("failed", 3)
    assert "repeating" in outcome.reason
    reminders = [m for m in outcome.transcript if m.role == "user"][1:]
    assert len(reminders) == 1
    assert "exactly the same tool calls" in reminders[0].text
    third = world.provider.requests[2].json
    assert third is not None
    assert "exactly the same" in str(third["messages"][-1]["content"])
    assert [m.status for m in outcome.transcript if m.role == "tool"][-1] == "not_started"
    assert world.agents[-1].counters.repetition == 2
    assert_well_formed(outcome.transcript)


def test_the_same_error_without_new_evidence_stops_the_loop() -> None:
    def model(request: ProviderRequest) -> ScriptedResponse:
        # Alternates arguments so no two consecutive turns are identical and the
        # repetition guard stays quiet; each set of arguments fails the same way.
        recipient = "x" if request.turn % 2 else "y"
        return calls(ToolUse(f"c{request.turn}", "send", {"to": recipient}))

    world = World(
        "openai",
        model,
        behaviours={"send": Behaviour("failing")},
    )
    outcome = world.run(Task("go", tools=TOOLS, max_turns=8))
    assert outcome.stop_state == "failed"
    # "to: x" failed in turns 1, 3 and 5 with nothing learned in between: the third is the cap
    assert outcome.turns == 5
    assert outcome.reason == "the same error came back without new evidence (L3)"


def test_the_turn_cap_ends_the_run_budget_limited() -> None:
    def model(request: ProviderRequest) -> ScriptedResponse:
        return calls(ToolUse("c", "append", {"text": f"line {request.turn}"}))

    outcome = World("openai", model).run(Task("go", tools=TOOLS, max_turns=3))
    assert (outcome.stop_state, outcome.turns) == ("budget_limited", 3)
    assert "turn cap" in outcome.reason


@pytest.mark.parametrize("crash_class", ["eio_on_write", "eio_on_fsync"])
def test_a_session_log_write_failure_stops_every_side_effect(crash_class: str) -> None:
    clean = World("openai", TWO_TURNS)
    clean.run()
    op = "write" if crash_class == "eio_on_write" else "fsync"
    # One append is one write and one fsync: fail the one of turn 1's assistant message.
    kinds = [r["kind"] for r in clean.session()]
    point = f"session:{op}#{kinds.index('assistant') + 1}"
    plan = CrashPlan(point, "before", crash_class)  # type: ignore[arg-type]
    world = World("openai", TWO_TURNS, plan=plan)
    outcome = world.run()
    assert (outcome.stop_state, outcome.infra_failure) == ("infra_paused", True)
    assert world.ledger.effects == []
    assert len(world.provider.requests) == 1


# -- usage (L6, I6) ------------------------------------------------------------------------


def test_billed_usage_counts_every_attempt_and_context_is_the_last_request() -> None:
    model = by_turn(
        calls(ToolUse("c", "read"), usage=ScriptedUsage(100, 10)),
        answer(usage=ScriptedUsage(250, 5)),
    )
    world = World("openai", model, {(1, 1): (ConnectionReset(after_bytes=400),)})
    outcome = world.run()
    assert outcome.stop_state == "complete"
    attempts = [r for r in world.session() if r["kind"] == "attempt"]
    assert [a["status"] for a in attempts] == ["interrupted", "complete", "complete"]
    assert (outcome.billed_usage.input_tokens, outcome.billed_usage.output_tokens) == (350, 15)
    assert outcome.context_tokens == 250
    assert outcome.attempt_ids == tuple(a["attemptId"] for a in attempts)


def test_usage_and_attempt_ids_survive_a_restart() -> None:
    world = World("openai", careful_model, plan=CrashPlan("journal:fsync#2", "after"))
    world.crash()
    outcome = world.run()
    assert outcome.billed_usage is not None
    assert (outcome.billed_usage.input_tokens, outcome.billed_usage.output_tokens) == (300, 30)
    assert len(set(outcome.attempt_ids)) == len(outcome.attempt_ids) == 3


# -- determinism and ids ---------------------------------------------------------------------


def test_the_same_seed_gives_identical_session_log_bytes() -> None:
    logs = []
    for _ in range(2):
        world = World("anthropic", TWO_TURNS, {(1, 1): (HttpError(529),)}, seed=11)
        world.run()
        logs.append(world.session_bytes())
    assert logs[0] == logs[1]
    other = World("anthropic", TWO_TURNS, {(1, 1): (HttpError(529),)}, seed=12)
    other.run()
    assert other.session_bytes() != logs[0]


def test_every_record_carries_its_correlation_ids() -> None:
    world = World("openai", TWO_TURNS)
    world.run()
    records = world.session()
    assert all(r["runId"] == "run_1" and "turnId" in r and "at" in r for r in records)
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    replies = [r for r in records if r["kind"] == "tool_reply"]
    assert all(r["executionId"].startswith("exec_") for r in replies)
    assert records[0]["kind"] == "session"
    assert records[0]["epoch"] == 1


# -- restarts, corruption, cancellation, metrics ------------------------------------------


def _point_of(world: World, kind: str, op: str = "fsync") -> str:
    """The session point that makes the first record of ``kind`` durable."""
    kinds = [r["kind"] for r in world.session()]
    return f"session:{op}#{kinds.index(kind) + 1}"


def test_the_attempt_budget_survives_a_crash_during_backoff() -> None:
    faults = {(1, 1): (HttpError(503),)}
    task = Task("go", max_attempts=2, tools=TOOLS)
    clean = World("openai", TWO_TURNS, faults)
    assert clean.run(task).stop_state == "budget_limited"  # three attempts needed, two allowed
    world = World("openai", TWO_TURNS, faults, plan=CrashPlan(_point_of(clean, "retry"), "after"))
    world.crash(task)
    outcome = world.run(task)
    # S7: the failed attempt before the crash still counts after the restart.
    assert outcome.stop_state == "budget_limited"
    assert len(outcome.attempt_ids) == 2


def test_a_corrupt_session_log_surfaces() -> None:
    world = World("openai", TWO_TURNS)
    world.run()
    view = world.crash_disk.view()
    data = view.read("/state/session.jsonl").split(b"\n")
    data[2] = b"{not json"
    view.truncate("/state/session.jsonl", 0)
    with view.open_append("/state/session.jsonl") as handle:
        handle.write(b"\n".join(data))
    with pytest.raises(JournalCorruptError, match=r"^/state/session.jsonl:3: expected"):
        world.run()


def test_a_recovery_that_cannot_write_ends_infra_paused() -> None:
    world = World("openai", careful_model, plan=CrashPlan("journal:fsync#2", "after"))
    world.crash()
    # The next journal fsync is recovery's terminal record for the started call.
    world.crash_disk.plan = CrashPlan("journal:fsync#3", "before", "eio_on_fsync")
    outcome = world.run()
    assert (outcome.stop_state, outcome.infra_failure) == ("infra_paused", True)
    assert world.ledger.effects == []
    assert len(world.provider.requests) == 1


def test_a_cancelled_run_answers_its_calls_and_records_the_stop() -> None:
    model = by_turn(calls(ToolUse("a", "append", {"text": "x"}), ToolUse("b", "send")))
    world = World("openai", model, behaviours={"append": Behaviour("hanging")})

    async def go() -> None:
        async with world.provider.httpx_client() as http:
            task = asyncio.ensure_future(ReferenceAgent(world.ports(http), config=CONFIG).run(TASK))
            await asyncio.sleep(5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    world.clock.run(go())
    records = world.session()
    replies = [
        (r["callId"], r["status"], r["synthetic"]) for r in records if r["kind"] == "tool_reply"
    ]
    assert replies == [("a", "unknown", True), ("b", "not_started", True)]
    assert records[-1]["stopState"] == "cancelled"
    assert world.ledger.effects == []


def test_a_text_answer_cut_twice_fails_instead_of_completing() -> None:
    cut = ScriptedResponse((Text("A very long answer"),), "length", USAGE)
    outcome = World("anthropic", by_turn(cut)).run()
    assert outcome.stop_state == "failed"
    assert "output limit" in outcome.reason


def test_metrics_record_every_attempt_and_may_drop_records() -> None:
    world = World("openai", TWO_TURNS, {(1, 1): (HttpError(500),)})
    world.run()
    metrics = world.agents[-1].metrics
    assert isinstance(metrics, MemoryMetrics)
    attempts = [m for m in metrics.records if m["kind"] == "attempt"]
    assert [a["status"] for a in attempts] == ["failed", "complete", "complete"]
    dropping = FileMetrics(CrashDisk().view(), "/missing/metrics.jsonl")
    dropping.emit({"kind": "attempt"})
    assert dropping.dropped == 1


def test_a_stop_record_from_a_stale_epoch_is_refused() -> None:
    world = World("openai", TWO_TURNS)
    world.run()
    log = world.agents[-1].log
    with pytest.raises(StaleEpochError):
        log.write_back(log.epoch + 1, "stop", "t", stopState="complete")


def test_the_same_seed_and_crash_give_identical_bytes() -> None:
    logs = []
    for _ in range(2):
        world = World("openai", careful_model, plan=CrashPlan("journal:fsync#2", "after"), seed=3)
        world.crash()
        world.run()
        logs.append(world.crash_disk.files())
    assert logs[0] == logs[1]


def _durable_points() -> list[str]:
    world = World("openai", careful_model)
    world.run()
    return [p.id for p in world.crash_disk.points if p.op in ("fsync", "fsync_dir")]


@pytest.mark.parametrize(
    ("when", "crash_class"),
    [("before", "unsynced_lost"), ("after", "unsynced_lost"), ("before", "torn_append_garbage")],
)
@pytest.mark.parametrize("point", _durable_points())
def test_a_crash_at_any_durable_point_keeps_every_invariant(
    point: str, when: str, crash_class: str
) -> None:
    """Seed 002 §19.6: crash before and after every durable write; duplicates stay 0."""
    plan = CrashPlan(point, when, crash_class)  # type: ignore[arg-type]
    world = World("openai", careful_model, plan=plan)
    world.crash()
    world.recover()
    recovered = world.crash_disk.files()
    assert not world.recover().changed  # I11
    assert world.crash_disk.files() == recovered
    outcome = world.run()
    assert outcome.stop_state == "complete"
    assert world.ledger.duplicates() == {}  # I1
    assert_well_formed(outcome.transcript)  # I2
    if any(m.status == "unknown" for m in outcome.transcript):  # I3: inspected, not repeated
        sends = [c.name for m in outcome.transcript for c in m.tool_calls if c.name == "send"]
        assert len(sends) == 1


def test_a_guard_stop_lost_in_a_crash_is_decided_again_before_more_tools_run() -> None:
    # L3 after a restart: the third identical failure was durable, the guard's stop
    # record was not. The restarted loop must reach the same decision from the log
    # instead of running the failing call a fourth time.
    def model(request: ProviderRequest) -> ScriptedResponse:
        # A read with new arguments each turn keeps the repetition guard quiet; the
        # state it returns never changes, so it is no new evidence.
        turn = request.turn
        return calls(ToolUse(f"r{turn}", "read", {"n": turn}), ToolUse(f"c{turn}", "send", {}))

    task = Task("go", tools=TOOLS, max_turns=8)
    failing = {"send": Behaviour("failing")}
    clean = World("openai", model, behaviours=failing)
    assert clean.run(task).stop_state == "failed"
    assert clean.tools["send"].started == 3
    kinds = [r["kind"] for r in clean.session()]
    last_reply = len(kinds) - kinds[::-1].index("tool_reply")
    world = World(
        "openai", model, behaviours=failing, plan=CrashPlan(f"session:fsync#{last_reply}", "after")
    )
    world.crash(task)
    outcome = world.run(task)
    assert outcome.stop_state == "failed"
    assert "without new evidence" in outcome.reason
    assert world.tools["send"].started == 3


def test_a_guard_stop_whose_stop_record_was_lost_is_not_taken_back() -> None:
    model = by_turn(calls(ToolUse("c", "read", {"path": "x"})))
    task = Task("go", tools=TOOLS, max_turns=8)
    clean = World("openai", model)
    assert (clean.run(task).stop_state, len(clean.provider.requests)) == ("failed", 3)
    world = World("openai", model, plan=CrashPlan(_point_of(clean, "stop"), "before"))
    world.crash(task)
    outcome = world.run(task)
    assert (outcome.stop_state, outcome.turns) == ("failed", 3)
    assert "repeating" in outcome.reason
    assert len(world.provider.requests) == 3  # no fourth turn after the restart


def test_a_reminder_lost_in_a_crash_is_delivered_once_after_the_restart() -> None:
    model = by_turn(calls(ToolUse("c", "read", {"path": "x"})))
    task = Task("go", tools=TOOLS, max_turns=8)
    clean = World("openai", model)
    clean.run(task)
    world = World("openai", model, plan=CrashPlan(_point_of(clean, "guard"), "after"))
    world.crash(task)
    outcome = world.run(task)
    reminders = [m.text for m in outcome.transcript if m.role == "user"][1:]
    assert len(reminders) == 1
    assert "exactly the same tool calls" in reminders[0]
    third = world.provider.requests[-1].json
    assert third is not None
    assert "exactly the same" in str(third["messages"][-1]["content"])
