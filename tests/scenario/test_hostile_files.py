"""Hostile scenario files: every one is a located error, fast, never a traceback or a hang.

The fuzz tests throw 10,000 generated files at the loader (four tests, so
``pytest -n auto`` spreads them over the workers; the cheap kinds of file get the
most examples); every error must name the file and a line.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from harness._cli import main
from harness.scenario import Scenario, ScenarioError, load_scenario, parse_scenario
from harness.scenario._yaml import MAX_BYTES, MAX_DEPTH
from tests.conftest import LOAD_DEPENDENT_HEALTH_CHECKS

# System tier (pytest --system): whole searches, each of many runs.
pytestmark = pytest.mark.system

NAME = "hostile.yaml"
VALID = (Path(__file__).parent / "data" / "good" / "parallel-append-crash.yaml").read_bytes()
HEAD = b"name: x\ndialect: openai\nmodel: [{turn: 1, text: Hi.}]\nexpect: {stop_state: complete}\n"


def errors_of(raw: bytes) -> list[ScenarioError]:
    """The located errors of ``raw``; [] when it is a scenario. Anything else fails the test."""
    try:
        loaded: Scenario | ScenarioError = parse_scenario(raw, NAME)
    except ScenarioError as error:
        loaded = error
    if isinstance(loaded, Scenario):
        return []
    assert loaded.errors
    for each in loaded.errors:
        assert each.path == NAME
        assert each.line is not None, str(each)
        assert each.line >= 1, str(each)
        assert str(each).startswith(f"{NAME}:{each.line}:"), str(each)
    return list(loaded.errors)


def only_error(raw: bytes) -> str:
    errors = errors_of(raw)
    assert len(errors) == 1, errors
    return str(errors[0])


# -- each bound, one file at a time ----------------------------------------------------------


def test_an_alias_inside_its_own_anchor_is_a_cycle() -> None:
    assert only_error(b"name: x\nmodel: &a [*a]\n") == (
        f"{NAME}:2:12: invalid YAML: an alias refers to a node that contains it. Point the "
        "alias at a node outside the one it is in")


def test_a_yaml_directive_after_content_names_its_line() -> None:
    assert only_error(b"name: x\n%YAML 9.9\n---\nb: 1\n") == (
        f"{NAME}:2:1: unsupported YAML version directive: got '%YAML 9.9'; expected "
        "'%YAML 1.1' or '%YAML 1.2'. Write '%YAML 1.2' or drop the directive")


def test_an_unknown_yaml_version_is_refused() -> None:
    assert only_error(b"%YAML 1.3\n---\nname: x\n").startswith(
        f"{NAME}:1:1: unsupported YAML version directive: got '%YAML 1.3'")


def test_an_alias_bomb_stops_early_and_small() -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 8)]
    raw = ("\n".join(lines) + "\n").encode()
    assert len(raw) < 400
    started = time.process_time()
    message = only_error(raw)
    assert time.process_time() - started < 1.0
    assert message.startswith(f"{NAME}:5:10: invalid YAML: aliases expand too far (28 aliases "
                              "standing for 15,670 nodes; at most 100 aliases and 10,000 nodes)")


def test_deep_nesting_is_an_error_with_a_line() -> None:
    raw = b"name: x\nmodel: " + b"[" * 1000 + b"]" * 1000 + b"\n"
    assert only_error(raw) == (
        f"{NAME}:2:{7 + MAX_DEPTH}: invalid YAML: mappings and lists nested more than "
        f"{MAX_DEPTH} levels deep. Flatten the data: no scenario needs such depth")


def test_a_hundred_thousand_unknown_keys_are_refused_fast() -> None:
    raw = HEAD + b"".join(b"k%d: 1\n" % i for i in range(100_000))
    started = time.process_time()
    message = only_error(raw)
    assert time.process_time() - started < 1.0
    assert message == (f"{NAME}:7400:7: the scenario file is too large: got {len(raw):,} bytes; "
                       f"expected at most {MAX_BYTES:,} bytes. Split it into several scenarios")


def test_as_many_unknown_keys_as_fit_are_each_reported_in_seconds() -> None:
    body, count = b"", 0
    while len(HEAD) + len(body) < MAX_BYTES - 20:
        body += b"k%d: 1\n" % count
        count += 1
    started = time.process_time()
    errors = errors_of(HEAD + body)
    assert len(errors) == count
    assert time.process_time() - started < 10.0


def test_run_rejected_combinations_are_validation_errors(tmp_path: Path, capsys) -> None:
    path = tmp_path / "two-http.yaml"
    path.write_bytes(HEAD + b"faults:\n"
                     b"  - {at: {turn: 1, attempt: 1}, kind: http_error, status: 429}\n"
                     b"  - {at: {turn: 1, attempt: 1}, kind: http_error, status: 500}\n")
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out == (
        f"{path}:7:5: faults[1]: the faults of turn 1, attempt 1 cannot be combined: got "
        "[http_error, http_error]; expected at most one 'http_error'. Move one fault to another "
        "attempt (at: {turn: ..., attempt: ...})\n")
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith(f"harness: error: {path}:7:5: faults[1]: ")


def test_every_error_of_a_file_in_one_pass() -> None:
    raw = (b"name: x\ndialect: openai\nseed: -3\ntools:\n  mail: {kind: send}\n"
           b"model:\n  - turn: 1\n    calls: [{tool: mial, args: {}}]\n  - turn: 2\n"
           b"    text: Hi.\nexpect:\n  stop_state: complete\n  side_effects: {outbox: 1}\n")
    assert [str(e).split(": ")[0:2] for e in errors_of(raw)] == [
        [f"{NAME}:3:7", "seed"],
        [f"{NAME}:8:20", "model[0].calls[0].tool"],
        [f"{NAME}:13:18", "expect.side_effects"],
    ]


TILDE_TOOLS = {
    "a null tool name": b"tools:\n  ~: {kind: send}\n",
    "the text '~' as a tool name": b"tools:\n  '~': {kind: send}\n",
    "a null tool kind": b"tools:\n  mail: {kind: ~}\n",
    "a crash after a tool named '~'": b"crash: {points: ['after_tool:~#1']}\n",
}


@pytest.mark.parametrize("tail", TILDE_TOOLS.values(), ids=TILDE_TOOLS)
def test_a_tilde_as_a_tool_name_is_a_located_error(tail: bytes) -> None:
    # YAML reads a bare ~ as null: a key or a value the models never expected to be None.
    errors = errors_of(HEAD + tail)
    assert errors
    assert all(error.line is not None and error.line >= 5 for error in errors), errors


def test_an_unreadable_path_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"cannot read the scenario file"):
        load_scenario(tmp_path)


# -- the fuzz ------------------------------------------------------------------------------

# Each example is a batch of 25 files (a batch keeps the engine's own cost per file small);
# derandomized so CI time does not wander. 4,500 + 4,000 + 1,000 + 500 = 10,000 files.
BATCH = 25


def fuzz(files: int) -> settings:
    return settings(max_examples=files // BATCH, deadline=None, derandomize=True,
                    database=None,
                    suppress_health_check=[*LOAD_DEPENDENT_HEALTH_CHECKS,
                                           HealthCheck.data_too_large])

FRAGMENTS = [*":-[]{},#&*!|>'\"%@` \t\n?", "é", "\x00", "\ufeff", "a", "1", "name: x",
             "\n  - ", "model:", "kind: ", "<<: *a", "&a ", "*a", "%YAML 1.3\n", "%YAML 9.9",
             "---\n", "...\n", "!!python/object ", "!!binary ", "? ", "[[[[", "]]]]",
             "{a: {b: {c: ", "turn: 1", "\r\n", "'", "|\n  x", ">-\n  y", "1e999", "0x1F"]
yaml_ish = st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)
keys = st.sampled_from(["name", "dialect", "model", "expect", "faults", "tools", "kind", "turn",
                        "at", "seed", "stop_state", "crash", "points", "calls", "tool", "x"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**20), st.floats(),
                    st.text(max_size=8))
nested = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)), max_leaves=12)


def dump(data: object) -> bytes:
    stream = io.BytesIO()
    YAML(typ="safe", pure=True).dump(data, stream)
    return stream.getvalue()


def spliced(raw: bytes, at: float, insert: bytes, cut: int) -> bytes:
    """``raw`` with ``cut`` bytes at fraction ``at`` replaced by ``insert``."""
    i = int(len(raw) * at)
    return raw[:i] + insert + raw[i + cut:]


@fuzz(4_500)
@given(st.lists(yaml_ish, min_size=BATCH, max_size=BATCH))
def test_fuzz_yaml_ish_text(texts: list[str]) -> None:
    for text in texts:
        errors_of(text.encode("utf-8", errors="surrogatepass"))


@fuzz(4_000)
@given(st.lists(st.binary(max_size=40), min_size=BATCH, max_size=BATCH))
def test_fuzz_bytes(blobs: list[bytes]) -> None:
    for blob in blobs:
        errors_of(blob)


@fuzz(1_000)
@given(st.lists(nested, min_size=BATCH, max_size=BATCH))
def test_fuzz_structures(trees: list[object]) -> None:
    for tree in trees:
        errors_of(dump(tree))


@fuzz(500)
@given(st.lists(st.tuples(st.floats(0, 1), st.binary(max_size=6) | st.sampled_from(
    [f.encode() for f in FRAGMENTS]), st.integers(0, 8)), min_size=BATCH, max_size=BATCH))
def test_fuzz_edits_of_a_valid_scenario(edits: list[tuple[float, bytes, int]]) -> None:
    for at, insert, cut in edits:
        errors_of(spliced(VALID, at, insert, cut))
