"""Agents on the mainstream frameworks, unchanged, run as a user runs them: every verdict.

Each example of ``examples/frameworks`` runs its folder of five scenarios with
``harness run FOLDER --agent examples.frameworks.MODULE:main --check-determinism``
in a process of its own, from an empty working folder. Every case's verdict is
asserted, passes and failures alike, with the checks that failed: each is what
the framework really does (``examples/frameworks/README.md`` says why), and none
comes from the harness (no ``network``, no wrong clock, no leaked database). The
working folder is still empty afterwards, and each case ran twice alike.

The frameworks are the ``frameworks`` extra; ``.ci/run`` installs it and sets
``HARNESS_REQUIRE_FRAMEWORKS=1``, so there a missing framework fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_node_packages

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "examples" / "frameworks" / "scenarios"
NODE_FRAMEWORKS = ROOT / "examples" / "node_frameworks"
CRASH = "[after_tool:{tool}#1:at:process_killed]"
SENT_TWICE = ("fail", ("I1", "I3", "side_effects"))
WAITED_OUT_THE_STALL = ("fail", ("S1",))
STOPPED_ON_THE_CUT = ("fail", ("I4", "side_effects"))
REGENERATED = ("pass", ())
# No retry by default (litellm's own clients, google-genai under pydantic-ai): the 429
# ends the run, stopped usage_limited.
GAVE_UP_ON_THE_429 = ("fail", ("I4", "side_effects"))
# invoke(prompt) on a thread whose checkpoint holds a call without its result:
# INVALID_CHAT_HISTORY on every restart; the mail went once.
WEDGED_THREAD = ("fail", ("I4",))


PASSED = ("pass", ())
# A tool whose connection resets after the mail went out (reply_lost): the framework tells
# the model the call failed ("Please try again"), and the model sends it again ...
SENT_AGAIN_AFTER_A_LOST_REPLY = ("fail", ("I1", "side_effects"))
# ... or lets the ConnectionResetError out of the run, which ends there: the mail went once.
RAISED_THE_RESET = ("fail", ("I4",))


def verdicts(crash_after_send: tuple[str, tuple[str, ...]],
             truncated: tuple[str, tuple[str, ...]], *,
             stall: tuple[str, tuple[str, ...]] = WAITED_OUT_THE_STALL,
             rate_limited: tuple[str, tuple[str, ...]] = PASSED,
             tool: str = "send_mail",
             reply_lost: tuple[str, tuple[str, ...]] | None = None,
             ) -> dict[str, tuple[str, tuple[str, ...]]]:
    """The five scenarios' cases: what differs between frameworks is named, the rest alike
    (``tool``: the mail tool's name as the framework offers it); ``reply_lost``: the verdict
    of the sixth, for a framework whose folder has it."""
    lost = {} if reply_lost is None else {"reply-lost": reply_lost}
    return {**lost,
        "crash-after-send": PASSED,
        "crash-after-send" + CRASH.format(tool=tool): crash_after_send,
        "no-fault": PASSED,
        "rate-limited": rate_limited,  # the clients honour Retry-After: 20 (not ADK's)
        "stall": stall,  # 600 s default read timeouts, no idle watchdog (not Haystack's)
        "truncated-arguments": truncated,
    }


# module: (package it needs, the verdict of each case)
FRAMEWORKS = {
    # The plain SDK example's own loop does not catch a tool's exception.
    "openai_sdk": ("openai", verdicts(SENT_TWICE, STOPPED_ON_THE_CUT,
                                      reply_lost=RAISED_THE_RESET)),
    # default_tool_error_function answers any tool exception "An error occurred while
    # running the tool. Please try again." (agents/tool.py).
    "openai_agents_sdk": ("agents", verdicts(SENT_TWICE, STOPPED_ON_THE_CUT,
                                             reply_lost=SENT_AGAIN_AFTER_A_LOST_REPLY)),
    # ToolNode's default handle_tool_errors answers only a ToolInvocationError and raises
    # the rest (langgraph/prebuilt/tool_node.py, _default_handle_tool_errors).
    "langgraph_agent": ("langgraph", verdicts(WEDGED_THREAD, STOPPED_ON_THE_CUT,
                                              reply_lost=RAISED_THE_RESET)),
    # ChatAnthropic reads a cut call's input as {}: the tools node refuses it (the
    # function's schema), the error goes back, and the regenerated call sends once.
    "langgraph_anthropic_agent": ("langchain_anthropic", verdicts(WEDGED_THREAD, REGENERATED)),
    # LangChain 1.x's create_agent routes on tool_calls as create_react_agent does (the cut
    # call is in invalid_tool_calls: the run ends on it). Its AsyncSqliteSaver commits the
    # model's call after the tool ran (durability "async"): the restart sends again.
    "langchain_agent": ("langchain", verdicts(SENT_TWICE, STOPPED_ON_THE_CUT)),
    # ToolCallingAgent.execute_tool_call turns any exception into "Error executing tool …
    # Please try again or use another tool" for the model (smolagents/agents.py).
    "smolagents_agent": ("smolagents", verdicts(SENT_TWICE, REGENERATED,
                                                reply_lost=SENT_AGAIN_AFTER_A_LOST_REPLY)),
    # CodeAgent's calls are Python code in the answer's text, run by its local executor:
    # the harness sees no call of its own (I3 unknown), and the restart, its memory gone
    # with the process, sends again. It closes its code block with the "</code>" the API
    # stopped at (I8 reads it as the answer's). No fault cuts a text answer: no
    # cut-arguments scenario.
    "smolagents_code_agent": ("smolagents", {name: verdict for name, verdict in verdicts(
        ("fail", ("I1", "side_effects")), PASSED).items() if name != "truncated-arguments"}),
    "litellm_agent": ("litellm", verdicts(SENT_TWICE, STOPPED_ON_THE_CUT)),
    # litellm's anthropic/ and gemini/ clients are its own (no SDK's retries underneath):
    # num_retries unset, no retry. Streamed, a cut call's JSON fails json.loads; Gemini's
    # answer cut at MAX_TOKENS holds no call, and the loop ends on it.
    "litellm_anthropic_agent": ("litellm", verdicts(SENT_TWICE, STOPPED_ON_THE_CUT,
                                                    rate_limited=GAVE_UP_ON_THE_429)),
    "litellm_gemini_agent": ("litellm", verdicts(SENT_TWICE, STOPPED_ON_THE_CUT,
                                                 rate_limited=GAVE_UP_ON_THE_429)),
    # google-genai's automatic function calling: no retry_options by default (the 429 ends
    # the run), no read timeout; a Gemini answer cut at MAX_TOKENS has no call, and
    # generate_content returns it; nothing is kept between runs, so the restart sends again.
    "google_genai_agent": ("google.genai", verdicts(SENT_TWICE, STOPPED_ON_THE_CUT,
                                                    rate_limited=GAVE_UP_ON_THE_429)),
    # Only ModelRetry (and a failed validation) goes back to the model; any other
    # exception of a tool ends the run (pydantic_ai/tool_manager.py).
    "pydantic_ai_agent": ("pydantic_ai", verdicts(SENT_TWICE, REGENERATED,
                                                  reply_lost=RAISED_THE_RESET)),
    # FallbackModel, fallback_on left at its default (ModelAPIError, which a 400's
    # ModelHTTPError is): the first model down, each request goes to the second after the
    # openai client's two retries (retry:backup passes); on a 400 it goes there at once, a
    # bad request sent again to another model (retry:backup and S5:4xx fail it).
    "pydantic_ai_fallback_agent": ("pydantic_ai", {
        "primary-down": PASSED,
        "bad-request": ("fail", ("I4", "S5:4xx", "retry:backup", "side_effects"))}),
    "pydantic_ai_anthropic_agent": ("pydantic_ai", verdicts(SENT_TWICE, REGENERATED)),
    # pydantic-ai with DBOS (DBOSDurability, the tools DBOS steps): a step's output is
    # recorded once the step returns (dbos/_core.py, invoke_step's record_step_result), so
    # the crash right after the send leaves none; the restart's launch() re-enqueues the
    # pending workflow, which replays the recorded model step and runs the send again.
    # The rest is pydantic-ai's own, as without DBOS.
    "pydantic_ai_dbos_agent": ("dbos", verdicts(SENT_TWICE, REGENERATED)),
    # GoogleProvider leaves google-genai's retry_options unset (no retry); a response cut
    # at MAX_TOKENS with no call raises OutputTokenLimitExceeded.
    "pydantic_ai_google_agent": ("pydantic_ai", verdicts(SENT_TWICE, STOPPED_ON_THE_CUT,
                                                         rate_limited=GAVE_UP_ON_THE_429)),
    "anthropic_tool_runner": ("anthropic", verdicts(SENT_TWICE, STOPPED_ON_THE_CUT)),
    "llamaindex_agent": ("llama_index", verdicts(SENT_TWICE, REGENERATED)),
    # reflect_on_tool_use: the cut call runs nowhere, and the reflection it asks for
    # finds no text: RuntimeError.
    "autogen_agent": ("autogen_agentchat", verdicts(SENT_TWICE, STOPPED_ON_THE_CUT)),

    # dspy.ReAct asks in its own text format, so the harness sees no call of its own (I3
    # unknown); the restart starts from the prompt and sends again (its disk cache, on the
    # case's disk, answers the repeated first request with the call). No fault cuts a
    # text answer: no cut-arguments scenario.
    "dspy_agent": ("dspy", {name: verdict for name, verdict in verdicts(
        ("fail", ("I1", "side_effects")), PASSED).items() if name != "truncated-arguments"}),
    # OpenAIChatGenerator's own 30 s timeout abandons the stall and retries; a call whose
    # arguments are not JSON is skipped, and the run ends on the cut answer.
    "haystack_agent": ("haystack", verdicts(SENT_TWICE, STOPPED_ON_THE_CUT,
                                            stall=PASSED)),
    # Agno answers a call whose arguments it cannot decode with its own error and runs
    # nothing; its SqliteDb stores the run only when it ends, so the restart sends again.
    "agno_agent": ("agno", verdicts(SENT_TWICE, REGENERATED)),
    # Microsoft Agent Framework reads cut arguments as {"raw": ...}, which the function's
    # schema refuses before it runs; its FileHistoryProvider writes the run's messages when
    # the run ends, so the restart starts from the prompt and sends again.
    "agent_framework_agent": ("agent_framework", verdicts(SENT_TWICE, REGENERATED)),
}

# The virtual seconds of a case, where they say the framework's threads kept the case's
# clock: DBOS's queue worker, which runs the recovered workflow, polls every second (with
# DBOS's jitter, seeded), and main's wait for the workflow's result polls every second: the
# re-sent mail and the answer come after the worker's first poll, as in a process. On the
# real clock, the loop's polls raced ahead while the worker waited: minutes, never twice
# the same.
VIRTUAL_SECONDS = {
    "pydantic_ai_dbos_agent": {"crash-after-send" + CRASH.format(tool="send_mail"): 1.0},
}


# Frameworks that do not install beside this project's pins, each run by the Python of an
# environment of its own (examples/frameworks/README.md), named by the variable beside it;
# .ci/run makes that environment and sets the variable. Without it the framework is
# required in this one, as the others are (a failure under HARNESS_REQUIRE_FRAMEWORKS=1).
OWN_ENVIRONMENT_PYTHON = {"google_adk_agent": "HARNESS_GOOGLE_ADK_PYTHON",
                          "semantic_kernel_agent": "HARNESS_SEMANTIC_KERNEL_PYTHON",
                          "strands_agent": "HARNESS_STRANDS_PYTHON"}
OWN_ENVIRONMENT = {
    # semantic-kernel 1.45 pins mcp<2, 1.44 pydantic<2.14. Its plugin's tools are offered
    # as MailPlugin-send_mail; Kernel.invoke_function_call refuses the cut call with its own
    # reply; the thread lives in the process, so the restart sends again.
    "semantic_kernel_agent": ("semantic_kernel", verdicts(
        SENT_TWICE, REGENERATED, tool="MailPlugin-send_mail")),
    # strands-agents 1.65 moves opentelemetry-api back. Its FileSessionManager keeps the
    # call; the restart answers it "Tool was interrupted." and the mail went once. A cut
    # answer ends the run on MaxTokensReachedException, nothing sent.
    "strands_agent": ("strands", verdicts(PASSED, STOPPED_ON_THE_CUT)),
    # google-adk pins google-genai<3, the test extra google-genai>=3.6. No retry by default
    # (the 429 ends the run usage_limited); the restart drops the call the crash cut off
    # from its session's history, and the model, asked afresh, sends again; a Gemini
    # answer cut at MAX_TOKENS carries no call, and ADK ends on it.
    "google_adk_agent": ("google.adk", verdicts(
        SENT_TWICE, STOPPED_ON_THE_CUT, rate_limited=("fail", ("I4", "side_effects")))),
}


@pytest.mark.parametrize("module", sorted(FRAMEWORKS))
def test_every_verdict_is_what_the_framework_really_does(
        module: str, tmp_path: Path, require_framework: Callable[[str], None]) -> None:
    package, expected = FRAMEWORKS[module]
    require_framework(package)
    rows = run_and_check(module, expected, tmp_path)
    seconds = VIRTUAL_SECONDS.get(module, {})
    assert {case: rows[case]["virtual_seconds"] for case in seconds} == seconds


@pytest.mark.parametrize("module", sorted(OWN_ENVIRONMENT))
def test_every_verdict_of_a_framework_in_its_own_environment(
        module: str, tmp_path: Path, require_framework: Callable[[str], None]) -> None:
    package, expected = OWN_ENVIRONMENT[module]
    python = os.environ.get(OWN_ENVIRONMENT_PYTHON[module])
    if python is None:
        require_framework(package)
    run_and_check(module, expected, tmp_path, python or sys.executable)


# Agents on Node.js frameworks (examples/node_frameworks, `npm ci` there), each run as a
# process by `harness run --exec`, the tools reached over the harness's tool endpoint:
# module: (the script, the npm package it needs, the verdict of each case).
NODE = {
    # The Vercel AI SDK: fetch's 300 s body timeout waits the stall out; generateText's two
    # retries honour Retry-After; a call whose arguments do not parse is answered "Invalid
    # input for tool send_mail: JSON parsing failed: …" and not run, and the regenerated
    # call sends once; messages.json is written when the run ends, so the restart sends
    # again.
    "ai_sdk_agent": ("ai_sdk_agent.mjs", "ai", verdicts(SENT_TWICE, REGENERATED)),
    # LangGraph.js: ChatOpenAI sets no timeout, and the openai client's 10 minutes (to the
    # headers) and undici's 300 s body timeout wait the stall out; @langchain/core's
    # AsyncCaller retries the 429 after the Retry-After asked (up to 60 s); a cut call is
    # in invalid_tool_calls, so the graph's edge ends the run on it. SqliteSaver commits
    # the model's call before the tool runs (better-sqlite3 writes at once, in the
    # microtasks before the tool's fetch): the restart's prompt follows a call with no
    # result, the provider answers 400 and the process exits 1 on every restart, the mail
    # sent once.
    "langgraph_js_agent": ("langgraph_agent.mjs", "@langchain/langgraph", verdicts(
        ("fail", ("outcome", "process")), STOPPED_ON_THE_CUT)),
    # The OpenAI Agents SDK for JavaScript: the openai client's 10 minutes run until the
    # headers, and undici's 300 s body timeout waits the stall out; the client's own two
    # retries wait the Retry-After asked; a call whose arguments do not parse is answered
    # "An error occurred while parsing tool arguments. …" and not run, and the regenerated
    # call sends once; it ships no session that outlives the process, so the restart asks
    # afresh and sends again. Its tracing, on by default, posts to api.openai.com on exit:
    # the harness tells the process OPENAI_AGENTS_DISABLE_TRACING=1 (loopback only, below).
    "openai_agents_js_agent": ("openai_agents_agent.mjs", "@openai/agents",
                               verdicts(SENT_TWICE, REGENERATED)),
}
# Preloaded into every Node.js agent: a request to any host but the loopback exits the
# process with 97 and names it, so the case fails on it instead of reaching the network.
LOOPBACK_ONLY = Path(__file__).resolve().parent / "node_loopback_only.mjs"


@pytest.mark.parametrize("module", sorted(NODE))
def test_every_verdict_of_a_node_framework_run_as_a_process(module: str, tmp_path: Path) -> None:
    script, package, expected = NODE[module]
    require_node_packages(NODE_FRAMEWORKS, package)
    # The tool gateway the agent reads is the harness's tool endpoint; the prompt its argument.
    command = (f'TOOLS_URL="$HARNESS_TOOLS_URL" node --import "{LOOPBACK_ONLY}" '
               f'"{NODE_FRAMEWORKS / script}" "$HARNESS_PROMPT"')
    # Real time, read in scenario seconds: at 0.1 a 120 s stall lasts 12 s, and S1's 30 s
    # bound is 3 real seconds with a margin of 0.1, more than a loaded machine's hiccup.
    run_and_check(module, expected, tmp_path, agent=["--exec", command, "--time-scale", "0.1"])


def test_the_agents_sdk_for_javascript_traces_to_openai_unless_told_not_to(
        tmp_path: Path) -> None:
    """With its tracing turned back on in the command, the OpenAI Agents SDK's exporter posts
    the run's spans to api.openai.com as the process exits: the loopback-only preload
    refuses it and the case fails on it. The harness's OPENAI_AGENTS_DISABLE_TRACING=1 is
    what keeps the run above on the loopback."""
    require_node_packages(NODE_FRAMEWORKS, "@openai/agents")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    out = tmp_path / "results"
    command = (f'OPENAI_AGENTS_DISABLE_TRACING=0 TOOLS_URL="$HARNESS_TOOLS_URL" node --import '
               f'"{LOOPBACK_ONLY}" "{NODE_FRAMEWORKS / "openai_agents_agent.mjs"}" '
               '"$HARNESS_PROMPT"')
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run",
         str(SCENARIOS / "openai_agents_js_agent" / "no-fault.yaml"), "--exec", command,
         "--time-scale", "0.1", "--case-timeout", "600", "--out", str(out)],
        cwd=cwd, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    [row] = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    assert (row["passed"], row["stop_reason"]) == (False, "the agent process exited with 97")
    assert _sends(row) == 1  # the run itself went as in the uncrashed case; its exit did not
    assert "refused POST https://api.openai.com/v1/traces/ingest" in done.stdout


def test_no_crash_of_adk_ends_on_a_history_only_the_fake_would_make(
        tmp_path: Path, require_framework: Callable[[str], None]) -> None:
    """ADK crashed at every commit of its session database: each case ends as ADK really
    does (sent once, sent twice, or wedged on the schema version a crash left unwritten),
    none on Gemini's 400 for a function call without its response. Crashed between the
    commit of the model's call and the tool's run, the restart asks turn 1 with another
    conversation; given the stored call's id, ADK answered both calls with one response."""
    python = os.environ.get(OWN_ENVIRONMENT_PYTHON["google_adk_agent"])
    if python is None:
        require_framework("google.adk")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    out = tmp_path / "results"
    done = subprocess.run(
        [python or sys.executable, "-m", "harness", "run",
         str(SCENARIOS / "google_adk_agent" / "crash-after-send.yaml"),
         "--agent", "examples.frameworks.google_adk_agent:main", "--crash", "all-points",
         "--jobs", "1", "--out", str(out)],
        cwd=cwd, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    # Every commit, before and after: ADK 2.13 commits fourteen times, 2.15 seven. Which
    # commit stores the call moves between releases (2.13's #12, 2.15's #5), so the case
    # is found by how it ends, not by its number: on the old fakes it met the 400.
    assert len(rows) > 10
    assert not [r["case_id"] for r in rows if "function response parts" in r["stop_reason"]]
    assert {tuple(sorted(r["failed_invariants"])) for r in rows if not r["passed"]} <= {
        ("I1", "I3", "side_effects"), ("I4", "side_effects")}
    # The commit that stores the model's call is the last one before the send: the first
    # crash before a commit that finds the mail sent twice comes right after it. Crashed
    # after that commit, the restart asks turn 1 again and sends the mail once.
    stored = _commit_before_the_first_sent_twice(rows)
    after_it = [r for r in rows if r["case_id"].endswith(
        f"[sqlite:commit#{stored}:after:process_killed]")]
    assert [(r["passed"], _sends(r)) for r in after_it] == [(True, 1)], after_it


def test_dbos_crashed_at_every_commit_sends_twice_only_before_the_send_is_recorded(
        tmp_path: Path, require_framework: Callable[[str], None]) -> None:
    """pydantic-ai with DBOS crashed at every commit of its system database, each case run
    twice alike: a crash before the commit that records the send step's output re-runs the
    step on recovery (sent twice); after it, the recovered workflow replays the send from
    its record, and the mail went once. Every restart is done within DBOS's first poll."""
    require_framework("dbos")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    out = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run",
         str(SCENARIOS / "pydantic_ai_dbos_agent" / "crash-after-send.yaml"),
         "--agent", "examples.frameworks.pydantic_ai_dbos_agent:main", "--crash", "all-points",
         "--check-determinism", "--jobs", "1", "--case-timeout", "600", "--out", str(out)],
        cwd=cwd, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    assert len(rows) > 10
    failed = {r["case_id"]: tuple(sorted(r["failed_invariants"])) for r in rows
              if not r["passed"]}
    assert list(failed.values()) == [SENT_TWICE[1]], failed
    recorded = re.search(r"\[sqlite:commit#(\d+):before:", next(iter(failed)))
    assert recorded is not None, failed
    after_it = [r for r in rows if r["case_id"].endswith(
        f"[sqlite:commit#{recorded.group(1)}:after:process_killed]")]
    assert [(r["passed"], _sends(r)) for r in after_it] == [(True, 1)], after_it
    assert max(r["virtual_seconds"] for r in rows) <= 1.0
    assert sorted(os.listdir(cwd)) == []


def _sends(row: dict[str, Any]) -> int:
    return sum(e["count"] for e in row["side_effects"] if e["tool"] == "send_mail")


def _commit_before_the_first_sent_twice(rows: list[dict[str, Any]]) -> int:
    twice = [int(match.group(1)) for r in rows if _sends(r) == 2
             and (match := re.search(r"\[sqlite:commit#(\d+):before:", r["case_id"]))]
    assert twice, "no crash before a commit sent the mail twice"
    return min(twice) - 1


# Frameworks whose second run of a case, in the same worker, has been seen to differ from
# the first on a loaded machine, for a reason not yet found: each case runs once here, and
# examples/frameworks/README.md says what was seen. Every verdict is still asserted.
SECOND_RUN_UNSETTLED = {
    # CI, under the system tier's load, once in two runs: the uncrashed crash-after-send
    # case's second run made none of the first run's 19 SQLite commits (digests differ);
    # never seen in 30 runs on a quieter machine.
    "agno_agent",
}


def run_and_check(module: str, expected: dict[str, tuple[str, tuple[str, ...]]],
                  tmp_path: Path, python: str = sys.executable,
                  agent: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Run ``module``'s folder and assert every verdict; ``agent``: how the agent is given
    (``--exec`` and its options instead of ``--agent``, run once on real time). Returns
    each case's row of ``cases.jsonl``, by its name in ``expected``."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    out = tmp_path / "results"
    twice = [] if module in SECOND_RUN_UNSETTLED else ["--check-determinism"]
    how = agent or ["--agent", f"examples.frameworks.{module}:main", *twice, "--jobs", "1"]
    done = subprocess.run(
        [python, "-m", "harness", "run", str(SCENARIOS / module), *how,
         # A framework's import and run on a busy CI machine is slow honest work, not a hang.
         "--case-timeout", "600", "--out", str(out)],
        cwd=cwd, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    prefix = module.replace("_", "-") + "-"
    seen, rows = {}, {}
    for line in (out / "cases.jsonl").read_text().splitlines():
        row = json.loads(line)
        status = "pass" if row["passed"] else "fail"
        failed = tuple(sorted(row["failed_invariants"]))
        seen[row["case_id"].removeprefix(prefix)] = (status, failed)
        rows[row["case_id"].removeprefix(prefix)] = row
    assert seen == expected, done.stdout[-3000:]
    assert sorted(os.listdir(cwd)) == []  # no database, state file or cache left behind
    return rows
