"""Keep ``reports.__all__`` honest, as tests/test_exported_members.py does for the others."""

import types

import reports


def test_all_names_exist_and_are_unique():
    assert len(reports.__all__) == len(set(reports.__all__))
    assert [name for name in reports.__all__ if not hasattr(reports, name)] == []


def test_every_public_member_is_exported():
    public = {name for name, value in vars(reports).items()
              if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    assert public - set(reports.__all__) == set()
