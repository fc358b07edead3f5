"""Agents written the way people write them, as throwaway packages on ``sys.path``."""

from __future__ import annotations

import gc
import sys
import textwrap
from collections.abc import Callable, Iterator
from multiprocessing import util
from pathlib import Path

import pytest

TOOLS = '''
def send_mail(to: str, body: str) -> dict:
    raise RuntimeError("the real mail server must never be reached in a test")


def append_note(text: str) -> dict:
    raise RuntimeError("the real notes service must never be reached in a test")


def read_outbox() -> dict:
    raise RuntimeError("the real outbox must never be reached in a test")
'''

# A first version of an OpenAI agent: streams, runs tools, keeps nothing on disk.
OPENAI_AGENT = '''
import json

from openai import AsyncOpenAI

from {package}.tools import append_note, read_outbox, send_mail

STRING = {{"type": "string"}}
FUNCTIONS = {{"mail": send_mail, "notes": append_note, "outbox": read_outbox}}
TOOLS = [{{"type": "function", "function": {{"name": name, "parameters": {{
    "type": "object", "properties": {{"to": STRING, "body": STRING, "text": STRING}}}}}}}}
    for name in FUNCTIONS]
SENT_THIS_PROCESS = []


async def main(prompt: str) -> str:
    client = AsyncOpenAI(timeout=30.0, max_retries=0)
    messages = [{{"role": "user", "content": prompt}}]
    while True:
        stream = await client.chat.completions.create(
            model="gpt-test", messages=messages, tools=TOOLS, stream=True,
            stream_options={{"include_usage": True}})
        text, calls = "", {{}}
        async for chunk in stream:
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            text += delta.content or ""
            for call in delta.tool_calls or []:
                slot = calls.setdefault(call.index, {{"id": "", "name": "", "args": ""}})
                slot["id"] = call.id or slot["id"]
                if call.function:
                    slot["name"] = call.function.name or slot["name"]
                    slot["args"] += call.function.arguments or ""
        if not calls:
            return f"{{text}} (sent {{len(SENT_THIS_PROCESS)}} in this process)"
        messages.append({{"role": "assistant", "content": text or None, "tool_calls": [
            {{"id": c["id"], "type": "function",
              "function": {{"name": c["name"], "arguments": c["args"]}}}}
            for c in calls.values()]}})
        for call in calls.values():
            result = FUNCTIONS[call["name"]](**json.loads(call["args"]))
            SENT_THIS_PROCESS.append(call["id"])
            messages.append({{"role": "tool", "tool_call_id": call["id"],
                             "content": json.dumps(result)}})
'''


class AgentPackages:
    """Writes a package of agent modules into a temporary folder on ``sys.path``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0

    def write(self, modules: dict[str, str]) -> str:
        """A new package with ``modules`` (name → source, ``{package}`` filled in); its name."""
        self.count += 1
        package = f"user_agent_{self.count}_{id(self) % 10_000}"
        folder = self.root / package
        folder.mkdir()
        (folder / "__init__.py").write_text("")
        for name, source in modules.items():
            text = textwrap.dedent(source).replace("{package}", package) \
                if "{{" not in source else source.format(package=package)
            (folder / f"{name}.py").write_text(text)
        return package


@pytest.fixture
def agent_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AgentPackages]:
    monkeypatch.syspath_prepend(str(tmp_path))
    packages = AgentPackages(tmp_path)
    yield packages
    for name in [n for n in sys.modules if n.startswith("user_agent_")]:
        del sys.modules[name]


@pytest.fixture
def openai_agent(agent_packages: AgentPackages) -> Callable[..., str]:
    """The package name of a fresh copy of :data:`OPENAI_AGENT` (with extra modules)."""

    def make(**extra: str) -> str:
        return agent_packages.write({"tools": TOOLS, "agent": OPENAI_AGENT, **extra})

    return make


@pytest.fixture(autouse=True)
def _no_garbage_of_other_tests() -> None:
    """Collect what earlier tests in this process left before a test patches the files.

    A worker process another test started and dropped in a reference cycle keeps a
    finalizer that closes its pipe ends with ``os.close``; collected while a test's fake
    file system is active, that call is refused (an unraisable error that fails whichever
    test was running). Harness runs never patch the files of the process that starts
    workers; a test process does both. Only when such a finalizer is waiting: a
    collection before every test would double these tests' time.
    """
    if any(getattr(f, "_callback", None) is util.close_fds
           for f in list(util._finalizer_registry.values())):
        gc.collect()

