"""Record real exchanges with a provider and turn them into scenarios.

``harness record --upstream URL --out DIR`` runs :class:`RecordingProxy`, a loopback
proxy that keeps each exchange (raw bytes, per-read timing, no credentials);
``harness import CAPTURE`` turns one exchange, a HAR entry or a raw SSE body into a
commented scenario (:func:`import_capture`), so a production incident becomes a
regression scenario onto which more faults can be layered.
"""

from harness.record._capture import (
    CREDENTIAL_HEADERS,
    Capture,
    Chunk,
    Exchange,
    is_credential,
    load_capture,
    scrubbed,
    write_exchange,
)
from harness.record._import import DEFAULT_STALL_SECONDS, Imported, import_capture
from harness.record._proxy import RecordingProxy
from harness.record._readers import READERS, AnswerReader, ImportedTurn

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
    "import_capture",
    "is_credential",
    "load_capture",
    "scrubbed",
    "write_exchange",
]
