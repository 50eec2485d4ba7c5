"""The audit writer's recent request ids: bounded, oldest out first."""

from __future__ import annotations

import pytest

from gateway.audit.recent import RecentRequests


def test_the_oldest_id_goes_first() -> None:
    recent = RecentRequests(capacity=2)
    recent.add("r1", "t1")
    recent.add("r2", "t2")
    recent.add("r3", "t1")
    assert len(recent) == 2
    assert recent.tenant_of("r1") is None
    assert (recent.tenant_of("r2"), recent.tenant_of("r3")) == ("t2", "t1")


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError):
        RecentRequests(capacity=0)
