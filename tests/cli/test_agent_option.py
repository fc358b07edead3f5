"""``--agent MODULE:FACTORY`` runs a user's own agent through the same cases."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness._cli import main
from harness._errors import ConfigError
from harness.runner._agents import load_agent_factory

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios/tools/repeated-error-stops.yaml"
RUNNER_TESTS = str(Path(__file__).resolve().parents[1] / "runner")


@pytest.fixture
def minimal_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(RUNNER_TESTS)
    monkeypatch.setitem(sys.modules, "agents_under_test", _agents_module())


def _agents_module() -> object:
    import types

    from minimal_agent import minimal_factory

    module = types.ModuleType("agents_under_test")
    module.minimal = minimal_factory()  # type: ignore[attr-defined]
    return module


def test_the_named_agent_runs_and_is_judged(
    minimal_on_path: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(SCENARIO), "--out", str(tmp_path), "--agent",
                 "agents_under_test:minimal"]) == 1
    out = capsys.readouterr().out
    assert "  L3: deploy" in out  # the minimal agent has no repetition guard
    assert main(["run", str(SCENARIO), "--out", str(tmp_path)]) == 0  # the reference agent


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", r"^--agent: got 'no_colon'; expected MODULE:ATTRIBUTE, such as "
                     r"'mypackage\.agent:main' \(a plain main\(prompt\)\) or "
                     r"'harness\.agent:ReferenceAgent' \(a factory over the ports\)$"),
        ("no_such_module_here:f", r"^--agent: got 'no_such_module_here:f'; expected "
                                  r"MODULE:ATTRIBUTE.*\. Module 'no_such_module_here' cannot be "
                                  r"imported: No module named 'no_such_module_here'$"),
        ("harness.agent:Nope", r"^--agent: got 'harness\.agent:Nope'; expected MODULE:ATTRIBUTE"
                               r".*\. harness\.agent has no callable 'Nope'; its own callables "
                               r"are: .*$"),
        # A package re-exporting its agent's main: its submodules' callables are its own.
        ("examples.openai_agent:mian", r"\. examples\.openai_agent has no callable 'mian'; its "
                                       r"own callables are: main\. Did you mean 'main'\?$"),
    ],
)
def test_a_bad_spec_says_what_is_expected(spec: str, message: str) -> None:
    from harness import ConfigError

    with pytest.raises(ConfigError, match=message):
        load_agent_factory(spec)


def test_a_bad_spec_on_the_command_line_is_exit_2_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(SCENARIO), "--out", str(tmp_path), "--agent", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness: error: --agent: got 'nope'")
    assert "Traceback" not in err


@pytest.fixture
def package_in_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A package ``cwd_agent_pkg`` in a fresh folder that is the current one and not on sys.path.

    Its agent is the reference agent's factory; its tool a plain function.
    """
    package = tmp_path / "cwd_agent_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "agent.py").write_text("from harness.agent import ReferenceAgent as agent\n")
    (package / "tools.py").write_text("def deploy(**arguments):\n    raise RuntimeError\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    yield "cwd_agent_pkg"
    for name in [n for n in sys.modules if n.startswith("cwd_agent_pkg")]:
        del sys.modules[name]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_agent_in_the_current_folder_is_found_as_python_m_would(
        package_in_cwd: str, capsys: pytest.CaptureFixture[str], jobs: str) -> None:
    # Before, this needed PYTHONPATH=. and failed with "No module named 'cwd_agent_pkg'".
    code = main(["run", str(SCENARIO), "--out", "results", "--jobs", jobs,
                 "--agent", f"{package_in_cwd}.agent:agent"])
    assert code == 0, capsys.readouterr()


def test_an_agent_whose_import_writes_to_the_read_only_disk_is_told_so(
        package_in_cwd: str, tmp_path: Path) -> None:
    # CrewAI makes ~/.local/share/crewai when imported; in the harness's sealed processes
    # the real disk is read-only. Was: "expected MODULE:ATTRIBUTE, such as ...".
    (tmp_path / package_in_cwd / "writes.py").write_text(
        "import errno\n"
        "raise OSError(errno.EROFS, 'Read-only file system', '/home/me/.local')\n"
        "def main(prompt):\n    return 'Hi.'\n")
    with pytest.raises(ConfigError) as raised:
        load_agent_factory(f"{package_in_cwd}.writes:main")
    message = str(raised.value)
    assert "MODULE:ATTRIBUTE" not in message
    assert "an agent whose import writes no file on the real disk" in message
    assert f"importing '{package_in_cwd}.writes' wrote '/home/me/.local'" in message
    assert "import the agent once outside the harness" in message


def test_an_import_that_fails_again_on_the_throwaway_disk_is_told_by_its_write(
        package_in_cwd: str, tmp_path: Path) -> None:
    # CrewAI writes ~/.local at import, and under the fake file system its pydantic
    # models of a path fail to build: the retry's error named pyfakefs's FakePath, which
    # the user cannot act on. The refused write is the reason given.
    (tmp_path / package_in_cwd / "writes.py").write_text(
        "import errno, pathlib\n"
        "if 'pyfakefs' in type(pathlib.Path('/')).__module__:\n"
        "    raise TypeError('no schema for FakePath')\n"
        "raise OSError(errno.EROFS, 'Read-only file system', '/home/me/.local')\n"
        "def main(prompt):\n    return 'Hi.'\n")
    with pytest.raises(ConfigError) as raised:
        load_agent_factory(f"{package_in_cwd}.writes:main")
    message = str(raised.value)
    assert "FakePath" not in message
    assert f"importing '{package_in_cwd}.writes' wrote '/home/me/.local'" in message
    assert f"{package_in_cwd}.writes" not in sys.modules


ANTHROPIC = SCENARIO.parents[1] / "crash/mail-at-every-world-event-anthropic.yaml"


def test_a_run_where_every_scenario_is_skipped_checks_targets_and_exits_0(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Before, the targets were checked against the scenarios left after the dialect
    # filter: none, so a right tool name was refused ("they declare none"), exit 2.
    code = main(["run", str(ANTHROPIC), "--dialect", "openai", "--target", "mail=os:getcwd",
                 "--out", str(tmp_path / "results")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.splitlines() == [
        f"SKIPPED {ANTHROPIC}: this scenario speaks anthropic; the agent speaks openai only",
        "harness run: all 1 scenario(s) skipped: none is in a dialect the agent speaks; "
        "nothing ran",
    ]


def test_a_target_no_scenario_declares_is_refused_even_when_skipped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(ANTHROPIC), "--dialect", "openai", "--target", "mial=os:getcwd",
                 "--out", str(tmp_path / "results")])
    assert code == 2
    assert ("--target: got 'mial=os:getcwd'; expected the name of a tool the scenarios "
            "declare: mail") in capsys.readouterr().err


@pytest.mark.parametrize(("ini", "message"), [
    ("harness_agent = no_such_module_anywhere:main",
     "*ini harness_agent (*tox.ini): got 'no_such_module_anywhere:main'; expected "
     "MODULE:ATTRIBUTE*"),
    ("harness_agent = harness.intercept._plain:outcome_of_value\n"
     "harness_targets = deploy=os:no_such_function",
     "*ini harness_targets (*tox.ini): got 'deploy=os:no_such_function'; expected "
     "TOOL=MODULE:FUNCTION naming a function of the agent's code*"),
], ids=["agent", "target"])
def test_a_pytest_ini_error_names_the_ini_option(pytester: pytest.Pytester, ini: str,
                                                 message: str) -> None:
    # Before, both errors named an option ('--agent:', '--target:') never typed.
    pytester.makeini("[pytest]\n" + ini + "\n")
    pytester.mkdir("scenarios")
    (pytester.path / "scenarios/s.yaml").write_text(SCENARIO.read_text())

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.stdout.fnmatch_lines([message])
    assert "--agent:" not in result.stdout.str()
    assert "--target:" not in result.stdout.str()


def test_an_agent_on_a_client_that_connects_from_c_is_refused_at_the_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # libpq opens its sockets in C, past every interception: refused before any case.
    (tmp_path / "psycopg2").mkdir()
    (tmp_path / "psycopg2" / "__init__.py").write_text("def connect(dsn): ...\n")
    (tmp_path / "pg_agent.py").write_text(
        "import psycopg2\n\ndef main(prompt):\n    return psycopg2.connect('dbname=app')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        code = main(["run", str(SCENARIO), "--out", str(tmp_path / "out"),
                     "--agent", "pg_agent:main"])
    finally:
        for name in ("pg_agent", "psycopg2"):
            sys.modules.pop(name, None)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "psycopg2: PostgreSQL through libpq, which connects from C" in err
    assert "SQLite database" in err
    assert "Traceback" not in err
