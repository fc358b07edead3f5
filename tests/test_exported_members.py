"""Keep every public ``__all__`` honest: each name exists, and nothing public is left out."""

import importlib
import re
import types

import pytest

PACKAGES = [
    "harness",
    "harness.agent",
    "harness.checks",
    "harness.frontend",
    "harness.fuzz",
    "harness.intercept",
    "harness.mutants",
    "harness.ports",
    "harness.record",
    "harness.runner",
    "harness.scenario",
    "harness.serve",
    "harness.trace",
    "fakes",
    "reports",
]

# Names that may mean two things across packages: none. A new one fails the test below.
TWO_MEANINGS: set[str] = set()


@pytest.mark.parametrize("package", PACKAGES)
def test_all_names_exist_and_are_unique(package: str) -> None:
    module = importlib.import_module(package)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported))
    missing = [name for name in exported if not hasattr(module, name)]
    assert missing == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_member_is_exported(package: str) -> None:
    module = importlib.import_module(package)
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
        and name not in {"annotations"}
    }
    assert public - set(module.__all__) == set()


def test_a_name_means_one_thing_in_every_package() -> None:
    meanings: dict[str, set[int]] = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            meanings.setdefault(name, set()).add(id(getattr(module, name)))
    assert {name for name, ids in meanings.items() if len(ids) > 1} <= TWO_MEANINGS


def _isort_key(name: str) -> tuple[bool, bool, list[int | str]]:
    # As ruff sorts a literal __all__ (RUF022): constants, then classes, then the rest,
    # numbers in a name compared as numbers (check_i9 before check_i10).
    natural = [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]
    return (not name.isupper(), not name[:1].isupper(), natural)


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_sorted(package: str) -> None:
    exported = list(importlib.import_module(package).__all__)
    assert exported == sorted(exported, key=_isort_key)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_private_name_is_exported(package: str) -> None:
    exported = importlib.import_module(package).__all__
    assert [n for n in exported if n.startswith("_") and not n.endswith("__")] == []
