"""Where each node of a YAML document was written, and errors placed there.

Locations are paths into the document (``("faults", 1, "at", "turn")``);
positions are 1-based ``(line, column)``. Keys and values are kept apart so an
unknown key can be pointed at while a wrong value is pointed at itself::

    >>> source = SourceMap("s.yaml", values={("seed",): (3, 7)}, keys={("seed",): (3, 1)})
    >>> str(source.error(Problem(("seed",), "out of range", got="-1")))
    's.yaml:3:7: seed: out of range: got -1'
"""

from __future__ import annotations

from collections.abc import Callable

from harness._errors import ScenarioError
from harness.scenario._problems import Loc, Problem, dotted


class SourceMap:
    """The positions of a loaded document's keys and values, by location."""

    def __init__(
        self,
        path: str,
        values: dict[Loc, tuple[int, int]],
        keys: dict[Loc, tuple[int, int]],
    ) -> None:
        self.path = path
        self._values = values
        self._keys = keys

    def position(self, loc: Loc, *, at_key: bool = False) -> tuple[int, int]:
        """Where ``loc`` was written; a location not in the file falls back to its parent.

        A missing key is best shown where its mapping is named, so the parent's
        key position wins over the parent's value position.
        """
        if at_key and loc in self._keys:
            return self._keys[loc]
        if loc in self._values:
            return self._values[loc]
        while loc:
            loc = loc[:-1]
            if loc in self._keys:
                return self._keys[loc]
            if loc in self._values:
                return self._values[loc]
        return (1, 1)

    def error(self, problem: Problem, within: Loc = ()) -> ScenarioError:
        """A located :class:`ScenarioError` for ``problem`` found by the model at ``within``."""
        return located_error(self.path, self.position, problem, within)


def located_error(
    path: str,
    position: Callable[..., tuple[int, int] | None],
    problem: Problem,
    within: Loc = (),
) -> ScenarioError:
    """The error for ``problem``, named by its dotted location (the mapping, for a key).

    ``position`` maps a location to ``(line, column)``, or ``None`` when unknown.
    """
    loc = within + problem.loc
    where = position(loc, at_key=problem.at_key)
    line, column = where if where is not None else (None, None)
    name = dotted(loc[:-1] if problem.at_key else loc)
    return ScenarioError(
        path, line, column, f"{name}: {problem.problem}", value=problem.value,
        got=problem.got, expected=problem.expected, hint=problem.hint,
    )
