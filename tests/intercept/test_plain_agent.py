"""A plain main(prompt), unchanged, run, crashed at world events and judged from the outside."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness._errors import AgentEntryError
from harness.intercept import PlainEntry
from harness.runner import Case, CaseResult, CrashSpec, plan_cases, run_case
from harness.scenario import Scenario, load_scenario

from .conftest import OPENAI_AGENT as OPENAI_AGENT_SOURCE
from .conftest import TOOLS as TOOLS_SOURCE
from .conftest import AgentPackages

SOURCE = Path("scenarios/mail.yaml")


def mail_scenario(package: str, **changes: Any) -> Scenario:
    fields: dict[str, Any] = {
        "name": "mail", "dialect": "openai", "seed": 4,
        "description": "Mail the CFO the invoice.",
        "tools": {"mail": {"kind": "send", "target": f"{package}.tools:send_mail"}},
        "model": [{"turn": 1, "calls": [{"tool": "mail",
                                         "args": {"to": "cfo@example.com", "body": "inv 7"}}]},
                  {"turn": 2, "text": "Sent."}],
        "expect": {"stop_state": "complete", "side_effects": {"mail": 1}},
    }
    fields.update(changes)
    return Scenario(**fields)


def run(package: str, scenario: Scenario, crash: CrashSpec | None = None,
        attribute: str = "main") -> CaseResult:
    case = Case(scenario.name, SOURCE, scenario.seed, crash, agent=f"{package}.agent:{attribute}")
    return run_case(case, scenario, PlainEntry(f"{package}.agent:{attribute}"))


def verdicts(result: CaseResult) -> dict[str, str]:
    return {v.invariant: v.status for v in result.verdicts}


def message(result: CaseResult, invariant: str) -> str:
    return next(v.message for v in result.verdicts if v.invariant == invariant)


def test_an_unchanged_agent_passes_and_is_judged_from_what_the_world_saw(
        openai_agent: Callable[..., str]) -> None:
    package = openai_agent()
    result = run(package, mail_scenario(package))

    assert result.status == "pass", result.failed_verdicts
    assert result.side_effects == {"mail": 1}
    statuses = verdicts(result)
    # The transcript was read from the requests; the ledger counted the stand-in's call.
    assert statuses["I1"] == statuses["I2"] == statuses["I10"] == "pass"
    # What the agent never reported is unknown, with the reason, never a failure.
    assert statuses["I6"] == statuses["I11"] == "unknown"
    assert message(result, "I6").startswith("the agent reports no usage")
    assert message(result, "I11").startswith("a plain main(prompt) recovers inside its run")
    assert result.trace is not None
    assert result.trace.extra.final_answer == "Sent. (sent 1 in this process)"


def test_the_users_real_tool_function_is_never_called(openai_agent: Callable[..., str]) -> None:
    package = openai_agent()
    result = run(package, mail_scenario(package))
    # The real send_mail raises; the stand-in answered instead.
    assert result.trace is not None
    assert [i.outcome for i in result.trace.invocations] == ["ok"]
    assert [i.call_id for i in result.trace.invocations] == ["call_t1_0"]


def test_a_crash_right_after_the_send_makes_the_naive_agent_send_twice(
        openai_agent: Callable[..., str]) -> None:
    package = openai_agent()
    result = run(package, mail_scenario(package),
                 CrashSpec("after_tool:mail#1", "at", "unsynced_lost"))

    assert result.crash_reached
    assert result.status == "fail"
    failed = {v.invariant for v in result.failed_verdicts}
    assert {"I1", "side_effects"} <= failed
    assert result.duplicates == 1


def test_module_state_does_not_survive_a_crash(openai_agent: Callable[..., str]) -> None:
    package = openai_agent()
    result = run(package, mail_scenario(package),
                 CrashSpec("after_tool:mail#1", "at", "unsynced_lost"))
    # Incarnation 1 sent once and died; incarnation 2 re-imported the module, so its
    # list started empty, and it counts only its own send.
    assert result.trace is not None
    assert result.trace.extra.final_answer == "Sent. (sent 1 in this process)"
    assert [i.incarnation for i in result.trace.invocations] == [1, 2]


@pytest.mark.parametrize("point", ["before_request:1", "mid_stream:1", "after_response:1",
                                   "before_request:2", "mid_stream:2", "after_response:2"])
def test_every_world_event_is_reached_and_the_agent_restarts(
        openai_agent: Callable[..., str], point: str) -> None:
    package = openai_agent()
    result = run(package, mail_scenario(package), CrashSpec(point, "at", "unsynced_lost"))
    assert result.crash_reached
    assert result.trace is not None
    assert [i.crashed_at for i in result.trace.incarnations][:2] == [point, None]
    assert result.stop_state == "complete"


def test_a_world_point_the_agent_never_reaches_is_an_unknown_case(
        openai_agent: Callable[..., str]) -> None:
    package = openai_agent()
    result = run(package, mail_scenario(package),
                 CrashSpec("after_tool:mail#2", "at", "unsynced_lost"))
    assert (result.status, result.crash_reached) == ("unknown", False)
    assert message(result, "crash").startswith(
        "the agent never reached after_tool:mail#2, so this case proves nothing; it reached: ")
    assert "after_tool:mail#1" in message(result, "crash")


def test_listed_world_points_are_planned_without_a_recording_run(
        openai_agent: Callable[..., str]) -> None:
    package = openai_agent()
    scenario = mail_scenario(package, crash={"points": ["after_tool:mail#1", "mid_stream:2"],
                                             "classes": ["unsynced_lost", "eio_on_write"]})
    cases = plan_cases(scenario, SOURCE, PlainEntry(f"{package}.agent:main"))
    assert [c.case_id for c in cases] == [
        "mail", "mail[after_tool:mail#1:at:unsynced_lost]", "mail[mid_stream:2:at:unsynced_lost]"]


def test_the_replay_command_names_the_agent(openai_agent: Callable[..., str]) -> None:
    package = openai_agent()
    crash = CrashSpec("after_tool:mail#1", "at", "unsynced_lost")
    case = Case("mail", SOURCE, 4, crash, agent=f"{package}.agent:main")
    assert case.replay_command == (f"harness run scenarios/mail.yaml --seed 4 --agent "
                                   f"{package}.agent:main --crash-at "
                                   "'after_tool:mail#1:at:unsynced_lost' --out results-replay")


AGENT_THAT_FAILS = '''
import json


async def main(prompt: str) -> str:
    return parse_the_plan("{not json")


def parse_the_plan(text):
    return json.loads(text)
'''


def test_an_exception_of_the_agent_fails_the_run_with_the_agents_own_traceback(
        agent_packages: AgentPackages) -> None:
    package = agent_packages.write({"agent": AGENT_THAT_FAILS, "tools": "def send_mail(): ..."})
    result = run(package, mail_scenario(package))

    assert result.stop_state == "failed"
    assert result.stop_reason.startswith("the agent raised JSONDecodeError: Expecting "
                                         "property name enclosed in double quotes")
    assert result.trace is not None
    traceback = result.trace.extra.agent_traceback
    assert traceback.startswith("incarnation 1 (the agent's code):\nTraceback")
    assert f"{package}/agent.py\", line 10, in parse_the_plan" in traceback
    assert "harness/intercept" not in traceback


SYNC_AGENT = '''
import time

from openai import OpenAI

from {package}.tools import send_mail


def main(prompt: str) -> str:
    client = OpenAI(timeout=30.0, max_retries=0)
    started = time.monotonic()
    messages = [{"role": "user", "content": prompt}]
    reply = client.chat.completions.create(model="m", messages=messages)
    call = reply.choices[0].message.tool_calls[0]
    send_mail(to="cfo@example.com", body="inv 7")
    time.sleep(90)  # a blocking wait: virtual, and it costs nothing
    messages += [reply.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": "{\\"sent\\": true}"}]
    answer = client.chat.completions.create(model="m", messages=messages)
    return f"{answer.choices[0].message.content} after {time.monotonic() - started:g}s"
'''


def test_a_blocking_main_on_the_sync_sdk_runs_on_virtual_time(
        agent_packages: AgentPackages) -> None:
    from .conftest import TOOLS

    package = agent_packages.write({"tools": TOOLS,
                                    "agent": SYNC_AGENT.replace("{package}", "{{package}}")
                                    .replace("{", "{{").replace("}", "}}")
                                    .replace("{{{{package}}}}", "{package}")})
    result = run(package, mail_scenario(package))
    assert result.status == "pass", (result.stop_reason, result.failed_verdicts)
    assert result.trace is not None
    assert result.trace.extra.final_answer == "Sent. after 90s"


def _sync_agent(agent_packages: AgentPackages) -> str:
    from .conftest import TOOLS

    return agent_packages.write({"tools": TOOLS,
                                 "agent": SYNC_AGENT.replace("{package}", "{{package}}")
                                 .replace("{", "{{").replace("}", "}}")
                                 .replace("{{{{package}}}}", "{package}")})


def _mail_behaving(package: str, behaviour: dict[str, Any]) -> Scenario:
    return mail_scenario(package, tools={"mail": {
        "kind": "send", "target": f"{package}.tools:send_mail", "behaviour": behaviour,
        "timeout_seconds": 10}})


@pytest.mark.parametrize("behaviour", [
    {"kind": "hanging"}, {"kind": "ignores_cancellation", "seconds": 3},
    {"kind": "subprocess", "argv": ["true"]},
], ids=lambda b: b["kind"])
def test_a_loop_bound_behaviour_on_a_blocking_target_is_a_clear_error(
        agent_packages: AgentPackages, behaviour: dict[str, Any]) -> None:
    # Without the check, a hanging tool failed inside asyncio (no running loop) and the
    # report blamed the agent's own code.
    package = _sync_agent(agent_packages)
    with pytest.raises(AgentEntryError, match=(
            rf"^tool 'mail' has behaviour '{behaviour['kind']}', which waits on the event "
            r"loop, but its target is a plain function called from blocking code: make the "
            r"target async, or give the tool another behaviour \(one of instant, slow, "
            r"failing, reply_lost\)$")):
        run(package, _mail_behaving(package, behaviour))


def test_a_slow_blocking_target_runs_on_virtual_time(agent_packages: AgentPackages) -> None:
    package = _sync_agent(agent_packages)
    result = run(package, _mail_behaving(package, {"kind": "slow", "seconds": 3}))
    assert result.status == "pass", (result.stop_reason, result.failed_verdicts)
    assert result.trace is not None
    assert result.trace.extra.final_answer == "Sent. after 93s"


AGENT_CALLING_OUT = '''
import httpx


async def main(prompt: str) -> str:
    async with httpx.AsyncClient() as client:
        await client.get("https://api.openai.com/v1/models")
    return "done"
'''


def test_a_request_to_a_real_host_is_refused_and_fails_the_case(
        agent_packages: AgentPackages) -> None:
    package = agent_packages.write({"agent": AGENT_CALLING_OUT, "tools": "def send_mail(): ..."})
    result = run(package, mail_scenario(package))

    assert result.status == "fail"
    network = next(v for v in result.verdicts if v.invariant == "network")
    assert network.status == "fail"
    # The line names the library that sent it: the agent's own package here.
    assert network.evidence == (f"GET https://api.openai.com/v1/models (by {package})",)
    assert result.stop_state == "infra_paused"  # the ConnectError, as the agent met it


STRUCTURED_AGENT = '''
from openai import OpenAI
from pydantic import BaseModel


class Booking(BaseModel):
    room: str
    nights: int


def main(prompt: str) -> Booking:
    OpenAI(max_retries=0).chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": prompt}])
    return Booking(room="12B", nights=2)


def forgot_to_return(prompt: str) -> None:
    pass
'''


def test_a_structured_output_is_a_final_answer_and_none_is_not(
        agent_packages: AgentPackages) -> None:
    package = agent_packages.write({"agent": STRUCTURED_AGENT})
    scenario = mail_scenario(package, tools={}, model=[{"turn": 1, "text": "Booked."}],
                             expect={"stop_state": "complete"})
    done = run(package, scenario)
    assert done.status == "pass", done.failed_verdicts
    assert done.trace is not None
    assert done.trace.extra.final_answer == '{"room":"12B","nights":2}'
    forgot = run(package, scenario, attribute="forgot_to_return")
    assert forgot.stop_state == "failed"
    assert "main returned None" in forgot.stop_reason


# A third-party framework the agent builds on: its import is slow and counted, in an
# installed module of its own (an agent's changes to os.environ end with its case).
FRAMEWORK = '''
from {framework}_counts import IMPORTS

IMPORTS["framework"] += 1


def lazily():
    import importlib

    # As litellm loads its providers: by name, so sys.modules is asked every time.
    return importlib.import_module("{framework}.backend").NAME
'''
BACKEND = """
from {framework}_counts import IMPORTS

IMPORTS["backend"] += 1
NAME = 'backend'
"""
COUNTS = 'IMPORTS = {"framework": 0, "backend": 0}\n'
ON_A_FRAMEWORK = '''
from openai import OpenAI

import {framework}

from {package}.tools import send_mail

OWN_IMPORTS = []
OWN_IMPORTS.append(1)


def main(prompt: str) -> str:
    {framework}.lazily()  # a submodule the framework imports only when first used
    OpenAI(max_retries=0).chat.completions.create(
        model="gpt-test", messages=[{{"role": "user", "content": prompt}}])
    return f"own module imported {{len(OWN_IMPORTS)}} time(s) in this incarnation"
'''


def test_a_framework_is_imported_once_and_the_agents_own_code_every_incarnation(
        agent_packages: AgentPackages, monkeypatch: pytest.MonkeyPatch) -> None:
    framework = f"slow_framework_{id(agent_packages) % 10_000}"
    installed = agent_packages.root / "site-packages"  # as pip installs a framework
    folder = installed / framework
    folder.mkdir(parents=True)
    monkeypatch.syspath_prepend(str(installed))
    (installed / f"{framework}_counts.py").write_text(COUNTS)
    (folder / "__init__.py").write_text(FRAMEWORK.replace("{framework}", framework))
    (folder / "backend.py").write_text(BACKEND.replace("{framework}", framework))
    package = agent_packages.write({"tools": TOOLS_SOURCE, "agent": ON_A_FRAMEWORK.replace(
        "{framework}", framework)})
    scenario = mail_scenario(package, model=[{"turn": 1, "text": "Done."}],
                             expect={"stop_state": "complete"})
    try:
        results = [run(package, scenario) for _ in range(3)]
        crashed = run(package, scenario, CrashSpec("after_response:1", "at", "process_killed"))
        counts = dict(sys.modules[f"{framework}_counts"].IMPORTS)
    finally:
        for name in [n for n in sys.modules if n.startswith(framework)]:
            del sys.modules[name]
    assert [r.status for r in [*results, crashed]] == ["pass"] * 4
    # Four cases and a restart: the framework (and its lazy submodule) once, the agent's
    # own module afresh for every incarnation.
    assert counts == {"framework": 1, "backend": 1}
    assert crashed.trace is not None
    assert crashed.trace.extra.final_answer == "own module imported 1 time(s) in this " \
        "incarnation"



EDITED = '''
ANSWER = "{answer}"


def main(prompt: str) -> str:
    return ANSWER
'''


def test_an_agent_module_edited_between_cases_runs_its_new_code(
        agent_packages: AgentPackages) -> None:
    # Compiled code is reused per source: the same bytes, never a stale edit.
    package = agent_packages.write({"tools": TOOLS_SOURCE,
                                    "agent": EDITED.replace("{answer}", "first")})
    scenario = mail_scenario(package, model=[{"turn": 1, "text": "Done."}],
                             expect={"stop_state": "complete"})
    before = run(package, scenario)
    agent_file = agent_packages.root / package / "agent.py"
    agent_file.write_text(EDITED.replace("{answer}", "second"))
    after = run(package, scenario)

    assert before.trace is not None
    assert after.trace is not None
    assert (before.trace.extra.final_answer, after.trace.extra.final_answer) == \
        ("first", "second")


def test_a_plain_agent_is_cancelled_as_a_whole_or_says_it_cannot_be() -> None:
    from harness.intercept._plain import PlainAgent
    from harness.ports import CancelRequest

    agent = PlainAgent(PlainEntry("nowhere:main"), world=None, incarnation=1)  # type: ignore[arg-type]
    call = agent.cancel(CancelRequest("c1", "tool_call", "run", "call_1"))
    assert (call.status, call.detail) == (
        "unsupported", "a plain main(prompt) is cancelled as a whole (turn or session), not by "
                       "tool_call")
    # No async main runs (a blocking one, or none yet): nothing to cancel.
    assert agent.cancel(CancelRequest("c2", "turn", "run")).status == "unsupported"


AGENT_THAT_WAITS_AN_HOUR = '''
import asyncio


async def main(prompt: str) -> str:
    await asyncio.sleep(3600)
    return "never"
'''


def test_a_turn_cancel_stops_an_async_main_where_it_awaits(
        agent_packages: AgentPackages) -> None:
    # Before, a plain agent had no cancel hook: the cancel was never sent.
    package = agent_packages.write({"agent": AGENT_THAT_WAITS_AN_HOUR,
                                    "tools": "def send_mail(): ..."})
    scenario = mail_scenario(package, cancels=[{"at_seconds": 5, "target": "turn"},
                                               {"at_seconds": 6, "target": "session"}],
                             expect={"stop_state": "cancelled", "side_effects": {"mail": 0}})
    result = run(package, scenario)

    assert result.stop_state == "cancelled"
    assert result.trace is not None
    assert [(c.at, c.target, c.ack) for c in result.trace.cancels] == [(5.0, "turn", "cancelled")]
    assert result.trace.incarnations[-1].ended_at == 5.0


@pytest.mark.parametrize("every", [1, 2])
def test_keep_alive_comments_in_a_stream_leave_a_streaming_sdk_agent_judged_on_what_it_did(
        openai_agent: Callable[..., str], every: int) -> None:
    """The openai SDK stops reading at ``data: [DONE]``: a comment the fake sent after it
    was never read, so the answer looked cut short and the agent's calls ran on a broken
    answer (I7, I8) though it had read every event. Comments go between events only."""
    package = openai_agent()
    faults = [{"at": {"turn": 1}, "kind": "inject_comments", "every": every}]
    result = run(package, mail_scenario(package, faults=faults))

    assert result.status == "pass", result.failed_verdicts
    assert result.trace is not None
    assert all(r.delivery == "complete" for r in result.trace.requests)


# The openai SDK as its docs show it: its own retries, at their defaults (two, 0.5 s doubling,
# less up to a quarter of jitter).
SDK_RETRIES_AGENT = '''
from openai import OpenAI


def main(prompt: str) -> str:
    answer = OpenAI().chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": prompt}])
    return answer.choices[0].message.content or ""
'''


def test_the_openai_sdks_own_retry_policy_is_backoff_enough(
        agent_packages: AgentPackages) -> None:
    # seed 002 §19.1 asks for exponential backoff with jitter; the SDK's first retry comes
    # after 0.375-0.5 s and its second after twice that. It once warned S5:backoff against
    # a flat 1 s floor; an agent that retries at once still warns (S5-no-backoff).
    package = agent_packages.write({"agent": SDK_RETRIES_AGENT})
    errors = [{"at": {"turn": 1, "attempt": attempt}, "kind": "http_error", "status": 500}
              for attempt in (1, 2)]
    scenario = mail_scenario(package, tools={}, model=[{"turn": 1, "text": "Done."}],
                             faults=errors, expect={"stop_state": "complete"})
    result = run(package, scenario)
    assert result.trace is not None
    waits = [round(b.started_at - a.ended_at, 3) for a, b in
             zip(result.trace.requests, result.trace.requests[1:], strict=False)
             if a.ended_at is not None]
    assert len(waits) == 2, waits
    assert waits[0] < 1 <= waits[1] * 2, waits  # below the old 1 s floor, then doubling
    assert verdicts(result)["S5:backoff"] == "pass", message(result, "S5:backoff")


# A framework that runs its steps as tasks and waits for the events they send
# (LlamaIndex's workflows): a step the crash killed sends none.
STEPPED_AGENT = '''
import asyncio
import json

from openai import AsyncOpenAI

from {package}.tools import send_mail

STRING = {{"type": "string"}}
TOOLS = [{{"type": "function", "function": {{"name": "mail", "parameters": {{
    "type": "object", "properties": {{"to": STRING, "body": STRING}}}}}}}}]


async def main(prompt: str) -> str:
    client = AsyncOpenAI(timeout=30.0, max_retries=0)
    messages = [{{"role": "user", "content": prompt}}]
    answers: asyncio.Queue = asyncio.Queue()

    async def step() -> None:
        while True:
            reply = await client.chat.completions.create(
                model="gpt-test", messages=messages, tools=TOOLS)
            message = reply.choices[0].message
            if not message.tool_calls:
                await answers.put(message.content)
                return
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                result = send_mail(**json.loads(call.function.arguments))
                messages.append({{"role": "tool", "tool_call_id": call.id,
                                 "content": json.dumps(result)}})

    task = asyncio.ensure_future(step())
    answer = await answers.get()
    await task
    return answer
'''


def test_a_crashed_incarnation_that_waits_for_its_dead_steps_moves_no_time(
        agent_packages: AgentPackages) -> None:
    """The crash ends a LlamaIndex step's task; the workflow waits for the step's event
    forever. The clock went on to the harness's guard (the deadline plus an hour), and
    the restarted agent began at 5,400 s and failed I9, the deadline it never broke."""
    package = agent_packages.write({"tools": TOOLS_SOURCE, "agent": STEPPED_AGENT})
    result = run(package, mail_scenario(package),
                 CrashSpec("after_tool:mail#1", "at", "process_killed"))
    assert result.crash_reached
    assert result.trace is not None
    assert [round(i.ended_at, 3) for i in result.trace.incarnations] == [0.0, 0.0]
    assert [r.started_at for r in result.trace.requests] == [0.0, 0.0, 0.0]
    assert verdicts(result)["I9"] != "fail"
    assert {v.invariant for v in result.failed_verdicts} == {"I1", "I3", "side_effects"}


def test_an_agent_that_reports_cut_arguments_as_an_error_passes_the_shipped_scenario(
        openai_agent: Callable[..., str]) -> None:
    """A framework refuses a call whose arguments do not parse with an error reply, not the
    reference agent's TRUNCATED marker; the shipped scenario's model regenerates the call
    on either, as a real model would, instead of failing the agent for refusing."""
    careful = OPENAI_AGENT_SOURCE.replace(
        "            result = FUNCTIONS[call[\"name\"]](**json.loads(call[\"args\"]))\n",
        "            try:\n"
        "                arguments = json.loads(call[\"args\"])\n"
        "            except ValueError as error:\n"
        "                messages.append({{\"role\": \"tool\", \"tool_call_id\": call[\"id\"],\n"
        "                    \"content\": f\"Error: {{error}}\\n Please fix your mistakes.\"}})\n"
        "                continue\n"
        "            result = FUNCTIONS[call[\"name\"]](**arguments)\n")
    assert careful != OPENAI_AGENT_SOURCE
    package = openai_agent(agent=careful)
    scenario = load_scenario(Path("scenarios/streaming/truncated-tool-arguments.yaml"))
    tools = {"mail": scenario.tools["mail"].model_copy(
        update={"target": f"{package}.tools:send_mail"})}
    result = run(package, scenario.model_copy(update={"tools": tools}))
    assert result.status == "pass", result.failed_verdicts
    assert result.side_effects == {"mail": 1}


def test_a_blocking_target_whose_reply_is_lost_raises_a_reset_after_its_effect(
        agent_packages: AgentPackages) -> None:
    # Seed 000 §4: the mail went out and the agent's code meets a dropped connection, as a
    # real SMTP or HTTP client does when the answer never comes.
    package = _sync_agent(agent_packages)
    result = run(package, _mail_behaving(package, {"kind": "reply_lost"}))
    assert result.trace is not None
    assert [e.tool for e in result.trace.effects] == ["mail"]
    assert result.stop_reason == ("the agent raised ToolReplyLost: mail: the connection was "
                                  "reset after the request was sent; no answer came back")
