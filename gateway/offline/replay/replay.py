"""Policy replay: recorded requests re-decided under another policy, and what would change.

Pure: audit rows in (canonical form, see audit/records.py), a ReplayReport out. A row keeps
what decide() reads: who asked (tenant, endpoint, model, tags), how big (prompt tokens,
max_tokens), how hard (complexity), which sensitive categories were found, and whether the
tenant was over its soft budget limit. The fleet is empty and the rotation 0: the replay
compares policies, not moments, except for load: a row keeps the backends its decision set
aside for their load (trace `load`), and the replay sets the same ones aside (as open
circuits), so the recorded policy reproduces its own spill-overs. Predicted latencies are the
new policy's priors.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from gateway.audit.records import Row
from gateway.budget.pricing import cost_micro_usd
from gateway.errors import GatewayError, PermissionDenied
from gateway.offline.replay.replay_features import FeatureKey, FeatureKeys, recorded_task_p
from gateway.offline.replay.replay_load import AFTER, BEFORE, LoadTally, replay_loads
from gateway.offline.replay.replay_report import Leak, ReplayReport, Tally, build_report
from gateway.policy.engine import decide_for
from gateway.policy.loader import PolicySet
from gateway.types import (
    BackendState,
    Circuit,
    Complexity,
    Endpoint,
    FleetSnapshot,
    Profile,
    RouteRequest,
    SensitiveSpan,
    Task,
    TenantContext,
    Usage,
    Zone,
)

SKIP_UNDECIDED = "never routed (no rule or backend recorded)"
SKIP_FAILED = "failed (no usage to compare)"
SKIP_ENDPOINT = "endpoint unknown to this gateway"
# Rows have spelled the chat endpoint both ways ("chat/completions", "chat.completions").
ENDPOINTS = {e.value: e for e in Endpoint} | {e.value.replace("/", "."): e for e in Endpoint}
EMPTY_FLEET = FleetSnapshot()
NOTHING_SET_ASIDE: tuple[str, ...] = ()
# A row written by a gateway that records the load also records its entry point (`api`):
# without it, the row predates both and is replayed on an idle fleet.
RECORDS_LOAD = "api"
# The audit_log columns a replay reads (the rest of a row is not needed).
COLUMNS = (
    "request_id", "tenant_id", "tenant", "key_id", "endpoint", "requested_model", "backend",
    "zone", "rule", "outcome", "prompt_tokens", "completion_tokens", "cached_tokens",
    "max_output_tokens", "prompt_tokens_exact", "complexity", "p_strong", "sensitivity",
    "tags", "cost_micro_usd", "predicted_ttft_s", "over_soft_limit", "trace", "ts",
    "duration_s", "baseline_cost_micro_usd",
)
MAX_CACHED = 200_000  # distinct feature tuples kept; cleared when full (memory stays bounded)

@dataclass(frozen=True, slots=True)
class Outcome:
    """What the new policy does with one set of features."""

    backend: str | None  # the primary; None when refused
    candidates: tuple[str, ...] = ()
    rule: str | None = None
    ttft_s: float | None = None
    # A candidate outside self_hosted that this sensitive request would reach unredacted.
    exposed_to: str | None = None
    refusal: str | None = None  # "denied" | "unroutable"
    reason: str | None = None


def rebuild(row: Row) -> tuple[RouteRequest, Profile, TenantContext]:
    """The request, profile and tenant decide() saw, as far as the row recorded them. The
    payload is empty (never stored); spans are one placeholder per category, since decide()
    only asks whether there are any (to redact) and offsets are never recorded."""
    categories = tuple(row["sensitivity"].split(",")) if row["sensitivity"] else ()
    tags = tuple(row["tags"].split(",")) if row["tags"] else ()
    label, p_strong = row["complexity"], row["p_strong"]
    request = RouteRequest(
        request_id=row["request_id"],
        endpoint=ENDPOINTS[row["endpoint"]],
        model=row["requested_model"],
        payload={},
        max_output_tokens=row["max_output_tokens"],
        tags=tags,
    )
    profile = Profile(
        prompt_tokens=row["prompt_tokens"],
        max_output_tokens=row["max_output_tokens"],
        complexity=Complexity(p_strong or 0.0, label) if label is not None else None,
        task=Task(task, recorded_task_p(row)) if (task := recorded_task(row)) is not None
        else None,
        sensitivity=categories,
        spans=tuple(SensitiveSpan(c, c, 0, 0, 1.0) for c in categories),
        prompt_tokens_exact=row["prompt_tokens_exact"],
    )
    return request, profile, TenantContext(row["tenant_id"], row["tenant"], row["key_id"])


def recorded_task(row: Row) -> str | None:
    """The task type classification found (kept in the trace; absent in older rows)."""
    task = (row.get("trace") or {}).get("task")
    return task if isinstance(task, str) else None


def recorded_primary(row: Row) -> str | None:
    """The backend the recorded decision put first: the first one tried."""
    trace = row.get("trace") or {}
    tried = trace.get("tried")
    return tried[0] if tried else row["backend"]


class Replayer:
    """Feeds rows through decide() under one policy, caching outcomes by feature key (see
    replay_features.py; `max_cached=0` decides every row on its own)."""

    def __init__(self, policy: PolicySet, max_cached: int = MAX_CACHED,
                 observer: Callable[[Row, str], None] | None = None) -> None:
        self._policy = policy
        self._observer = observer  # sees each replayed row with the backend it would get
        self._keys = FeatureKeys(policy)
        self._max_cached = max_cached
        # features → outcome per rotation tried (rotation 0 always; others on demand)
        self._cache: dict[FeatureKey, dict[int, Outcome]] = {}
        self._tally = Tally()
        self._load = LoadTally()
        self._started_s = time.perf_counter()
        # Few distinct sets of backends are set aside: each one's fleet is built once.
        self._fleets: dict[tuple[str, ...], FleetSnapshot] = {}

    def _fleet(self, load: tuple[str, ...]) -> FleetSnapshot:
        fleet = self._fleets.get(load)
        if fleet is None:
            if len(self._fleets) >= self._max_cached:
                self._fleets.clear()
            fleet = fleet_of(load)
            if self._max_cached:
                self._fleets[load] = fleet
        return fleet

    def add(self, rows: Iterable[Row]) -> None:
        tally = self._tally
        for row in rows:
            tally.rows += 1
            if row["rule"] is None or row["backend"] is None:
                tally.skipped[SKIP_UNDECIDED] += 1
            elif row["outcome"] == "error":
                tally.skipped[SKIP_FAILED] += 1
            elif row["endpoint"] not in ENDPOINTS:
                tally.skipped[SKIP_ENDPOINT] += 1
            else:
                self._replay(row)

    def report(self, policy_name: str, since: str, until: str) -> ReplayReport:
        elapsed = time.perf_counter() - self._started_s
        report = build_report(self._tally, policy_name, since, until, elapsed)
        return replace(report, loads=replay_loads(self._load))

    def _replay(self, row: Row) -> None:
        tally = self._tally
        before = recorded_primary(row)
        load = recorded_load(row)
        if load is None:
            tally.without_load_state += 1
            load = NOTHING_SET_ASIDE
        outcome = self._outcome(row, before, load)
        tally.replayed += 1
        if outcome.backend is None:
            assert outcome.refusal is not None and outcome.reason is not None
            tally.refuse(outcome.refusal, before or "", outcome.reason, row["cost_micro_usd"],
                         bool(row["sensitivity"]))
            return
        backend = self._policy.backends[outcome.backend]
        if self._observer is not None:
            self._observer(row, outcome.backend)
        if before:
            self._load.add(BEFORE, before, row)
        self._load.add(AFTER, outcome.backend, row)
        usage = Usage(row["prompt_tokens"], row["completion_tokens"], row["cached_tokens"])
        tally.route(
            tenant=row["tenant"] or row["tenant_id"],
            before=before or "",
            after=outcome.backend,
            recorded_cost=row["cost_micro_usd"],
            new_cost=cost_micro_usd(usage, backend.price),
            recorded_ttft_s=row["predicted_ttft_s"],
            new_ttft_s=outcome.ttft_s,
            sensitive=bool(row["sensitivity"]),
        )
        if outcome.exposed_to is not None:
            tally.leaks.append(_leak(row, outcome))
        if (outcome.backend != before and backend.zone == Zone.SELF_HOSTED
                and outcome.backend not in _seen(row, load)):
            tally.unfaithful_row(f"{outcome.backend}: its load then was not recorded (a "
                                 "backend or pool the recorded decision did not weigh)",
                                 row["request_id"])

    def _outcome(self, row: Row, before: str | None, load: tuple[str, ...]) -> Outcome:
        key: FeatureKey | tuple[FeatureKey, tuple[str, ...]] = self._keys.key(row)
        if load:
            key = (key, load)
        tried = self._cache.get(key)
        if tried is None:
            tried = {0: self._decide(row, 0, load)}
            if len(self._cache) >= self._max_cached:
                self._cache.clear()
            if self._max_cached:
                self._cache[key] = tried
        else:
            self._tally.cache_hits += 1
        first = tried[0]
        if first.backend is None or before is None or first.backend == before:
            return first
        if before not in first.candidates:
            return first
        # Equal candidates take turns (round robin, least loaded): a recorded pick that the
        # new policy would also make on another turn is not a change of policy.
        for rotation in range(1, len(first.candidates)):
            outcome = tried.get(rotation)
            if outcome is None:
                outcome = tried[rotation] = self._decide(row, rotation, load)
            if outcome.backend == before:
                return outcome
        if first.backend in load and before in load:
            # Both set aside for their load: which went first was the load's call (the
            # shorter queue, the fuller cache), which the replay does not model; it stands.
            return replace(first, backend=before)
        return first

    def _decide(self, row: Row, rotation: int, load: tuple[str, ...]) -> Outcome:
        self._tally.decisions += 1
        request, profile, tenant = rebuild(row)
        try:
            decision = decide_for(
                self._policy.for_request(tenant, request), request, profile, self._fleet(load),
                rotation, row["over_soft_limit"],
            )
        except PermissionDenied as exc:
            return Outcome(None, refusal="denied", reason=exc.message)
        except GatewayError as exc:
            return Outcome(None, refusal="unroutable", reason=f"{exc.code}: {exc.message}")
        exposed = None
        if profile.sensitivity and not decision.redact:
            # Outside self_hosted and not approved there for every category it carries.
            exposed = next(
                (b.name for b in decision.candidates if b.zone != Zone.SELF_HOSTED
                 and b.approval_used(profile.sensitivity, redacted=False) is None), None
            )
        return Outcome(
            backend=decision.primary.name,
            candidates=tuple(b.name for b in decision.candidates),
            rule=decision.rule,
            ttft_s=decision.predicted_ttft_s,
            exposed_to=exposed,
        )


def recorded_load(row: Row) -> tuple[str, ...] | None:
    """The backends the recorded decision set aside for their load; None for a row written
    before that was recorded."""
    trace = row.get("trace") or {}
    if RECORDS_LOAD not in trace:
        return None
    return tuple(trace.get("load") or ())


# An open circuit that never half-opens: decide() moves the backend last (spill_to first when
# a rule has one), as the saturation it recorded did.
_SET_ASIDE = BackendState(circuit=Circuit.OPEN, retry_at_s=math.inf)


def fleet_of(load: tuple[str, ...]) -> FleetSnapshot:
    """The fleet a replay decides on: the recorded set-aside backends out of service."""
    if not load:
        return EMPTY_FLEET
    return FleetSnapshot(dict.fromkeys(load, _SET_ASIDE), 0.0)


def _seen(row: Row, load: tuple[str, ...]) -> set[str]:
    """Every backend whose state at the time the row speaks of."""
    trace = row.get("trace") or {}
    seen = {*load, *(trace.get("tried") or ()), *(r[0] for r in trace.get("rejected") or ())}
    if row["backend"]:
        seen.add(row["backend"])
    return seen


def _leak(row: Row, outcome: Outcome) -> Leak:
    assert outcome.exposed_to is not None
    trace = row.get("trace") or {}
    return Leak(
        request_id=row["request_id"],
        ts_us=row["ts"],
        tenant=row["tenant"] or row["tenant_id"],
        categories=tuple(row["sensitivity"].split(",")),
        types=tuple(trace.get("types") or ()),
        backend=outcome.exposed_to,
        as_primary=outcome.exposed_to == outcome.backend,
        rule=outcome.rule,
        recorded_backend=row["backend"],
        recorded_zone=row["zone"],
    )
