"""A framework's schema of a tool, derived once per worker, not once per incarnation.

The frameworks themselves are exercised in tests/examples/test_framework_schemas.py; here a
stand-in framework counts its derivations, so what is memoized, and what is not, is seen
without one installed.
"""

from __future__ import annotations

import os
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest

from harness.intercept import _frameworks
from harness.intercept._frameworks import _Derivation, schemas_derived_once
from harness.intercept._targets import stand_in

FRAMEWORK = "slow_schema_framework"
TOOLS = '''
"""The agent's tools, imported afresh for each incarnation."""


class Mail:
    """A class of the agent's own package: a new object every incarnation."""


def send_mail(to: str, body: str = "") -> dict:
    """Send a mail."""
    return {}


def send_typed(mail: Mail) -> dict:
    return {}


def send_with(sender):
    def send(to: str) -> dict:
        """Send a mail through ``sender``."""
        return sender(to)
    return send


def logged(function):
    import functools

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)
    return wrapper


send_logged = logged(send_mail)
'''
_CODE = compile(textwrap.dedent(TOOLS), "/agent/tools.py", "exec")


class _Counting:
    """A framework's derivation: a new schema (a model class and a dict) every call."""

    def __init__(self) -> None:
        self.calls = 0

    def derive(self, name: str, func: Any, *, strict: bool = True) -> dict[str, Any]:
        self.calls += 1
        model = type(f"{name}Schema", (), {"fields": list(func.__annotations__)})
        return {"model": model, "json": {"properties": {key: {} for key in model.fields}},
                "strict": strict}

    def model_of(self, name: str, func: Any) -> type:
        self.calls += 1
        return type(f"{name}Model", (), {"fields": list(func.__annotations__)})

    def subset(self, name: str, model: type) -> type:
        self.calls += 1
        return type(f"{name}Subset", (model,), {})


@pytest.fixture
def framework(monkeypatch: pytest.MonkeyPatch) -> _Counting:
    counting = _Counting()
    module = types.ModuleType(FRAMEWORK)
    module.derive = counting.derive  # type: ignore[attr-defined]
    module.model_of = counting.model_of  # type: ignore[attr-defined]
    module.subset = counting.subset  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, FRAMEWORK, module)
    monkeypatch.setattr(_frameworks, "_DERIVATIONS", (
        _Derivation(FRAMEWORK, "derive", 1, "func"),
        _Derivation(FRAMEWORK, "model_of", 1, "func"),
        _Derivation(FRAMEWORK, "subset", 1, "model", from_schema=True)))
    monkeypatch.setattr(_frameworks, "_SCHEMAS", type(_frameworks._SCHEMAS)())
    return counting


def incarnation() -> types.ModuleType:
    """The agent's tools module as one incarnation imports it: fresh, the same code."""
    module = types.ModuleType("user_tools")
    exec(_CODE, module.__dict__)
    return module


def stand_in_for(function: Any) -> Any:
    async def call(tool: str, args: dict[str, Any]) -> Any:
        return {}

    return stand_in("mail", function, call, lambda tool, args: {})


def derive(*args: Any, **kwargs: Any) -> Any:
    return sys.modules[FRAMEWORK].derive(*args, **kwargs)


def test_a_stand_ins_schema_is_derived_once_for_every_incarnation(framework: _Counting) -> None:
    schemas = []
    for _ in range(3):
        tools = incarnation()
        with schemas_derived_once():
            schemas.append(derive("send_mail", stand_in_for(tools.send_mail)))
    assert framework.calls == 1
    assert schemas[0] == schemas[2]
    # Each incarnation's framework may edit what it was given: the next is untouched.
    schemas[0]["json"]["properties"].clear()
    assert schemas[1]["json"]["properties"] == {"to": {}, "body": {}, "return": {}}


def test_the_calls_other_arguments_are_part_of_the_key(framework: _Counting) -> None:
    tools = incarnation()
    with schemas_derived_once():
        strict = derive("send_mail", stand_in_for(tools.send_mail))
        loose = derive("send_mail", func=stand_in_for(tools.send_mail), strict=False)
        renamed = derive("mail", stand_in_for(tools.send_mail))
    assert framework.calls == 3
    assert (strict["strict"], loose["strict"]) == (True, False)
    assert renamed["model"].__name__ == "mailSchema"


def test_the_agents_own_function_is_derived_once_for_every_incarnation(
        framework: _Counting) -> None:
    schemas = []
    for _ in range(3):
        tools = incarnation()
        with schemas_derived_once():
            schemas.append(derive("send_mail", tools.send_mail))
    assert framework.calls == 1
    assert schemas[0] == schemas[2]
    schemas[0]["json"]["properties"].clear()
    assert schemas[1]["json"]["properties"] == {"to": {}, "body": {}, "return": {}}


def test_an_own_function_and_the_stand_in_for_it_are_kept_apart(framework: _Counting) -> None:
    tools = incarnation()
    with schemas_derived_once():
        derive("send_mail", tools.send_mail)
        derive("send_mail", stand_in_for(tools.send_mail))
    assert framework.calls == 2


def test_a_function_whose_signature_is_not_its_codes_own_is_derived_every_time(
        framework: _Counting) -> None:
    """A closure, a wrapper (``inspect.signature`` follows ``__wrapped__``) and a function
    given a ``__signature__``: the key does not hold what the framework reads."""
    tools = incarnation()
    given = tools.logged(tools.send_mail)
    given.__signature__ = None
    with schemas_derived_once():
        for function in (tools.send_with(print), tools.send_logged, given, tools.send_with(len),
                         tools.send_logged, given):
            derive("send", function)
    assert framework.calls == 6


def test_an_own_function_renamed_is_another_schema(framework: _Counting) -> None:
    tools = incarnation()
    with schemas_derived_once():
        derive("send", tools.send_mail)
        tools.send_mail.__name__ = "post_mail"  # what the OpenAI Agents SDK names the tool
        derive("send", tools.send_mail)
    assert framework.calls == 2


def test_a_hint_naming_the_agents_own_class_is_derived_for_each_incarnation(
        framework: _Counting) -> None:
    for _ in range(2):
        tools = incarnation()
        with schemas_derived_once():
            derive("send_typed", stand_in_for(tools.send_typed))
            derive("send_typed", tools.send_typed)
    assert framework.calls == 4


def test_a_subset_of_a_schema_handed_out_is_derived_once_and_of_another_every_time(
        framework: _Counting) -> None:
    framework_module: Any = sys.modules[FRAMEWORK]
    with schemas_derived_once():
        model = framework_module.model_of("send_mail", stand_in_for(incarnation().send_mail))
        first = framework_module.subset("call", model)
        second = framework_module.subset("call", model=model)
        framework_module.subset("call", type("Own", (), {}))
        framework_module.subset("call", type("Own", (), {}))
    assert first is second
    assert framework.calls == 1 + 1 + 2
    assert framework_module.subset("call", model) is not first  # the framework's own again


def test_the_framework_is_as_it_was_once_the_incarnation_ends(framework: _Counting) -> None:
    before = sys.modules[FRAMEWORK].derive  # type: ignore[attr-defined]
    with schemas_derived_once():
        assert sys.modules[FRAMEWORK].derive is not before  # type: ignore[attr-defined]
    assert sys.modules[FRAMEWORK].derive is before  # type: ignore[attr-defined]


def test_a_framework_not_imported_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_frameworks, "_DERIVATIONS", (
        _Derivation("not_imported_framework", "derive", 0, "func"),))
    with schemas_derived_once():
        assert "not_imported_framework" not in sys.modules


PLANNED_AGENT = f'''
import {FRAMEWORK}


def note(text: str) -> dict:
    """Keep a note."""
    return {{}}


SCHEMA = {FRAMEWORK}.derive("note", note)


def main(prompt: str) -> str:
    return "done"
'''


def test_planning_an_agent_keeps_the_schemas_its_import_derives(
        framework: _Counting, agent_packages: Any) -> None:
    # Planning imports the agent once per scenario, outside any incarnation: its
    # framework derived every tool's schema again each time (an OpenAI Agents SDK agent,
    # three tools, a millisecond each).
    from harness.intercept import PlainEntry
    from harness.runner import plan_cases

    from .conftest import TOOLS
    from .test_plain_agent import mail_scenario

    package = agent_packages.write({"tools": TOOLS, "agent": PLANNED_AGENT})
    entry = PlainEntry(f"{package}.agent:main")
    for _ in range(2):
        sys.modules.pop(f"{package}.agent", None)  # an incarnation forgot it meanwhile
        plan_cases(mail_scenario(package), "mail.yaml", entry)
    assert framework.calls == 1


# ------------------------------------------------- what a framework keeps for the process

CACHING_AGENT = '''
import dspy


def main(prompt: str) -> str:
    held = len(dspy.cache)  # built on first use, as DSPy builds its LM cache
    dspy.cache.append(prompt)
    return f"the cache held {held}"
'''


def test_a_frameworks_process_cache_does_not_reach_the_next_case(
        agent_packages: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # DSPy builds its LM cache on the first call and keeps it for the process; a worker
    # runs many cases, so a later case's requests were answered from an earlier one's.
    framework = types.ModuleType("dspy")

    def build(name: str) -> Any:
        if name != "cache":
            raise AttributeError(name)
        framework.cache = []  # type: ignore[attr-defined]
        return framework.cache  # type: ignore[attr-defined]

    framework.__getattr__ = build  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "dspy", framework)
    package = agent_packages.write({"agent": CACHING_AGENT})
    answers = [_final_answer_of_a_hello_case(package) for _ in range(2)]
    assert answers == ["the cache held 0", "the cache held 0"]
    assert "cache" not in vars(framework)  # nor is it kept after the case


MEMOIZING_AGENT = '''
import os

import crewai_core.version as version


def main(prompt: str) -> str:
    folder = version._get_cache_file()
    return f"folder made: {os.path.isdir(folder)}"
'''


def test_a_frameworks_memoized_function_forgets_what_an_earlier_case_made(
        agent_packages: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # CrewAI's version check memoizes its cache file's path with lru_cache, making the
    # folder on the first call: only a worker's first case made it on its disk, and a
    # second run of a later case, made in the same worker, differed.
    import functools

    package_module = types.ModuleType("crewai_core")
    framework = types.ModuleType("crewai_core.version")
    folder = str(tmp_path / "home" / ".cache" / "crewai")

    @functools.lru_cache(maxsize=1)
    def _get_cache_file() -> str:
        os.makedirs(folder, exist_ok=True)
        return folder

    framework._get_cache_file = _get_cache_file  # type: ignore[attr-defined]
    package_module.version = framework  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "crewai_core", package_module)
    monkeypatch.setitem(sys.modules, "crewai_core.version", framework)
    package = agent_packages.write({"agent": MEMOIZING_AGENT})
    answers = [_final_answer_of_a_hello_case(package) for _ in range(2)]
    # Each case's disk is its own: the folder is made on it in every case, not the first.
    assert answers == ["folder made: True", "folder made: True"]
    assert framework._get_cache_file is _get_cache_file  # type: ignore[attr-defined]


def _final_answer_of_a_hello_case(package: str) -> str | None:
    """The final answer of ``package``'s agent in one case of a one-turn scenario."""
    from harness.intercept import PlainEntry
    from harness.runner import Case, run_case
    from harness.scenario import Scenario

    scenario = Scenario(name="hello", dialect="openai", seed=2, description="Say hello.",
                        model=[{"turn": 1, "text": "Hello."}],
                        expect={"stop_state": "complete"})
    case = Case("hello", Path("hello.yaml"), 2, None, agent=f"{package}.agent:main")
    result = run_case(case, scenario, PlainEntry(f"{package}.agent:main"))
    assert result.trace is not None
    return result.trace.extra.final_answer


LAUNCHING_AGENT = '''
from dbos._dbos import DBOS


def main(prompt: str) -> str:
    app = DBOS(config={"system_database_url": "sqlite:///dbos.sqlite"})
    launched_before = app.launched
    DBOS.launch()
    return f"launched before: {launched_before}"
'''


def test_a_frameworks_process_wide_instance_is_shut_down_after_each_incarnation(
        agent_packages: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # DBOS keeps one launched instance per process (DBOS(config) hands back the one there
    # is): a later case's DBOS(config) and launch() found an earlier case's, with its
    # engine on that case's database ("no such table: workflow_status").
    destroyed: list[bool] = []

    class DBOS:
        instance: Any = None

        def __new__(cls, *, config: dict[str, Any]) -> Any:
            if cls.instance is None:
                cls.instance = super().__new__(cls)
                cls.instance.launched = False
                framework._dbos_global_instance = cls.instance  # type: ignore[attr-defined]
            return cls.instance

        @classmethod
        def launch(cls) -> None:
            cls.instance.launched = True

        @classmethod
        def destroy(cls, *, destroy_registry: bool = False) -> None:
            destroyed.append(destroy_registry)
            cls.instance = framework._dbos_global_instance = None  # type: ignore[attr-defined]

    package_module = types.ModuleType("dbos")
    framework = types.ModuleType("dbos._dbos")
    framework.DBOS = DBOS  # type: ignore[attr-defined]
    framework._dbos_global_instance = None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "dbos", package_module)
    monkeypatch.setitem(sys.modules, "dbos._dbos", framework)
    package = agent_packages.write({"agent": LAUNCHING_AGENT})
    answers = [_final_answer_of_a_hello_case(package) for _ in range(2)]
    assert answers == ["launched before: False", "launched before: False"]
    assert DBOS.instance is None  # nor is it kept after the case
    # Once after each case's incarnation, with its registry; never where none was made.
    assert destroyed == [True, True]
