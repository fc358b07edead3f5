"""The same agent on the same seed gives the same trace from any folder (same seed, same trace).

A case ending in the agent's exception keeps its traceback, whose frames name real
files: the agent's checkout, a framework in ``site-packages``, the standard library,
and an error's message may name a temporary file. Copied to two folders, one agent
must still give one digest.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

from harness.intercept import PlainEntry
from harness.runner import Case, CaseResult, run_case
from harness.scenario import Scenario
from harness.trace import PathRoots, path_roots, portable_paths

from .conftest import TOOLS

PACKAGE = "path_free_agent"
FRAMEWORK = "path_free_framework"

# A framework as pip installs one: it runs the agent's step and wraps what it raised.
FRAMEWORK_SOURCE = '''
import os
import tempfile


def run(step):
    try:
        return step()
    except ValueError as error:
        kept = os.path.join(tempfile.gettempdir(), "run-state.json")
        raise RuntimeError(f"the step failed; its state is kept in {kept}") from error
'''

AGENT = '''
import json

import path_free_framework


def main(prompt: str) -> str:
    return path_free_framework.run(lambda: json.loads('{"to": "cf'))
'''


def scenario() -> Scenario:
    return Scenario(
        name="paths", dialect="openai", seed=7, description="Mail the CFO the invoice.",
        tools={"mail": {"kind": "send", "target": f"{PACKAGE}.tools:send_mail"}},
        model=[{"turn": 1, "text": "Done."}], expect={"stop_state": "complete"})


def checkout(folder: Path) -> Path:
    """The agent's project in ``folder``: its package, and a framework in its own venv."""
    package = folder / PACKAGE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "tools.py").write_text(TOOLS)
    (package / "agent.py").write_text(AGENT)
    framework = folder / ".venv" / "lib" / "python3.11" / "site-packages" / FRAMEWORK
    framework.mkdir(parents=True)
    (framework / "__init__.py").write_text(FRAMEWORK_SOURCE)
    (folder / "tmp").mkdir()
    return folder


def run_from(folder: Path, monkeypatch: pytest.MonkeyPatch) -> CaseResult:
    """The case run from ``folder`` as its starting folder, its packages and temp folder."""
    with monkeypatch.context() as here:
        here.chdir(folder)
        here.syspath_prepend(str(folder))
        here.syspath_prepend(str(folder / ".venv" / "lib" / "python3.11" / "site-packages"))
        here.setenv("TMPDIR", str(folder / "tmp"))
        here.setattr(tempfile, "tempdir", None)  # found again from TMPDIR
        try:
            spec = f"{PACKAGE}.agent:main"
            return run_case(Case("paths", Path("scenarios/paths.yaml"), 7, agent=spec),
                            scenario(), PlainEntry(spec))
        finally:
            for name in [n for n in sys.modules if n.startswith((PACKAGE, FRAMEWORK))]:
                del sys.modules[name]


def test_one_agent_copied_to_two_folders_gives_one_digest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = checkout(tmp_path / "a")
    second = checkout(tmp_path / "elsewhere" / "checkout-2")
    one, two = run_from(first, monkeypatch), run_from(second, monkeypatch)

    assert one.trace is not None
    assert two.trace is not None
    traceback = one.trace.extra.agent_traceback or ""
    # The frames of every kind of file are there, written from their roots, lines kept.
    assert f'File "{PACKAGE}/agent.py", line 8, in <lambda>' in traceback
    assert f'File "<site-packages>/{FRAMEWORK}/__init__.py", line 8, in run' in traceback
    assert 'File "<python>/json/decoder.py", line' in traceback
    assert one.trace.outcome is not None
    assert one.trace.outcome.reason == ("the agent raised RuntimeError: the step failed; "
                                        "its state is kept in <tmp>/run-state.json")
    assert str(tmp_path) not in one.trace.canonical_json()
    assert one.trace.canonical_json() == two.trace.canonical_json()
    assert one.digest == two.digest


ROOTS = PathRoots.of(relative=["/srv/ci/build-17/project"], named={
    "/srv/ci/build-17/project/.venv": "<venv>",
    "/srv/ci/build-17/project/.venv/lib/python3.12/site-packages": "<site-packages>",
    "/opt/python/lib/python3.12": "<python>",
    "/var/tmp/ci": "<tmp>",
    "/home/ci": "~",
})


@pytest.mark.parametrize(("real", "portable"), [
    ("/srv/ci/build-17/project/app/agent.py", "app/agent.py"),
    ("/srv/ci/build-17/project/.venv/lib/python3.12/site-packages/openai/_base_client.py",
     "<site-packages>/openai/_base_client.py"),
    ("/srv/ci/build-17/project/.venv/bin/python", "<venv>/bin/python"),
    ("/opt/python/lib/python3.12/json/decoder.py", "<python>/json/decoder.py"),
    ("/var/tmp/ci/tmpk3j2/state.json", "<tmp>/tmpk3j2/state.json"),
    ("/home/ci/.cache/tiktoken/x", "~/.cache/tiktoken/x"),
    ("/srv/ci/build-17/project", "."),
    # Not under a root: a longer name, the tail of another path, a path of the world.
    ("/srv/ci/build-17/project-old/agent.py", "/srv/ci/build-17/project-old/agent.py"),
    ("/data/var/tmp/ci/x", "/data/var/tmp/ci/x"),
    ("/agent/state/app.db", "/agent/state/app.db"),
])
def test_a_path_is_written_from_the_deepest_root_it_lies_under(real: str, portable: str) -> None:
    assert portable_paths(f'  File "{real}", line 12, in main', ROOTS) == \
        f'  File "{portable}", line 12, in main'
    assert portable_paths(f"[Errno 2] No such file or directory: '{real}'", ROOTS) == \
        f"[Errno 2] No such file or directory: '{portable}'"


def test_the_root_itself_is_never_the_whole_file_system() -> None:
    roots = PathRoots.of(relative=[os.sep], named={})
    assert portable_paths("/etc/hosts", roots) == "/etc/hosts"


def test_an_exec_agents_working_folder_is_one_name_and_its_logs_beside_it_are_not() -> None:
    folder = os.path.join(tempfile.gettempdir(), "harness-exec-mail-k3j2ab9x")
    roots = path_roots(agent_folder=folder)
    assert portable_paths(f"I work in {folder}, see {folder}/state.json", roots) == \
        "I work in <agent-folder>, see <agent-folder>/state.json"
    assert portable_paths(f"{folder}.1.err", roots) == "<tmp>/harness-exec-mail-k3j2ab9x.1.err"
    # Without the folder, the roots are this process's, unchanged.
    assert portable_paths(folder, path_roots()) == "<tmp>/harness-exec-mail-k3j2ab9x"
