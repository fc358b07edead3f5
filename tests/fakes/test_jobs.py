"""The fake job runner: jobs on the virtual clock that outlive the agent (seed 002 §19.4)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes import FakeJobRunner, JobSpec, RunnerPort, VirtualClock
from fakes._crashdisk import DeadIncarnationError, Incarnations
from harness.ports import JobIdentity, JobRunnerUnavailable
from harness.trace import JobRecord


def runner_and_port(**spec: object) -> tuple[FakeJobRunner, RunnerPort, VirtualClock]:
    clock = VirtualClock()
    runner = FakeJobRunner(clock, Incarnations())
    return runner, runner.port(1, {"build": JobSpec(**spec)}), clock  # type: ignore[arg-type]


def start(port: RunnerPort) -> JobIdentity:
    return port.start("build", {"target": "all"}, job_id="job-1", owner_session="s",
                      owner_turn="t1", call_id="call_1")


def test_a_job_writes_its_lines_over_time_and_exits_with_its_code() -> None:
    _, port, clock = runner_and_port(seconds=10, output_lines=5, exit_code=3)
    identity = start(port)
    status = clock.run(port.wait(identity))
    assert (status.state, status.exit_code, clock.now()) == ("exited", 3, 10)
    assert port.read(identity, 3).lines == ("build: step 4/5", "build: step 5/5")


def test_a_wait_with_a_timeout_returns_while_the_job_still_runs() -> None:
    _, port, clock = runner_and_port(seconds=10, output_lines=5)
    identity = start(port)
    assert clock.run(port.wait(identity, 4)).alive
    chunk = port.read(identity, 0)
    assert (chunk.lines, chunk.next_offset) == (("build: step 1/5", "build: step 2/5"), 2)


def test_a_read_from_before_the_retained_window_is_lossy() -> None:
    _, port, clock = runner_and_port(seconds=10, output_lines=10, retained_lines=3)
    identity = start(port)
    clock.run(port.wait(identity))
    chunk = port.read(identity, 2)
    assert (chunk.lossy, chunk.dropped, chunk.next_offset) == (True, 5, 10)
    assert chunk.lines[0] == "build: step 8/10"


def test_a_vanished_process_has_no_exit_code_and_its_pid_names_another_process() -> None:
    _, port, clock = runner_and_port(seconds=10, vanishes_at=4)
    identity = start(port)
    status = clock.run(port.wait(identity))
    assert (status.state, status.exit_code, clock.now()) == ("vanished", None, 4)
    impostor = port.process(identity.pid)
    assert impostor is not None
    assert impostor.pid == identity.pid
    assert impostor != identity


def test_term_is_ignored_when_the_job_says_so_and_kill_always_ends_it() -> None:
    runner, port, clock = runner_and_port(seconds=100, ignores_term=True)
    identity = start(port)
    clock.run(port.wait(identity, 2))
    port.signal(identity, "TERM")
    assert port.status(identity).alive
    port.signal(identity, "KILL")
    assert (port.status(identity).state, port.status(identity).exit_code) == ("killed", -9)
    assert [s.signal for s in runner.jobs[0].record.signals] == ["TERM", "KILL"]


def test_a_job_survives_the_crash_of_its_starter_and_refuses_the_dead_one() -> None:
    runner, port, clock = runner_and_port(seconds=10)
    identity = start(port)
    runner.incarnations.crash()
    with pytest.raises(DeadIncarnationError):
        port.status(identity)
    runner.incarnations.restart()
    later = runner.port(2, port.specs)
    assert later.find("job-1") == identity
    assert clock.run(later.wait(identity)).exit_code == 0


def test_an_unqueryable_runner_cannot_be_asked_after_a_restart() -> None:
    runner, port, _ = runner_and_port(seconds=10, unqueryable_after_crash=True)
    identity = start(port)
    runner.incarnations.crash()
    runner.incarnations.restart()
    later = runner.port(2, port.specs)
    with pytest.raises(JobRunnerUnavailable):
        later.status(identity)
    with pytest.raises(JobRunnerUnavailable):
        later.find("job-1")


def test_a_completion_no_waiter_claimed_stays_a_wakeup_until_acknowledged() -> None:
    _, port, clock = runner_and_port(seconds=5)
    first, second = start(port), start(port)
    clock.run(port.wait(second))
    port.claim(first)
    assert [w.execution_id for w in port.wakeups("s")] == [second.execution_id]
    assert port.wakeups("another-session") == ()
    port.acknowledge(second.execution_id)
    assert port.wakeups("s") == ()


def test_the_runner_keeps_each_job_as_the_trace_records_it() -> None:
    # No twin of the trace's record to copy field by field: the runner's record is the
    # trace's own type, and only the lines written (which the clock decides) are filled in.
    runner, port, clock = runner_and_port(seconds=10, output_lines=5)
    identity = start(port)
    clock.run(port.wait(identity, 4))
    port.signal(identity, "TERM")
    [job] = runner.jobs
    assert type(job.record) is JobRecord
    assert runner.record(job) == replace(job.record, lines=2)
    assert (job.record.state, job.record.call_id, job.record.signals[0].at) == ("killed",
                                                                                "call_1", 4)


def test_a_job_that_declares_its_environment_reports_what_it_was_handed() -> None:
    runner = FakeJobRunner(VirtualClock(), Incarnations())
    seen: list[tuple[str, dict[str, str] | None]] = []
    runner.on_start_env = lambda job, env: seen.append(
        (job.record.call_id, dict(env) if env is not None else None))
    port = runner.port(1, {"build": JobSpec(env=("TOKEN",)), "lint": JobSpec()})
    port.start("build", {}, job_id="j1", owner_session="s", owner_turn="t1",
               call_id="call_1", env={"PATH": "/bin"})
    port.start("build", {}, job_id="j2", owner_session="s", owner_turn="t1", call_id="call_2")
    port.start("lint", {}, job_id="j3", owner_session="s", owner_turn="t1", call_id="call_3",
               env={"PATH": "/bin"})
    # A job without a declared environment is not reported: its scenario judges none.
    assert seen == [("call_1", {"PATH": "/bin"}), ("call_2", None)]
