"""Calls a durable J1 journal proves never started, read off the files a crash left (J4).

DESIGN §5 J1: a tool call leaves ``intent`` → ``execution_started`` → ``result``, one
JSONL line each, and the start record is durable before the tool runs. So when the
files that survive a crash hold a call whose last record is ``intent``, the call cannot
have run, and the restart must report it ``interrupted_before_execution``, not
``unknown_after_restart`` (seed 000 §2.1). The world reads this from the crash disk at
each restart, for any agent whose files hold such a journal; an agent keeping its
intents some other way leaves nothing here, and its cases have no ``J4`` verdict.

>>> line = b'{"state":"intent","executionId":"e1","callId":"call_t1_0","tool":"mail"}\\n'
>>> never_started({"/state/journal.jsonl": line})
[('call_t1_0', 'mail')]
>>> never_started({"/state/journal.jsonl": line + line.replace(b"intent", b"result")})
[]
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

_STATES = frozenset({"intent", "execution_started", "result"})


def never_started(files: Mapping[str, bytes]) -> list[tuple[str, str]]:
    """(call id, tool) of each execution whose last durable record is ``intent``."""
    found: list[tuple[str, str]] = []
    for data in files.values():
        last: dict[str, tuple[str, str, str]] = {}
        for record in _records(data):
            last[record["executionId"]] = (record["state"], record["callId"],
                                           str(record.get("tool", "")))
        found += [(call, tool) for state, call, tool in last.values() if state == "intent"]
    return found


def _records(data: bytes) -> Iterator[dict[str, str]]:
    """The J1 records among ``data``'s complete lines; any other line is skipped."""
    if b'"executionId"' not in data:  # the quick way past every file that is no journal
        return
    for line in data.split(b"\n")[:-1]:
        try:
            record = json.loads(line)
        except ValueError:  # a torn line: the crash cut it, it proves nothing
            continue
        if (isinstance(record, dict) and record.get("state") in _STATES
                and isinstance(record.get("executionId"), str)
                and isinstance(record.get("callId"), str)):
            yield record
