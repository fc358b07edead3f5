"""Keep every public ``__all__`` honest: each name exists, and nothing public is left out."""

import importlib
import types

import pytest

PACKAGES = [
    "harness",
    "harness.agent",
    "harness.checks",
    "harness.fuzz",
    "harness.ports",
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
