"""The careful OpenAI example agent with one change each, written as throwaway packages.

Each variant is ``examples/openai_careful/agent.py``'s source with one edit (asserted to
apply, so a change to the example cannot silently turn a variant into the original),
and tools of its own that accept what the variant passes. A variant is what a user's
agent looks like: an unchanged plain ``main(prompt)`` on the official SDK.
"""

from __future__ import annotations

import itertools
import sys
import textwrap
from pathlib import Path

from harness.intercept import PlainEntry
from harness.runner import Case, CaseResult, run_case
from harness.scenario import load_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CAREFUL_SOURCE = (EXAMPLES / "openai_careful/agent.py").read_text()

# Tools like examples/openai_agent/tools.py, which also take the key payment and mail
# APIs ask for: a real relay would drop a second send of one key.
KEYED_TOOLS = '''
def send_mail(to, body, idempotency_key=None):
    raise RuntimeError("the real mail relay must never be reached in a test")


def append_note(text, idempotency_key=None):
    raise RuntimeError("the real notes service must never be reached in a test")


def read_outbox():
    raise RuntimeError("the real outbox must never be reached in a test")
'''

# The same tools as coroutines, as an agent that runs one answer's calls side by side has them.
ASYNC_TOOLS = KEYED_TOOLS.replace("def ", "async def ")

_IMPORT = "from examples.openai_agent.agent import MODEL, SYSTEM, TOOLS, run_tool\n"
_OWN_RUN_TOOL = '''from examples.openai_agent.agent import MODEL, SYSTEM, TOOLS
from {package} import tools


def run_tool(name: str, args: dict[str, Any]) -> dict[str, Any]:
    functions = {{"send_mail": tools.send_mail, "append_note": tools.append_note,
                 "read_outbox": tools.read_outbox}}
    return functions[name](**args)
'''

#: One edit each: (the text in the careful agent, what the variant has instead).
EDITS: dict[str, tuple[tuple[str, str], ...]] = {
    # Each writer call carries the call's id as its idempotency key: stable across a
    # restart, so a relay that honours it sends the mail once whatever happens.
    "keyed": (
        ("        return json.dumps(run_tool(name, args))\n",
         "        if name in SIDE_EFFECTS:\n"
         "            args = {**args, \"idempotency_key\": f\"mail-{call['id']}\"}\n"
         "        return json.dumps(run_tool(name, args))\n"),
    ),
    # A 400 taken for a flaky network: retried with the cut streams.
    "retries-400": (
        ("        except (httpx2.TransportError, openai.APIConnectionError, IncompleteStream):\n",
         "        except (httpx2.TransportError, openai.APIConnectionError, IncompleteStream,\n"
         "                openai.BadRequestError):\n"),
    ),
    # Rate limits waited out for as long as they come: the SDK's own retries, then again.
    "uncapped-429": (
        ("            return await complete_once(client, messages)\n",
         "            while True:\n"
         "                try:\n"
         "                    return await complete_once(client, messages)\n"
         "                except openai.RateLimitError:\n"
         "                    await asyncio.sleep(1.0)\n"),
    ),
    # Rate limits waited out by the agent itself, not the SDK: the Retry-After wait is a
    # blocking time.sleep on a worker thread (to keep the event loop free), which no
    # cancel can interrupt: a cancel during the wait reaches the agent only once it is over.
    "thread-sleep": (
        ("import tempfile\n", "import tempfile\nimport time\n"),
        ("max_retries=3)", "max_retries=0)"),
        ("        except (httpx2.TransportError, openai.APIConnectionError, IncompleteStream):\n",
         "        except openai.RateLimitError as error:\n"
         "            if attempt > 3:  # as many retries as the SDK made\n"
         "                raise\n"
         "            wait = float(error.response.headers.get(\"retry-after\") or 1.0)\n"
         "            await asyncio.to_thread(time.sleep, wait)\n"
         "        except (httpx2.TransportError, openai.APIConnectionError, IncompleteStream):\n"),
    ),
    # The calls of one answer run side by side, and each result, as it finishes, is paired
    # with the next call in the model's order (wrapped, as most agents do).
    "completion-order": (
        ("def run_call(", "async def run_call("),
        ("        return json.dumps(run_tool(name, args))\n",
         "        result = await run_tool(name, args)\n"
         "        return json.dumps({\"status\": \"ok\", \"result\": result})\n"),
        ("""        for call in last["tool_calls"]:
            if call["id"] in answered:
                continue
            if state["finish_reason"] == "length":
                content = not_run(call, "truncated", "your answer was cut at the output limit")
            elif call["id"] in state["started"]:
                content = unknown_outcome(call)
            else:
                content = run_call(state, call)
            reply = {"role": "tool", "tool_call_id": call["id"], "content": content}
            state["messages"].append(reply)
            save_state(state)
""", """        todo = [call for call in last["tool_calls"] if call["id"] not in answered]

        async def reply_for(call: dict[str, Any]) -> str:
            if state["finish_reason"] == "length":
                return not_run(call, "truncated", "your answer was cut at the output limit")
            if call["id"] in state["started"]:
                return unknown_outcome(call)
            return await run_call(state, call)

        running = [asyncio.ensure_future(reply_for(call)) for call in todo]
        for call, done in zip(todo, asyncio.as_completed(running)):
            reply = {"role": "tool", "tool_call_id": call["id"], "content": await done}
            state["messages"].append(reply)
            save_state(state)
"""),
    ),
    # The state kept as a log of snapshots, one JSON line each, appended and fsynced: the
    # newest line that parses wins, so a line torn by a crash is skipped. But the next
    # append lands after the torn text, on the same line, and is lost at the next restart.
    "torn-log": (
        ('STATE_FILE = "state.json"\n', 'STATE_FILE = "state.jsonl"\n'),
        ("""        with open(STATE_FILE) as f:
            state: dict[str, Any] = json.load(f)
            return state
""", """        with open(STATE_FILE, errors="replace") as f:
            for line in reversed(f.read().splitlines()):
                try:
                    state: dict[str, Any] = json.loads(line)
                except json.JSONDecodeError:
                    continue
                return state
"""),
        ('''    """Replace ``state.json`` atomically and durably."""
    folder = os.path.dirname(os.path.abspath(STATE_FILE))
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".state-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, STATE_FILE)
    except Exception:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    directory = os.open(folder, os.O_RDONLY)
''', '''    """Append the state to ``state.jsonl`` as one line, durably."""
    new = not os.path.exists(STATE_FILE)
    with open(STATE_FILE, "a") as f:
        f.write(json.dumps(state) + "\\n")
        f.flush()
        os.fsync(f.fileno())
    if not new:
        return
    directory = os.open(os.path.dirname(os.path.abspath(STATE_FILE)), os.O_RDONLY)
'''),
    ),
}

# The calls run as coroutines (a tool that starts a process waits on the event loop), and
# the note tool's child process is handed an environment, as subprocess.run(env=...) is.
_AWAITED = (
    ("def run_call(", "async def run_call("),
    ("                content = run_call(state, call)\n",
     "                content = await run_call(state, call)\n"),
)
_HANDED = "        return json.dumps(run_tool(name, args))\n"
_AWAIT_TOOL = "        return json.dumps(await run_tool(name, args))\n"
EDITS.update({
    # Nothing handed: the tool's own code decides (subprocess passes all of os.environ).
    "awaited-tools": (*_AWAITED, (_HANDED, _AWAIT_TOOL)),
    # The whole of its own environment handed on, the provider's API key in it.
    "environ-to-children": (*_AWAITED, (_HANDED, (
        "        if name == \"append_note\":\n"
        "            args = {**args, \"env\": dict(os.environ)}\n") + _AWAIT_TOOL)),
    # Only what a child process needs.
    "clean-env-to-children": (*_AWAITED, (_HANDED, (
        "        if name == \"append_note\":\n"
        "            needed = (\"PATH\", \"HOME\", \"LANG\", \"TMPDIR\")\n"
        "            env = dict((k, v) for k, v in os.environ.items() if k in needed)\n"
        "            args = {**args, \"env\": env}\n") + _AWAIT_TOOL)),
})

EDITS["resamples-a-loop"] = (
    # An answer cut at the output limit that keeps saying one thing is asked for again at
    # another temperature, twice at most (the careful agent takes it as its answer).
    ("async def complete_once(client: AsyncOpenAI, messages: list[dict[str, Any]]) -> "
     "dict[str, Any]:\n",
     "async def complete_once(client: AsyncOpenAI, messages: list[dict[str, Any]],\n"
     "                        **sampling: Any) -> dict[str, Any]:\n"),
    ("        stream_options={\"include_usage\": True},\n    )\n",
     "        stream_options={\"include_usage\": True},\n        **sampling,\n    )\n"),
    ("async def complete(client",
     "def loops(text: str) -> bool:\n"
     "    tail = text[-240:]\n"
     "    return len(tail) == 240 and any(tail.count(tail[-n:]) >= 5 for n in range(8, 48))\n"
     "\n\n"
     "async def complete(client"),
    ("            return await complete_once(client, messages)\n",
     "            answer = await complete_once(client, messages)\n"
     "            for temperature in (0.8, 1.0):\n"
     "                looping = loops(answer[\"message\"][\"content\"] or \"\")\n"
     "                if answer[\"finish_reason\"] != \"length\" or not looping:\n"
     "                    break\n"
     "                answer = await complete_once(client, messages, temperature=temperature)\n"
     "            return answer\n"),
)

#: Variants whose tools are coroutines, and whose note tool takes the child's environment.
ASYNC_VARIANTS = {"completion-order", "awaited-tools", "environ-to-children",
                  "clean-env-to-children"}
ENV_TOOLS = ASYNC_TOOLS.replace("def append_note(text, idempotency_key=None):",
                                "def append_note(text, idempotency_key=None, env=None):")


def variant_source(name: str, package: str) -> str:
    """The careful agent's source with variant ``name``'s edits applied."""
    source = CAREFUL_SOURCE
    # Every variant runs its own tools (the scenario's targets are mapped to them).
    for old, new in ((_IMPORT, _OWN_RUN_TOOL), *EDITS[name]):
        assert source.count(old) == 1, f"variant {name}: {old!r} is not in the careful agent"
        source = source.replace(old, new.replace("{package}", package)
                                .replace("{{", "{").replace("}}", "}"))
    return source


_written = itertools.count(1)


def write_variant(name: str, root: Path) -> PlainEntry:
    """Write variant ``name`` as a package under ``root`` (on ``sys.path``); its entry,
    with the scenario's tools mapped to the package's own tools."""
    package = f"careful_{name.replace('-', '_')}_{next(_written)}_{id(root) % 10_000}"
    folder = root / package
    folder.mkdir()
    (folder / "__init__.py").write_text("from .agent import main\n")
    (folder / "agent.py").write_text(variant_source(name, package))
    tools = ENV_TOOLS if name in ASYNC_VARIANTS else KEYED_TOOLS
    (folder / "tools.py").write_text(textwrap.dedent(tools))
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    tool_map = tuple((tool, f"{package}.tools:{tool}")
                     for tool in ("send_mail", "append_note", "read_outbox"))
    return PlainEntry(f"{package}:main").with_tool_map(tool_map)


def run_scenario_text(entry: PlainEntry, root: Path, text: str) -> CaseResult:
    """``entry`` on the crash-free case of the scenario ``text``, written under ``root``."""
    scenario_name = text.split("name: ", 1)[1].split("\n", 1)[0]
    path = root / f"{scenario_name}.yaml"
    path.write_text(text)
    scenario = load_scenario(path)
    return run_case(Case(scenario.name, path, scenario.seed, None, agent=entry.spec),
                    scenario, entry)
