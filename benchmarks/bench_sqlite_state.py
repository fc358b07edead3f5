"""What SQLite persistence costs a case, beside a JSON state file, for one unchanged agent.

Two versions of the same agent on the official ``openai`` SDK, unchanged, keep their
conversation once per turn: one in ``state.json`` (temporary file, fsync, rename,
folder fsync: the careful way), one in ``conversations.db`` (one ``sqlite3``
transaction per turn, as a framework's session does). The scenario has ``TURNS``
tool turns; each agent runs its uncrashed case and a crash case at every world
event, in two classes, so both run exactly the same cases. The figure is CPU
seconds per case (``time.process_time``: the benchmark shares its cores), median
of ``ROUNDS`` rounds, and the ratio SQLite / JSON.

    .venv/bin/python benchmarks/bench_sqlite_state.py [--turns 8] [--rounds 3] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from _quick import scaled

from harness.intercept import PlainEntry
from harness.runner import Case, CrashSpec, run_case
from harness.scenario import Scenario

TOOLS = '''
def append_note(text: str) -> dict:
    raise RuntimeError("replaced by the harness in a case")
'''

LOOP = '''
import json

from openai import AsyncOpenAI

from {package}.tools import append_note

TOOLS = [{{"type": "function", "function": {{"name": "append_note", "parameters": {{
    "type": "object", "properties": {{"text": {{"type": "string"}}}}}}}}}}]


async def main(prompt: str) -> str:
    messages = load() or [{{"role": "user", "content": prompt}}]
    client = AsyncOpenAI(timeout=30.0, max_retries=0)
    while True:
        reply = (await client.chat.completions.create(
            model="gpt-test", messages=messages, tools=TOOLS)).choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            save(messages)
            return reply.content
        for call in reply.tool_calls:
            result = append_note(**json.loads(call.function.arguments))
            messages.append({{"role": "tool", "tool_call_id": call.id,
                             "content": json.dumps(result)}})
        save(messages)
'''

JSON_STATE = LOOP + '''

import os
import tempfile


def load():
    try:
        with open("state.json") as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def save(messages):
    with tempfile.NamedTemporaryFile("w", dir=".", delete=False) as tmp:
        json.dump(messages, tmp)
        tmp.flush()
        os.fsync(tmp.fileno())
    os.replace(tmp.name, "state.json")
    folder = os.open(".", os.O_RDONLY)
    os.fsync(folder)
    os.close(folder)
'''

SQLITE_STATE = LOOP + '''

import sqlite3


def connection():
    db = sqlite3.connect("conversations.db")
    db.execute("CREATE TABLE IF NOT EXISTS state (id INTEGER PRIMARY KEY, body TEXT)")
    return db


def load():
    row = connection().execute("SELECT body FROM state WHERE id = 1").fetchone()
    return json.loads(row[0]) if row else None


def save(messages):
    with connection() as db:
        db.execute("INSERT OR REPLACE INTO state (id, body) VALUES (1, ?)",
                   (json.dumps(messages),))
'''


def scenario(package: str, turns: int) -> Scenario:
    model: list[dict[str, Any]] = [
        {"turn": t, "calls": [{"tool": "append_note", "args": {"text": f"note {t}"}}]}
        for t in range(1, turns + 1)]
    model.append({"turn": turns + 1, "text": "All noted."})
    return Scenario.model_validate({
        "name": "bench-sqlite-state", "dialect": "openai", "seed": 5,
        "description": "Note each step.",
        "tools": {"append_note": {"kind": "append",
                                  "target": f"{package}.tools:append_note"}},
        "model": model, "expect": {"stop_state": "complete"}})


def world_crashes(turns: int) -> list[CrashSpec]:
    events = [f"after_tool:append_note#{t}" for t in range(1, turns + 1)]
    events += [f"after_response:{t}" for t in range(1, turns + 2)]
    return [CrashSpec(e, "at", c) for e in events for c in ("process_killed", "unsynced_lost")]


def write_package(root: Path, name: str, agent: str) -> str:
    folder = root / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "tools.py").write_text(textwrap.dedent(TOOLS))
    (folder / "agent.py").write_text(agent.format(package=name))
    return name


def per_case(package: str, turns: int, rounds: int) -> tuple[float, int, dict[str, int]]:
    """Median CPU seconds per case, the cases run, and their statuses."""
    chosen = scenario(package, turns)
    entry = PlainEntry(f"{package}.agent:main")
    crashes: list[CrashSpec | None] = [None, *world_crashes(turns)]
    cases = [Case(chosen.name, Path("bench.yaml"), chosen.seed, crash, agent=entry.spec)
             for crash in crashes]
    times, statuses = [], {}
    for _ in range(rounds):
        started = time.process_time()
        statuses = {}
        for case in cases:
            status = run_case(case, chosen, entry).status
            statuses[status] = statuses.get(status, 0) + 1
        times.append((time.process_time() - started) / len(cases))
    return statistics.median(times), len(cases), statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=scaled(8, 2))
    parser.add_argument("--rounds", type=int, default=scaled(3, 1))
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        sys.path.insert(0, folder)
        root = Path(folder)
        json_agent = write_package(root, "bench_json_state", JSON_STATE)
        sqlite_agent = write_package(root, "bench_sqlite_state", SQLITE_STATE)
        for package in (json_agent, sqlite_agent):  # imports and pyfakefs's first scan
            per_case(package, 1, 1)
        figures = {}
        for label, package in (("JSON state file", json_agent), ("SQLite", sqlite_agent)):
            seconds, count, statuses = per_case(package, options.turns, options.rounds)
            figures[label] = seconds
            print(f"{label:<16} {count:>4} cases, {seconds * 1000:7.2f} ms CPU per case "
                  f"{statuses}")
    ratio = figures["SQLite"] / figures["JSON state file"]
    print(f"SQLite / JSON state file: {ratio:.2f}x per case ({options.turns} turns, "
          "one save per turn)")


if __name__ == "__main__":
    main()
