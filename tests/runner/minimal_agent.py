"""A second, minimal agent behind the adapter boundary, with switchable flaws.

Correct by default: the reference stream client, a durable journal and a
durable transcript (written before tools run), recovery that closes pending
executions and repairs dangling calls (J4, J5). Each flaw breaks one rule, so
each checker can be shown failing on a real, deliberately broken agent::

    factory = minimal_factory("join_partial")
    result = run_case(case, scenario, agent_factory=factory)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from harness._errors import DiskError
from harness.agent import Budget, MemoryRetryLog, StreamClient, StreamConfig
from harness.agent._journal import ToolJournal
from harness.agent._tool_runner import ToolRunner
from harness.agent._tools import ToolReply
from harness.agent._transcript import AssistantTurn, TranscriptLog, UserMessage
from harness.ports import (
    Agent,
    AgentOutcome,
    AgentPorts,
    AppendFile,
    Disk,
    RecoveryReport,
    StopState,
    Task,
    ToolCallView,
    ToolInvocation,
    TranscriptMessage,
    Usage,
)

FLAWS = frozenset({
    "rerun_unknown",          # I3: recovery re-runs calls of unknown outcome
    "join_partial",           # I8: commits a broken attempt's text joined to the retry's
    "double_usage",           # I6: bills every attempt twice
    "no_fsync",               # I1: never makes anything durable
    "complete_after_failure",  # I4: a failed model call still ends "complete"
    "run_truncated",          # I7: runs the tool calls of a truncated answer
    "ignore_deadline",        # I9: retries without a deadline or attempt budget
    "unstable_recover",       # I11: every recover() writes and reports again
    "drop_reply",             # I2: forgets to record the last tool reply
    "ok_without_effect",      # I10: repairs dangling calls as done
    "ids_per_run",            # attempt ids drawn per run, not per incarnation: a restart
                              # sends ids the first incarnation sent already
})


class _NoFsyncFile:
    def __init__(self, inner: AppendFile) -> None:
        self._inner = inner

    @property
    def created(self) -> bool:
        return self._inner.created

    def write(self, data: bytes) -> None:
        self._inner.write(data)

    def fsync(self) -> None:
        """Skipped: the flaw under test."""

    def close(self) -> None:
        self._inner.close()

    def __enter__(self) -> _NoFsyncFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _NoFsyncDisk:
    """A disk whose fsyncs do nothing (folder fsyncs included)."""

    def __init__(self, inner: Disk) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def open_append(self, path: str) -> AppendFile:
        return _NoFsyncFile(self._inner.open_append(path))

    def fsync_dir(self, path: str) -> None:
        """Skipped: the flaw under test."""


class MinimalAgent:
    """The minimal agent; ``flaws`` names the rules it breaks (see :data:`FLAWS`)."""

    def __init__(self, ports: AgentPorts, flaws: frozenset[str] = frozenset()) -> None:
        unknown = flaws - FLAWS
        assert not unknown, f"unknown flaws {sorted(unknown)}"
        self.ports = ports
        self.flaws = flaws
        self.disk: Disk = _NoFsyncDisk(ports.disk) if "no_fsync" in flaws else ports.disk  # type: ignore[assignment]
        state = ports.state_dir
        self.journal = ToolJournal.open(self.disk, f"{state}/journal.jsonl", run_id=ports.run_id,
                                        clock=ports.clock, seed=ports.seed)
        self.log = TranscriptLog.open(self.disk, f"{state}/transcript.jsonl")
        self.attempts: dict[str, str] = {}

    # -- recovery ----------------------------------------------------------------
    async def recover(self) -> RecoveryReport:
        recovered = self.journal.recover()
        if "rerun_unknown" in self.flaws:
            await self._rerun(recovered)
        if "ok_without_effect" in self.flaws:
            repaired = [ToolReply(c.turn_id, c.call_id, "ok", {"done": True}, synthetic=True)
                        for c in self.log.transcript.dangling()]
            self.log.append_replies(repaired)
        else:
            repaired = self.log.repair(self.journal.find)
        report = RecoveryReport(
            not_started=tuple(r.execution.call_id for r in recovered
                              if r.outcome != "unknown_after_restart"),
            unknown=tuple(r.execution.call_id for r in recovered
                          if r.outcome == "unknown_after_restart"),
            repaired_replies=tuple(r.call_id for r in repaired),
        )
        if "unstable_recover" in self.flaws:
            self.log.append_user("recovered")
            report = RecoveryReport(repaired_replies=("again",))
        return report

    async def _rerun(self, recovered: list[Any]) -> None:
        calls = {c.key: c for c in self.log.transcript.calls()}
        for item in recovered:
            call = calls.get((item.execution.turn_id, item.execution.call_id))
            if item.outcome == "unknown_after_restart" and call is not None:
                tool = self.ports.tools[call.tool]
                runner = ToolRunner(self.journal, {call.tool: tool}, clock=self.ports.clock,
                                    incarnation=self.ports.incarnation)
                await runner.run(call)

    # -- the loop ----------------------------------------------------------------
    async def run(self, task: Task) -> AgentOutcome:
        try:
            return await self._run(task)
        except DiskError as error:
            # J6: the trusted log cannot be written, so nothing more may run.
            return self._outcome("infra_paused", str(error), None, infra=True)

    async def _run(self, task: Task) -> AgentOutcome:
        await self.recover()
        if not self.log.transcript.entries:
            self.log.append_user(task.prompt)
        client = self._client(task)
        runner = ToolRunner(self.journal, self.ports.tools, clock=self.ports.clock,
                            incarnation=self.ports.incarnation)
        usage: Usage | None = None
        for _ in range(task.max_turns):
            result = await client.complete(self._body(task))
            usage = Usage.total([usage, result.usage_total,
                                 result.usage_total if "double_usage" in self.flaws else None])
            if result.outcome == "failed":
                state: StopState = "complete" if "complete_after_failure" in self.flaws \
                    else "infra_paused"
                return self._outcome(state, result.stop_reason, usage, infra=True)
            message = result.message
            assert message is not None
            turn_id = f"turn_{self._assistant_count() + 1}"
            text = message.text
            if "join_partial" in self.flaws:
                text = "".join(a.partial_text for a in result.attempts
                               if a.status == "interrupted") + text
            calls = [ToolInvocation(turn_id, c.call_id, c.name, dict(c.arguments))
                     for c in message.tool_calls]
            if result.outcome == "truncated" and "run_truncated" in self.flaws:
                calls = [ToolInvocation(turn_id, c.call_id, c.name, dict(c.arguments))
                         for c in result.rejected_tool_calls]
            try:
                self.log.append_assistant(turn_id, calls, text)
            except DiskError as error:
                return self._outcome("infra_paused", str(error), usage, infra=True)
            self.attempts[turn_id] = message.attempt_id
            if not calls:
                return self._outcome("complete", "the model finished", usage)
            replies = await runner.run_batch(calls)
            if "drop_reply" in self.flaws:
                replies = replies[:-1]
            try:
                self.log.append_replies(replies)
            except DiskError as error:
                return self._outcome("infra_paused", str(error), usage, infra=True)
            if runner.halted is not None:
                return self._outcome("infra_paused", str(runner.halted), usage, infra=True)
        return self._outcome("budget_limited", "turn cap reached", usage)

    def _client(self, task: Task) -> StreamClient:
        ignore = "ignore_deadline" in self.flaws
        budget = Budget(deadline=None if ignore else task.deadline_seconds,
                        max_attempts=None if ignore else task.max_attempts)
        config = StreamConfig(retry_after_cap=10_000.0, max_attempts=20) if ignore \
            else StreamConfig()
        return StreamClient(self.ports.http, dialect=self.ports.dialect,
                            endpoint=self.ports.endpoint, config=config, clock=self.ports.clock,
                            seed=self.ports.seed + (0 if "ids_per_run" in self.flaws
                                                    else self.ports.incarnation),
                            retry_log=MemoryRetryLog(), budget=budget)

    def _assistant_count(self) -> int:
        return sum(1 for e in self.log.transcript.entries if isinstance(e, AssistantTurn))

    # -- requests and outcomes -------------------------------------------------------
    def _body(self, task: Task) -> dict[str, Any]:
        entries = self.log.transcript.messages()
        if self.ports.dialect == "openai":
            return {"model": task.model, "max_tokens": task.max_output_tokens,
                    "messages": _openai_messages(entries),
                    "tools": [{"type": "function", "function": {
                        "name": t.name, "description": t.description,
                        "parameters": dict(t.parameters)}} for t in task.tools]}
        return {"model": task.model, "max_tokens": task.max_output_tokens,
                "messages": _anthropic_messages(entries),
                "tools": [{"name": t.name, "description": t.description,
                           "input_schema": dict(t.parameters)} for t in task.tools]}

    def _outcome(self, state: StopState, reason: str, usage: Usage | None, *,
                 infra: bool = False) -> AgentOutcome:
        transcript = tuple(self._messages())
        turns = sum(1 for m in transcript if m.role == "assistant")
        return AgentOutcome(state, reason, transcript, usage, None, turns, infra,
                            tuple(self.attempts.values()))

    def _messages(self) -> list[TranscriptMessage]:
        out = []
        for entry in self.log.transcript.entries:
            if isinstance(entry, UserMessage):
                out.append(TranscriptMessage("user", "", entry.text))
            elif isinstance(entry, AssistantTurn):
                calls = tuple(ToolCallView(c.call_id, c.tool, c.arguments) for c in entry.calls)
                out.append(TranscriptMessage("assistant", entry.turn_id, entry.text, calls,
                                             self.attempts.get(entry.turn_id)))
            else:
                out.append(TranscriptMessage("tool", entry.turn_id, call_id=entry.call_id,
                                             status=entry.status, synthetic=entry.synthetic))
        return out


def _content(reply: ToolReply) -> str:
    return json.dumps(reply.content, sort_keys=True, ensure_ascii=False)


def _openai_messages(entries: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in entries:
        if isinstance(e, UserMessage):
            out.append({"role": "user", "content": e.text})
        elif isinstance(e, AssistantTurn):
            message: dict[str, Any] = {"role": "assistant", "content": e.text or None}
            if e.calls:
                message["tool_calls"] = [{"id": c.call_id, "type": "function", "function": {
                    "name": c.tool, "arguments": json.dumps(dict(c.arguments))}} for c in e.calls]
            out.append(message)
        else:
            out.append({"role": "tool", "tool_call_id": e.call_id, "content": _content(e)})
    return out


def _anthropic_messages(entries: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in entries:
        if isinstance(e, UserMessage):
            out.append({"role": "user", "content": e.text})
        elif isinstance(e, AssistantTurn):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": e.text}] if e.text else []
            blocks += [{"type": "tool_use", "id": c.call_id, "name": c.tool,
                        "input": dict(c.arguments)} for c in e.calls]
            out.append({"role": "assistant", "content": blocks})
        else:
            block = {"type": "tool_result", "tool_use_id": e.call_id, "content": _content(e),
                     "is_error": e.status != "ok"}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
    return out


def minimal_factory(*flaws: str) -> Callable[[AgentPorts], Agent]:
    """An :data:`~harness.ports.AgentFactory` for the minimal agent with ``flaws``."""
    chosen = frozenset(flaws)

    def build(ports: AgentPorts) -> Agent:
        return MinimalAgent(ports, chosen)

    # It builds Chat Completions and Messages bodies only (see MinimalAgent._body).
    build.dialects = ("openai", "anthropic")  # type: ignore[attr-defined]
    return build


__all__ = ["FLAWS", "MinimalAgent", "minimal_factory"]
