"""Record real exchanges with a provider and turn them into scenarios.

``harness record --upstream URL --out DIR`` runs :class:`RecordingProxy`, a loopback
proxy that keeps each exchange (raw bytes, per-read timing, no credentials);
``harness import CAPTURE`` turns one exchange, a HAR entry or a raw SSE body into a
commented scenario (:func:`import_capture`), so a production incident becomes a
regression scenario onto which more faults can be layered.
"""

import typing

from harness import _lazy

# Loaded on first use, so that the ``record`` and ``import`` argument parsers
# (harness.record._command) cost no proxy or reader import to other commands.
_EXPORTS = {
    "harness.record._capture": ["CREDENTIAL_HEADERS", "Capture", "Chunk", "Exchange",
                                "is_credential", "scrubbed", "write_exchange"],
    "harness.record._load": ["load_capture"],
    "harness.record._command": ["add_record_commands", "run_import", "run_record"],
    "harness.record._import": ["DEFAULT_STALL_SECONDS", "Imported", "import_capture"],
    "harness.record._proxy": ["RecordingProxy"],
    "harness.record._readers": ["READERS", "AnswerReader", "ImportedTurn"],
}
if typing.TYPE_CHECKING:
    from harness.record._capture import (
        CREDENTIAL_HEADERS,
        Capture,
        Chunk,
        Exchange,
        is_credential,
        scrubbed,
        write_exchange,
    )
    from harness.record._command import add_record_commands, run_import, run_record
    from harness.record._import import DEFAULT_STALL_SECONDS, Imported, import_capture
    from harness.record._load import load_capture
    from harness.record._proxy import RecordingProxy
    from harness.record._readers import READERS, AnswerReader, ImportedTurn
else:
    __getattr__ = _lazy.lazy_exports(__name__, _EXPORTS)

__all__ = [
    "CREDENTIAL_HEADERS",
    "DEFAULT_STALL_SECONDS",
    "READERS",
    "AnswerReader",
    "Capture",
    "Chunk",
    "Exchange",
    "Imported",
    "ImportedTurn",
    "RecordingProxy",
    "add_record_commands",
    "import_capture",
    "is_credential",
    "load_capture",
    "run_import",
    "run_record",
    "scrubbed",
    "write_exchange",
]
