"""A library imported once per worker, whose ``from time import time`` and ``from uuid
import uuid4`` were bound before any case, reads the case's clock and ids in the case."""

from __future__ import annotations

import importlib
import queue
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from fakes import VirtualClock
from harness.intercept import VIRTUAL_EPOCH, PlainEntry, virtual_time
from harness.intercept._seeded import seeded_randomness
from harness.runner import Case
from harness.runner._determinism import run_case_twice

from .conftest import TOOLS, AgentPackages
from .test_plain_agent import mail_scenario

# A third-party library as frameworks are written: names bound at import, a daemon
# exporter started at import, state kept for the life of the process.
LIBRARY = '''
import threading
from time import monotonic, sleep, time
from uuid import uuid4

STAMPS = []


def stamp():
    """A run record as a framework makes one: an id and when it was made."""
    sleep(5)
    record = {"id": str(uuid4()), "created_at": time(), "elapsed": monotonic()}
    STAMPS.append(record)
    return record


_asked, _told, _readings = threading.Event(), threading.Event(), []


def _export():
    while True:
        _asked.wait()
        _asked.clear()
        _readings.append((time(), monotonic(), uuid4()))
        _told.set()


def exporter_reading():
    """What the exporter thread, started at import, reads now."""
    _told.clear()
    _asked.set()
    assert _told.wait(10), "the exporter thread did not answer"
    return _readings[-1]


threading.Thread(target=_export, daemon=True).start()
'''

AGENT = '''
import json

from openai import AsyncOpenAI

from {library} import stamp


async def main(prompt: str) -> str:
    client = AsyncOpenAI(timeout=30.0, max_retries=0)
    response = await client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": prompt}])
    return json.dumps(stamp()) + (response.choices[0].message.content or "")
'''


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The library, imported once, outside any case, as a worker imports a framework."""
    name = f"stand_in_framework_{id(tmp_path) % 100_000}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(LIBRARY))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    yield module
    del sys.modules[name]


def test_names_bound_at_import_read_the_cases_clock_and_ids(library: Any) -> None:
    records = []
    for _ in range(2):
        clock = VirtualClock()
        with virtual_time(clock), seeded_randomness(7, incarnation=1):
            records.append(library.stamp())
        assert clock.now() == 5.0  # the library's bound sleep moved the case's clock
    assert records[0] == records[1]
    assert records[0]["created_at"] == VIRTUAL_EPOCH + 5.0
    assert records[0]["elapsed"] == 5.0
    with seeded_randomness(7, incarnation=1):
        assert records[0]["id"] == str(uuid.uuid4())


def test_the_real_functions_are_bound_back_after_the_case(library: Any) -> None:
    real = (time.time, time.monotonic, time.sleep, uuid.uuid4)
    with virtual_time(VirtualClock()), seeded_randomness(7, incarnation=1):
        assert library.time is not real[0]
    assert (library.time, library.monotonic, library.sleep, library.uuid4) == real


def test_a_thread_the_library_started_at_import_keeps_the_real_clock_and_ids(
        library: Any) -> None:
    before = time.time()
    with virtual_time(VirtualClock()), seeded_randomness(7, incarnation=1):
        wall, _, made = library.exporter_reading()
        assert library.time() == VIRTUAL_EPOCH  # the same name, in the case's thread
        ids = uuid.uuid4(), uuid.uuid4()
    assert before <= wall <= time.time()
    with seeded_randomness(7, incarnation=1):
        assert made not in (uuid.uuid4(), uuid.uuid4())
    assert made not in ids


def test_a_library_imported_during_a_case_gets_the_real_functions_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "lazily_imported_library.py").write_text(
        "from time import monotonic\nfrom uuid import uuid4\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with virtual_time(VirtualClock()), seeded_randomness(7, incarnation=1):
            lazy: Any = importlib.import_module("lazily_imported_library")
            assert lazy.monotonic() == 0.0
        assert lazy.monotonic is time.monotonic
        assert lazy.uuid4 is uuid.uuid4
        clock = VirtualClock()
        clock.advance(3.0)
        with virtual_time(clock):  # and the next case's clock after that
            assert lazy.monotonic() == 3.0
    finally:
        sys.modules.pop("lazily_imported_library", None)


def test_the_standard_librarys_own_bound_clocks_stay_real(library: Any) -> None:
    # queue's and threading's timeouts wait on real locks against the clock they bound.
    with virtual_time(VirtualClock()):
        assert library.monotonic is time.monotonic  # a library's, rebound
        assert queue.time is time.monotonic.__wrapped__  # type: ignore[attr-defined]
        assert threading._time is queue.time  # type: ignore[attr-defined]


def test_a_case_of_an_agent_on_the_library_is_deterministic(
        library: Any, agent_packages: AgentPackages) -> None:
    package = agent_packages.write({"tools": TOOLS,
                                    "agent": AGENT.replace("{library}", library.__name__)})
    scenario = mail_scenario(package, model=[{"turn": 1, "text": "Sent."}],
                             expect={"stop_state": "complete"})
    case = Case(scenario.name, Path("scenarios/mail.yaml"), scenario.seed, None,
                agent=f"{package}.agent:main")
    result = run_case_twice(case, scenario, PlainEntry(f"{package}.agent:main"))
    statuses = {v.invariant: v.status for v in result.verdicts}
    assert statuses["determinism"] == "pass", result.verdicts
    first, second = library.STAMPS[-2:]
    assert first == second
    assert first["created_at"] == VIRTUAL_EPOCH + first["elapsed"]


def test_a_library_imported_after_the_last_looked_at_module_was_dropped_is_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("dropped_library", "later_library"):
        (tmp_path / f"{name}.py").write_text("from time import monotonic\n")
    try:
        importlib.import_module("dropped_library")
        with virtual_time(VirtualClock()):
            pass  # the last module loaded, looked at
        del sys.modules["dropped_library"]
        later: Any = importlib.import_module("later_library")
        with virtual_time(VirtualClock()):
            assert later.monotonic() == 0.0
    finally:
        for name in ("dropped_library", "later_library"):
            sys.modules.pop(name, None)
