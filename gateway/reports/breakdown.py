"""The cost model broken down by tenant, model, backend, rule or day: one Line per value,
plus the idle-GPU line, so the lines always add up to the model's totals. Pure."""

from __future__ import annotations

from dataclasses import dataclass, fields

from gateway.reports.cost_model import IDLE, SELF_HOSTED, CostedGroup, CostModel
from gateway.reports.rollup_repository import Dimension


@dataclass(frozen=True, slots=True)
class Line:
    key: str  # the dimension's value: tenant name, model, backend, rule, ISO day, or IDLE
    requests: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    api_micro_usd: int = 0
    gpu_micro_usd: int = 0
    baseline_micro_usd: int = 0
    self_hosted_requests: int = 0
    api_requests: int = 0  # served by a backend outside self_hosted
    self_hosted_tokens: int = 0
    api_tokens: int = 0
    sensitive: int = 0
    sensitive_external: int = 0
    redacted: int = 0
    sensitive_approved: int = 0  # of sensitive_external: unredacted under an approval
    idle_gpu_micro_usd: int = 0  # of gpu_micro_usd, the GPU-hours no request used

    @property
    def cost_micro_usd(self) -> int:
        return self.api_micro_usd + self.gpu_micro_usd

    @property
    def saved_micro_usd(self) -> int:
        """routing_saved_micro_usd − idle_gpu_micro_usd: the one cost model's answer."""
        return self.baseline_micro_usd - self.cost_micro_usd

    @property
    def routing_saved_micro_usd(self) -> int:
        """What routing saved on the traffic served: the baseline less what serving it cost
        at the margin (API spend and the busy share of the GPU-hours), idle GPUs aside."""
        return self.baseline_micro_usd - self.api_micro_usd - (
            self.gpu_micro_usd - self.idle_gpu_micro_usd)


NUMBERS = tuple(f.name for f in fields(Line) if f.name != "key")


def _key(g: CostedGroup, by: Dimension) -> tuple[str, str]:
    """(what groups, what is shown): tenants group by id and show their name."""
    u = g.usage
    if by is Dimension.TENANT:
        return u.tenant_id, u.tenant
    value = {Dimension.MODEL: u.model, Dimension.BACKEND: u.backend, Dimension.RULE: u.rule,
             Dimension.DAY: u.day.isoformat()}[by]
    return value, value


def _numbers(g: CostedGroup) -> dict[str, int]:
    u = g.usage
    home = u.zone == SELF_HOSTED
    away = u.zone not in (SELF_HOSTED, "")
    return {
        "requests": u.requests, "errors": u.errors, "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens, "cached_tokens": u.cached_tokens,
        "api_micro_usd": g.api_micro_usd, "gpu_micro_usd": g.gpu_micro_usd,
        "baseline_micro_usd": u.baseline_micro_usd,
        "self_hosted_requests": u.requests if home else 0,
        "api_requests": u.requests if away else 0,
        "self_hosted_tokens": u.tokens if home else 0, "api_tokens": u.tokens if away else 0,
        "sensitive": u.sensitive, "sensitive_external": u.sensitive_external,
        "redacted": u.redacted, "sensitive_approved": u.sensitive_approved,
    }


def breakdown(model: CostModel, by: Dimension, tenant_id: str | None = None) -> list[Line]:
    """Lines in key order, the idle line last. One tenant sees its own requests only: idle
    GPUs are nobody's, so that view has no idle line."""
    sums: dict[str, dict[str, int]] = {}
    shown: dict[str, str] = {}
    for g in model.groups:
        if tenant_id is not None and g.usage.tenant_id != tenant_id:
            continue
        group, label = _key(g, by)
        shown[group] = label
        entry = sums.setdefault(group, dict.fromkeys(NUMBERS, 0))
        for name, value in _numbers(g).items():
            entry[name] += value
    lines = [Line(shown[k], **sums[k]) for k in sorted(sums)]
    if tenant_id is None and model.idle_micro_usd:
        lines.append(Line(IDLE, gpu_micro_usd=model.idle_micro_usd,
                          idle_gpu_micro_usd=model.idle_micro_usd))
    return lines


def total(lines: list[Line]) -> Line:
    return Line("total", **{n: sum(getattr(x, n) for x in lines) for n in NUMBERS})
