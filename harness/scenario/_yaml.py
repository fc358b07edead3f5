"""Read a YAML file into plain Python data plus the position of every key and value.

ruamel.yaml's round-trip loader keeps line and column of each node and refuses
duplicate keys. Its node types (``CommentedMap``, ``ScalarFloat`` …) are turned
into plain ``dict``, ``list``, ``str``, ``int``, ``float`` and ``bool`` so the
models see exactly what the user typed, nothing library-specific::

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.yaml"
    >>> _ = path.write_text("name: x\\nseed: 7\\n")
    >>> data, source = read_yaml(path)
    >>> data, source.position(("seed",))
    ({'name': 'x', 'seed': 7}, (2, 7))
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError

from harness._errors import ScenarioError
from harness.scenario._problems import Loc
from harness.scenario._source import SourceMap

Position = tuple[int, int]


def read_yaml(path: Path) -> tuple[object, SourceMap]:
    """Parse one YAML file; every failure is a :class:`ScenarioError` naming the file."""
    text = _read_text(path)
    tree = _parse(str(path), text)
    values: dict[Loc, Position] = {(): _root_position(tree)}
    keys: dict[Loc, Position] = {}
    data = _plain(tree, (), values, keys)
    return data, SourceMap(str(path), values, keys)


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ScenarioError(str(path), None, None, f"cannot read the scenario file: {reason}",
                            expected="a readable YAML file") from exc
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, column = _offset_position(raw, exc.start)
        raise ScenarioError(str(path), line, column, "the file is not valid UTF-8",
                            value=raw[exc.start : exc.start + 1],
                            got=f"byte 0x{raw[exc.start]:02x}", expected="UTF-8 text",
                            hint="Save the file as UTF-8") from exc


def _offset_position(raw: bytes, offset: int) -> Position:
    before = raw[:offset]
    line_start = before.rfind(b"\n") + 1
    column = len(before[line_start:].decode("utf-8", errors="replace")) + 1
    return before.count(b"\n") + 1, column


def _parse(path: str, text: str) -> object:
    yaml = YAML(typ="rt")
    try:
        return yaml.load(text)
    except MarkedYAMLError as exc:
        raise _syntax_error(path, exc) from exc
    except ReaderError as exc:
        line, column = _text_position(text, exc.position)
        raise ScenarioError(path, line, column, f"invalid YAML: {exc.reason}",
                            got=_character(exc.character),
                            expected="printable text") from exc
    except (YAMLError, RecursionError, ValueError, TypeError) as exc:
        # Unmarked parser failures (and pathological nesting) still name the file.
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ScenarioError(path, None, None, f"invalid YAML: {first_line}",
                            expected="a YAML mapping") from exc


def _character(character: object) -> str:
    if isinstance(character, int):
        return f"character U+{character:04X}"
    return f"character {character!r}"


def _text_position(text: str, offset: int) -> Position:
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def _syntax_error(path: str, exc: MarkedYAMLError) -> ScenarioError:
    mark = exc.problem_mark or exc.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
    # Only the first line: the rest is ruamel's own excerpt of the file.
    problem = (exc.problem or exc.context or "unreadable YAML").strip().splitlines()[0]
    hint = _SYNTAX_HINTS.get(type(exc).__name__, "")
    if "'\\t'" in problem:
        hint = "Indent with spaces: YAML does not allow tabs there"
    return ScenarioError(path, line, column, f"invalid YAML: {problem}", hint=hint)


_SYNTAX_HINTS = {
    "DuplicateKeyError": "Each key may appear once per mapping; remove or rename one",
    "ComposerError": "A scenario file holds one YAML document; split it into two files",
}


def _root_position(tree: object) -> Position:
    if isinstance(tree, CommentedMap | CommentedSeq):
        return (tree.lc.line + 1, tree.lc.col + 1)
    return (1, 1)


def _plain(node: object, loc: Loc, values: dict[Loc, Position], keys: dict[Loc, Position]) -> Any:
    """Convert ``node`` to plain data, recording positions of everything below it."""
    if isinstance(node, CommentedMap):
        return {
            key: _child(node, key, (*loc, _loc_key(key)), values, keys)
            for key in node
        }
    if isinstance(node, CommentedSeq):
        return [_item(node, i, (*loc, i), values, keys) for i in range(len(node))]
    return _scalar(node)


def _child(node: CommentedMap, key: object, loc: Loc, values: dict[Loc, Position],
           keys: dict[Loc, Position]) -> Any:
    # Keys brought in by a merge (`<<: *defaults`) have no position of their own.
    key_position = _lc(node.lc.key, key)
    value_position = _lc(node.lc.value, key)
    if key_position is not None:
        keys[loc] = key_position
    if value_position is not None:
        values[loc] = value_position
    return _plain(node[key], loc, values, keys)


def _item(node: CommentedSeq, index: int, loc: Loc, values: dict[Loc, Position],
          keys: dict[Loc, Position]) -> Any:
    position = _lc(node.lc.item, index)
    if position is not None:
        values[loc] = position
    return _plain(node[index], loc, values, keys)


def _lc(lookup: Any, key: object) -> Position | None:
    try:
        line, column = lookup(key)
    except (KeyError, IndexError, TypeError):
        return None
    return (int(line) + 1, int(column) + 1)


def _loc_key(key: object) -> str | int:
    # Pydantic reports a mapping key as it came; anything else is only ever shown.
    return key if isinstance(key, str | int) else str(key)


def _scalar(node: object) -> object:
    """ruamel's scalar subclasses as the plain type they extend."""
    for plain in (bool, int, float, str):
        if isinstance(node, plain):
            return plain(node)
    return node
