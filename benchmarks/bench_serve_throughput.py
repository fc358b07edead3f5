"""Streaming chat completions over the port, from the official Python ``openai`` SDK.

``harness serve`` and, when it is installed, LLMock's server (``llmock serve``, the PyPI
package ``llmock``; it needs FastAPI, so it is best kept in a virtualenv of its own) run
side by side on 127.0.0.1, each in a process of its own, in the same run. The same
client code streams the same short chat completion from each:

- concurrency 1: one ``openai.OpenAI`` client, requests one after another;
- concurrency 32: one ``openai.AsyncOpenAI`` client, 32 tasks sharing the requests.

Each request is timed from the call to the last chunk read; the table gives requests
per second over the whole level, the p50 and p99 of those times, and the server
process's CPU time per request (user + system, from ``/proc``): on a loaded machine
the wall-clock figures move with the load, the CPU time much less. ``harness serve``
records, matches and plans every request as a case would (and journals it); the world
is reset between levels (``POST /_harness/reset``) so no level runs into the
per-world request cap.

Run: python benchmarks/bench_serve_throughput.py [--requests N] [--llmock PATH] [--quick]
     (PATH: the ``llmock`` executable; default: ``llmock`` on PATH, else ours alone)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
from _quick import scaled

MESSAGES = [{"role": "user", "content": "Say hello in a short sentence."}]
REPLY = "Hello! This is a short streamed reply, a few dozen tokens long, from the fake model."
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
                                "warning"], stdout=subprocess.DEVNULL,
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


def row(name: str, level: int, elapsed: float, times: list[float], cpu: float) -> str:
    return (f"{name:<16} {level:>5} {len(times) / elapsed:>9.1f} "
            f"{statistics.median(times) * 1000:>9.2f} {percentile(times, 0.99) * 1000:>9.2f} "
            f"{cpu / len(times) * 1000:>9.2f}")


def measure(name: str, base: str, pid: int, requests: int, before_level: object = None
            ) -> list[str]:
    rows = []
    for level in LEVELS:
        if callable(before_level):
            before_level()
        used = cpu_seconds(pid)
        if level == 1:
            elapsed, times = sequential(base, requests)
        else:
            elapsed, times = asyncio.run(concurrent(base, requests * 4, level))
        # The warm-up requests are in the CPU time too: count them.
        warm = 1 if level == 1 else level
        cpu = cpu_seconds(pid) - used
        rows.append(row(name, level, elapsed, times, cpu * len(times) / (len(times) + warm)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=scaled(200, 4),
                        help="requests at concurrency 1 (four times as many at 32)")
    parser.add_argument("--llmock", default=shutil.which("llmock"),
                        help="the llmock executable (default: llmock on PATH)")
    args = parser.parse_args()
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as folder, \
            harness_serve(Path(folder)) as (url, token, pid):
        def reset() -> None:
            httpx.post(url + "/_harness/reset", json={},
                       headers={"Authorization": f"Bearer {token}"}).raise_for_status()

        rows += measure("harness serve", url, pid, args.requests, reset)
    if args.llmock:
        with llmock_serve(args.llmock) as (url, pid):
            rows += measure("llmock 0.2.2", url, pid, args.requests)
    print(f"streaming chat completions, official openai SDK {openai.__version__}; "
          f"{args.requests} requests at concurrency 1, {args.requests * 4} at 32")
    print(f"{'server':<16} {'conc.':>5} {'req/s':>9} {'p50 ms':>9} {'p99 ms':>9} "
          f"{'CPU ms/req':>10}")
    print("\n".join(rows))
    if not args.llmock:
        print("LLMock is not installed here (pip install llmock, in a virtualenv of its own; "
              "then --llmock PATH): harness serve measured alone")


if __name__ == "__main__":
    main()
