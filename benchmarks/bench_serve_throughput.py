"""Streaming chat completions over the port, from the official Python ``openai`` SDK.

``harness serve`` and, when it is installed, LLMock's server (``llmock serve``, the PyPI
package ``llmock``; it needs FastAPI, so it is best kept in a virtualenv of its own) run
side by side on 127.0.0.1, each in a process of its own, in the same run. The same
client code streams the same short chat completion from each: LLMock runs with
``--response-style echo`` (it answers ``Hello! You said: PROMPT``) and the scenario
scripts that same text, so both send the same characters; each cuts them into
deltas its own way (ours of 1 to 6 characters, as a tokenizer would; LLMock's a word
each), and the prompt's short words keep the two counts of events close. The table
shows each server's events and bytes per response: the client's work, which on a
loaded machine bounds the requests per second more than either server's CPU does.

- concurrency 1: one ``openai.OpenAI`` client, requests one after another;
- concurrency 32: one ``openai.AsyncOpenAI`` client, 32 tasks sharing the requests.

Both servers run at once, and each level is measured in rounds in which the servers
take turns, so that a machine whose load moves (one shared with others) weighs on
both alike. Each request is timed from the call to the last chunk read; the table
gives the median over the rounds of the requests per second, the p50 and p99 of all
the times, and the median of the server process's CPU time per request (user +
system, from ``/proc``), then per level the median of the rounds' ratios of requests
per second: on a loaded machine compare that ratio, not the figures of two runs.
``harness serve`` records, matches and plans every request as a case would (and
journals it); its world is reset before each round (``POST /_harness/reset``) so no
round runs into the per-world request cap.

Run: python benchmarks/bench_serve_throughput.py [--requests N] [--rounds R]
     [--llmock PATH] [--quick]
     (PATH: the ``llmock`` executable; default: ``llmock`` on PATH, else ours alone)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import openai
from _quick import scaled

# Short words: LLMock's word-sized deltas come out about as many as our tokenizer-sized
# ones, so both servers send about the same events and bytes (the table shows them).
PROMPT = ("Say hi to me in a few words, as I do to you, so we go on to be at ease, ok? "
          "A b c d e f g.")
MESSAGES = [{"role": "user", "content": PROMPT}]
#: What LLMock's echo style answers to PROMPT, and what the scenario scripts.
REPLY = f"Hello! You said: {PROMPT}"
LEVELS = (1, 32)


def scenario_file(folder: Path) -> Path:
    path = folder / "throughput.yaml"
    path.write_text(f"name: throughput\ndialect: openai\nseed: 1\nmodel:\n  - turn: 1\n"
                    f"    text: {REPLY!r}\nexpect: {{stop_state: complete}}\n")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def harness_serve(folder: Path) -> Iterator[tuple[str, str, int]]:
    """(base URL, control token, pid) of ``harness serve`` in a process of its own."""
    process = subprocess.Popen(
        [sys.executable, "-m", "harness", "serve", str(scenario_file(folder)), "--port", "0"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[2]
        token = ""
        while not token:
            line = process.stdout.readline().strip()
            token = line.partition("=")[2] if line.startswith("HARNESS_TOKEN=") else ""
        yield url, token, process.pid
    finally:
        process.kill()
        process.wait()


@contextlib.contextmanager
def llmock_serve(executable: str) -> Iterator[tuple[str, int]]:
    """(base URL, pid) of LLMock's server in a process of its own, once it answers."""
    port = free_port()
    process = subprocess.Popen([executable, "serve", "--port", str(port), "--log-level",
                                "warning", "--response-style", "echo"],
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(url + "/v1/models", timeout=1)
                break
            if process.poll() is not None:
                raise RuntimeError(f"llmock serve exited with {process.returncode}")
            time.sleep(0.1)
        yield url, process.pid
    finally:
        process.kill()
        process.wait()


def workload(base: str, probes: int = 8) -> tuple[int, int]:
    """Mean (events, bytes) of a streamed response from ``base`` (our deltas are cut anew
    for each request), after checking each text is :data:`REPLY`."""
    body = {"model": "gpt-4.1", "messages": MESSAGES, "stream": True}
    events = size = 0
    with httpx.Client() as client:
        for _ in range(probes):
            data = client.post(base + "/v1/chat/completions", json=body).content
            frames = [line[6:] for line in data.split(b"\n") if line.startswith(b"data: ")]
            text = "".join(chunk["choices"][0]["delta"].get("content") or ""
                           for chunk in map(json.loads, frames[:-1]) if chunk["choices"])
            if text != REPLY:
                raise RuntimeError(f"{base} streamed {text!r}, not the benchmark's {REPLY!r}")
            events, size = events + len(frames), size + len(data)
    return round(events / probes), round(size / probes)


def stream_one(client: openai.OpenAI) -> float:
    started = time.perf_counter()
    stream = client.chat.completions.create(model="gpt-4.1", messages=MESSAGES,  # type: ignore[arg-type]
                                            stream=True)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text, "an empty stream"
    return time.perf_counter() - started


async def stream_one_async(client: openai.AsyncOpenAI) -> float:
    started = time.perf_counter()
    stream = await client.chat.completions.create(model="gpt-4.1",
                                                  messages=MESSAGES,  # type: ignore[arg-type]
                                                  stream=True)
    text = "".join([chunk.choices[0].delta.content or "" async for chunk in stream
                    if chunk.choices])
    assert text, "an empty stream"
    return time.perf_counter() - started


def sequential(base: str, requests: int) -> tuple[float, list[float]]:
    with openai.OpenAI(base_url=base + "/v1", api_key="sk-bench", max_retries=0) as client:
        stream_one(client)  # warm up: the connection, the first request's imports
        started = time.perf_counter()
        times = [stream_one(client) for _ in range(requests)]
        return time.perf_counter() - started, times


async def concurrent(base: str, requests: int, tasks: int) -> tuple[float, list[float]]:
    limits = httpx.Limits(max_connections=tasks, max_keepalive_connections=tasks)
    http = openai.DefaultAsyncHttpxClient(limits=limits, timeout=60)
    async with openai.AsyncOpenAI(base_url=base + "/v1", api_key="sk-bench", max_retries=0,
                                  http_client=http) as client:
        await asyncio.gather(*(stream_one_async(client) for _ in range(tasks)))  # warm up
        left = list(range(requests))
        times: list[float] = []

        async def worker() -> None:
            while left:
                left.pop()
                times.append(await stream_one_async(client))

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(tasks)))
        return time.perf_counter() - started, times


def percentile(times: list[float], share: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def cpu_seconds(pid: int) -> float:
    """The user and system CPU time process ``pid`` has used (Linux's /proc; else 0)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclasses.dataclass
class Server:
    """One server under test: its name, URL and process, what to do before each level."""

    name: str
    base: str
    pid: int
    before_level: Callable[[], None] | None = None
    load: tuple[int, int] = (0, 0)


@dataclasses.dataclass
class Level:
    """One server's rounds at one concurrency: requests per second and CPU per request of
    each round, and every request's time."""

    rates: list[float] = dataclasses.field(default_factory=list)
    cpu: list[float] = dataclasses.field(default_factory=list)
    times: list[float] = dataclasses.field(default_factory=list)


def one_round(server: Server, level: int, requests: int, into: Level) -> None:
    if server.before_level is not None:
        server.before_level()
    used = cpu_seconds(server.pid)
    if level == 1:
        elapsed, times = sequential(server.base, requests)
    else:
        elapsed, times = asyncio.run(concurrent(server.base, requests * 4, level))
    # The warm-up requests are in the CPU time too: count them.
    warm = 1 if level == 1 else level
    into.cpu.append((cpu_seconds(server.pid) - used) / (len(times) + warm))
    into.rates.append(len(times) / elapsed)
    into.times += times


def row(server: Server, level: int, seen: Level) -> str:
    times = seen.times
    return (f"{server.name:<16} {level:>5} {server.load[0]:>6} {server.load[1]:>6} "
            f"{statistics.median(seen.rates):>9.1f} {statistics.median(times) * 1000:>9.2f} "
            f"{percentile(times, 0.99) * 1000:>9.2f} {statistics.median(seen.cpu) * 1000:>9.2f}")


def compare(servers: list[Server], requests: int, rounds: int) -> list[str]:
    """Each level's rounds, the servers taking turns within each round: a machine whose
    load moves weighs on both alike. Then a row per server and level (medians over the
    rounds), and per level the median of the rounds' ratios of requests per second."""
    rows, ratios = [], []
    for level in LEVELS:
        seen = {server.name: Level() for server in servers}
        for _ in range(rounds):
            for server in servers:
                one_round(server, level, requests, seen[server.name])
        rows += [row(server, level, seen[server.name]) for server in servers]
        if len(servers) == 2:
            ours, theirs = (seen[server.name].rates for server in servers)
            ratio = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
            ratios.append(f"concurrency {level}: {servers[0].name} / {servers[1].name} "
                          f"requests per second, median of {rounds} rounds: {ratio:.2f}")
    return rows + ratios


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=scaled(100, 4),
                        help="requests at concurrency 1 in a round (four times as many at 32)")
    parser.add_argument("--rounds", type=int, default=scaled(3, 1),
                        help="rounds per level, the servers taking turns in each")
    parser.add_argument("--llmock", default=shutil.which("llmock"),
                        help="the llmock executable (default: llmock on PATH)")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        url, token, pid = stack.enter_context(harness_serve(folder))

        def reset() -> None:
            httpx.post(url + "/_harness/reset", json={},
                       headers={"Authorization": f"Bearer {token}"}).raise_for_status()

        servers = [Server("harness serve", url, pid, reset)]
        if args.llmock:
            mock_url, mock_pid = stack.enter_context(llmock_serve(args.llmock))
            servers.append(Server("llmock 0.2.2", mock_url, mock_pid))
        for server in servers:
            server.load = workload(server.base)
        rows = compare(servers, args.requests, args.rounds)
    print(f"streaming chat completions, official openai SDK {openai.__version__}; per round "
          f"{args.requests} requests at concurrency 1, {args.requests * 4} at 32; "
          f"{args.rounds} rounds")
    print(f"{'server':<16} {'conc.':>5} {'events':>6} {'bytes':>6} {'req/s':>9} "
          f"{'p50 ms':>9} {'p99 ms':>9} {'CPU ms/req':>10}")
    print("\n".join(rows))
    if not args.llmock:
        print("LLMock is not installed here (pip install llmock, in a virtualenv of its own; "
              "then --llmock PATH): harness serve measured alone")


if __name__ == "__main__":
    main()
