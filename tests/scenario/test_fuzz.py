"""Whatever a file holds, the loader returns a Scenario or raises ScenarioError, nothing else."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from harness.scenario import Scenario, ScenarioError, load_scenario
from tests.conftest import LOAD_DEPENDENT_HEALTH_CHECKS

# System tier (pytest --system): whole searches, each of many runs.
pytestmark = pytest.mark.system

VALID = (Path(__file__).parent / "data" / "good" / "parallel-append-crash.yaml").read_text()

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[*LOAD_DEPENDENT_HEALTH_CHECKS,
                                       HealthCheck.function_scoped_fixture])


def load_text(tmp_path: Path, data: bytes) -> None:
    """Load ``data`` as a file; fail the test on anything but a Scenario or a ScenarioError."""
    path = tmp_path / "fuzz.yaml"
    path.write_bytes(data)
    try:
        loaded: Scenario | ScenarioError = load_scenario(path)
    except ScenarioError as error:
        loaded = error
    if isinstance(loaded, ScenarioError):
        assert loaded.errors
        assert all(e.path == str(path) for e in loaded.errors)
        assert all(e.line is None or e.line >= 1 for e in loaded.errors)
        assert str(loaded).count("\n") == len(loaded.errors) - 1
    else:
        assert isinstance(loaded, Scenario)


def dump(data: object) -> bytes:
    stream = io.BytesIO()
    YAML(typ="safe", pure=True).dump(data, stream)
    return stream.getvalue()


YAML_ALPHABET = st.sampled_from([*":-[]{},#&*!|>'\"%@` \t\n?", "é", "\x00", "a", "1"])
yaml_ish = st.lists(
    st.one_of(YAML_ALPHABET, st.sampled_from(["name: x", "\n  - ", "model:", "kind: ", "<<: *a"])),
    max_size=40,
).map("".join)


@FUZZ
@given(text=yaml_ish)
def test_random_yaml_ish_text(tmp_path: Path, text: str) -> None:
    load_text(tmp_path, text.encode("utf-8", errors="surrogatepass"))


@FUZZ
@given(data=st.binary(max_size=60))
def test_random_bytes(tmp_path: Path, data: bytes) -> None:
    load_text(tmp_path, data)


keys = st.sampled_from(["name", "dialect", "model", "expect", "faults", "tools", "kind", "turn",
                        "at", "seed", "stop_state", "crash", "points", "x"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**20), st.floats(),
                    st.text(max_size=8))
nested = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)), max_leaves=20)


@FUZZ
@given(data=nested)
def test_random_structures_dumped_to_yaml(tmp_path: Path, data: object) -> None:
    load_text(tmp_path, dump(data))


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a node of a plain YAML tree."""
    children: list[tuple[Any, Any]] = []
    if isinstance(node, dict):
        children = list(node.items())
    elif isinstance(node, list):
        children = list(enumerate(node))
    found = [prefix] if prefix else []
    for key, child in children:
        found += _paths(child, (*prefix, key))
    return found


def _parent(tree: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        tree = tree[part]
    return tree


def _mutate(tree: Any, path: tuple[Any, ...], how: str, replacement: object) -> None:
    parent, last = _parent(tree, path), path[-1]
    if how == "drop":
        del parent[last]
    elif how == "rename" and isinstance(parent, dict):
        parent[f"{last}x"] = parent.pop(last)
    else:
        parent[last] = replacement


@FUZZ
@given(
    data=st.data(),
    how=st.sampled_from(["drop", "rename", "retype"]),
    replacement=scalars | st.just([]) | st.just({}),
)
def test_mutations_of_a_valid_scenario(tmp_path: Path, data: st.DataObject, how: str,
                                       replacement: object) -> None:
    tree = YAML(typ="safe", pure=True).load(VALID)
    path = data.draw(st.sampled_from(_paths(tree)))
    _mutate(tree, path, how, replacement)
    load_text(tmp_path, dump(tree))
