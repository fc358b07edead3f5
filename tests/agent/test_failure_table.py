"""The classifier and the loop read one table of failure classes; its classes agree."""

from __future__ import annotations

import pytest

from harness.agent._classify import (
    AUTH_STATUSES,
    INFRA_KINDS,
    QUOTA_MARKERS,
    RETRYABLE_STATUSES,
    TRANSIENT_KINDS,
    USAGE_MARKERS,
    ProviderError,
    is_infra_failure,
)


def test_every_transient_failure_is_an_infrastructure_failure() -> None:
    assert TRANSIENT_KINDS < INFRA_KINDS


@pytest.mark.parametrize("marker", QUOTA_MARKERS)
def test_a_quota_that_vetoes_a_retry_also_names_the_stop_usage_limited(marker: str) -> None:
    assert ProviderError("http_status", f"error: {marker}", status=400).mentions(USAGE_MARKERS)


def test_an_auth_failure_is_never_retried_nor_an_infrastructure_failure() -> None:
    assert not AUTH_STATUSES & RETRYABLE_STATUSES
    assert not any(is_infra_failure(ProviderError("http_status", "no", status=s))
                   for s in AUTH_STATUSES)
