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
    from harness.record._capture import CREDENTIAL_HEADERS as CREDENTIAL_HEADERS
    from harness.record._capture import Capture as Capture
    from harness.record._capture import Chunk as Chunk
    from harness.record._capture import Exchange as Exchange
    from harness.record._capture import is_credential as is_credential
    from harness.record._capture import scrubbed as scrubbed
    from harness.record._capture import write_exchange as write_exchange
    from harness.record._command import add_record_commands as add_record_commands
    from harness.record._command import run_import as run_import
    from harness.record._command import run_record as run_record
    from harness.record._import import DEFAULT_STALL_SECONDS as DEFAULT_STALL_SECONDS
    from harness.record._import import Imported as Imported
    from harness.record._import import import_capture as import_capture
    from harness.record._load import load_capture as load_capture
    from harness.record._proxy import RecordingProxy as RecordingProxy
    from harness.record._readers import READERS as READERS
    from harness.record._readers import AnswerReader as AnswerReader
    from harness.record._readers import ImportedTurn as ImportedTurn
else:
    __getattr__ = _lazy.lazy_exports(__name__, _EXPORTS)

__all__ = list(_lazy.exported_names(_EXPORTS))
