"""Checks a structurally valid policy for mistakes the schema cannot see, each with its key path.

- names that do not resolve (backends, models, duplicate names);
- rules no request can reach (after a catch-all, or after an identical condition);
- a sensitive category that can reach a backend outside the self_hosted zone without redaction
  (and without that backend's approval for the category, `approved_for`), through a rule, a
  fallback, or the default route of a model pool;
- a simulated backend the simulator would refuse to start (policy/simulation.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from gateway.policy.rule_schema import RuleSpec
from gateway.policy.schema import ModelPoolSpec, PolicyFile
from gateway.policy.simulation import simulation_problems
from gateway.policy.suggestions import did_you_mean

Loc = tuple[str | int, ...]
SENSITIVE_CATEGORIES = ("pii", "secret", "phi")
SAFE_ZONE = "self_hosted"


def semantic_problems(spec: PolicyFile) -> list[tuple[Loc, str]]:
    problems: list[tuple[Loc, str]] = []
    problems += _names(spec)
    problems += _shadow_names(spec)
    # The checks below pass over names that do not resolve (reported just above), so one
    # pass reports those and everything else.
    problems += _unreachable(spec.rules)
    problems += _leaks(spec)
    for i, backend in enumerate(spec.backends):
        problems += [(("backends", i, *loc), message)
                     for loc, message in simulation_problems(backend)]
    return problems


def pool_members(spec: PolicyFile, model: str) -> list[str]:
    pool = spec.models.get(model)
    if pool is None:
        return [model] if any(b.name == model for b in spec.backends) else []
    return list(pool.backends if isinstance(pool, ModelPoolSpec) else pool)


def _shadow_names(spec: PolicyFile) -> list[tuple[Loc, str]]:
    if spec.shadow is None:
        return []
    names = {b.name for b in spec.backends}
    return [(("shadow", key), f"unknown backend {name!r}{did_you_mean(name, names)}")
            for key, name in (("strong", spec.shadow.strong), ("judge", spec.shadow.judge))
            if name not in names]


def _names(spec: PolicyFile) -> list[tuple[Loc, str]]:
    out: list[tuple[Loc, str]] = []
    seen: set[str] = set()
    for i, backend in enumerate(spec.backends):
        if backend.name in seen:
            out.append((("backends", i, "name"), f"duplicate backend name {backend.name!r}"))
        seen.add(backend.name)
    if isinstance(spec.baseline, str) and spec.baseline not in seen:
        out.append((("baseline",), f"unknown backend {spec.baseline!r}"
                    f"{did_you_mean(spec.baseline, seen)}"))
    for model, pool in spec.models.items():
        members = pool.backends if isinstance(pool, ModelPoolSpec) else pool
        prefix: Loc = ("models", model, "backends") if isinstance(pool, ModelPoolSpec) else (
            "models", model)
        if not members:
            out.append((prefix, "the candidate list is empty"))
        for j, name in enumerate(members):
            if name not in seen:
                out.append(((*prefix, j), f"undefined backend {name!r}"
                            f"{did_you_mean(name, seen)}"))
    for tenant, tenant_spec in spec.tenants.items():
        for j, model in enumerate(tenant_spec.models or []):
            if model not in spec.models and model not in seen:
                out.append((("tenants", tenant, "models", j), f"unknown model {model!r}"
                            f"{did_you_mean(model, [*spec.models, *seen])}"))
    zones = {b.zone for b in spec.backends}
    rule_names: set[str] = set()
    for i, rule in enumerate(spec.rules):
        if rule.name in rule_names:
            out.append((("rules", i, "name"), f"duplicate rule name {rule.name!r}"))
        rule_names.add(rule.name)
        for field in ("backends", "allow_backends", "prefer", "fallbacks", "spill_to"):
            for j, name in enumerate(getattr(rule, field) or ()):
                if name not in seen:
                    out.append((("rules", i, field, j), f"undefined backend {name!r}"
                                f"{did_you_mean(name, seen)}"))
        for j, zone in enumerate(rule.allow_zones or ()):
            if zone not in zones:
                out.append((("rules", i, "allow_zones", j), f"no backend is in zone {zone!r}"))
    return out


def _unreachable(rules: list[RuleSpec]) -> list[tuple[Loc, str]]:
    out: list[tuple[Loc, str]] = []
    for i, rule in enumerate(rules):
        for j, earlier in enumerate(rules[:i]):
            if earlier.when.is_catch_all():
                reason = f"rule {earlier.name!r} (rules[{j}]) matches every request first"
            elif earlier.when == rule.when:
                reason = f"rule {earlier.name!r} (rules[{j}]) has the same conditions"
            else:
                continue
            out.append((("rules", i), f"unreachable: {reason}"))
            break
    return out


def _leaks(spec: PolicyFile) -> list[tuple[Loc, str]]:
    out: list[tuple[Loc, str]] = []
    zone_of = {b.name: b.zone for b in spec.backends}
    approved = {b.name: set(b.approved_for or ()) for b in spec.backends}

    def leaves(name: str, category: str) -> bool:
        """Unredacted data of this category would leave home without an approval."""
        return zone_of.get(name, SAFE_ZONE) != SAFE_ZONE and category not in approved[name]

    for category in SENSITIVE_CATEGORIES:
        caught = False
        for i, rule in enumerate(spec.rules):
            when = rule.when
            # A request can carry several categories: a rule for any of them sees this one.
            sees = when.sensitivity is None or category in when.sensitivity or any(
                c in SENSITIVE_CATEGORIES for c in when.sensitivity)
            if not sees:
                continue
            if rule.deny is None and not rule.redact:
                external = sorted(n for n in _reachable(spec, rule) if leaves(n, category))
                if external:
                    out.append((("rules", i), f"requests with {category} findings can reach "
                                f"{', '.join(external)} outside the {SAFE_ZONE} zone without "
                                "redaction (restrict allow_zones or set redact: true)"))
            others = when.model_copy(update={"sensitivity": None})
            every = when.sensitivity is None or category in when.sensitivity
            if every and others.is_catch_all():
                caught = True  # every request with this category stops here
                break
        if not caught:
            external = sorted({
                n for model in spec.models for n in pool_members(spec, model)
                if leaves(n, category)
            } | {n for n in zone_of if leaves(n, category)})
            if external:
                out.append((("rules",), f"requests with {category} findings that no rule "
                            f"catches reach {', '.join(external)} outside the {SAFE_ZONE} zone "
                            "by default; add a rule for them (e.g. when: {sensitivity: "
                            f"[{category}]}} with allow_zones: [{SAFE_ZONE}])"))
    return out


def _reachable(spec: PolicyFile, rule: RuleSpec) -> set[str]:
    if rule.backends is not None:
        names: Iterable[str] = rule.backends
    elif rule.when.model is not None:
        names = [n for model in rule.when.model for n in pool_members(spec, model)]
    else:
        names = [b.name for b in spec.backends]  # any model, including each backend by name
    reach = set(names) | set(rule.fallbacks or ()) | set(rule.spill_to or ())
    reach &= {b.name for b in spec.backends}  # names that do not resolve are reported apart
    if rule.allow_backends is not None:
        reach &= set(rule.allow_backends)
    if rule.allow_zones is not None:
        zones = set(rule.allow_zones)
        reach = {n for n in reach if next(b.zone for b in spec.backends if b.name == n) in zones}
    return reach
