"""A command imports only what it uses: every test's ``harness`` child process and every
user's ``harness run`` pays for each module the command line loads at start."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# System tier (pytest --system): real processes and servers on loopback.
pytestmark = pytest.mark.system

# Loaded by serve, compare, gate and the MCP tools only; together over a second per process.
HEAVY = ["mcp", "starlette", "uvicorn", "polars", "numpy", "jinja2",
         "harness.serve._app", "harness.record._proxy", "reports._compare"]

_LOADED = """\
import json, sys
from harness._cli import {call}
{action}
print(json.dumps(sorted(name for name in {heavy} if name in sys.modules)))
"""


def _loaded(call: str, action: str, cwd: Path) -> list[str]:
    code = _LOADED.format(call=call, action=action, heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, check=True)
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_parsing_any_command_line_loads_no_command_s_machinery(tmp_path: Path) -> None:
    action = "_parser().parse_args(['run', 'x.yaml', '--time-scale', '0.5'])"
    assert _loaded("_parser", action, tmp_path) == []


def test_a_run_of_a_plain_scenario_loads_no_server_or_report(
        tmp_path: Path, write: Callable[..., Path]) -> None:
    path = write("hello")
    action = (f"assert main(['run', {str(path)!r}, '--no-crash', "
              f"'--out', {str(tmp_path / 'out')!r}]) == 0")
    # Writing the Parquet files is the run's own business: polars may load for it.
    assert [name for name in _loaded("main", action, tmp_path) if name != "polars"] == []


@pytest.mark.parametrize("package", ["harness.serve", "harness.record", "reports",
                                     "harness.frontend"])
def test_every_name_a_lazy_package_exports_resolves(package: str) -> None:
    module = importlib.import_module(package)
    lazy = {name for names in getattr(module, "_EXPORTS", {}).values() for name in names}
    assert lazy <= set(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is getattr(module, name)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        getattr(module, "nothing_here")  # noqa: B009
