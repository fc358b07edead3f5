"""What a fault does to a stream, by the kind a scenario and the trace name it with.

The fault classes (:mod:`fakes`) take their ``breaks_stream``, ``silences_stream`` and
``cuts_stream`` from this one table, and the runner and the checkers read a trace's
fault kinds against it, so judging a trace never loads the world that bent the stream.
A kind absent from the table means none of the three.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple


class FaultMeaning(NamedTuple):
    """``breaks_stream``: every byte may arrive and the stream is still faulty (a checker
    must not call it complete); ``silences_stream``: a begun stream goes silent with its
    connection open; ``cuts_stream``: a begun stream ends early (a reset, an error event,
    no terminal event); ``loops_answer``: the answer degenerates into one phrase said over
    and over (the model's wall, not the network's: a client may let go of it as it
    streams and resample at once, with no backoff owed)."""

    breaks_stream: bool = False
    silences_stream: bool = False
    cuts_stream: bool = False
    loops_answer: bool = False


#: The one declaration of what each fault kind means for a stream.
FAULT_MEANINGS: Mapping[str, FaultMeaning] = MappingProxyType({
    "malformed_frame": FaultMeaning(breaks_stream=True),
    "error_in_stream": FaultMeaning(breaks_stream=True, cuts_stream=True),
    "no_terminal_event": FaultMeaning(breaks_stream=True, cuts_stream=True),
    "empty_body": FaultMeaning(breaks_stream=True),
    "stall": FaultMeaning(silences_stream=True),
    "connection_reset": FaultMeaning(cuts_stream=True),
    "doom_loop": FaultMeaning(loops_answer=True),
})

BROKEN_STREAM_FAULTS: frozenset[str] = frozenset(
    kind for kind, meaning in FAULT_MEANINGS.items() if meaning.breaks_stream)
"""The kinds after which a stream is faulty even when every byte arrived."""
SILENCING_FAULTS: frozenset[str] = frozenset(
    kind for kind, meaning in FAULT_MEANINGS.items() if meaning.silences_stream)
"""The kinds that leave a begun stream silent with its connection open."""
CUTTING_FAULTS: frozenset[str] = frozenset(
    kind for kind, meaning in FAULT_MEANINGS.items() if meaning.cuts_stream)
"""The kinds that end a begun stream early."""
LOOPING_FAULTS: frozenset[str] = frozenset(
    kind for kind, meaning in FAULT_MEANINGS.items() if meaning.loops_answer)
"""The kinds whose answer is a degenerate loop (DoomLoop)."""
