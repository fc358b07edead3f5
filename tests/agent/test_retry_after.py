"""S5: parsing how long the server asked us to wait."""

from __future__ import annotations

import pytest

from harness.ports import parse_retry_after

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        pytest.param({"retry-after": "5"}, 5.0, id="seconds"),
        pytest.param({"retry-after": " 2.5 "}, 2.5, id="fractional seconds"),
        pytest.param({"retry-after": "0"}, 0.0, id="zero"),
        pytest.param({"retry-after-ms": "1500"}, 1.5, id="milliseconds"),
        pytest.param({"retry-after-ms": "20", "retry-after": "9"}, 0.02, id="ms wins"),
        pytest.param({"retry-after-ms": "junk", "retry-after": "9"}, 9.0, id="bad ms falls back"),
        pytest.param({"retry-after": "Thu, 01 Jan 2026 00:00:30 GMT"}, 30.0, id="http date"),
        pytest.param(
            {"retry-after": "Thursday, 01-Jan-26 00:00:30 GMT"}, 30.0, id="obsolete rfc850 date"
        ),
        pytest.param({"retry-after": "Wed, 31 Dec 2025 23:59:00 GMT"}, 0.0, id="date in the past"),
        pytest.param({"retry-after": "Thu, 01 Jan 2026 02:00:00 GMT"}, 7200.0, id="above any cap"),
        pytest.param({"retry-after": "3600"}, 3600.0, id="large seconds kept for the cap"),
        pytest.param({"retry-after": "-3"}, None, id="negative"),
        pytest.param({"retry-after-ms": "-3"}, None, id="negative ms"),
        pytest.param({"retry-after": "soon"}, None, id="garbage"),
        pytest.param({"retry-after": "nan"}, None, id="nan"),
        pytest.param({"retry-after": "inf"}, None, id="infinite"),
        pytest.param({"retry-after": ""}, None, id="empty"),
        pytest.param({}, None, id="absent"),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, now_unix=NOW) == expected


def test_an_http_date_is_read_against_the_given_now() -> None:
    headers = {"retry-after": "Thu, 01 Jan 2026 00:01:00 GMT"}
    assert parse_retry_after(headers, now_unix=NOW + 45) == 15.0
