"""The client-chosen labels of a request (its model name and its x-gateway-tags) as the audit
record keeps them: a label the policy knows (a model or pool it defines, a tag it sets limits
for) is a safe identifier and kept as sent; any other is rescanned with the tenant's own
detectors, the ones routing uses, and every finding masked by its placeholder. A label is
short, so this costs microseconds, and nothing at all for the common known ones."""

from __future__ import annotations

from gateway.policy.runtime import RequestPolicy
from gateway.routing.seams import Classifier
from gateway.types import RouteRequest

UNSCANNED = "[unscanned label]"  # no detectors configured: nothing unknown is kept


def audit_labels(
    classifier: Classifier, plan: RequestPolicy, request: RouteRequest
) -> tuple[str, tuple[str, ...]]:
    """(model, tags) for the audit record."""
    known_tags = plan.tenant.known_tags
    model = request.model
    unknown_model = not plan.known_model
    unknown_tags = [tag for tag in request.tags if tag not in known_tags]
    if not unknown_model and not unknown_tags:
        return model, request.tags
    if not classifier.can_redact:
        return (UNSCANNED if unknown_model else model,
                tuple(UNSCANNED if tag in unknown_tags else tag for tag in request.tags))
    scanner = classifier.redaction_scanner(request, plan.tenant.detectors)

    def masked(label: str) -> str:
        return classifier.redact_text(label, scanner)

    return (masked(model) if unknown_model else model,
            tuple(masked(tag) if tag in unknown_tags else tag for tag in request.tags))
