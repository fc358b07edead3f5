"""Each interception of an unchanged agent, per call, against the port call it stands for.

An unchanged agent reaches the world through three interceptions; the reference
agent makes the same calls on its ports. Per call, each as the median of several
rounds (CPU seconds of this process, ``time.process_time``):

* files (:mod:`harness.intercept._files`, pyfakefs over the crash disk), inside
  ``AgentFiles.active()``: opening a file for appending and closing it; a 64-byte
  write that reaches the OS (``write`` + ``flush``, into a journal of up to 4 KB: an
  intercepted flush costs more as the file grows); ``os.fsync``. Against the Disk
  port: ``open_append`` + ``close``, ``write``, ``fsync``;
* time (:mod:`harness.intercept._time`), inside ``virtual_time()``: ``time.monotonic()``
  and a blocking ``time.sleep``. Against the Clock port: ``clock.now()`` and an awaited
  ``clock.sleep`` on the case's loop;
* HTTP (:mod:`harness.intercept._network`): a streamed chat completion read to its end
  through an ``httpx`` client with its default transport, inside
  ``intercepted_network()``. Against the provider port: the same request through the
  ports' client (``AgentPorts.http``). Both reach the same fake provider, which
  answers both the same, so the difference is the interception's.

The issue's target: each within a few times its port call.

    .venv/bin/python benchmarks/bench_interception.py [--quick]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable

import httpx
from _quick import scaled

from fakes import CrashDisk, VirtualClock
from harness.intercept import AgentFiles, intercepted_network
from harness.intercept._time import virtual_time
from harness.runner._world import World
from harness.scenario import Scenario

CALLS = scaled(2000, 20)
REQUESTS = scaled(200, 4)
ROUNDS = scaled(5, 1)
DATA = b"x" * 63 + b"\n"
# Appends per file: an intercepted flush copies the whole file (pyfakefs keeps a file's
# bytes as one object), so the figure is for a journal of up to 4 KB.
PER_FILE = 64
SCENARIO = Scenario.model_validate({
    "name": "bench-interception",
    "dialect": "openai",
    "seed": 5,
    "description": "Say hello.",
    "model": [{"turn": 1, "text": "Hello there, this is the answer."}],
    "expect": {"stop_state": "complete"},
})
BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "Say hello."}]}


def per_call(run: Callable[[int], object], calls: int) -> float:
    """Median CPU seconds per call of ``run(calls)``, which makes ``calls`` calls."""
    rounds = []
    for _ in range(ROUNDS):
        started = time.process_time()
        run(calls)
        rounds.append((time.process_time() - started) / calls)
    return statistics.median(rounds)


# -- files ----------------------------------------------------------------------------


def file_figures() -> list[tuple[str, float, float]]:
    disk = CrashDisk()
    files = AgentFiles(disk)
    port = CrashDisk()
    port.make_durable_folders("/agent")
    view = port.view()

    def intercepted(work: Callable[[int], None]) -> Callable[[int], None]:
        def run(calls: int) -> None:
            with files.active(disk.incarnations.current):
                work(calls)
            disk.restart()
        return run

    def agent_open(calls: int) -> None:
        for _ in range(calls):
            open("journal.log", "ab").close()

    def agent_write(calls: int) -> None:
        for first in range(0, calls, PER_FILE):
            with open(f"journal-{first}.log", "ab") as journal:
                for _ in range(min(PER_FILE, calls - first)):
                    journal.write(DATA)
                    journal.flush()
            os.remove(f"journal-{first}.log")  # the next round starts empty too

    def agent_fsync(calls: int) -> None:
        with open("journal.log", "ab") as journal:
            journal.write(DATA)
            journal.flush()
            for _ in range(calls):
                os.fsync(journal.fileno())

    def port_open(calls: int) -> None:
        for _ in range(calls):
            view.open_append("/agent/journal.log").close()

    def port_write(calls: int) -> None:
        for first in range(0, calls, PER_FILE):
            journal = view.open_append(f"/agent/journal-{first}.log")
            for _ in range(min(PER_FILE, calls - first)):
                journal.write(DATA)
            journal.close()
            view.unlink(f"/agent/journal-{first}.log")

    def port_fsync(calls: int) -> None:
        journal = view.open_append("/agent/journal.log")
        journal.write(DATA)
        for _ in range(calls):
            journal.fsync()
        journal.close()

    # Each intercepted round pays one enter and leave of active(): bench_agent_files.py
    # measures those; over CALLS calls they are a small share.
    return [(name, per_call(intercepted(agent), CALLS), per_call(own, CALLS))
            for name, agent, own in (("open + close (append)", agent_open, port_open),
                                     ("write 64 B + flush", agent_write, port_write),
                                     ("fsync", agent_fsync, port_fsync))]


# -- time -----------------------------------------------------------------------------


def time_figures() -> list[tuple[str, float, float]]:
    clock = VirtualClock()

    def agent_monotonic(calls: int) -> None:
        with virtual_time(clock):
            for _ in range(calls):
                time.monotonic()

    def agent_sleep(calls: int) -> None:
        with virtual_time(clock):
            for _ in range(calls):
                time.sleep(0.01)

    def port_now(calls: int) -> None:
        for _ in range(calls):
            clock.now()

    def port_sleep(calls: int) -> None:
        async def sleeps() -> None:
            for _ in range(calls):
                await clock.sleep(0.01)

        clock.run(sleeps())

    return [("time.monotonic / clock.now", per_call(agent_monotonic, CALLS),
             per_call(port_now, CALLS)),
            ("time.sleep / await clock.sleep", per_call(agent_sleep, CALLS),
             per_call(port_sleep, CALLS))]


# -- HTTP -----------------------------------------------------------------------------


def http_figures() -> list[tuple[str, float, float]]:
    async def requests(client: httpx.AsyncClient, url: str, calls: int) -> None:
        for _ in range(calls):
            async with client.stream("POST", url, json=BODY) as response:
                await response.aread()
                assert response.status_code == 200, response.status_code

    def on_a_world(make: Callable[[World], Awaitable[None]]) -> None:
        world = World(SCENARIO, seed=SCENARIO.seed)
        with world.clock.runner() as runner:
            runner.run(_awaited(make(world)))

    def intercepted(calls: int) -> None:
        async def run(world: World) -> None:
            with intercepted_network(world.route(1)):
                async with httpx.AsyncClient() as client:
                    await requests(client, world.provider.endpoint, calls)
        on_a_world(run)

    def ported(calls: int) -> None:
        async def run(world: World) -> None:
            async with world.ports(1).http as client:
                await requests(client, "chat/completions", calls)
        on_a_world(run)

    return [("streamed chat completion (httpx)", per_call(intercepted, REQUESTS),
             per_call(ported, REQUESTS))]


async def _awaited(awaitable: Awaitable[None]) -> None:
    await awaitable


def main() -> None:
    print(f"{'call':<34} {'intercepted':>12} {'port':>10} {'ratio':>7}")
    for group in (file_figures, time_figures, http_figures):
        for name, intercepted, port in group():
            print(f"{name:<34} {intercepted * 1e6:9.1f} us {port * 1e6:7.1f} us "
                  f"{intercepted / port:6.1f}x")


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    main()
