"""The ledger counts side effects by idempotency key and refuses dead incarnations."""

from __future__ import annotations

import pytest

from fakes import DeadIncarnationError, Incarnations, ToolLedger, VirtualClock, idempotency_key
from harness.trace import EffectRecord


def test_duplicates_count_only_non_idempotent_keys() -> None:
    ledger = ToolLedger(VirtualClock())
    for _ in range(2):
        ledger.apply(tool="send", key="mail-1", idempotent=False, incarnation=1, detail={})
        ledger.apply(tool="put", key="k", idempotent=True, incarnation=1, detail={})
    assert ledger.duplicates() == {"mail-1": 2}
    assert ledger.count("k") == 2


def test_a_given_idempotency_key_wins_over_the_hash() -> None:
    assert idempotency_key("send", {"idempotency_key": "o-7", "x": 1}) == "o-7"
    assert idempotency_key("send", {"x": 1}) != idempotency_key("append", {"x": 1})


def test_a_dead_incarnation_is_refused_and_time_is_virtual() -> None:
    clock = VirtualClock(start=12.5)
    lives = Incarnations()
    ledger = ToolLedger(clock, lives)
    lives.crash()
    with pytest.raises(DeadIncarnationError):
        ledger.apply(tool="send", key="k", idempotent=False, incarnation=1, detail={})
    lives.restart()
    effect = ledger.apply(tool="send", key="k", idempotent=False, incarnation=2, detail={})
    assert (effect.incarnation, effect.at, ledger.effects) == (2, 12.5, [effect])


def test_the_ledger_keeps_the_traces_records_and_what_each_changed_beside_them() -> None:
    # The trace takes the ledger's records as they are; the arguments an effect applied,
    # which the trace leaves out, stand at the same position.
    ledger = ToolLedger(VirtualClock())
    effect = ledger.apply(tool="send", key="k", idempotent=False, incarnation=1,
                          detail={"to": "a"})
    assert type(effect) is EffectRecord
    assert (ledger.effects, ledger.details) == ([effect], [{"to": "a"}])
