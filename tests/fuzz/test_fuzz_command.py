"""``harness fuzz``: exit codes, the repro ``harness run`` fails on, determinism, bad input."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from harness._cli import main
from harness.scenario import load_scenario
from tests.cli.conftest import HELLO

# System tier (pytest --system): whole searches, each of many runs.
pytestmark = pytest.mark.system

NAIVE = "examples.naive_resend_agent:agent"


def test_a_correct_agent_gives_no_false_alarm(fuzz, scenario_file, tmp_path) -> None:
    code, out, _ = fuzz(scenario_file, "--budget", 25, "--out", tmp_path / "out")

    assert code == 0
    assert out == "harness fuzz: 25 schedules, no invariant violated (seed 0)\n"


def test_the_naive_agent_resends_and_the_repro_and_the_replay_command_reproduce(
        fuzz, scenario_file, tmp_path, capsys) -> None:
    # One search serves both ways of reproducing what it found: the repro file under
    # `harness run`, and the replay line it prints, which runs the one failing case.
    out_dir = tmp_path / "out"
    code, out, _ = fuzz(scenario_file, "--agent", NAIVE, "--budget", 50, "--out", out_dir)

    assert code == 1
    assert re.match(r"harness fuzz: schedule \d+ violated I1; shrunk to 1 change\(s\)", out)
    repro = out_dir / "mail-once-repro.yaml"
    assert f"repro: {repro} (" in out
    text = repro.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 15
    assert text.startswith("# I1 violated")
    assert load_scenario(repro).crash.points == ["after_tool:mail#1"]
    assert main(["run", str(repro), "--agent", NAIVE, "--out", str(tmp_path / "r")]) == 1
    assert main(["run", str(repro), "--out", str(tmp_path / "ref")]) == 0  # the reference copes
    capsys.readouterr()

    replay = shlex.split(out.splitlines()[-1].removeprefix("replay: harness "))

    assert main([*replay, "--out", str(tmp_path / "replayed")]) == 1
    summary = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"total +1 +0 +1 +0 +1 +1 .*", summary[-1])


def normalised(folder: Path, out: str) -> tuple[str, str]:
    text = (folder / "mail-once-repro.yaml").read_text(encoding="utf-8")
    return out.replace(str(folder), "OUT"), text.replace(str(folder), "OUT")


def test_the_same_seed_finds_the_same_repro(fuzz, scenario_file, tmp_path) -> None:
    runs = []
    for name in ("first", "second"):
        _, out, _ = fuzz(scenario_file, "--agent", NAIVE, "--budget", 50, "--seed", 11,
                         "--out", tmp_path / name)
        runs.append(normalised(tmp_path / name, out))

    assert runs[0] == runs[1]


def test_a_found_failure_is_tried_first_next_time(fuzz, scenario_file, tmp_path) -> None:
    args = (scenario_file, "--agent", NAIVE, "--budget", 50, "--seed", 5, "--out", tmp_path)
    fuzz(*args)
    assert (tmp_path / ".hypothesis").is_dir()

    _, out, _ = fuzz(*args)

    assert out.startswith("harness fuzz: schedule 1 violated I1")


def test_a_malformed_scenario_is_bad_input_with_its_line(fuzz, tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ndialect: openai\nseed: seven\n"
                   "model: [{turn: 1, text: hi}]\nexpect: {stop_state: complete}\n")

    code, out, err = fuzz(bad, "--out", tmp_path / "out")

    assert (code, out) == (2, "")
    assert err.startswith(f"harness: error: {bad}:3:7: seed: wrong type")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--agent", "nowhere.at.all:main"], "harness: error: --agent: got 'nowhere.at.all:main'"),
    (["--kind", "stal"], "harness: error: --kind: got 'stal'; expected a fault kind: "),
])
def test_a_bad_option_is_bad_input(fuzz, scenario_file, tmp_path, args, message) -> None:
    code, _, err = fuzz(scenario_file, *args, "--out", tmp_path / "out")

    assert code == 2
    assert err.startswith(message)
    assert "Traceback" not in err


def test_a_budget_below_one_is_refused(fuzz, scenario_file, tmp_path) -> None:
    with pytest.raises(SystemExit) as exit_:
        fuzz(scenario_file, "--budget", 0, "--out", tmp_path)

    assert exit_.value.code == 2


SYNC_MAIN = '''
import json

from openai import OpenAI

from .tools import check_outbox, send_mail

FUNCTIONS = {"mail": send_mail, "outbox": check_outbox}
TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
         for name in FUNCTIONS]


def main(prompt: str) -> str:
    client = OpenAI(timeout=30.0, max_retries=0)
    messages = [{"role": "user", "content": prompt}]
    while True:
        reply = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = FUNCTIONS[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": json.dumps(result)})
'''
SYNC_TOOLS = '''
def send_mail(to: str, body: str) -> dict:
    raise RuntimeError("never reached in a test")


def check_outbox() -> dict:
    raise RuntimeError("never reached in a test")
'''


def test_a_blocking_agent_is_fuzzed_without_loop_bound_behaviours(
        fuzz, scenario_text, tmp_path, monkeypatch, caplog) -> None:
    # Before, a hanging or ignores_cancellation tool was drawn for a plain function; each
    # left a coroutine never awaited (a RuntimeWarning, an error under filterwarnings)
    # and a pending task destroyed (logged by asyncio).
    package = tmp_path / "blocking_agent_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "agent.py").write_text(SYNC_MAIN)
    (package / "tools.py").write_text(SYNC_TOOLS)
    monkeypatch.syspath_prepend(str(tmp_path))
    # No crash, no fault: the search is about the tools' behaviours, which this agent
    # copes with (it retries nothing, so a stream fault would fail it).
    scenario_file = tmp_path / "mail-once.yaml"
    scenario_file.write_text(scenario_text.replace("crash:\n  points: [after_tool:mail#1]\n",
                                                   ""), encoding="utf-8")

    code, out, err = fuzz(scenario_file, "--agent", "blocking_agent_pkg.agent:main",
                          "--target", "mail=blocking_agent_pkg.tools:send_mail",
                          "--target", "outbox=blocking_agent_pkg.tools:check_outbox",
                          "--max-faults", 0, "--budget", 40, "--out", tmp_path / "fuzz")

    assert (code, err) == (0, ""), out
    assert "Task was destroyed" not in caplog.text


def test_a_search_with_nothing_to_vary_is_refused_not_reported_green(fuzz, tmp_path) -> None:
    # No fault allowed, no crash point, no tool: every schedule is the scenario as written.
    # Before, this printed "1 schedules, no invariant violated" and exited 0.
    scenario_file = tmp_path / "hello.yaml"
    scenario_file.write_text(HELLO.replace("anthropic", "openai"), encoding="utf-8")

    code, out, err = fuzz(scenario_file, "--max-faults", 0, "--budget", 20,
                          "--out", tmp_path / "fuzz")

    assert (code, out) == (2, "")
    assert err.startswith("harness: error: --max-faults: got 0; expected at least 1 for this "
                          "scenario. With no fault allowed there is nothing to vary"), err
    assert not (tmp_path / "fuzz").exists()  # the folder it would have made is not left


def test_no_fault_allowed_still_searches_what_else_varies(fuzz, scenario_file, tmp_path) -> None:
    # The same bound on a scenario with crash points and tools: those are still searched.
    code, out, _ = fuzz(scenario_file, "--max-faults", 0, "--budget", 10,
                        "--out", tmp_path / "fuzz")

    assert (code, out) == (0, "harness fuzz: 10 schedules, no invariant violated (seed 0)\n")
