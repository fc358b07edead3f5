"""One clock for a served exchange: what the server says about time is in scaled time too.

The record keeps the fakes' scenario seconds (the checks judge by them); the wire
carries the client's: waits multiplied by ``--time-scale``, dates on the real
calendar (harness.serve._wire_time). Scales the server cannot keep are refused.
"""

from __future__ import annotations

import email.utils
import math
from datetime import UTC, datetime

import pytest

from harness._cli import main
from harness._errors import ConfigError
from harness.ports import CALENDAR_ORIGIN_UNIX
from harness.serve._wire_time import wire_headers
from harness.serve._world import ScaledClock


def on_wire(name: str, value: str, scale: float) -> tuple[str, ScaledClock]:
    clock = ScaledClock(scale)
    [(_, sent)] = wire_headers([(name, value)], clock)
    return sent, clock


@pytest.mark.parametrize(("name", "planned", "scale", "sent"), [
    ("retry-after", "30", 0.01, "0.3"),
    ("retry-after", "30", 0.001, "0.03"),
    ("retry-after", "30", 1.0, "30"),
    ("Retry-After", "7", 0.01, "0.07"),
    ("retry-after-ms", "1500", 0.01, "15"),
    ("retry-after-ms", "1500", 0.001, "1.5"),
    ("x-ratelimit-reset-requests", "6m0s", 0.01, "3.6s"),
    ("x-ratelimit-reset-tokens", "120ms", 0.01, "2ms"),
    ("x-request-id", "req_30", 0.01, "req_30"),
])
def test_waits_on_the_wire_are_scaled(name: str, planned: str, scale: float, sent: str
                                      ) -> None:
    assert on_wire(name, planned, scale)[0] == sent


def test_a_scaled_wait_is_never_shorter_than_asked() -> None:
    # 1 s at 0.0012 is 1.2 ms: rounded up to the next thousandth, never down.
    assert on_wire("retry-after", "1", 0.0012)[0] == "0.002"


def test_an_http_date_retry_after_is_on_the_real_calendar_a_scaled_wait_away() -> None:
    # 30 scenario seconds after the world's day began: 0.3 real s after the world began.
    planned = email.utils.formatdate(CALENDAR_ORIGIN_UNIX + 30, usegmt=True)
    sent, clock = on_wire("retry-after", planned, 0.01)
    real = email.utils.parsedate_to_datetime(sent).timestamp()
    began = clock.real_unix(CALENDAR_ORIGIN_UNIX)
    assert real == math.ceil(began + 0.3)  # whole seconds: rounded up, never early
    assert 0.3 <= real - began < 1.3


def test_anthropic_reset_dates_are_on_the_real_calendar() -> None:
    planned = datetime.fromtimestamp(CALENDAR_ORIGIN_UNIX + 60, UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    sent, clock = on_wire("anthropic-ratelimit-requests-reset", planned, 0.01)
    real = datetime.strptime(sent, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    assert real == math.ceil(clock.real_unix(CALENDAR_ORIGIN_UNIX) + 0.6)


def test_a_value_the_fakes_did_not_write_goes_out_as_it_is() -> None:
    assert on_wire("retry-after", "soon", 0.01)[0] == "soon"


@pytest.mark.parametrize("scale", ["1e-9", "0.0002", "0"])
def test_a_scale_the_server_cannot_keep_is_refused_with_the_reason(
        scale: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["run", "examples/scenarios/exec-mail-once.yaml", "--exec", "true",
              "--time-scale", scale])
    assert stopped.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"harness run: error: argument --time-scale: got '{scale}'; expected ")
    if scale != "0":
        assert error.endswith("expected at least 0.001: the server keeps time to about a "
                              "millisecond, and below 0.001 a millisecond is more than a "
                              "scenario second")


def test_a_served_world_refuses_such_a_scale_too() -> None:
    with pytest.raises(ConfigError, match=r"a factor of at least 0\.001"):
        ScaledClock(1e-9)
