"""Which backends a shadow judgement may send a request to: only those the policy would have
allowed for it. Pure."""

from __future__ import annotations

from gateway.policy.loader import PolicySet
from gateway.types import Backend, Zone


def may_receive(policy: PolicySet, rule_name: str | None, sensitive: bool, redacted: bool,
                backend: Backend) -> bool:
    """The fired rule's zone and backend permissions hold for `backend`, and a request whose
    route redacted it (sensitive findings) never leaves self_hosted as it was written: the
    shadow sends the original text, never placeholders."""
    rule = next((r for r in policy.rules if r.name == rule_name), None)
    if rule is not None:
        if rule.allow_zones is not None and backend.zone not in rule.allow_zones:
            return False
        if rule.allow_backends is not None and backend.name not in rule.allow_backends:
            return False
    return not (sensitive and redacted and backend.zone != Zone.SELF_HOSTED)
