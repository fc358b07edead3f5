"""What every front end of the harness shares: the run, serve, record, report and gate commands.

The command line, the pytest plugin and the report commands read a ``--seed`` and a
``--prices`` file the same way, read a file the user named only when it is a regular file of a
bounded size (:func:`read_input`: a pipe or ``/dev/zero`` is refused, never read),
and write each result or report file whole (a temporary name, then a rename), so
a killed run leaves the old file or the new one, never half; a run stopped before
it wrote its files is found by :func:`unfinished_run`.

>>> parse_seed("7")
7
"""

import typing

from harness import _lazy
from harness._inputs import read_input
from harness._options import (
    MAX_SEED,
    chosen_cases,
    input_path,
    output_path,
    parse_seed,
    positive_float,
    whole_number,
)
from harness._price_file import add_prices_option, load_price_file, use_price_file

# write_atomic's module reads the runner's row types: loaded on first use, so that an
# argument parser reading --seed costs no runner import.
if typing.TYPE_CHECKING:
    from harness._journal import Unfinished, unfinished_run
    from harness._output import write_atomic
else:
    __getattr__ = _lazy.lazy_exports(__name__, {
        "harness._output": ["write_atomic"],
        "harness._journal": ["Unfinished", "unfinished_run"],
    })

# A front end's package (reports) loads its heavy names on first use too, and makes its
# __all__ from the same list.
lazy_exports = _lazy.lazy_exports
exported_names = _lazy.exported_names

__all__ = ["MAX_SEED", "Unfinished", "add_prices_option", "chosen_cases", "exported_names",
           "input_path", "lazy_exports", "load_price_file", "output_path", "parse_seed",
           "positive_float", "read_input", "unfinished_run", "use_price_file", "whole_number",
           "write_atomic"]
