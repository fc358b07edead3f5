"""Whole cases: every HTTP client reaches the world, no socket escapes, telemetry is absorbed."""

from __future__ import annotations

import importlib
import sys
import textwrap
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.intercept import PlainEntry
from harness.runner import Case, CaseResult, CrashSpec, run_case
from harness.runner._agents import load_agent_factory
from harness.scenario import Scenario

from .conftest import AgentPackages

SOURCE = Path("scenarios/hello.yaml")

# The same agent twice, as people write it on each client: its own retry loop, a read
# timeout, and the Retry-After of a 429 honoured. It answers with what it went through.
AIOHTTP_AGENT = '''
import asyncio
import json
import os
import time

import aiohttp


async def main(prompt: str) -> str:
    url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
    headers = {"authorization": "Bearer " + os.environ["OPENAI_API_KEY"]}
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": prompt}]}
    timeout = aiohttp.ClientTimeout(total=120, sock_read=10)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        for attempt in range(1, 4):
            try:
                async with session.post(url, json=body, headers=headers) as response:
                    if response.status == 429:
                        await asyncio.sleep(float(response.headers["retry-after"]))
                        continue
                    text = ""
                    async for line in response.content:
                        line = line.decode().strip()
                        if line.startswith("data: {"):
                            for choice in json.loads(line[6:]).get("choices", []):
                                text += choice["delta"].get("content") or ""
                    return f"{text} (attempt {attempt}, t={time.monotonic():g})"
            except (aiohttp.ServerTimeoutError, asyncio.TimeoutError):
                continue
    return "gave up"
'''

REQUESTS_AGENT = '''
import json
import os
import time

import requests


def main(prompt: str) -> str:
    url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
    headers = {"authorization": "Bearer " + os.environ["OPENAI_API_KEY"]}
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": prompt}]}
    for attempt in range(1, 4):
        try:
            with requests.post(url, json=body, headers=headers, timeout=(5, 10),
                               stream=True) as response:
                if response.status_code == 429:
                    time.sleep(float(response.headers["retry-after"]))
                    continue
                text = ""
                for line in response.iter_lines():
                    line = line.decode().strip()
                    if line.startswith("data: {"):
                        for choice in json.loads(line[6:]).get("choices", []):
                            text += choice["delta"].get("content") or ""
                return f"{text} (attempt {attempt}, t={time.monotonic():g})"
        except (requests.ReadTimeout, requests.ConnectionError):
            continue
    return "gave up"
'''

STALL = {"at": {"turn": 1, "attempt": 1}, "kind": "stall", "after_events": 1}
RATE_LIMITED = {"at": {"turn": 1, "attempt": 1}, "kind": "http_error", "status": 429,
                "retry_after": 3}


def hello(**changes: Any) -> Scenario:
    fields: dict[str, Any] = {"name": "hello", "dialect": "openai", "seed": 2,
                              "description": "Say hello.",
                              "model": [{"turn": 1, "text": "Hello there."}],
                              "expect": {"stop_state": "complete"}}
    fields.update(changes)
    return Scenario(**fields)


def run(package: str, scenario: Scenario, crash: CrashSpec | None = None) -> CaseResult:
    case = Case(scenario.name, SOURCE, scenario.seed, crash, agent=f"{package}.agent:main")
    return run_case(case, scenario, PlainEntry(f"{package}.agent:main"))


def verdict(result: CaseResult, invariant: str) -> Any:
    return next((v for v in result.verdicts if v.invariant == invariant), None)


def answer(result: CaseResult) -> str:
    assert result.trace is not None
    extra = result.trace.extra
    said = extra.final_answer if extra.final_answer is not None else extra.agent_traceback
    return str(said if said is not None else result.stop_reason)


@pytest.mark.parametrize("source", [AIOHTTP_AGENT, REQUESTS_AGENT], ids=["aiohttp", "requests"])
@pytest.mark.parametrize(("faults", "expected"), [
    ([], "Hello there. (attempt 1, t=0)"),
    ([STALL], "Hello there. (attempt 2, t=10)"),  # cut by its read timeout, in virtual time
    ([RATE_LIMITED], "Hello there. (attempt 2, t=3)"),  # Retry-After, in virtual time
], ids=["normal", "stall", "429"])
def test_an_agent_on_another_client_meets_the_worlds_faults(
        agent_packages: AgentPackages, source: str, faults: list[dict[str, Any]],
        expected: str) -> None:
    package = agent_packages.write({"agent": source})
    result = run(package, hello(faults=faults))

    assert answer(result) == expected
    assert result.status == "pass", (result.stop_reason, result.failed_verdicts)
    assert verdict(result, "network") is None or verdict(result, "network").status != "fail"
    assert result.trace is not None
    assert [r.attempt for r in result.trace.requests] == ([1] if not faults else [1, 2])


@pytest.mark.parametrize("source", [AIOHTTP_AGENT, REQUESTS_AGENT], ids=["aiohttp", "requests"])
@pytest.mark.parametrize("point", ["before_request:1", "mid_stream:1", "after_response:1"])
def test_the_worlds_crash_points_are_reached_through_another_client(
        agent_packages: AgentPackages, source: str, point: str) -> None:
    # The crash is raised where the client reads, so it kills the incarnation and is
    # never swallowed by the client's own error handling.
    package = agent_packages.write({"agent": source})
    result = run(package, hello(), CrashSpec(point, "at", "unsynced_lost"))

    assert result.crash_reached, result.stop_reason
    assert result.trace is not None
    assert [i.crashed_at for i in result.trace.incarnations] == [point, None]
    assert answer(result) == "Hello there. (attempt 1, t=0)"


# -------------------------------------------------------------------- no socket escapes

RAW_CONNECT = '''
import socket

from {lib}.client import ping


def main(prompt: str) -> str:
    try:
        ping()
    except OSError as error:
        return f"offline: {type(error).__name__}"
    return "online"
'''

LIBRARY = {
    "loopback": '''
import socket


def ping():
    with socket.socket() as sock:
        sock.connect(("127.0.0.1", 8125))
''',
    "dns": '''
import socket


def ping():
    socket.getaddrinfo("example.com", 443)
''',
    "urllib": '''
import urllib.request


def ping():
    urllib.request.urlopen("http://stats.example.net/ping", timeout=5)
''',
}


@pytest.mark.parametrize(("kind", "refused", "line"), [
    ("loopback", "ConnectionRefusedError", "connect 127.0.0.1:8125"),
    ("dns", "gaierror", "resolve example.com"),
    ("urllib", "URLError", "resolve stats.example.net"),
])
def test_any_other_socket_is_refused_at_once_and_fails_network_naming_host_and_library(
        agent_packages: AgentPackages, kind: str, refused: str, line: str) -> None:
    library = agent_packages.write({"client": LIBRARY[kind]})
    package = agent_packages.write({"agent": RAW_CONNECT.replace("{lib}", library)})
    result = run(package, hello())

    assert answer(result) == f"offline: {refused}"
    network = verdict(result, "network")
    assert network is not None
    assert network.status == "fail"
    assert network.evidence == (f"{line} (by {library})",)
    assert library in network.message


def test_a_known_library_is_named_with_its_off_switch(agent_packages: AgentPackages,
                                                      tmp_path: Path) -> None:
    # A package named as the framework is: the advice names its off switch.
    crewai = tmp_path / "crewai"
    crewai.mkdir()
    (crewai / "__init__.py").write_text(textwrap.dedent(LIBRARY["dns"]))
    package = agent_packages.write({"agent": RAW_CONNECT.replace("{lib}.client", "crewai")})
    try:
        result = run(package, hello())
    finally:
        import sys
        sys.modules.pop("crewai", None)

    network = verdict(result, "network")
    assert network.evidence == (
        "resolve example.com (by crewai; off switch: CREWAI_DISABLE_TELEMETRY=true)",)
    assert "crewai: CREWAI_DISABLE_TELEMETRY=true" in network.message


# -------------------------------------------------------------------------- telemetry

VERSION_CHECK = """
import urllib.error
import urllib.request


def latest():
    try:
        with urllib.request.urlopen("https://pypi.org/pypi/crewai/json", timeout=2) as response:
            return response.read()
    except urllib.error.URLError:
        return None
"""

VERSION_CHECKING_AGENT = '''
from crewai_core.version import latest


def main(prompt: str) -> str:
    return f"latest: {latest()}"
'''


def test_crewais_update_check_is_telemetry_not_the_agents_outside_call(
        agent_packages: AgentPackages, tmp_path: Path) -> None:
    # A verbose crew asks PyPI for CrewAI's newest version through urllib.request, which
    # the harness does not serve: the lookup is refused (CrewAI takes it as offline and
    # says nothing), and it is CrewAI's own doing, not the agent's: no `network` failure.
    framework = tmp_path / "crewai_core"
    framework.mkdir()
    (framework / "__init__.py").write_text("")
    (framework / "version.py").write_text(textwrap.dedent(VERSION_CHECK))
    package = agent_packages.write({"agent": VERSION_CHECKING_AGENT})
    import sys
    sys.path.insert(0, str(tmp_path))
    try:
        result = run(package, hello(model=[{"turn": 1, "text": "unused"}]))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("crewai_core.version", None)
        sys.modules.pop("crewai_core", None)

    assert answer(result) == "latest: None"
    assert verdict(result, "network") is None
    assert result.trace is not None
    assert result.trace.extra.foreign_requests is None
    assert result.trace.extra.telemetry_requests == (
        "resolve pypi.org (crewai; refused, not served; "
        "off switch: CREWAI_DISABLE_VERSION_CHECK=true)",)


def test_another_librarys_lookup_of_a_telemetry_host_still_fails_network(
        agent_packages: AgentPackages) -> None:
    library = agent_packages.write({"client": LIBRARY["urllib"].replace(
        "http://stats.example.net/ping", "https://pypi.org/pypi/crewai/json")})
    package = agent_packages.write({"agent": RAW_CONNECT.replace("{lib}", library)})
    result = run(package, hello())

    network = verdict(result, "network")
    assert network is not None
    assert network.evidence == (f"resolve pypi.org (by {library})",)


EXPORTER_AGENT = '''
import httpx


def main(prompt: str) -> str:
    response = httpx.post("https://api.openai.com/v1/traces/ingest",
                          json={"data": [{"object": "trace.span"}]})
    return f"exported: {response.status_code}"
'''


def test_the_openai_agents_trace_ingest_is_absorbed_and_listed_as_telemetry(
        agent_packages: AgentPackages) -> None:
    package = agent_packages.write({"agent": EXPORTER_AGENT})
    result = run(package, hello(model=[{"turn": 1, "text": "unused"}]))

    assert answer(result) == "exported: 204"
    assert verdict(result, "network") is None
    assert result.trace is not None
    assert result.trace.extra.foreign_requests is None
    assert result.trace.extra.telemetry_requests == (
        "POST https://api.openai.com/v1/traces/ingest "
        "(openai-agents; off switch: OPENAI_AGENTS_DISABLE_TRACING=1)",)
    assert result.trace.requests == ()  # the fake provider never saw it


# Agno posts each run's telemetry from a daemon thread it starts on the first run, over an
# HTTP/2 httpx client (agno.api.api); the thread's post lands when real time says so.
AGNO_TELEMETRY_AGENT = '''
import threading

import httpx


def main(prompt: str) -> str:
    statuses = []

    def post() -> None:
        with httpx.Client(base_url="https://os-api.agno.com", http2=True, timeout=5) as client:
            statuses.append(client.post("/telemetry/runs", json={"session_id": "s"}).status_code)

    worker = threading.Thread(target=post, name="agno-telemetry", daemon=True)
    worker.start()
    worker.join(30)
    return f"posted: {statuses}"
'''


def test_agnos_run_telemetry_is_answered_not_refused(agent_packages: AgentPackages) -> None:
    package = agent_packages.write({"agent": AGNO_TELEMETRY_AGENT})
    result = run(package, hello(model=[{"turn": 1, "text": "unused"}]))

    assert answer(result) == "posted: [200]"
    assert verdict(result, "network") is None
    assert result.trace is not None
    assert result.trace.extra.foreign_requests is None
    # A daemon thread the case's own thread started: when it sends is real time's
    # doing, so it is answered but not the case's record (the digest stays alike).
    assert result.trace.extra.telemetry_requests is None
    assert result.trace.requests == ()


EXPORTS_FROM_A_THREAD_IT_DID_NOT_START = '''
import httpx

import exporter_started_at_import as exporter


def main(prompt: str) -> str:
    exporter.flush.set()  # the exporter posts now, from its own thread
    exporter.flushed.wait(30)
    response = httpx.post("https://api.openai.com/v1/traces/ingest", json={"data": []})
    return f"exported: {response.status_code}"
'''


def test_telemetry_from_a_thread_the_case_did_not_start_is_answered_but_not_listed(
        agent_packages: AgentPackages, monkeypatch: pytest.MonkeyPatch) -> None:
    # A framework's exporter thread, started when it was imported (outside any case),
    # sends when real time says so: the case that happens to run then must not list it.
    exporter = types.ModuleType("exporter_started_at_import")
    exporter.flush, exporter.flushed = threading.Event(), threading.Event()  # type: ignore[attr-defined]
    statuses: list[int] = []

    def export() -> None:
        exporter.flush.wait(30)  # type: ignore[attr-defined]
        statuses.append(httpx.post("https://api.openai.com/v1/traces/ingest",
                                   json={"data": [{"object": "trace.span"}]}).status_code)
        exporter.flushed.set()  # type: ignore[attr-defined]

    monkeypatch.setitem(sys.modules, "exporter_started_at_import", exporter)
    thread = threading.Thread(target=export, daemon=True)
    thread.start()
    package = agent_packages.write({"agent": EXPORTS_FROM_A_THREAD_IT_DID_NOT_START})
    result = run(package, hello(model=[{"turn": 1, "text": "unused"}]))
    thread.join(30)

    assert statuses == [204]  # answered as the service would, never the real network
    assert answer(result) == "exported: 204"
    assert result.trace is not None
    # Only the agent's own export is the case's.
    assert result.trace.extra.telemetry_requests == (
        "POST https://api.openai.com/v1/traces/ingest "
        "(openai-agents; off switch: OPENAI_AGENTS_DISABLE_TRACING=1)",)



PRICE_MAP_LIBRARY = """
import httpx

# litellm fetches its price map when it is imported; DSPy imports litellm on its first call.
PRICES = httpx.get("https://raw.githubusercontent.com/BerriAI/litellm/main/"
                   "model_prices_and_context_window.json").status_code
"""

IMPORTS_ON_ITS_FIRST_CALL = '''
import importlib


def main(prompt: str) -> str:
    return f"prices: {importlib.import_module('price_map_library').PRICES}"
'''


def test_what_a_library_sends_while_imported_inside_a_case_is_not_the_cases(
        agent_packages: AgentPackages, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A worker imports a library once: only the first case to import it would list its
    # import's telemetry, and the second run of that case (--check-determinism) differed.
    (tmp_path / "price_map_library.py").write_text(PRICE_MAP_LIBRARY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "price_map_library", raising=False)
    package = agent_packages.write({"agent": IMPORTS_ON_ITS_FIRST_CALL})
    first = run(package, hello(model=[{"turn": 1, "text": "unused"}]))
    second = run(package, hello(model=[{"turn": 1, "text": "unused"}]))

    # Answered as the harness answers it (litellm then reads the copy it ships), no network.
    assert answer(first) == answer(second) == "prices: 404"
    assert first.trace is not None
    assert second.trace is not None
    assert first.trace.extra.telemetry_requests is None
    assert first.trace.digest == second.trace.digest
    sys.modules.pop("price_map_library", None)

OTEL_AGENT = '''
import requests


def main(prompt: str) -> str:
    return str(requests.post("https://otel.example.com/v1/traces", json={}, timeout=5)
               .status_code)
'''


def test_a_scenario_absorbs_more_hosts(agent_packages: AgentPackages) -> None:
    package = agent_packages.write({"agent": OTEL_AGENT})
    refused = run(package, hello())
    assert verdict(refused, "network").status == "fail"

    absorbed = run(package, hello(absorb=["otel.example.com"]))
    assert answer(absorbed) == "200"
    assert verdict(absorbed, "network") is None
    assert absorbed.trace is not None
    assert absorbed.trace.extra.telemetry_requests == (
        "POST https://otel.example.com/v1/traces (otel.example.com; off switch: (added with "
        "absorb))",)


# ------------------------------------------------------------- the import of the agent

IMPORT_TIME_FETCH = '''
import requests

try:
    requests.get("https://models.example.org/prices.json", timeout=5)
    FETCHED = "reached the network"
except requests.ConnectionError as error:
    FETCHED = str(error)


def main(prompt: str) -> str:
    return FETCHED
'''


def test_importing_the_agent_to_check_its_entry_point_reaches_no_network(
        agent_packages: AgentPackages) -> None:
    package = agent_packages.write({"agent": IMPORT_TIME_FETCH})
    entry = load_agent_factory(f"{package}.agent:main")

    assert isinstance(entry, PlainEntry)
    import sys
    assert "no network inside a harness case" in sys.modules[f"{package}.agent"].FETCHED


# ------------------------------------------------------------------ harness run --absorb

HELLO_FILE = """\
name: hello
dialect: openai
model:
  - turn: 1
    text: Hello there.
expect:
  stop_state: complete
"""


def test_harness_run_absorb_answers_a_host_the_harness_does_not_know(
        agent_packages: AgentPackages, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from harness._cli import main

    monkeypatch.chdir(tmp_path)  # the agent's package is found as python -m finds it
    traced = REQUESTS_AGENT.replace("def main(prompt: str) -> str:\n", (
        "def main(prompt: str) -> str:\n"
        "    requests.post('https://otel.example.com/v1/traces', json={}, timeout=5)\n"))
    package = agent_packages.write({"agent": traced})
    scenario = tmp_path / "hello.yaml"
    scenario.write_text(HELLO_FILE)
    command = ["run", str(scenario), "--no-crash", "--out", "results",
               "--agent", f"{package}.agent:main"]

    assert main(command) == 1
    out = capsys.readouterr().out
    assert f"POST https://otel.example.com/v1/traces (by {package})" in out
    assert "--absorb HOST" in out
    assert main([*command, "--absorb", "otel.example.com"]) == 0, capsys.readouterr().out


def test_harness_run_absorb_takes_a_host_name_only(capsys: pytest.CaptureFixture[str]) -> None:
    from harness._cli import main

    with pytest.raises(SystemExit) as exited:
        main(["run", "x.yaml", "--absorb", "https://otel.example.com/v1"])
    assert exited.value.code == 2
    assert ("argument --absorb: got 'https://otel.example.com/v1'; expected a host name such "
            "as otel.example.com (no scheme, port or path)") in capsys.readouterr().err


# ---------------------------------------------------------- a database driver's connection

# A stand-in for psycopg 3 with its shape: every connection, sync or async, goes through
# ``psycopg.generators.connect``, which libpq runs in C in the real driver.
PSYCOPG = {
    "__init__": '''
from psycopg import generators


class OperationalError(Exception):
    pass


def connect(conninfo=""):
    return list(generators.connect(conninfo))
''',
    "generators": '''
def connect(conninfo, *, timeout=0.0):
    yield ("libpq connects from C", conninfo)
''',
}

POSTGRES_AGENT = '''
{driver}


def main(prompt: str) -> str:
    import psycopg

    try:
        psycopg.connect("host=10.0.0.5 port=6432 dbname=orders")
    except psycopg.OperationalError as error:
        return f"offline: {{error}}"
    return "connected"
'''


@pytest.fixture
def psycopg_stand_in(tmp_path: Path) -> Iterator[None]:
    folder = tmp_path / "psycopg"
    folder.mkdir()
    for name, source in PSYCOPG.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
    real = {n: sys.modules.pop(n) for n in list(sys.modules) if n.split(".")[0] == "psycopg"}
    yield
    for name in [n for n in sys.modules if n.split(".")[0] == "psycopg"]:
        del sys.modules[name]
    sys.modules.update(real)


@pytest.mark.parametrize("imported", ["with the agent", "inside the case"])
def test_a_postgres_connection_is_refused_where_libpq_would_open_it_and_fails_network(
        agent_packages: AgentPackages, psycopg_stand_in: None, imported: str) -> None:
    # psycopg is refused where it connects, not where it is imported (DBOS imports it for
    # Postgres and runs on SQLite): whether the agent's module imported it before the
    # case, or the agent first imports it while the case runs.
    driver = "import psycopg" if imported == "with the agent" else ""
    package = agent_packages.write({"agent": POSTGRES_AGENT.format(driver=driver)})
    entry = load_agent_factory(f"{package}.agent:main")
    assert isinstance(entry, PlainEntry)
    assert ("psycopg" in sys.modules) == (imported == "with the agent")
    result = run(package, hello())

    assert answer(result).startswith("offline: no network inside a harness case: connection "
                                     "to PostgreSQL at 10.0.0.5:6432 refused")
    network = verdict(result, "network")
    assert network is not None
    assert network.status == "fail"
    assert network.evidence == (f"connect postgresql 10.0.0.5:6432 (by {package})",)
    # Outside the case the driver is the driver again.
    driver_module: Any = importlib.import_module("psycopg")
    assert driver_module.connect("dbname=orders") == [("libpq connects from C", "dbname=orders")]
