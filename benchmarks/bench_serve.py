"""Requests per second and time to first byte: ``harness serve`` beside a minimal server.

Both servers stream the same 1,000-event OpenAI response over HTTP/1.1 on
127.0.0.1, each in a process of its own, read by one sequential httpx client:

- the served fake: ``harness serve`` over a scenario whose one reply renders to
  1,000 SSE events (each request is recorded, matched to the script, planned
  and played event by event, one write per event);
- the reference: a bare Starlette + uvicorn (h11) app that streams the same
  1,000 pre-rendered events from a list, one write per event.

The ratio says what the harness's bookkeeping costs on top of the same server stack.

Run: python benchmarks/bench_serve.py [--requests N] [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _quick import scaled

EVENTS = 1_000
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "go"}], "stream": True}


def scenario_file(folder: Path) -> Path:
    """A scenario whose turn-1 reply renders to about EVENTS events (the text is sized to it)."""
    path = folder / "bench.yaml"
    words = EVENTS
    for _ in range(3):  # the renderer cuts text into deltas of a few characters: converge
        text = " ".join(f"w{i:04d}" for i in range(words))
        path.write_text(f"name: bench\ndialect: openai\nseed: 1\nmodel:\n  - turn: 1\n"
                        f"    text: {json.dumps(text)}\nexpect: {{stop_state: complete}}\n")
        words = round(words * EVENTS / len(rendered_events(path)))
    return path


def rendered_events(path: Path) -> list[bytes]:
    """The events the fake plans for the request: what the reference server sends too."""
    from fakes import Emit, IncomingRequest
    from harness.runner import World
    from harness.scenario import load_scenario

    provider = World(load_scenario(path), seed=1).provider
    plan = provider.plan(IncomingRequest("POST", provider.endpoint, {},
                                         json.dumps(REQUEST).encode()))
    return [step.data for step in plan.steps if isinstance(step, Emit) and step.data]


def reference_server(events_file: str) -> None:
    """The minimal server (run in its own process): the events from a file, one write each."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    events = json.loads(Path(events_file).read_text())
    chunks = [event.encode() for event in events]

    async def stream(_request: object) -> StreamingResponse:
        async def body():  # type: ignore[no-untyped-def]
            for chunk in chunks:
                yield chunk
        return StreamingResponse(body(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/chat/completions", stream, methods=["POST"])])
    config = uvicorn.Config(app, host="127.0.0.1", port=0, http="h11", log_level="warning")
    server = uvicorn.Server(config)

    async def run() -> None:
        import asyncio

        task = asyncio.ensure_future(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        print(f"ref: http://127.0.0.1:{port}", flush=True)
        await task

    import asyncio

    asyncio.run(run())


def start(argv: list[str]) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    return process, line.split()[2 if line.startswith("harness serve") else 1]


def measure(url: str, requests: int) -> tuple[float, float, int]:
    """(requests per second, median time to first body byte in ms, events per response)."""
    ttfbs, count = [], 0
    with httpx.Client(timeout=30) as client:
        started = time.perf_counter()
        for _ in range(requests):
            sent = time.perf_counter()
            first = None
            with client.stream("POST", url + "/v1/chat/completions", json=REQUEST) as response:
                body = b""
                for chunk in response.iter_raw():
                    first = first if first is not None else time.perf_counter()
                    body += chunk
            assert first is not None
            ttfbs.append((first - sent) * 1000)
            count = body.count(b"data: ")
        elapsed = time.perf_counter() - started
    return requests / elapsed, statistics.median(ttfbs), count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=scaled(40, 2))
    parser.add_argument("--reference-server", metavar="EVENTS_JSON")
    args = parser.parse_args()
    if args.reference_server:
        reference_server(args.reference_server)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = scenario_file(Path(folder))
        events = Path(folder) / "events.json"
        events.write_text(json.dumps([e.decode() for e in rendered_events(path)]))
        served, served_url = start([sys.executable, "-m", "harness", "serve", str(path),
                                    "--port", "0"])
        ref, ref_url = start([sys.executable, __file__, "--reference-server", str(events)])
        try:
            measure(served_url, 3)  # warm both up: imports, first connection
            measure(ref_url, 3)
            fake = measure(served_url, args.requests)
            plain = measure(ref_url, args.requests)
        finally:
            served.kill()
            ref.kill()
    print(f"{EVENTS:,}-event OpenAI stream, {args.requests} sequential requests, one client")
    print(f"{'server':<28} {'req/s':>8} {'TTFB ms':>9} {'events':>7}")
    for name, (rps, ttfb, count) in (("harness serve (fake)", fake),
                                     ("starlette+uvicorn (ref)", plain)):
        print(f"{name:<28} {rps:>8.1f} {ttfb:>9.2f} {count:>7}")
    print(f"ratio fake/ref: req/s {fake[0] / plain[0]:.2f}x, TTFB {fake[1] / plain[1]:.2f}x")


if __name__ == "__main__":
    main()
