"""The ledger the harness keeps from the effects a sealed worker tells it, and the account
a trace gives of its effects, read against it (``harness.runner._ledger_pipe``).

Run here in one process, the worker's end talking to the harness's directly: each case of
a scenario explored from its recorded run (from a copy, rejoined, sharing an earlier
case's restart) gives an account that agrees with the harness's ledger, and a ledger
changed in the worker's process does not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from long_scenarios import appends
from minimal_agent import minimal_factory

import fakes._clock
import fakes._ledger
import fakes._tools
from harness.runner import _explore as explore
from harness.runner import plan_cases, run_trace
from harness.runner._case import traced
from harness.runner._ledger_pipe import (
    HarnessLedger,
    PipeWitness,
    install,
    installed,
    json_digest,
    parts_of,
    tamper_result,
    text_digest,
)
from harness.runner._results import Case
from harness.runner._run import default_agent_factory
from harness.runner._world import World
from harness.runner._world_streams import StreamRecord
from harness.runner._world_tools import RecordingTool
from harness.scenario import Scenario, load_scenario
from harness.trace import EffectRecord, InvocationRecord, Trace, TraceDataError

SHIPPED = Path(__file__).resolve().parents[2] / "scenarios" / "crash"


class _Direct:
    """A pipe whose far end is a :class:`HarnessLedger` in this process."""

    def __init__(self, ledger: HarnessLedger) -> None:
        self.ledger = ledger
        self.answers: list[bytes] = []

    def send_bytes(self, message: bytes) -> None:
        answer = self.ledger.take(message)
        if answer is not None:
            self.answers.append(answer)

    def recv_bytes(self) -> bytes:
        return self.answers.pop(0)


def _tell(ledger: HarnessLedger, number: int, letter: str, *fields: Any,
          forks: tuple[tuple[int, ...], ...] = ()) -> Any:
    message = [number, [list(fork) for fork in forks], *fields]
    answer = ledger.take(letter.encode() + json.dumps(message).encode())
    return None if answer is None else json.loads(answer[1:])


def test_each_effect_is_answered_as_the_tool_would_answer_it() -> None:
    ledger = HarnessLedger()

    assert _tell(ledger, 1, "E", 1, "append", "notes", "k1", False, 1, 0.0) == \
        {"appended": True, "lines": 1}
    assert _tell(ledger, 2, "E", 1, "send", "mail", "k2", False, 1, 0.5) == \
        {"sent": True, "key": "k2"}
    assert _tell(ledger, 3, "E", 1, "append", "notes", "k3", False, 1, 1.0) == \
        {"appended": True, "lines": 2}
    assert ledger.effects(["s", 1]) == [("notes", "k1", False, 1, 0.0),
                                        ("mail", "k2", False, 1, 0.5),
                                        ("notes", "k3", False, 1, 1.0)]


def test_a_copy_begins_with_its_source_as_the_harness_held_it_then() -> None:
    ledger = HarnessLedger()
    _tell(ledger, 1, "E", 1, "append", "notes", "a", False, 1, 0.0)
    _tell(ledger, 2, "E", 1, "append", "notes", "b", False, 1, 1.0)  # the source goes on
    # Told with the next message: a copy of stream 1 made when it held one effect.
    assert _tell(ledger, 3, "E", 2, "append", "notes", "c", False, 2, 2.0,
                 forks=((2, 1, 1, 0, 0),)) == {"appended": True, "lines": 2}

    assert [key for _, key, *_ in ledger.effects(["s", 2])] == ["a", "c"]
    assert [key for _, key, *_ in ledger.effects(["drop", [1, 0, 0], ["s", 1]])] == ["b"]
    assert ledger.effects(["inc", 1, ["s", 2]])[1] == ("notes", "c", False, 3, 2.0)
    _tell(ledger, 4, "F", forks=((3, 1, 5, 0, 0),))  # more effects than stream 1 was told
    assert "forked again, or from 5 effects of the 2 told" in str(ledger.broken)


def test_a_message_out_of_its_number_breaks_the_ledger_for_every_later_case() -> None:
    ledger = HarnessLedger()
    _tell(ledger, 1, "E", 1, "send", "mail", "a", False, 1, 0.0)

    assert _tell(ledger, 3, "E", 1, "send", "mail", "b", False, 1, 0.0) is None

    assert ledger.difference([["s", 1]], ()) is not None
    assert "message 3 came after message 1" in str(ledger.difference([], ()))


def test_an_effect_after_its_case_ended_is_refused_not_told() -> None:
    ledger = HarnessLedger()
    witness = PipeWitness(_Direct(ledger))  # type: ignore[arg-type]
    witness.begin_case()
    stream = witness.opened()
    witness.told(stream, "send", tool="mail", key="a", idempotent=False, incarnation=1, at=0.0)
    with witness.case_ended():
        pass

    with pytest.raises(RuntimeError, match="after its case ended"):
        witness.told(stream, "send", tool="mail", key="b", idempotent=False, incarnation=1,
                     at=0.0)
    assert [key for _, key, *_ in ledger.effects(["s", stream])] == ["a"]


def test_the_first_difference_is_named_in_a_judge_verdict() -> None:
    ledger = HarnessLedger()
    _tell(ledger, 1, "E", 1, "send", "mail", "k", False, 1, 0.0)
    _tell(ledger, 2, "E", 1, "send", "mail", "k", False, 1, 2.0)
    trace = _effects_trace(("mail", "k", False, 1, 0.0))

    difference = ledger.difference([["s", 1]], (trace,))
    result = tamper_result(Case("s", Path("s.yaml"), 1), str(difference))

    assert difference == ("effect #2: the trace has none, the harness was told "
                          "mail key=k (incarnation 1, at 2s)")
    assert [(v.invariant, v.status) for v in result.verdicts] == [("judge", "fail")]
    assert ledger.difference(None, (trace,)) == \
        "the case's worker gave no account of its side effects"
    assert "none" in str(ledger.difference([["nonsense"]], (trace,)))


def test_a_request_is_kept_with_the_harness_s_clock_when_it_arrived() -> None:
    ledger = HarnessLedger()
    _tell(ledger, 1, "R", 1, "openai", 1, 1, 1, "d1", 0.0)
    _tell(ledger, 2, "C", 1, 20.0, "timer", 0.0)
    _tell(ledger, 3, "R", 1, "openai", 1, 2, 1, "d2", 20.0)
    _tell(ledger, 4, "R", 1, "openai", 2, 1, 1, "d3", 50.0)  # the clock moved, untold

    assert ledger.account(["s", 1]).requests == [
        ("openai", 1, 1, 1, "d1", 0.0, 0.0), ("openai", 1, 2, 1, "d2", 20.0, 20.0),
        ("openai", 2, 1, 1, "d3", 50.0, 20.0)]
    assert ledger.account(["s", 1, 20.0, 1]).wrong is None  # where the harness's clock was
    assert ledger.account(["s", 1, 50.0, 1]).wrong == (
        "the world's clock read 50s where the harness's was at 20s: it moved without telling "
        "the harness")
    trace = _requests_trace(("openai", 1, 1, 1, 0.0), ("openai", 1, 2, 1, 20.0),
                            ("openai", 2, 1, 1, 50.0))
    assert ledger.difference([["s", 1]], (trace,)) == (
        "request #3: the trace has openai turn 2 attempt 1 (incarnation 1, at 50s), the "
        "harness was told openai turn 2 attempt 1 (incarnation 1, at 20s; the world's clock "
        "said 50s, moved without telling the harness)")
    deleted = _requests_trace(("openai", 1, 2, 1, 20.0))
    assert str(ledger.difference([["s", 1]], (deleted,))).startswith(
        "request #1: the trace has openai turn 1 attempt 2 (incarnation 1, at 20s), the "
        "harness was told openai turn 1 attempt 1")


def test_a_copy_begins_with_its_source_s_requests_and_clock_as_the_harness_held_them() -> None:
    ledger = HarnessLedger()
    _tell(ledger, 1, "R", 1, "openai", 1, 1, 1, "d1", 0.0)
    _tell(ledger, 2, "C", 1, 5.0, "timer", 0.0)
    _tell(ledger, 3, "C", 1, 9.0, "advance", 5.0)  # the source goes on
    _tell(ledger, 4, "R", 1, "openai", 2, 1, 1, "d2", 9.0)
    # Copied when the source had told one request and one move: its clock is at 5s.
    _tell(ledger, 5, "R", 2, "openai", 2, 1, 2, "d3", 5.0, forks=((2, 1, 0, 1, 1),))

    assert [r[-1] for r in ledger.account(["s", 2]).requests] == [0.0, 5.0]
    assert ledger.account(["drop", [0, 1, 0], ["inc", 1, ["s", 2]]]).requests == [
        ("openai", 2, 1, 3, "d3", 5.0, 5.0)]
    assert ledger.account(["s", 2, 5.0, 1]).wrong is None
    # The copy's clock read past its source's second move: a move it never had.
    assert ledger.account(["s", 2, 9.0, 1]).wrong is not None
    with pytest.raises(TraceDataError, match="is not a reading of a clock"):
        ledger.account(["s", 2, 9.0, 3])


def test_a_stream_s_end_is_kept_by_its_request_s_place_and_read_against_the_trace() -> None:
    ledger = HarnessLedger()
    _tell(ledger, 1, "R", 1, "openai", 1, 1, 1, "d1", 0.0)
    _tell(ledger, 2, "C", 1, 30.0, "timer", 0.0)
    _tell(ledger, 3, "S", 1, 1, "eof", 0.0, 30.0, 30.0, 9)
    _tell(ledger, 4, "R", 1, "openai", 2, 1, 1, "d2", 30.0)
    # Copied when the source had told two requests, a move and one end.
    _tell(ledger, 5, "S", 1, 2, "eof", 30.0, 30.0, 0.0, 4, forks=((2, 1, 0, 2, 1, 1),))
    _tell(ledger, 6, "S", 2, 2, "reset", None, 30.0, 0.0, 0)

    assert [end[:2] for end in ledger.account(["s", 1]).ends] == [(1, "eof"), (2, "eof")]
    assert [end[:2] for end in ledger.account(["s", 2]).ends] == [(1, "eof"), (2, "reset")]
    assert [end[:2] for end in ledger.account(["drop", [0, 1, 0], ["s", 2]]).ends] == \
        [(1, "reset")]
    assert [end[:2] for end in ledger.account(["cat", [["s", 1], ["s", 2]]]).ends] == \
        [(1, "eof"), (2, "eof"), (3, "eof"), (4, "reset")]
    record = _requests_trace(("openai", 1, 1, 1, 0.0), ("openai", 2, 1, 1, 30.0)).requests
    honest = (replace(record[0], first_byte_at=0.0, ended_at=30.0, longest_silence=30.0,
                      delivered_bytes=9),
              replace(record[1], first_byte_at=30.0, ended_at=30.0, longest_silence=0.0,
                      delivered_bytes=4))
    trace = replace(_requests_trace(), dialect="openai", requests=honest)
    assert ledger.difference([["s", 1]], (trace,)) is None
    # The stall shown short: its record says so, the harness was told otherwise.
    short = replace(trace, requests=(replace(honest[0], longest_silence=2.0), honest[1]))
    assert ledger.difference([["s", 1]], (short,)) == (
        "the stream of request #1: the trace has first byte at 0s, ended at 30s, longest "
        "silence 2s, 9 bytes read, the harness was told first byte at 0s, ended at 30s, "
        "longest silence 30s, 9 bytes read")
    # An end the world said came at a time the harness's clock was not at.
    _tell(ledger, 7, "S", 1, 2, "eof", 30.0, 45.0, 0.0, 4)
    assert "moved without telling the harness" in str(
        ledger.difference([["s", 1]], (trace,)))
    _tell(ledger, 8, "F", forks=((3, 1, 0, 0, 0, 9),))  # more ends than stream 1 was told
    assert ledger.broken is not None


def test_a_stream_s_silence_rewritten_in_the_worker_s_process_disagrees_with_the_harness_s(
        ledger: HarnessLedger, monkeypatch: pytest.MonkeyPatch) -> None:
    def forgetful(self: StreamRecord) -> None:
        self._pending.last_chunk_at = self._clock.now()  # each gap forgotten: no stall

    monkeypatch.setattr(StreamRecord, "_note_silence", forgetful)
    source = SHIPPED / "retries-survive-a-crash.yaml"  # a stall
    found, _ = _differences(ledger, load_scenario(source), source, stride=40)

    assert any(d is not None and d.startswith("the stream of request #") and
               "longest silence 0s" in d for d in found)


def _requests_trace(*requests: tuple[str, int, int, int, float]) -> Trace:
    """A trace with no effects whose requests are ``requests``."""
    base = _effects_trace()
    record = base.requests[0]
    return replace(base, dialect=requests[0][0] if requests else base.dialect, requests=tuple(
        replace(record, index=n, turn=turn, attempt=attempt, incarnation=incarnation,
                started_at=at)
        for n, (_, turn, attempt, incarnation, at) in enumerate(requests, 1)))


def _effects_trace(*effects: tuple[str, str, bool, int, float]) -> Trace:
    """A trace whose ledger holds ``effects``, and no tool invocation."""
    base = run_trace(plan_cases(appends(1), Path("appends.yaml"))[0], appends(1))
    return replace(base, effects=tuple(EffectRecord(n, *e) for n, e in enumerate(effects, 1)),
                   invocations=())


@pytest.fixture
def ledger() -> Iterator[HarnessLedger]:
    """The harness's ledger, told by this process's worlds as a sealed worker's are."""
    kept = HarnessLedger()
    explore._RECORDINGS.clear()  # made without a witness: their traces give no account
    explore._MADE.clear()
    witness = install(_Direct(kept))  # type: ignore[arg-type]
    assert witness is not None
    witness.begin_case()
    yield kept
    install(None)
    explore._RECORDINGS.clear()  # their worlds tell this test's ledger: not another's
    explore._MADE.clear()


def _differences(ledger: HarnessLedger, scenario: Scenario, source: Path, factory: Any = None,
                 stride: int = 1) -> tuple[list[str | None], set[str]]:
    found, ways = [], set()
    for case in plan_cases(scenario, source, factory)[::stride]:
        trace, how = traced(case, scenario, factory or default_agent_factory, None)
        witness = installed()
        assert witness is not None
        assert parts_of(trace) is not None
        with witness.case_ended():  # as a worker sends the case's result
            pass
        witness.begin_case()
        found.append(ledger.difference([parts_of(trace)], (trace,)))
        ways.add(how)
    return found, ways


def test_every_way_a_case_is_explored_gives_an_account_the_harness_agrees_with(
        ledger: HarnessLedger) -> None:
    rejoining, ways = _differences(ledger, appends(3), Path("appends.yaml"),
                                   minimal_factory("ids_per_run"), stride=2)
    shared, more = _differences(ledger, appends(2), Path("appends.yaml"))
    source = SHIPPED / "mail-at-every-world-event.yaml"
    shipped, most = _differences(ledger, load_scenario(source), source, stride=7)
    waits = SHIPPED / "retries-survive-a-crash.yaml"  # a 429 to wait out, a stall
    timed, _ = _differences(ledger, load_scenario(waits), waits, stride=25)

    assert rejoining + shared + shipped + timed == [None] * len(
        rejoining + shared + shipped + timed)
    assert {"recorded", "rejoined", "replayed"} <= ways | more | most
    # Requests and moves of the clock were told, and read against the traces too.
    streams = ledger._streams.values()
    assert any(s.own_requests for s in streams)
    assert any(s.own_moves for s in streams)
    assert any(s.own_ends for s in streams)  # and the ends of streams
    assert any(r.shared_restarts for r in explore._RECORDINGS.values())


def test_a_ledger_changed_in_the_worker_s_process_disagrees_with_the_harness_s(
        ledger: HarnessLedger, monkeypatch: pytest.MonkeyPatch) -> None:
    original = fakes._ledger.ToolLedger.apply

    def never_twice(self: fakes._ledger.ToolLedger, **fields: Any) -> Any:
        effect = original(self, **fields)
        if [e.key for e in self.effects].count(effect.key) > 1:
            self.effects.pop()  # the repeat: gone from this process's ledger
        return effect

    monkeypatch.setattr(fakes._ledger.ToolLedger, "apply", never_twice)
    source = SHIPPED / "unknown-after-send.yaml"
    found, _ = _differences(ledger, load_scenario(source), source,
                            minimal_factory("rerun_unknown"))

    assert any(d is not None and "the trace has none, the harness was told" in d for d in found)


def test_a_clock_moved_by_hand_in_the_worker_s_process_disagrees_with_the_harness_s(
        ledger: HarnessLedger, monkeypatch: pytest.MonkeyPatch) -> None:
    def untold(self: fakes._clock.VirtualClock, when: float, why: str = "timer") -> None:
        self._now = max(self._now, when)  # the jump made, the harness never told

    monkeypatch.setattr(fakes._clock.VirtualClock, "_jump_to", untold)
    source = SHIPPED / "retries-survive-a-crash.yaml"
    found, _ = _differences(ledger, load_scenario(source), source, stride=40)

    assert found
    assert all(d is not None and "moved without telling the harness" in d
                         for d in found)


def test_a_request_deleted_from_the_world_s_record_disagrees_with_the_harness_s(
        ledger: HarnessLedger, monkeypatch: pytest.MonkeyPatch) -> None:
    original = World.request_records

    def without_refusals(self: World) -> Any:
        return tuple(r for r in original(self) if r.status < 400)

    monkeypatch.setattr(World, "request_records", without_refusals)
    source = SHIPPED / "retries-survive-a-crash.yaml"
    found, _ = _differences(ledger, load_scenario(source), source, stride=40)

    assert found
    assert all(d is not None and d.startswith("request #1: the trace has") and
                         "the harness was told anthropic turn 1 attempt 1" in d for d in found)


def test_a_world_whose_clock_starts_late_tells_the_harness_where(
        ledger: HarnessLedger) -> None:
    world = World(appends(1), seed=1, clock=fakes._clock.VirtualClock(5.0))
    world.clock.advance(2.0)

    assert ledger._streams[world.ledger.stream].own_moves == [5.0, 7.0]


def _call(seq: int, *, at: float = 0.0, outcome: str = "ok", ended: float | None = 0.0,
          incarnation: int = 1, result: str | None = '{"sent": true}') -> InvocationRecord:
    return InvocationRecord(seq, "mail", "send", f"c{seq}", {"to": "a"}, incarnation, at,
                            ended, False, outcome, False, result)  # type: ignore[arg-type]


def _started(call: InvocationRecord) -> list[Any]:
    return [1, call.seq, call.tool, call.kind, call.call_id, json_digest(call.arguments),
            call.incarnation, call.refused, call.after_disk_error, call.started_at]


def _settled(call: InvocationRecord) -> list[Any]:
    return [1, call.seq, call.outcome, text_digest(call.result), call.ended_at]


def test_an_invocation_s_start_and_end_are_kept_and_read_against_the_trace() -> None:
    ledger = HarnessLedger()
    first, second = _call(1), _call(2, at=5.0, ended=None, outcome="running", result=None)
    _tell(ledger, 1, "I", *_started(first))
    _tell(ledger, 2, "O", *_settled(first))
    _tell(ledger, 3, "C", 1, 5.0, "timer", 0.0)
    _tell(ledger, 4, "I", *_started(second))
    trace = replace(_requests_trace(), invocations=(first, second))

    assert ledger.difference([["s", 1, 5.0, 1, 3]], (trace,)) is None
    # Hidden: the trace leaves the first out.
    assert ledger.difference([["s", 1, 5.0, 1, 3]], (replace(trace, invocations=(second,)),)
                             ) == ("tool invocation #1: the trace has mail (send) call 'c2' with "
                                   f"arguments {json_digest({'to': 'a'})} (incarnation 1) "
                                   "started at 5s, still running numbered #2, the harness was "
                                   f"told mail (send) call 'c1' with arguments "
                                   f"{json_digest({'to': 'a'})} (incarnation 1) started at 0s, "
                                   f"ok at 0s, result {text_digest(first.result)}")
    # Forged: another outcome, other arguments, one more call, a time the clock never had.
    for forged in ((replace(first, outcome="error"), second),
                   (replace(first, arguments={"to": "b"}), second),
                   (first, second, _call(3, at=5.0)),
                   (replace(first, ended_at=3.0), second)):
        found = ledger.difference([["s", 1, 5.0, 1, 3]], (replace(trace, invocations=forged),))
        assert str(found).startswith("tool invocation #")
    # Its end, told after the trace was read, is not the trace's.
    _tell(ledger, 5, "O", *_settled(replace(second, outcome="abandoned")))
    assert ledger.difference([["s", 1, 5.0, 1, 3]], (trace,)) is None
    assert ledger.account(["s", 1]).invocations[1][10] == "abandoned"
    # A copy begins with its source's starts and ends as told when it was made; a join takes
    # its own first calls, then its source's after the join, numbered on.
    _tell(ledger, 6, "F", forks=((2, 1, 0, 0, 1, 0, 1),))
    assert [c[10] for c in ledger.account(["s", 2]).invocations] == ["running"]
    joined = ledger.account(["cat", [["upto", 1, ["s", 1]],
                                     ["inc", 1, ["drop", [0, 0, 1], ["s", 1]], 4]]])
    assert [(c[0], c[5], c[10]) for c in joined.invocations] == [(1, 1, "ok"),
                                                                (6, 2, "abandoned")]
    _tell(ledger, 7, "O", *_settled(_call(9)))  # never started
    assert ledger.account(["s", 1]).wrong == (
        "tool invocation #9 was told to end where it was not running")
    with pytest.raises(TraceDataError, match="is not a count of tool invocations"):
        ledger.account(["s", 1, 5.0, 1, 99])


def test_an_invocation_hidden_or_forged_in_the_worker_s_process_disagrees_with_the_harness_s(
        ledger: HarnessLedger, monkeypatch: pytest.MonkeyPatch) -> None:
    original = RecordingTool.run

    async def hidden(self: RecordingTool, arguments: Any, context: Any) -> Any:
        try:
            return await original(self, arguments, context)
        finally:  # every call of the notes tool: gone from the world's log
            log = self._world.invocations
            log[:] = [i for i in log if i.tool != "notes"]

    monkeypatch.setattr(RecordingTool, "run", hidden)
    source = Path("appends.yaml")
    found, _ = _differences(ledger, appends(2), source)

    assert found
    assert all(d is not None and d.startswith("tool invocation #1: the trace has ")
               for d in found)
    assert any(s.own_calls for s in ledger._streams.values())


def test_an_effect_stamped_on_a_clock_moved_and_set_back_disagrees_with_the_harness_s(
        ledger: HarnessLedger, monkeypatch: pytest.MonkeyPatch) -> None:
    original = fakes._tools.WorldTool._apply

    def later(self: fakes._tools.WorldTool, arguments: Any, context: Any) -> Any:
        clock = self.ledger.clock
        assert isinstance(clock, fakes._clock.VirtualClock)
        clock._now += 100.0  # moved by hand, and set back before anything else reads it
        try:
            return original(self, arguments, context)
        finally:
            clock._now -= 100.0

    monkeypatch.setattr(fakes._tools.WorldTool, "_apply", later)
    found, _ = _differences(ledger, appends(2), Path("appends.yaml"))

    # The effect's time is the trace's and the harness's alike: the clock is not.
    assert found
    assert all(d is not None and d.startswith("effect #") and
               "was told at 100s where the harness's clock was at 0s" in d for d in found)


def test_a_move_the_harness_s_clock_could_not_make_is_named() -> None:
    ledger = HarnessLedger()
    _tell(ledger, 1, "C", 1, 5.0, "timer", 0.0)
    _tell(ledger, 2, "C", 1, 9.0, "advance", 30.0)  # from where the harness's clock never was
    _tell(ledger, 3, "C", 2, 4.0, "slept", 0.0)
    _tell(ledger, 4, "C", 3, 5.0, "start", 0.0)  # a world that starts late: its first move
    _tell(ledger, 5, "C", 3, 7.0, "advance", 5.0)
    _tell(ledger, 6, "C", 4, 1.0, "timer", 0.0)
    _tell(ledger, 7, "C", 4, 3.0, "start", 1.0)
    _tell(ledger, 8, "E", 5, "send", "mail", "k", False, 1, 8.0)

    assert ledger.account(["s", 1]).wrong == (
        "the clock was told it moved from 30s to 9s (advance) where the harness's was at 5s: "
        "it moved without telling the harness")
    assert ledger.account(["s", 2]).wrong == (
        "the clock was told it moved to 4s for no reason the harness knows ('slept')")
    assert ledger.account(["s", 3]).wrong is None
    assert ledger.account(["s", 4]).wrong == (
        "the clock was told its world started at 3s after it had begun")
    assert ledger.account(["s", 5]).wrong == (
        "effect #1 (mail key=k) was told at 8s where the harness's clock was at 0s: the "
        "world's clock moved without telling the harness")


def test_a_join_at_a_request_the_joined_run_never_sent_there_is_named() -> None:
    ledger = HarnessLedger()
    _tell(ledger, 1, "R", 1, "openai", 1, 1, 1, "d1", 0.0)
    _tell(ledger, 2, "R", 1, "openai", 2, 1, 1, "d2", 0.0)
    _tell(ledger, 3, "J", 2, "d2")  # stream 2 stopped at the request stream 1 sent second
    _tell(ledger, 4, "J", 3, "d9")

    assert ledger.account(["join", ["s", 2], ["drop", [0, 1, 0], ["s", 1]]]).wrong is None
    assert ledger.account(["join", ["s", 3], ["drop", [0, 1, 0], ["s", 1]]]).wrong == (
        "the case joined a run already traced at a request (d9) that run never sent there "
        "(it sent d2)")
    assert ledger.account(["join", ["s", 3], ["drop", [0, 0, 0], ["s", 1]]]).wrong is not None


def test_a_case_that_joins_the_recorded_run_elsewhere_disagrees_with_the_harness_s(
        ledger: HarnessLedger, monkeypatch: pytest.MonkeyPatch) -> None:
    class Elsewhere(dict[str, explore.Mark]):
        """Any request the recorded run also sent: joined at the recording's last one."""

        def get(self, key: str, default: Any = None) -> Any:
            return max(self.values(), key=lambda m: m.requests) if key in self else default

    original = explore.Recording.__init__

    def recording(self: explore.Recording, *args: Any) -> None:
        original(self, *args)
        self.marks = Elsewhere(self.marks)  # made as the recording ran

    monkeypatch.setattr(explore.Recording, "__init__", recording)
    monkeypatch.setattr(explore.Recording, "sampled", lambda self, how: False)  # no replay
    found, ways = _differences(ledger, appends(3), Path("appends.yaml"),
                               minimal_factory("ids_per_run"))

    assert "rejoined" in ways
    assert any(d is not None and "the case joined a run already traced at a request" in d
               for d in found)
