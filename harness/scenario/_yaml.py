"""Read a YAML file into plain Python data plus the position of every key and value.

ruamel.yaml's round-trip loader keeps line and column of each node and refuses
duplicate keys. The loader is bounded, so a hostile file is an error with a line,
never a hang or a traceback: at most :data:`MAX_BYTES` bytes, :data:`MAX_DEPTH`
levels of nesting, :data:`MAX_ALIASES` aliases expanding to at most
:data:`MAX_EXPANDED_NODES` nodes, no alias inside the node it names, and only the
YAML versions 1.1 and 1.2. Its node types (``CommentedMap``, ``ScalarFloat`` …) are turned
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

import copy
import errno
import functools
import re
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.composer import Composer, ComposerError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import MappingNode, Node, SequenceNode
from ruamel.yaml.reader import ReaderError

from harness._errors import ScenarioError
from harness._inputs import read_input
from harness.scenario._problems import Loc
from harness.scenario._source import SourceMap

Position = tuple[int, int]

#: The largest scenario file read (the shipped ones are under 3 KB).
MAX_BYTES = 64 * 1024
#: The deepest nesting of mappings and lists.
MAX_DEPTH = 50
#: The most aliases (``*name``) one file may use.
MAX_ALIASES = 100
#: The most nodes the aliases of one file may stand for, all expanded.
MAX_EXPANDED_NODES = 10_000
_YAML_VERSIONS = ("1.1", "1.2")
_DIRECTIVE = re.compile(r"^%YAML(?:[ \t]+(\S*))?", re.MULTILINE)


def read_yaml(path: Path) -> tuple[object, SourceMap]:
    """Parse one YAML file; every failure is a :class:`ScenarioError` naming the file."""
    try:
        raw = read_input(path, MAX_BYTES)  # a pipe or a device is refused, never read
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            raise ScenarioError(str(path), None, None, "the scenario file is too large",
                                got=f"more than {MAX_BYTES:,} bytes",
                                expected=f"at most {MAX_BYTES:,} bytes",
                                hint="Split it into several scenarios") from None
        reason = exc.strerror or type(exc).__name__
        raise ScenarioError(str(path), None, None, f"cannot read the scenario file: {reason}",
                            expected="a readable YAML file") from exc
    return parse_yaml(raw, str(path))


def parse_yaml(raw: bytes, path: str) -> tuple[object, SourceMap]:
    """:func:`read_yaml` of bytes already read; ``path`` names them in errors.

    The same bytes under the same name are composed once per process: the round-trip
    composer is by far the dearest step of loading a scenario (about 30 ms a file),
    and a test suite, the mutant catalogue or a fuzz search loads the same files
    again and again. Each caller gets its own copy of the data; the source map is
    never changed after it is built, so it is shared.
    """
    data, source = _composed(raw, path)
    return copy.deepcopy(data), source


@functools.lru_cache(maxsize=256)
def _composed(raw: bytes, path: str) -> tuple[object, SourceMap]:
    tree = _parse(path, _decoded(raw, path))
    values: dict[Loc, Position] = {(): _root_position(tree)}
    keys: dict[Loc, Position] = {}
    data = _plain(tree, (), values, keys)
    return data, SourceMap(path, values, keys)


def _decoded(raw: bytes, path: str) -> str:
    if len(raw) > MAX_BYTES:
        line, column = _offset_position(raw, MAX_BYTES)
        raise ScenarioError(path, line, column, "the scenario file is too large",
                            got=f"{len(raw):,} bytes", expected=f"at most {MAX_BYTES:,} bytes",
                            hint="Split it into several scenarios")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, column = _offset_position(raw, exc.start)
        raise ScenarioError(path, line, column, "the file is not valid UTF-8",
                            value=raw[exc.start : exc.start + 1],
                            got=f"byte 0x{raw[exc.start]:02x}", expected="UTF-8 text",
                            hint="Save the file as UTF-8") from exc


def _offset_position(raw: bytes, offset: int) -> Position:
    before = raw[:offset]
    line_start = before.rfind(b"\n") + 1
    column = len(before[line_start:].decode("utf-8", errors="replace")) + 1
    return before.count(b"\n") + 1, column


class _AliasCycleError(ComposerError):
    """An alias inside the node it names: the data would contain itself."""


class _AliasBombError(ComposerError):
    """More aliases, or more nodes behind them, than a scenario ever needs."""


class _BoundedComposer(Composer):
    """A composer that counts aliases and what they expand to, and refuses cycles."""

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        # A reused anchor name is valid YAML (the later one wins): no warning for it, and
        # never ruamel's raw one, which names neither the file nor how to fix anything.
        # (ruamel sets this on the instance, so a class attribute would not do.)
        self.warn_double_anchors = False
        self.aliases = 0
        self.expanded = 0
        self.sizes: dict[int, int] = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        if not self.parser.check_event(AliasEvent):
            return super().compose_node(parent, index)
        mark = self.parser.peek_event().start_mark
        node = super().compose_node(parent, index)
        self._count_alias(node, mark)
        return node

    def _count_alias(self, node: Node, mark: Any) -> None:
        if node.end_mark is None:  # still being composed: the alias is inside its anchor
            raise _AliasCycleError(None, None, "an alias refers to a node that contains it",
                                   mark)
        self.aliases += 1
        self.expanded += _expanded_size(node, self.sizes)
        if self.aliases > MAX_ALIASES or self.expanded > MAX_EXPANDED_NODES:
            raise _AliasBombError(
                None, None, f"aliases expand too far ({self.aliases} aliases standing for "
                f"{self.expanded:,} nodes; at most {MAX_ALIASES} aliases and "
                f"{MAX_EXPANDED_NODES:,} nodes)", mark)


def _expanded_size(node: Node, sizes: dict[int, int]) -> int:
    """How many nodes ``node`` stands for with every alias below it expanded (memoised)."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    size = 1
    if isinstance(node, SequenceNode):
        size += sum(_expanded_size(child, sizes) for child in node.value)
    elif isinstance(node, MappingNode):
        size += sum(_expanded_size(k, sizes) + _expanded_size(v, sizes) for k, v in node.value)
    sizes[id(node)] = size
    return size


def _check_directives(path: str, text: str) -> None:
    for match in _DIRECTIVE.finditer(text):
        version = match.group(1) or ""
        if version not in _YAML_VERSIONS:
            line, column = _text_position(text, match.start())
            raise ScenarioError(path, line, column, "unsupported YAML version directive",
                                got=repr(match.group(0)),
                                expected=" or ".join(f"'%YAML {v}'" for v in _YAML_VERSIONS),
                                hint="Write '%YAML 1.2' or drop the directive")


def _parse(path: str, text: str) -> object:
    _check_directives(path, text)
    yaml = YAML(typ="rt")
    yaml.Composer = _BoundedComposer
    yaml.max_depth = MAX_DEPTH
    try:
        return yaml.load(text)
    except MarkedYAMLError as exc:
        raise _syntax_error(path, exc) from exc
    except ReaderError as exc:
        line, column = _text_position(text, exc.position)
        raise ScenarioError(path, line, column, f"invalid YAML: {exc.reason}",
                            got=_character(exc.character),
                            expected="printable text") from exc
    except (YAMLError, RecursionError, ValueError, TypeError, KeyError,
            AssertionError) as exc:
        # Unmarked parser failures still name the file, and the line the reader got to.
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        line, column = _reader_position(yaml)
        raise ScenarioError(path, line, column, f"invalid YAML: {first_line}",
                            expected="a YAML mapping") from exc


def _reader_position(yaml: YAML) -> Position:
    reader = getattr(yaml, "_reader", None)
    if reader is None:
        return (1, 1)
    return (int(reader.line) + 1, int(reader.column) + 1)


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
    if type(exc).__name__ == "MaxDepthExceededError":  # ruamel's text names its own API
        problem = f"mappings and lists nested more than {MAX_DEPTH} levels deep"
    hint = _SYNTAX_HINTS.get(type(exc).__name__, "")
    if "'\\t'" in problem:
        hint = "Indent with spaces: YAML does not allow tabs there"
    return ScenarioError(path, line, column, f"invalid YAML: {problem}", hint=hint)


_SYNTAX_HINTS = {
    "DuplicateKeyError": "Each key may appear once per mapping; remove or rename one",
    "MaxDepthExceededError": "Flatten the data: no scenario needs such depth",
    "_AliasCycleError": "Point the alias at a node outside the one it is in",
    "_AliasBombError": "Write the data out, or use fewer aliases",
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
