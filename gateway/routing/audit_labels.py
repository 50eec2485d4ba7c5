"""The client-chosen labels of a request (its model name and its x-gateway-tags) as the audit
record keeps them: a label the policy knows (a model or pool it defines, a tag it sets limits
for) is a safe identifier and kept as sent; any other is rescanned with the tenant's own
detectors, the ones routing uses, and every finding masked by its placeholder. A label is
short, so this costs microseconds, and nothing at all for the common known ones."""

from __future__ import annotations

import re

from gateway.classify.detectors.secret_values import looks_like_words, shannon_entropy
from gateway.policy.runtime import RequestPolicy
from gateway.routing.seams import Classifier
from gateway.types import RouteRequest

UNSCANNED = "[unscanned label]"  # no detectors configured: nothing unknown is kept
# A label is too short for the prompt detectors' context words ("aws", "secret" near the
# value): a long, random-looking run in one is taken for a credential on its own.
_RUN = re.compile(r"[A-Za-z0-9+/=_]{20,}")
MIN_RUN_ENTROPY = 3.8  # bits a character: random base64 is ~4.4+ at 40 characters
SURELY_RANDOM_ENTROPY = 4.6  # identifiers made of words stay under it (4.45 at 38)


def mask_random_runs(label: str) -> str:
    """Each run of 20+ key characters mixing upper case, lower case and digits, random
    enough and not made of words, replaced by [SECRET_n]."""
    found = 0

    def mask(match: re.Match[str]) -> str:
        nonlocal found
        run = match.group()
        entropy = shannon_entropy(run)
        mixed = (any(c.isupper() for c in run) and any(c.islower() for c in run)
                 and any(c.isdigit() for c in run))
        # Chance makes word-like chunks in some random keys; none that random is words.
        if not mixed or entropy < MIN_RUN_ENTROPY or (
                entropy < SURELY_RANDOM_ENTROPY and looks_like_words(run)):
            return run
        found += 1
        return f"[SECRET_{found}]"

    return _RUN.sub(mask, label)


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
        return mask_random_runs(classifier.redact_text(label, scanner))

    return (masked(model) if unknown_model else model,
            tuple(masked(tag) if tag in unknown_tags else tag for tag in request.tags))
