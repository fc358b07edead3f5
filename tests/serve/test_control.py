"""The control API a test drives at run time: faults and rates, the agent's life and a kill,
the request journal, reset, each scoped to a test id; every call through the served app in
process (the door included), and the README's example of each call run as written."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import string
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from starlette.testclient import TestClient

from harness.scenario import load_scenario
from harness.serve import ServedWorld, Worlds, build_app, serving
from harness.serve._trace import served_trace

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "scenarios" / "exec-mail-once.yaml"
TOKEN = "control-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MAIL = {"to": "cfo@example.com", "body": "invoice 7"}
URL = "http://127.0.0.1:8000"


@pytest.fixture
def served() -> TestClient:
    loaded = load_scenario(SCENARIO)
    worlds = Worlds([loaded], lambda s: ServedWorld(s, seed=s.seed, time_scale=0.01))
    # Not entered: the lifespan (MCP's session manager) is not needed by these calls.
    # A request a dead process sends is dropped unanswered, which TestClient reports as a 500.
    return TestClient(build_app(worlds, TOKEN), base_url=URL, raise_server_exceptions=False)


def chat(client: TestClient, messages: list[dict[str, Any]], test: str | None = None,
         **headers: str) -> Any:
    sent = {"x-harness-test": test} if test else {}
    return client.post("/v1/chat/completions", headers={**sent, **headers},
                       json={"model": "gpt-4.1", "messages": messages, "stream": False})


GO = [{"role": "user", "content": "mail the CFO"}]


def control(client: TestClient, verb: str, call: str, body: Any = None, /,
            **params: str) -> Any:
    return client.request(verb, "/_harness/" + call, headers=AUTH, params=params,
                            content=None if body is None else json.dumps(body))


def error_of(answer: Any) -> tuple[int, str]:
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert body["status"] == "error"
    return answer.status_code, body["error"]


# ----------------------------------------------------------------------- faults


def test_a_fault_armed_for_one_test_strikes_its_requests_only(served: TestClient) -> None:
    armed = control(served, "POST", "faults", {"test": "a", "faults": [
        {"kind": "http_error", "status": 503, "at": {"turn": 1}}]})
    assert armed.status_code == 200
    assert armed.json()["armed"] == [{"kind": "http_error", "status": 503,
                                      "at": {"turn": 1, "attempt": 1}}]
    assert chat(served, GO, test="a").status_code == 503
    assert chat(served, GO, test="b").status_code == 200  # another test: its own world
    assert chat(served, GO).status_code == 200  # no test id: the default scope
    assert chat(served, GO, test="a").status_code == 200  # attempt 2 of turn 1: not armed
    records = control(served, "GET", "requests", test="a").json()
    assert [(r["attempt"], r["status"], r["faults"]) for r in records] == [
        (1, 503, ["http_error"]), (2, 200, [])]
    assert control(served, "GET", "faults", test="b").json()["armed"] == []


def test_faults_switch_at_run_time(served: TestClient) -> None:
    first = {"kind": "http_error", "status": 429, "at": {"turn": 1}}
    control(served, "POST", "faults", {"faults": [first]})
    then = {"kind": "http_error", "status": 500, "at": {"turn": 1}}
    switched = control(served, "POST", "faults", {"faults": [then], "replace": True}).json()
    assert [f["status"] for f in switched["armed"]] == [500]
    assert chat(served, GO).status_code == 500
    control(served, "POST", "faults", {"faults": [{**then, "at": {"turn": 1, "attempt": 2}}]})
    assert control(served, "DELETE", "faults").json() == {"test": None, "armed": [], "rates": []}
    assert chat(served, GO).status_code == 200  # switched off before attempt 2


def statuses_under_a_rate(served: TestClient, test: str) -> list[int]:
    control(served, "POST", "faults", {"test": test, "rates": [
        {"rate": 0.5, "fault": {"kind": "http_error", "status": 503}}]})
    return [chat(served, GO, test=test).status_code for _ in range(12)]


def test_a_seeded_rate_strikes_the_same_requests_in_every_run(served: TestClient) -> None:
    once = statuses_under_a_rate(served, "first")
    control(served, "POST", "reset", {"test": "first"})
    again = statuses_under_a_rate(served, "first")
    assert once == again
    assert set(once) == {200, 503}, once  # a rate, not always nor never
    always = control(served, "POST", "faults", {"test": "every", "rates": [
        {"rate": 1, "fault": {"kind": "http_error", "status": 429}, "from_turn": 1}]})
    assert always.json()["rates"][0]["rate"] == 1.0
    assert {chat(served, GO, test="every").status_code for _ in range(3)} == {429}


@pytest.mark.parametrize(("body", "status", "words"), [
    ({"faults": [{"kind": "stampede", "at": {"turn": 1}}]}, 400, "faults[0]"),
    ({"faults": [{"kind": "http_error", "status": 99, "at": {"turn": 1}}]}, 400, "status"),
    ({"faults": [{"kind": "http_error", "status": 503}]}, 400, "at"),
    ({"faults": {"kind": "http_error"}}, 400, "'faults': got dict; expected a list"),
    ({"rates": [{"rate": 2, "fault": {"kind": "http_error", "status": 503}}]}, 400,
     "0 < rate <= 1"),
    ({"rates": [{"rate": 0.5, "fault": {"kind": "http_error", "status": 503,
                                        "at": {"turn": 1}}}]}, 400, "leave out 'at'"),
    ({"faults": [], "colour": "red"}, 400, "no field 'colour'"),
    ({}, 400, "give 'faults' or 'rates'"),
    ({"test": "no spaces please", "faults": []}, 400, "test id"),
    ([1, 2], 400, "JSON object"),
])
def test_bad_faults_get_a_4xx_naming_the_field(served: TestClient, body: Any, status: int,
                                               words: str) -> None:
    got_status, message = error_of(control(served, "POST", "faults", body))
    assert got_status == status
    assert words in message, message
    assert control(served, "GET", "faults").json()["armed"] == []  # nothing half-armed


def test_a_fault_for_a_request_already_served_is_a_409(served: TestClient) -> None:
    chat(served, GO)
    status, message = error_of(control(served, "POST", "faults", {"faults": [
        {"kind": "http_error", "status": 503, "at": {"turn": 1}}]}))
    assert status == 409
    assert "turn 1 attempt 1 was already served" in message


def test_a_bad_test_header_is_a_400(served: TestClient) -> None:
    status, message = error_of(chat(served, GO, **{"x-harness-test": "a b"}))
    assert status == 400
    assert "the x-harness-test header: got 'a b'; expected a test id" in message


# ----------------------------------------------------------------------- the agent's life


def tool_call_of(answer: Any) -> dict[str, Any]:
    call = answer.json()["choices"][0]["message"]["tool_calls"][0]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def run_mail_agent(served: TestClient, test: str | None = None) -> list[dict[str, Any]]:
    """A well-behaved agent over HTTP: turn 1 asks to mail, the tool runs, turn 2 says done."""
    headers = {"x-harness-test": test} if test else {}
    asked = tool_call_of(chat(served, GO, test))
    result = served.post("/_harness/tools/mail", json=MAIL, headers=headers).json()
    call_id = asked["tool_calls"][0]["id"]
    messages = [*GO, asked, {"role": "tool", "tool_call_id": call_id,
                             "content": json.dumps(result)}]
    final = chat(served, messages, test).json()["choices"][0]["message"]
    assert final["content"] == "Sent."
    return messages


def test_plain_serve_gives_a_clean_pass_once_the_agent_marks_its_exit(
        served: TestClient) -> None:
    control(served, "POST", "agent", {"event": "start"})
    run_mail_agent(served)
    before = control(served, "GET", "verdicts").json()
    assert before["passed"] is False  # still running: no outcome yet
    marked = control(served, "POST", "agent", {"event": "exit", "code": 0}).json()
    assert marked["processes"] == [{"number": 1, "killed_at": None, "exit_code": 0}]
    after = control(served, "GET", "verdicts").json()
    assert (after["passed"], after["status"]) == (True, "pass"), after["verdicts"]
    assert {v["invariant"]: v["status"] for v in after["verdicts"]}["outcome"] == "pass"


def test_a_non_zero_exit_is_a_clean_fail(served: TestClient) -> None:
    control(served, "POST", "agent", {"event": "start", "test": "t"})
    run_mail_agent(served, "t")
    control(served, "POST", "agent", {"event": "exit", "code": 3, "test": "t"})
    verdicts = control(served, "GET", "verdicts", test="t").json()
    assert (verdicts["passed"], verdicts["test"]) == (False, "t")
    assert control(served, "GET", "verdicts").json()["verdicts"] != verdicts["verdicts"]


def test_the_served_trace_holds_the_stop_sequences_the_agent_asked_for() -> None:
    # I8 reads an answer's text with a stop sequence put back as that answer's own; an
    # agent behind the server is judged by the ones its requests asked for, as one in the
    # harness's worker is (tests/serve/test_exec_stop_sequences.py: the whole story).
    worlds = Worlds([load_scenario(SCENARIO)],
                    lambda s: ServedWorld(s, seed=s.seed, time_scale=0.01))
    client = TestClient(build_app(worlds, TOKEN), base_url=URL, raise_server_exceptions=False)
    for stop in (["Observation:", "<end_code>"], "Observation:"):
        answer = client.post("/v1/chat/completions", json={
            "model": "gpt-4.1", "messages": GO, "stream": False, "stop": stop})
        assert answer.status_code == 200, answer.text
    scope = worlds.scope(None)
    trace = served_trace(scope.world, scope.case(), scope.runs)
    assert trace.extra.stop_sequences == ("Observation:", "<end_code>")


@pytest.fixture
def victim() -> Iterator[subprocess.Popen[bytes]]:
    """A process standing in for the agent: the armed kill must end it."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                               start_new_session=True)
    yield process
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def test_an_armed_kill_kills_the_agent_and_its_restart_is_judged(
        served: TestClient, victim: subprocess.Popen[bytes]) -> None:
    control(served, "POST", "agent", {"event": "start", "pid": victim.pid, "group": True})
    assert control(served, "POST", "kill", {"at": "after_tool:mail#1"}).json()["kill_at"] \
        == "after_tool:mail#1"
    asked = tool_call_of(chat(served, GO))
    killed = served.post("/_harness/tools/mail", json=MAIL)
    assert killed.status_code == 599  # the answer never reaches the killed process
    assert victim.wait(timeout=10) == -signal.SIGKILL
    chat(served, GO)  # a request from the dead process is not served
    assert control(served, "GET", "requests").json()[-1]["status"] == 599
    status, message = error_of(control(served, "POST", "agent", {"event": "exit", "code": 0}))
    assert status == 409
    assert "was killed at after_tool:mail#1" in message
    control(served, "POST", "agent", {"event": "restart"})
    # The restarted agent reads its journal: the mail's outcome is unknown, so it looks.
    call_id = asked["tool_calls"][0]["id"]
    unknown = [*GO, asked, {"role": "tool", "tool_call_id": call_id,
                            "content": json.dumps({"error": "TOOL_OUTCOME_UNKNOWN"})}]
    look = tool_call_of(chat(served, unknown))
    assert look["tool_calls"][0]["function"]["name"] == "outbox"
    outbox = served.post("/_harness/tools/outbox", json={}).json()
    done = chat(served, [*unknown, look, {"role": "tool", "content": json.dumps(outbox),
                                          "tool_call_id": look["tool_calls"][0]["id"]}])
    assert "not sending it again" in done.json()["choices"][0]["message"]["content"]
    control(served, "POST", "agent", {"event": "exit", "code": 0})
    verdicts = control(served, "GET", "verdicts").json()
    assert verdicts["passed"] is True, verdicts["verdicts"]
    processes = control(served, "POST", "agent", {"event": "start"})
    assert processes.status_code == 200  # a next process may start after a clean exit


@pytest.mark.parametrize(("path", "body", "status", "words"), [
    ("agent", {"event": "pause"}, 400,
     "'event': got 'pause'; expected one of start, exit, restart"),
    ("agent", {"event": "exit"}, 400, "'code': got None; expected the process's exit code"),
    ("agent", {"event": "start", "pid": "me"}, 400,
     "'pid': got 'me'; expected the agent's process id"),
    ("agent", {"event": "restart"}, 409, "no process has run yet"),
    ("kill", {}, 400, "give 'at'"),
    ("kill", {"at": "journal:fsync#1"}, 400, "'at': got 'journal:fsync#1'; expected a world event"),
    ("kill", {"at": "after_tool:mail#1", "when": "now"}, 400, "no field 'when'"),
])
def test_bad_agent_marks_and_kills_get_a_4xx(served: TestClient, path: str, body: Any,
                                             status: int, words: str) -> None:
    got_status, message = error_of(control(served, "POST", path, body))
    assert got_status == status
    assert words in message, message


def test_a_second_start_while_one_runs_and_a_kill_already_passed_are_409(
        served: TestClient) -> None:
    control(served, "POST", "agent", {"event": "start"})
    assert error_of(control(served, "POST", "agent", {"event": "start"}))[0] == 409
    chat(served, GO)
    status, message = error_of(control(served, "POST", "kill", {"at": "before_request:1"}))
    assert (status, "already reached" in message) == (409, True)


# ----------------------------------------------------------------------- journal


def test_the_journal_keeps_headers_and_bodies_with_secrets_redacted(served: TestClient) -> None:
    chat(served, GO, **{"Authorization": "Bearer sk-live-123456", "x-api-key": "sk-ant-99"})
    served.post("/_harness/tools/mail?key=AIza-secret", json=MAIL,
                headers={"x-harness-test": "t"})
    control(served, "GET", "ledger")  # control calls are not the agent's: not journalled
    page = control(served, "GET", "journal").json()
    assert page["total"] == 2
    first, second = page["entries"]
    assert first["headers"]["authorization"] == "[redacted]"
    assert first["headers"]["x-api-key"] == "[redacted]"
    assert first["body"]["messages"] == GO
    assert (first["status"], first["test"]) == (200, None)
    assert '"tool_calls"' in first["response_body"]
    assert "sk-live" not in json.dumps(page)
    assert "AIza" not in json.dumps(page)
    assert (second["path"], second["query"], second["test"]) == (
        "/_harness/tools/mail", {"key": "[redacted]"}, "t")
    assert second["body"] == MAIL


def test_the_journal_filters_and_pages(served: TestClient) -> None:
    control(served, "POST", "faults", {"test": "a", "faults": [
        {"kind": "http_error", "status": 503, "at": {"turn": 1}}]})
    for _ in range(3):
        chat(served, GO, test="a")
    served.post("/_harness/tools/outbox", json={}, headers={"x-harness-test": "b"})
    assert control(served, "GET", "journal", status="503").json()["total"] == 1
    assert control(served, "GET", "journal", test="b").json()["total"] == 1
    assert control(served, "GET", "journal", path="/_harness/tools/*").json()["total"] == 1
    assert control(served, "GET", "journal", method="post", path="/v1/chat/completions",
                   test="a").json()["total"] == 3
    page = control(served, "GET", "journal", limit="2").json()
    assert (len(page["entries"]), page["next_offset"]) == (2, 2)
    rest = control(served, "GET", "journal", limit="2", offset="2").json()
    assert ([e["seq"] for e in rest["entries"]], rest["next_offset"]) == ([3, 4], None)


@pytest.mark.parametrize(("params", "words"), [
    ({"limit": "0"}, "?limit=: got '0'; expected a whole number from 1 to 1000"),
    ({"status": "abc"}, "?status="),
    ({"colour": "red"}, "no ?colour="),
    ({"test": "a b"}, "test id"),
])
def test_bad_journal_queries_get_a_400(served: TestClient, params: dict[str, str],
                                       words: str) -> None:
    status, message = error_of(control(served, "GET", "journal", **params))
    assert status == 400
    assert words in message, message


# ----------------------------------------------------------------------- reset


def test_reset_of_one_test_leaves_the_others_alone(served: TestClient) -> None:
    for test in ("a", "b"):
        control(served, "POST", "faults", {"test": test, "faults": [
            {"kind": "http_error", "status": 503, "at": {"turn": 2}}]})
        chat(served, GO, test=test)
    assert control(served, "POST", "reset", {"test": "a"}).json() == {
        "active": "exec-mail-once", "test": "a"}
    assert control(served, "GET", "requests", test="a").json() == []
    assert control(served, "GET", "faults", test="a").json()["armed"] == []
    assert control(served, "GET", "journal", test="a").json()["total"] == 0
    assert len(control(served, "GET", "requests", test="b").json()) == 1
    assert len(control(served, "GET", "faults", test="b").json()["armed"]) == 1
    assert control(served, "GET", "journal", test="b").json()["total"] == 1


def test_control_calls_need_the_token(served: TestClient) -> None:
    for method, path in CONTROL_CALLS:
        answer = served.request(method, path, content="{}")
        assert error_of(answer)[0] == 401, path


@pytest.mark.system
def test_an_mcp_tool_call_counts_in_the_world_of_the_test_it_names() -> None:
    async def call(url: str) -> Any:
        headers = {"x-harness-test": "over-mcp"}
        async with create_mcp_http_client(headers=headers) as http, \
                streamable_http_client(url, http_client=http) as (read, write, *_), \
                ClientSession(read, write) as session:
            await session.initialize()
            return await session.call_tool("mail", MAIL)

    with serving([SCENARIO], time_scale=0.01) as server:
        result = asyncio.run(call(server.env["HARNESS_MCP_URL"]))
        assert not result.is_error
        assert server.worlds.world.ledger.effects == []  # not the default world's
        assert [e.tool for e in server.worlds.scope("over-mcp").world.ledger.effects] == ["mail"]


# ----------------------------------------------------------------------- the README


CONTROL_CALLS = [("GET", "/_harness"), ("GET", "/_harness/requests"),
                 ("GET", "/_harness/ledger"), ("GET", "/_harness/verdicts"),
                 ("POST", "/_harness/reset"), ("GET", "/_harness/faults"),
                 ("POST", "/_harness/faults"), ("DELETE", "/_harness/faults"),
                 ("POST", "/_harness/agent"), ("POST", "/_harness/kill"),
                 ("GET", "/_harness/journal")]


def readme_examples(url: str, token: str) -> list[list[str]]:
    """The ``curl`` commands of the README's control API section, as argument lists, with
    the shell's variables (``$HARNESS_URL``, ``$HARNESS_TOKEN``, ``H=…``) filled in."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("**The control API.**"):text.index("**Strangers are refused.**")]
    variables = {"HARNESS_URL": url, "HARNESS_TOKEN": token}
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for command in shell_commands(block.replace("\\\n", " ")):
            argv = [string.Template(arg).substitute(variables) for arg in command]
            if len(argv) == 1 and re.fullmatch(r"[A-Z_]+=.*", argv[0]):
                name, _, value = argv[0].partition("=")
                variables[name] = value
            elif argv and argv[0] == "curl":
                commands.append(argv)
            elif argv:
                raise AssertionError(f"the README's example runs {argv[0]!r}; only curl here")
    return commands


def shell_commands(block: str) -> Iterator[list[str]]:
    """Each command of a shell block: a line, or more while a quote is open."""
    pending = ""
    for line in block.splitlines(keepends=True):
        pending += line
        try:
            argv = shlex.split(pending, comments=True)
        except ValueError:  # a quote still open: the command goes on
            continue
        pending = ""
        yield argv
    assert not pending.strip(), f"an unclosed quote in the README: {pending!r}"


def as_request(argv: list[str], url: str) -> tuple[str, str, dict[str, str], str | None]:
    """(method, path and query, headers, body) of a ``curl -s [-X M] [-H H]… [-d D] URL``."""
    method, headers, body, target = None, {}, None, None
    args = iter(argv[1:])
    for arg in args:
        if arg == "-s":
            continue
        if arg == "-X":
            method = next(args)
        elif arg == "-H":
            name, _, value = next(args).partition(":")
            headers[name.strip()] = value.strip()
        elif arg == "-d":  # as curl sends it: a form's content type, the bytes as given
            body = next(args)
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        elif arg.startswith(url):
            target = arg.removeprefix(url)
        else:
            raise AssertionError(f"the README's curl uses {arg!r}, which this test cannot run")
    assert target is not None, argv
    return method or ("POST" if body is not None else "GET"), target, headers, body


def test_every_control_call_has_a_readme_example_that_runs(served: TestClient) -> None:
    run_the_readme_examples(served)


@pytest.mark.system
def test_the_readme_examples_run_against_a_real_server() -> None:
    with serving([SCENARIO], time_scale=0.01) as server, \
            httpx.Client(base_url=server.url, timeout=30) as client:
        run_the_readme_examples(client, server.url, server.token)


def run_the_readme_examples(client: httpx.Client, url: str = URL, token: str = TOKEN) -> None:
    examples = [as_request(argv, url) for argv in readme_examples(url, token)]
    shown = {(method, target.split("?")[0]) for method, target, _, _ in examples}
    assert set(CONTROL_CALLS) <= shown, set(CONTROL_CALLS) - shown
    for method, target, headers, body in examples:
        answer = client.request(method, target, headers=headers, content=body)
        assert answer.status_code == 200, (method, target, answer.text)
        answer.json()
    auth = {"Authorization": f"Bearer {token}"}
    verdicts = client.get("/_harness/verdicts?test=test_mail_once", headers=auth).json()
    assert verdicts["test"] == "test_mail_once"


def test_a_served_agent_in_another_dialect_fails_the_dialect_check() -> None:
    # The served world answers another dialect's path 404 and records it; the trace
    # writer carries it, so the case fails "dialect" with its advice rather than proving
    # nothing, as an agent in the harness's worker does.
    worlds = Worlds([load_scenario(SCENARIO)],
                    lambda s: ServedWorld(s, seed=s.seed, time_scale=0.01))
    client = TestClient(build_app(worlds, TOKEN), base_url=URL, raise_server_exceptions=False)
    answer = client.post("/v1/messages", json={
        "model": "claude", "max_tokens": 10, "messages": [{"role": "user", "content": "go"}]})
    assert answer.status_code == 404, answer.text
    scope = worlds.scope(None)
    trace = served_trace(scope.world, scope.case(), scope.runs)
    assert trace.extra.misdialed_requests == ("POST /v1/messages (anthropic)",)
    verdicts = control(client, "GET", "verdicts").json()["verdicts"]
    dialect = next(v for v in verdicts if v["invariant"] == "dialect")
    assert dialect["status"] == "fail"
    assert dialect["message"].startswith("this scenario speaks openai; the agent sent 1 "
                                         "request(s) in another dialect")


def test_a_tool_that_loses_its_reply_closes_the_connection_after_its_effect() -> None:
    # Seed 000 §4: the request went out, its answer never came; the agent's HTTP client
    # sees a dropped connection, and the outbox holds the mail all the same.
    loaded = load_scenario(ROOT / "scenarios" / "tools" / "mail-reply-lost.yaml")
    worlds = Worlds([loaded], lambda s: ServedWorld(s, seed=s.seed, time_scale=0.01))
    client = TestClient(build_app(worlds, TOKEN), base_url=URL, raise_server_exceptions=False)
    lost = client.post("/_harness/tools/send_mail", json=MAIL)
    assert lost.status_code == 599  # closed without an answer
    outbox = client.post("/_harness/tools/check_outbox", json={}).json()
    assert outbox["outbox"] == [MAIL]
