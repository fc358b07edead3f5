"""The served fakes at the socket: separate reads for a split, an RST for a reset, the
control endpoint, the tools over plain HTTP and over MCP, and the ``serve`` command."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.client import Client

from fakes import Emit, IncomingRequest
from harness._cli import main
from harness.runner import World
from harness.scenario import Scenario, load_scenario
from harness.serve import serving

# System tier (pytest --system): real processes and servers on loopback.
pytestmark = pytest.mark.system

MAIL = {"to": "cfo@example.com", "body": "facture réglée — 日本"}


def scenario(tmp_path: Path, faults: list[dict[str, Any]], dialect: str = "openai") -> Scenario:
    listed = json.dumps([{"at": {"turn": 1, "attempt": 1}, **f} for f in faults])
    path = tmp_path / "served.yaml"
    path.write_text(f"""
name: served
dialect: {dialect}
seed: 3
tools: {{mail: {{kind: send}}, outbox: {{kind: inspect}}}}
model:
  - turn: 1
    text: "Voilà l'état — 日本語."
    calls: [{{tool: mail, args: {json.dumps(MAIL)}}}]
  - turn: 2
    text: "Sent."
faults: {listed}
expect: {{stop_state: complete, side_effects: {{mail: 1}}}}
""", encoding="utf-8")
    return load_scenario(path)


REQUEST = {"model": "m", "messages": [{"role": "user", "content": "go"}], "stream": True}


def raw_recvs(url: str, path: str, body: dict[str, Any], extra: str = "") -> list[bytes]:
    """POST over a bare socket; each ``recv`` of the response, head included, as read.
    ``extra``: more header lines, each ending in CRLF."""
    host, port = url.removeprefix("http://").split(":")
    data = json.dumps(body).encode()
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nhost: {host}:{port}\r\n"
                     f"{extra}content-type: application/json"
                     f"\r\ncontent-length: {len(data)}\r\nconnection: close\r\n\r\n".encode()
                     + data)
        reads: list[bytes] = []
        while chunk := sock.recv(65536):
            reads.append(chunk)
    return reads


def raw_reads(url: str, path: str, body: dict[str, Any], extra: str = ""
              ) -> tuple[bytes, list[bytes]]:
    """The response head and the body bytes each ``recv`` carried."""
    reads = raw_recvs(url, path, body, extra)
    head, _, _ = b"".join(reads).partition(b"\r\n\r\n")
    return head, _body_reads(reads, len(head) + 4)


def _body_reads(reads: list[bytes], skip: int) -> list[bytes]:
    """The de-chunked body bytes each read carried (a chunked frame may span reads)."""
    body = b"".join(reads)[skip:]
    frames = _chunks(body)
    payload = b"".join(body[start:start + size] for start, size in frames)
    read_ends = [end - skip for end in itertools.accumulate(map(len, reads)) if end > skip]
    cuts = sorted({sum(max(0, min(end - start, size)) for start, size in frames)
                   for end in read_ends})
    return [payload[a:b] for a, b in itertools.pairwise([0, *cuts]) if b > a]


def _boundaries(parts: list[bytes]) -> set[int]:
    """The byte offsets where one part ends and the next begins."""
    offsets, at = set(), 0
    for part in parts[:-1]:
        at += len(part)
        offsets.add(at)
    return offsets


def planned_emits(loaded: Scenario) -> list[bytes]:
    """The byte chunks the in-process fake plans for the first request."""
    provider = World(loaded, seed=loaded.seed).provider
    plan = provider.plan(IncomingRequest("POST", provider.endpoint, {},
                                         json.dumps(REQUEST).encode()))
    return [step.data for step in plan.steps if isinstance(step, Emit) and step.data]


def _chunks(body: bytes) -> list[tuple[int, int]]:
    """Each chunk of a chunked body: the offset of its payload in the body, and its size."""
    chunks: list[tuple[int, int]] = []
    at = 0
    while at < len(body):
        line_end = body.index(b"\r\n", at)
        chunks.append((line_end + 2, int(body[at:line_end], 16)))
        at = line_end + 2 + chunks[-1][1] + 2
    return chunks


def _frames(reads: list[bytes], skip: int) -> list[bytes]:
    """The payload of each chunk of a chunked body, the final empty one left out."""
    body = b"".join(reads)[skip:]
    return [body[start:start + size] for start, size in _chunks(body) if size]


def test_a_split_inside_a_utf8_character_is_sent_as_two_writes(tmp_path: Path) -> None:
    loaded = scenario(tmp_path, [{"kind": "split_inside_utf8"}])
    with serving([loaded]) as served:
        recvs = raw_recvs(served.url, "/v1/chat/completions", REQUEST)
    head, _, _ = b"".join(recvs).partition(b"\r\n\r\n")
    reads = _body_reads(recvs, len(head) + 4)
    assert head.startswith(b"HTTP/1.1 200")
    planned = planned_emits(loaded)
    assert b"".join(reads) == b"".join(planned)
    inside_a_character = {at for at in _boundaries(planned)
                          if not _decodes(b"".join(planned)[:at])}
    assert inside_a_character, "the plan cuts no UTF-8 character"
    # Each emit is its own write, one chunk on the wire, sent a gap apart. Which writes
    # a read joins is the client's and the kernel's affair: a reader that falls behind on
    # a loaded machine gets two writes in one read, so reads need only break where writes
    # did, and the writes themselves are seen as the chunks that carry them.
    assert _boundaries(reads) <= _boundaries(planned)
    assert _frames(recvs, len(head) + 4) == planned


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_a_reset_is_an_rst_not_an_orderly_close(tmp_path: Path) -> None:
    loaded = scenario(tmp_path, [{"kind": "connection_reset", "after_events": 2}])
    with serving([loaded]) as served, pytest.raises(ConnectionResetError):
        raw_reads(served.url, "/v1/chat/completions", REQUEST)


def test_a_reset_finds_its_connection_whatever_forwarding_headers_say(tmp_path: Path) -> None:
    """The server is no proxy's backend: X-Forwarded-For must not rename the client, or
    the reset looks its connection up under the wrong address and never sends the RST."""
    loaded = scenario(tmp_path, [{"kind": "connection_reset", "after_events": 2}])
    forwarded = "x-forwarded-for: 203.0.113.7\r\nx-forwarded-proto: https\r\n"
    with serving([loaded]) as served, pytest.raises(ConnectionResetError):
        raw_reads(served.url, "/v1/chat/completions", REQUEST, forwarded)


def test_a_stall_keeps_the_connection_open_for_the_scaled_time(tmp_path: Path) -> None:
    loaded = scenario(tmp_path, [{"kind": "stall", "after_events": 1, "seconds": 50}])
    with serving([loaded], time_scale=0.01) as served:
        started = time.monotonic()
        with httpx.stream("POST", served.url + "/v1/chat/completions", json=REQUEST,
                          timeout=5) as response:
            reads = [(time.monotonic() - started, chunk) for chunk in response.iter_raw()]
        record = served.world.request_records()[0]
    # 50 scenario seconds at 0.01: one silence of half a real second, the rest at once.
    # The bounds hold on a loaded machine: load only delays, so the floors are exact, and
    # the ceilings sit far below the unscaled stall (50 real seconds, 5,000 scaled ones).
    assert 0.45 <= reads[-1][0] < 20
    assert 45 <= record.longest_silence < 2_000
    assert record.delivery == "complete"


def test_the_control_endpoint_shows_requests_ledger_and_verdicts(tmp_path: Path) -> None:
    with serving([scenario(tmp_path, [])], time_scale=0.01) as served:
        url, token = served.url, served.control_headers
        httpx.post(url + "/v1/chat/completions", json=REQUEST).raise_for_status()
        (seen,) = httpx.get(url + "/_harness/requests", headers=token).json()
        assert (seen["turn"], seen["attempt"], seen["delivery"]) == (1, 1, "complete")
        for _ in range(2):
            assert httpx.post(url + "/_harness/tools/mail", json=MAIL).json()["sent"] is True
        ledger = httpx.get(url + "/_harness/ledger", headers=token).json()
        assert [e["tool"] for e in ledger["effects"]] == ["mail", "mail"]
        assert ledger["world"]["outbox"] == [MAIL, MAIL]
        verdicts = {v["invariant"]: v for v in httpx.get(url + "/_harness/verdicts",
                                                         headers=token).json()["verdicts"]}
        assert verdicts["I1"]["status"] == "fail"
        assert httpx.post(url + "/_harness/reset", json={}, headers=token).json() == {
            "active": "served"}
        assert httpx.get(url + "/_harness/requests", headers=token).json() == []
        assert httpx.get(url + "/_harness/ledger", headers=token).json()["effects"] == []


def test_bad_tool_calls_get_clear_answers(tmp_path: Path) -> None:
    with serving([scenario(tmp_path, [])]) as served:
        missing = httpx.post(served.url + "/_harness/tools/mial", json={})
        not_json = httpx.post(served.url + "/_harness/tools/mail", content=b"[1")
        reset = httpx.post(served.url + "/_harness/reset", json={"scenario": "other"},
                           headers=served.control_headers)
    assert missing.status_code == 404
    assert missing.json()["error"] == "no tool 'mial'; the scenario 'served' declares mail, outbox"
    assert not_json.status_code == 400
    assert reset.status_code == 404
    assert reset.json()["error"] == "no scenario 'other'; this server plays served"


def test_a_tool_called_over_mcp_is_counted_in_the_ledger(tmp_path: Path) -> None:
    async def call(url: str) -> tuple[list[str], Any]:
        async with Client(url) as client:
            listed = await client.list_tools()
            result = await client.call_tool("mail", MAIL)
            return [tool.name for tool in listed.tools], result

    with serving([scenario(tmp_path, [])]) as served:
        names, result = asyncio.run(call(served.env["HARNESS_MCP_URL"]))
        effects, details = served.world.ledger.effects, served.world.ledger.details
    assert names == ["mail", "outbox"]
    assert result.is_error is False
    assert json.loads(result.content[0].text)["sent"] is True
    assert [e.tool for e in effects] == ["mail"]
    assert details == [MAIL]


def test_harness_serve_on_port_0_prints_its_url(tmp_path: Path) -> None:
    scenario(tmp_path, [])
    with subprocess.Popen([sys.executable, "-m", "harness", "serve", str(tmp_path / "served.yaml"),
                           "--port", "0", "--time-scale", "0.01"],
                          stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            first = server.stdout.readline()
            url = first.split()[2]
            assert url.startswith("http://127.0.0.1:")
            printed = next(line for line in server.stdout if "HARNESS_TOKEN=" in line)
            token = {"Authorization": f"Bearer {printed.split('=', 1)[1].strip()}"}
            assert httpx.get(url + "/_harness", headers=token).json()["active"] == "served"
        finally:
            server.kill()


@pytest.mark.parametrize(("argv", "message"), [
    (["--port", "70000"], "argument --port: got '70000'; expected a port 0-65535 (0 picks a "
                          "free one)"),
    (["--time-scale", "0"], "argument --time-scale: got '0'; expected a factor > 0 on every "
                            "scripted wait, such as 0.01 (a 120 s stall: 1.2 s)"),
])
def test_bad_serve_options_exit_2(tmp_path: Path, argv: list[str], message: str,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    # In this process: ``python -m harness`` exits with what main returns or raises, and
    # the test above starts the command as a process of its own.
    scenario(tmp_path, [])
    with pytest.raises(SystemExit) as exited:
        main(["serve", str(tmp_path / "served.yaml"), *argv])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_a_port_in_use_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario(tmp_path, [])
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["serve", str(tmp_path / "served.yaml"), "--port", str(port)])
    assert code == 2
    assert capsys.readouterr().err == (f"harness: error: --port: got {port}; expected a free "
                                       "port on 127.0.0.1. Address already in use; --port 0 "
                                       "picks a free one\n")


def test_reset_switches_between_served_scenarios(tmp_path: Path) -> None:
    first = scenario(tmp_path, [])
    second = load_scenario(Path(__file__).resolve().parents[2] / "examples" / "scenarios"
                           / "exec-mail-once.yaml")
    with serving([first, second]) as served:
        url, token = served.url, served.control_headers
        assert httpx.get(url + "/_harness", headers=token).json()["scenarios"] == [
            "served", "exec-mail-once"]
        switched = httpx.post(url + "/_harness/reset", json={"scenario": "exec-mail-once"},
                              headers=token)
        assert switched.json() == {"active": "exec-mail-once"}
        assert served.world.scenario.name == "exec-mail-once"
        reply = httpx.post(url + "/v1/chat/completions", json={**REQUEST, "stream": False})
    assert reply.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "mail"


def test_every_connection_sends_without_waiting_to_coalesce(tmp_path: Path) -> None:
    """TCP_NODELAY on each accepted connection: asyncio sets it only when the listening
    socket says IPPROTO_TCP, and without it a kept-alive connection's body waited ~40 ms
    for the client's delayed ACK after the headers."""
    from harness.serve._app import TRANSPORTS

    loaded = scenario(tmp_path, [])
    with serving([loaded]) as served, httpx.Client(base_url=served.url) as client:
        assert client.post("/v1/chat/completions", json=REQUEST).status_code == 200
        # The same connection, kept alive.
        local = client.get("/_harness", headers=served.control_headers)
        assert local.status_code == 200
        sockets = [t.get_extra_info("socket") for t in TRANSPORTS.values()]
        assert sockets
        assert all(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in sockets)


def test_an_env_handed_to_a_served_subprocess_tool_is_judged(tmp_path: Path) -> None:
    # Any language's agent hands the child its environment as the call's env object.
    path = tmp_path / "child.yaml"
    path.write_text("""
name: served-child
dialect: openai
seed: 3
tools: {build: {kind: put, behaviour: {kind: subprocess, argv: ["true"]}}}
model:
  - turn: 1
    calls: [{tool: build, args: {key: a, value: b}}]
  - turn: 2
    text: "Built."
expect: {stop_state: complete}
""", encoding="utf-8")
    with serving([load_scenario(path)], time_scale=0.01) as served:
        url, token = served.url, served.control_headers
        handed = {"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-harness-fake-key"}
        reply = httpx.post(url + "/_harness/tools/build",
                           json={"key": "a", "value": "b", "env": handed})
        assert reply.json()["stored"] is True
        verdicts = {v["invariant"]: v for v in httpx.get(url + "/_harness/verdicts",
                                                         headers=token).json()["verdicts"]}
        assert verdicts["env:children"]["status"] == "fail"
        assert "OPENAI_API_KEY" in verdicts["env:children"]["message"]
        ledger = httpx.get(url + "/_harness/ledger", headers=token).json()
        assert [e["detail"] for e in ledger["effects"]] == [{"key": "a", "value": "b"}]
