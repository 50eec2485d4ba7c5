"""The one cost model, by hand: GPU-hours paid only while a deployment was declared, API
spend as recorded, savings net of both, idle GPUs apart; and, for any input, breakdowns whose
parts add up to the totals exactly."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.deployments.repository import PaidSpan
from gateway.reports.breakdown import breakdown, total
from gateway.reports.cost_model import IDLE, UsageGroup, allocate, paid_by_day, price_range
from gateway.reports.rollup_repository import Dimension

NOV_18 = datetime(2026, 11, 18, tzinfo=UTC)
NOON = NOV_18 + timedelta(hours=12)
DAY_18 = NOV_18.date()


def group(tenant: str, backend: str, tokens: int, recorded: int, baseline: int,
          zone: str = "self_hosted", day: date = DAY_18, model: str = "auto",
          rule: str = "default", requests: int = 1) -> UsageGroup:
    return UsageGroup(day, f"t-{tenant}", tenant, model, backend, rule, zone, requests, 0,
                      tokens - tokens // 4, tokens // 4, 0, recorded, baseline)


USAGE = [
    group("acme", "llama", 3000, recorded=999, baseline=5_000_000),
    group("beta", "llama", 1000, recorded=333, baseline=2_000_000, rule="cheap"),
    group("acme", "gpt", 2000, recorded=700_000, baseline=700_000, zone="external",
          model="gpt-4o"),
]
# Two GPUs at $2 each, declared at 06:00: by noon, 6 hours paid = $24.
LLAMA = PaidSpan("llama", NOV_18 + timedelta(hours=6), None, 4_000_000, 2)


def test_a_day_priced_by_hand() -> None:
    model = price_range(NOV_18, NOON, USAGE, [LLAMA], {("llama", "2026-11-18"): 90})
    assert model.gpu_micro_usd == 24_000_000
    # Busy 90 of the 360 minutes paid: $6 goes to requests by their tokens (3:1), $18 idle.
    assert model.idle_micro_usd == 18_000_000
    assert [(g.usage.tenant, g.api_micro_usd, g.gpu_micro_usd) for g in model.groups] == [
        ("acme", 0, 4_500_000), ("beta", 0, 1_500_000), ("acme", 700_000, 0)]
    # What the rows recorded for self-hosted requests (a budget estimate) is not a cost.
    assert model.api_micro_usd == 700_000
    assert model.cost_micro_usd == 24_700_000
    assert model.baseline_micro_usd == 7_700_000
    assert model.saved_micro_usd == 7_700_000 - 24_700_000

    tenants = {x.key: x for x in breakdown(model, Dimension.TENANT)}
    assert (tenants["acme"].cost_micro_usd, tenants["acme"].saved_micro_usd) == (5_200_000,
                                                                                 500_000)
    assert (tenants["beta"].cost_micro_usd, tenants["beta"].saved_micro_usd) == (1_500_000,
                                                                                 500_000)
    assert tenants[IDLE].cost_micro_usd == 18_000_000
    rules = {x.key: x.cost_micro_usd for x in breakdown(model, Dimension.RULE)}
    assert rules == {"default": 5_200_000, "cheap": 1_500_000, IDLE: 18_000_000}
    # One tenant sees its own share, never the idle GPUs.
    own = breakdown(model, Dimension.MODEL, tenant_id="t-beta")
    assert [(x.key, x.cost_micro_usd) for x in own] == [("auto", 1_500_000)]


def test_gpu_hours_start_when_the_deployment_was_declared() -> None:
    # A week's report on a deployment declared ten minutes ago pays for ten minutes.
    now = datetime(2026, 11, 25, 12, 30, tzinfo=UTC)
    fresh = PaidSpan("l4", now - timedelta(minutes=10), None, 800_000, 1)
    model = price_range(now - timedelta(days=7), now, [], [fresh], {})
    assert model.gpu_micro_usd == 800_000 * 10 // 60
    assert sum(d.paid_s for d in model.gpu_days) == 600.0


def test_reloads_and_price_changes_are_separate_spans() -> None:
    # $1/h from 00:00 to 10:00, then $3/h from 10:00; dropped at 11:00 and back at 23:00.
    spans = [
        PaidSpan("a", NOV_18, NOV_18 + timedelta(hours=10), 1_000_000, 1),
        PaidSpan("a", NOV_18 + timedelta(hours=10), NOV_18 + timedelta(hours=11), 3_000_000, 1),
        PaidSpan("a", NOV_18 + timedelta(hours=23), None, 3_000_000, 1),
    ]
    paid = paid_by_day(spans, NOV_18, NOV_18 + timedelta(days=2))
    assert paid[("a", NOV_18.date())] == (12 * 3600.0, 12 * 3600.0, 16_000_000)
    assert paid[("a", date(2026, 11, 19))] == (86_400.0, 86_400.0, 72_000_000)


def test_busy_minutes_without_tokens_go_to_the_requests_then_idle() -> None:
    errors = [group("acme", "llama", 0, 0, 0, requests=2), group("beta", "llama", 0, 0, 0)]
    model = price_range(NOV_18, NOON, errors, [LLAMA], {("llama", "2026-11-18"): 36})
    assert [g.gpu_micro_usd for g in model.groups] == [1_600_000, 800_000]
    lonely = price_range(NOV_18, NOON, [], [LLAMA], {("llama", "2026-11-18"): 36})
    assert lonely.idle_micro_usd == lonely.gpu_micro_usd == 24_000_000


def test_allocation_is_exact_and_fair() -> None:
    assert allocate(10, [1, 1, 1]) == [4, 3, 3]
    assert allocate(100, [0, 0]) == [0, 0]
    assert allocate(7, [0, 5]) == [0, 7]


@given(st.integers(0, 10**12), st.lists(st.integers(0, 10**9), min_size=1, max_size=30))
def test_allocation_always_adds_up(amount: int, weights: list[int]) -> None:
    parts = allocate(amount, weights)
    assert sum(parts) == (amount if sum(weights) else 0)
    assert all(p >= 0 for p in parts)
    if sum(weights):  # never more than one micro-USD from the exact share
        assert all(abs(p * sum(weights) - amount * w) < sum(weights)
                   for p, w in zip(parts, weights, strict=True))


BACKENDS = ("llama", "qwen", "gpt", "claude")
usage_groups = st.builds(
    lambda t, b, day, tokens, rec, base, req, rule, model: group(
        t, b, tokens, rec, base, zone="self_hosted" if b in ("llama", "qwen") else "external",
        day=NOV_18.date() + timedelta(days=day), rule=rule, model=model, requests=req),
    st.sampled_from(["acme", "beta", "gamma"]), st.sampled_from(BACKENDS), st.integers(0, 3),
    st.integers(0, 10**6), st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 50),
    st.sampled_from(["r1", "r2", ""]), st.sampled_from(["auto", "gpt-4o"]),
)
spans = st.builds(
    lambda b, start_h, length_h, price, count: PaidSpan(
        b, NOV_18 + timedelta(hours=start_h),
        None if length_h is None else NOV_18 + timedelta(hours=start_h + length_h),
        price, count),
    st.sampled_from(("llama", "qwen")), st.integers(-48, 90),
    st.one_of(st.none(), st.integers(1, 60)), st.integers(0, 50_000_000), st.integers(1, 8),
)
busy = st.dictionaries(
    st.tuples(st.sampled_from(("llama", "qwen")),
              st.sampled_from(["2026-11-18", "2026-11-19", "2026-11-20", "2026-11-21"])),
    st.integers(0, 1440),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(usage_groups, max_size=40), st.lists(spans, max_size=4), busy,
       st.integers(1, 96))
def test_every_breakdown_adds_up_to_the_totals(usage: list[UsageGroup], paid: list[PaidSpan],
                                               minutes: dict[tuple[str, str], int],
                                               hours: int) -> None:
    model = price_range(NOV_18, NOV_18 + timedelta(hours=hours), usage, paid, minutes)
    assert model.gpu_micro_usd == sum(g.gpu_micro_usd for g in model.groups) + \
        model.idle_micro_usd
    assert all(d.idle_micro_usd >= 0 and d.busy_micro_usd >= 0 for d in model.gpu_days)
    for by in Dimension:
        whole = total(breakdown(model, by))
        assert whole.cost_micro_usd == model.cost_micro_usd
        assert whole.gpu_micro_usd == model.gpu_micro_usd
        assert whole.api_micro_usd == model.api_micro_usd
        assert whole.baseline_micro_usd == model.baseline_micro_usd
        assert whole.requests == sum(u.requests for u in usage)
        # Each tenant's own view is exactly its line in the all-tenants view.
        lines = {x.key: x for x in breakdown(model, Dimension.TENANT)}
        for tenant in {u.tenant for u in usage}:
            own = total(breakdown(model, by, tenant_id=f"t-{tenant}"))
            assert own.cost_micro_usd == lines[tenant].cost_micro_usd
