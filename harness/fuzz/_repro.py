"""The repro: a shrunk schedule written as a short, commented, valid scenario file.

The file is the base scenario's world (tools, script, budget, provider) with the
schedule's faults, crash and tool behaviours, top-level keys in block style and each
value on one line, so the whole file reads at a glance. It is loaded back before it
is reported, so a repro that would not load is never handed out.

    >>> print(flow({"kind": "stall", "at": {"turn": 1}, "seconds": 120.0}))
    {kind: stall, at: {turn: 1}, seconds: 120.0}
"""

from __future__ import annotations

import io
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ruamel.yaml import YAML

from harness.fuzz._judge import SCHEDULE_DEPENDENT, scenario_data
from harness.fuzz._search import Finding
from harness.runner import Case
from harness.scenario import in_flow_style, parse_scenario

# The order a reader meets them in the shipped scenarios.
_KEY_ORDER: Final = ("name", "dialect", "seed", "tools", "model", "faults", "crash", "budget",
                     "provider", "expect")


def flow(value: object) -> str:
    """``value`` as one line of flow-style YAML, mappings in their own order.

    >>> flow({"turn": 2, "calls": [{"tool": "outbox"}], "text": "Sent: 1 mail"})
    "{turn: 2, calls: [{tool: outbox}], text: 'Sent: 1 mail'}"
    """
    return in_flow_style(value, _scalar)


def _scalar(value: object) -> str:
    """One scalar as YAML writes it, quoted only where a plain one would read otherwise."""
    text = io.StringIO()
    _YAML.dump([value], text)
    return text.getvalue().strip()[1:-1]


_YAML: Final = YAML(typ="safe", pure=True)
_YAML.default_flow_style = True
_YAML.width = 1 << 20


def repro_text(finding: Finding, *, header: Sequence[str]) -> str:
    """The repro file's text: ``header`` as comments, then the scenario."""
    data = scenario_data(finding.scenario, finding.schedule)
    data.pop("description", None)  # it described the base scenario's own faults
    data["name"] = repro_name(finding.scenario.name)
    lines = [f"# {line}" for line in header]
    for key in sorted(data, key=_KEY_ORDER.index):
        lines += _block(key, data[key])
    return "\n".join(lines) + "\n"


def repro_name(name: str) -> str:
    """The repro's scenario name: the base's, marked, within the 100 characters a name has.

    >>> repro_name("unknown-send-is-inspected")
    'unknown-send-is-inspected-repro'
    """
    return f"{name[:94]}-repro"


def _block(key: str, value: Any) -> list[str]:
    if isinstance(value, list) and value and key in {"model", "faults"}:
        return [f"{key}:"] + [f"  - {flow(item)}" for item in value]
    line = f"{key}: {flow(value)}"
    if key == "expect":
        line += f"  # {', '.join(sorted(SCHEDULE_DEPENDENT))}: not judged under a schedule"
    return [line]


def write_repro(finding: Finding, out: Path, *, found_by: str, agent_spec: str | None,
                targets: Sequence[tuple[str, str]] = ()) -> tuple[Path, str]:
    """Write ``out/NAME-repro.yaml``; return its path and the command that replays it."""
    repro = made_repro(finding, out, found_by=found_by, agent_spec=agent_spec, targets=targets)
    repro.write()
    return repro.path, repro.replay


@dataclass(frozen=True)
class Repro:
    """A repro file not yet written: where it goes, its text, the command that replays it."""

    path: Path
    text: str
    replay: str

    def write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(self.text, encoding="utf-8")


def made_repro(finding: Finding, out: Path, *, found_by: str, agent_spec: str | None,
               targets: Sequence[tuple[str, str]] = ()) -> Repro:
    """The repro :func:`write_repro` writes, checked to load, without writing it."""
    name = repro_name(finding.scenario.name)
    path = out / f"{name}.yaml"
    case = Case(name, path, finding.scenario.seed, finding.schedule.crash,
                agent=agent_spec, targets=tuple(targets))
    violated = finding.violated[0]
    header = [f"{violated.invariant} violated ({violated.message}); found by: {found_by}",
              f"replay: {case.replay_command}"]
    text = repro_text(finding, header=header)
    # A repro that does not load is a bug here, not the user's problem.
    parse_scenario(text.encode("utf-8"), str(path))
    return Repro(path, text, case.replay_command)


def repro_command(source: Path | str, *, agent_spec: str | None, budget: int, seed: int,
                  out: Path) -> str:
    """The ``harness fuzz`` command line that finds the same repro again."""
    words = ["harness", "fuzz", str(source)]
    if agent_spec is not None:
        words += ["--agent", agent_spec]
    words += ["--budget", str(budget), "--seed", str(seed), "--out", str(out)]
    return shlex.join(words)
