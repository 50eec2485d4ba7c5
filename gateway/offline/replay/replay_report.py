"""What a policy replay found: the running tally over rows, the report made from it, and that
report as JSON or as a table for a terminal. Money is integer micro-USD until rendered."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from gateway.audit.records import ts_datetime
from gateway.offline.replay.replay_load import ReplayLoad

DENIED, UNROUTABLE = "(denied)", "(unroutable)"
MAX_REASONS = 50  # distinct refusal messages kept; the rest are counted together
OTHER_REASONS = "(other reasons)"
MAX_EXAMPLES = 20  # request ids kept per reason a row could not be replayed faithfully
NOT_MOMENTS = ("each row is re-decided under the load it recorded (the backends then set aside "
               "for saturation, open circuits or predicted latency stay set aside); predicted "
               "latencies are the new policy's priors")
# Rows written before the load was recorded: replayed on an idle fleet, as replay once did all.
IDLE_FLEET_NOTE = ("{n} rows predate recorded load state: replayed on an idle fleet, so a "
                   "request that spilled over because a pool was saturated may show as changed")


@dataclass(frozen=True, slots=True)
class Leak:
    """A sensitive request the new policy would send outside self_hosted without redaction."""

    request_id: str
    ts_us: int
    tenant: str
    categories: tuple[str, ...]
    types: tuple[str, ...]
    backend: str
    as_primary: bool  # False: it would get there as a fallback
    rule: str | None
    recorded_backend: str | None
    recorded_zone: str | None


@dataclass(slots=True)
class TenantCost:
    requests: int = 0
    recorded_micro_usd: int = 0
    new_micro_usd: int = 0


@dataclass(slots=True)
class Tally:
    """Counts kept while rows stream by; bounded memory except for the leaks (all kept)."""

    rows: int = 0
    replayed: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    moves: Counter[tuple[str, str]] = field(default_factory=Counter)
    tenants: dict[str, TenantCost] = field(default_factory=dict)
    ttft_count: int = 0
    ttft_recorded_sum_s: float = 0.0
    ttft_new_sum_s: float = 0.0
    ttft_delta_ms: Counter[int] = field(default_factory=Counter)  # 1 ms resolution
    denied: Counter[str] = field(default_factory=Counter)
    unroutable: Counter[str] = field(default_factory=Counter)
    refused_recorded_micro_usd: int = 0
    sensitive: int = 0
    leaks: list[Leak] = field(default_factory=list)
    decisions: int = 0
    cache_hits: int = 0
    without_load_state: int = 0  # rows from before the load was recorded
    # Why a replayed decision rests on load that was never recorded (a new backend or pool).
    unfaithful: Counter[str] = field(default_factory=Counter)
    unfaithful_ids: dict[str, list[str]] = field(default_factory=dict)  # reason → a few ids

    def unfaithful_row(self, reason: str, request_id: str) -> None:
        if reason not in self.unfaithful and len(self.unfaithful) >= MAX_REASONS:
            reason = OTHER_REASONS
        self.unfaithful[reason] += 1
        ids = self.unfaithful_ids.setdefault(reason, [])
        if len(ids) < MAX_EXAMPLES:
            ids.append(request_id)

    def route(self, *, tenant: str, before: str, after: str, recorded_cost: int, new_cost: int,
              recorded_ttft_s: float | None, new_ttft_s: float | None, sensitive: bool) -> None:
        self.moves[before, after] += 1
        cost = self.tenants.get(tenant)
        if cost is None:
            cost = self.tenants[tenant] = TenantCost()
        cost.requests += 1
        cost.recorded_micro_usd += recorded_cost
        cost.new_micro_usd += new_cost
        if recorded_ttft_s is not None and new_ttft_s is not None:
            self.ttft_count += 1
            self.ttft_recorded_sum_s += recorded_ttft_s
            self.ttft_new_sum_s += new_ttft_s
            self.ttft_delta_ms[round((new_ttft_s - recorded_ttft_s) * 1000)] += 1
        self.sensitive += sensitive

    def refuse(self, kind: str, before: str, reason: str, recorded_cost: int,
               sensitive: bool) -> None:
        reasons = self.denied if kind == "denied" else self.unroutable
        if reason not in reasons and len(reasons) >= MAX_REASONS:
            reason = OTHER_REASONS
        reasons[reason] += 1
        self.moves[before, DENIED if kind == "denied" else UNROUTABLE] += 1
        self.refused_recorded_micro_usd += recorded_cost
        self.sensitive += sensitive


@dataclass(frozen=True, slots=True)
class Move:
    before: str
    after: str  # a backend, DENIED or UNROUTABLE
    requests: int
    share: float  # of the requests replayed


@dataclass(frozen=True, slots=True)
class CostLine:
    tenant: str
    requests: int
    recorded_micro_usd: int
    new_micro_usd: int

    @property
    def delta_micro_usd(self) -> int:
        return self.new_micro_usd - self.recorded_micro_usd


@dataclass(frozen=True, slots=True)
class TtftDelta:
    requests: int
    mean_recorded_s: float
    mean_new_s: float
    mean_delta_s: float
    p95_delta_s: float


@dataclass(frozen=True, slots=True)
class ReplayReport:
    policy: str
    since: str
    until: str
    rows_read: int
    replayed: int
    skipped: dict[str, int]
    changed: int
    moves: tuple[Move, ...]
    cost: CostLine  # over requests routed under both policies
    cost_by_tenant: tuple[CostLine, ...]
    refused_recorded_micro_usd: int  # what the requests the new policy refuses had cost
    ttft: TtftDelta | None
    denied: dict[str, int]
    unroutable: dict[str, int]
    sensitive: int  # sensitive requests replayed
    leaks: tuple[Leak, ...]
    decisions: int  # decide() calls; the rest were answered from the cache
    elapsed_s: float
    loads: tuple[ReplayLoad, ...] = ()  # per backend before and after: for capacity
    without_load_state: int = 0  # replayed on an idle fleet (see IDLE_FLEET_NOTE)
    unfaithful: dict[str, int] = field(default_factory=dict)  # reason → rows
    unfaithful_ids: dict[str, list[str]] = field(default_factory=dict)  # reason → first ids


    @property
    def changed_share(self) -> float:
        return self.changed / self.replayed if self.replayed else 0.0

    @property
    def rows_per_s(self) -> float:
        return self.rows_read / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def traffic(self) -> list[tuple[str, int, int]]:
        """(backend, requests before, after) for every backend on either side."""
        before: Counter[str] = Counter()
        after: Counter[str] = Counter()
        for move in self.moves:
            before[move.before] += move.requests
            after[move.after] += move.requests
        names = sorted(set(before) | set(after), key=lambda n: (n.startswith("("), n))
        return [(n, before[n], after[n]) for n in names]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["loads"]  # the command sizes GPUs from them and reports that instead
        data["note"] = NOT_MOMENTS
        if self.without_load_state:
            data["idle_fleet_note"] = IDLE_FLEET_NOTE.format(n=self.without_load_state)
        data["unfaithful_rows"] = sum(self.unfaithful.values())
        data["changed_share"] = round(self.changed_share, 6)
        data["rows_per_s"] = round(self.rows_per_s)
        data["cost"]["delta_micro_usd"] = self.cost.delta_micro_usd
        for line in data["cost_by_tenant"]:
            line["delta_micro_usd"] = line["new_micro_usd"] - line["recorded_micro_usd"]
        data["traffic"] = [
            {"backend": n, "before": b, "after": a} for n, b, a in self.traffic()
        ]
        for leak in data["leaks"]:
            leak["ts"] = ts_datetime(leak.pop("ts_us")).isoformat()
        return data


def build_report(tally: Tally, policy: str, since: str, until: str,
                 elapsed_s: float) -> ReplayReport:
    replayed = tally.replayed or 1
    moves = tuple(
        Move(before, after, n, n / replayed)
        for (before, after), n in sorted(tally.moves.items(), key=lambda kv: -kv[1])
    )
    lines = tuple(
        CostLine(name, t.requests, t.recorded_micro_usd, t.new_micro_usd)
        for name, t in sorted(tally.tenants.items())
    )
    total = CostLine("all", sum(c.requests for c in lines),
                     sum(c.recorded_micro_usd for c in lines), sum(c.new_micro_usd for c in lines))
    ttft = None
    if tally.ttft_count:
        n = tally.ttft_count
        ttft = TtftDelta(n, tally.ttft_recorded_sum_s / n, tally.ttft_new_sum_s / n,
                         (tally.ttft_new_sum_s - tally.ttft_recorded_sum_s) / n,
                         _quantile_ms(tally.ttft_delta_ms, 0.95) / 1000)
    return ReplayReport(
        policy=policy, since=since, until=until, rows_read=tally.rows, replayed=tally.replayed,
        skipped=dict(tally.skipped),
        changed=sum(m.requests for m in moves if m.before != m.after),
        moves=moves, cost=total, cost_by_tenant=lines,
        refused_recorded_micro_usd=tally.refused_recorded_micro_usd, ttft=ttft,
        denied=dict(tally.denied.most_common()), unroutable=dict(tally.unroutable.most_common()),
        sensitive=tally.sensitive, leaks=tuple(tally.leaks), decisions=tally.decisions,
        elapsed_s=elapsed_s, without_load_state=tally.without_load_state,
        unfaithful=dict(tally.unfaithful.most_common()),
        unfaithful_ids={k: list(v) for k, v in tally.unfaithful_ids.items()},
    )


def _quantile_ms(histogram: Counter[int], q: float) -> int:
    rank = math.ceil(q * sum(histogram.values()))
    seen = 0
    for value in sorted(histogram):
        seen += histogram[value]
        if seen >= rank:
            return value
    return max(histogram)
