"""Keep every public ``__all__`` honest: each name exists, and nothing public is left out."""

import importlib
import types

import pytest

PACKAGES = ["harness", "harness.agent", "harness.scenario", "fakes"]


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
