"""The reference agent keeps a long tool result whole in a file and sends the model a part of
it and that reference (seed 002 §19.2: 超长输出有稳定引用; §19.6: 只保存证据引用).

Each test runs the shipped scenario ``long-tool-output-by-reference`` (a 60,000-character
build log, a limit of 8,000 characters) in a world and reads what the agent wrote and
what the provider was sent.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fakes import CrashDisk, SimulatedCrash, long_output
from harness import DiskError
from harness.agent import BudgetPolicy, ReferenceAgent
from harness.agent._output_spill import DEFAULT_INLINE_CHARS, OutputSpill, excerpt
from harness.agent._tools import ToolReply
from harness.ports import AgentOutcome
from harness.runner import World, task_for
from harness.scenario import load_scenario

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "budgets" / \
    "long-tool-output-by-reference.yaml"
BUILD_CALL = "call_t1_0"


def _world(*, declared: bool = True) -> World:
    scenario = load_scenario(SCENARIO)
    if not declared:
        expect = scenario.expect.model_copy(update={"max_tool_result_chars": None})
        scenario = scenario.model_copy(update={"expect": expect})
    return World(scenario, seed=scenario.seed)


def _run(world: World, incarnation: int = 1, **settings: Any) -> AgentOutcome:
    agent = ReferenceAgent(world.ports(incarnation), **settings)
    return world.clock.run(agent.run(task_for(world.scenario)))


def _build_replies(world: World) -> list[str]:
    """The build call's reply in each request that carried it, as the model read it."""
    replies = []
    for request in world.provider.requests:
        messages = (request.json or {}).get("messages", [])
        assert isinstance(messages, list)
        replies += [m["content"] for m in messages
                    if m.get("role") == "tool" and m.get("tool_call_id") == BUILD_CALL]
    return replies


def _whole_result(world: World) -> str:
    [build] = [i for i in world.invocations if i.call_id == BUILD_CALL and not i.refused]
    assert build.result is not None
    return build.result


def test_the_model_gets_the_head_the_tail_the_size_and_the_file() -> None:
    world = _world()
    assert _run(world).stop_state == "complete"
    whole = _whole_result(world)
    assert len(whole) > 60_000
    assert long_output(60_000) in json.loads(whole)["output"]
    replies = _build_replies(world)
    assert len(replies) == 2  # turns 2 and 3 each carried it
    assert len(set(replies)) == 1
    assert len(replies[0]) <= 8_000
    part = json.loads(replies[0])
    path = part["saved_to"]
    assert path.startswith("/state/outputs/output-exec_")
    assert part["chars"] == len(whole)
    assert whole.startswith(part["head"])
    assert whole.endswith(part["tail"])
    assert len(part["head"]) > 3_000
    # The file holds the whole result, as the model would have read it inline.
    assert world.disk.files()[path].decode() == whole


def test_the_file_is_durable_before_the_reply_is_committed() -> None:
    world = _world()
    agent = ReferenceAgent(world.ports(1))
    append_reply = agent._append_reply
    durable_at_commit: list[dict[str, bytes]] = []

    def committing(reply: ToolReply) -> None:
        if reply.call_id == BUILD_CALL:
            durable_at_commit.append(world.disk.durable_view("unsynced_lost"))
        append_reply(reply)

    agent._append_reply = committing  # type: ignore[method-assign]
    assert world.clock.run(agent.run(task_for(world.scenario))).stop_state == "complete"
    [durable] = durable_at_commit
    [path] = [p for p in durable if p.startswith("/state/outputs/")]
    assert durable[path].decode() == _whole_result(world)


def test_a_restart_sends_the_same_reply_and_finds_the_same_file() -> None:
    world = _world()
    agent = ReferenceAgent(world.ports(1))

    def crash_on_notes(tool: str) -> None:
        if tool == "notes":
            raise world.disk.crash_at_event("after_tool:notes#1", "unsynced_lost")

    world.effect_applied = crash_on_notes  # type: ignore[method-assign]
    with pytest.raises(SimulatedCrash):
        world.clock.run(agent.run(task_for(world.scenario)))
    del world.effect_applied
    before = _build_replies(world)
    assert len(before) == 1
    world.disk.restart()
    assert _run(world, incarnation=2).stop_state == "complete"
    after = _build_replies(world)[1:]
    assert after
    assert set(after) == set(before)  # byte for byte: the prompt cache depends on it
    path = json.loads(before[0])["saved_to"]
    assert world.disk.files()[path].decode() == _whole_result(world)


def test_an_agent_that_inlines_every_result_sends_the_whole_log() -> None:
    world = _world()
    inline = BudgetPolicy(inline_tool_result_chars=None)
    assert _run(world, budget_policy=inline).stop_state == "complete"
    replies = _build_replies(world)
    assert replies
    assert all(reply == _whole_result(world) for reply in replies)
    assert not any(p.startswith("/state/outputs/") for p in world.disk.files())


def test_without_a_declared_limit_the_agent_keeps_its_own() -> None:
    world = _world(declared=False)
    assert _run(world).stop_state == "complete"
    [reply, *_] = _build_replies(world)
    assert 8_000 < len(reply) <= DEFAULT_INLINE_CHARS


def test_a_short_result_is_sent_whole_and_no_file_is_written() -> None:
    disk = CrashDisk().view()
    spill = OutputSpill(disk, "/state/outputs", "/", 1_000)
    reply = ToolReply("t1", "c1", "ok", {"lines": 3})
    assert spill.bounded(reply, "exec-1") is reply
    assert not disk.exists("/state/outputs")


def test_the_excerpt_is_the_same_every_time_and_fits_the_limit() -> None:
    text = long_output(100_000)
    for limit in (500, 1_000, 8_000, 16_000):
        part = excerpt(text, "/state/outputs/output-exec-1.txt", limit)
        assert part == excerpt(text, "/state/outputs/output-exec-1.txt", limit)
        encoded = json.dumps(part, sort_keys=True, ensure_ascii=False)
        assert len(encoded) <= limit, limit
        assert part["head"]
        assert part["tail"]
        assert text.startswith(part["head"])
        assert text.endswith(part["tail"])


def test_a_file_that_cannot_be_written_leaves_the_outcome_unknown() -> None:
    world = _world()
    ports = world.ports(1)

    class FullDisk:
        """The world's disk, full for the outputs folder."""

        def __getattr__(self, name: str) -> Any:
            return getattr(ports.disk, name)

        def open_append(self, path: str) -> Any:
            if "/outputs/" in path:
                raise DiskError("open", path, 28, "No space left on device")
            return ports.disk.open_append(path)

    agent = ReferenceAgent(replace(ports, disk=FullDisk()))  # type: ignore[arg-type]
    outcome = world.clock.run(agent.run(task_for(world.scenario)))
    assert outcome.stop_state == "infra_paused"
    assert "cannot be written" in outcome.reason
    assert not [i for i in world.invocations if i.tool == "notes"]  # J6: nothing ran after
