"""The sensitivity parts of the policy schema: a tenant's own detectors, values declared
public, and what counts as a finding for routing."""

from __future__ import annotations

import re

from pydantic import Field, model_validator

from gateway.policy.rule_schema import Strict


def _compiled(regex: str) -> re.Pattern[str]:
    try:
        compiled = re.compile(regex)
    except re.error as exc:
        raise ValueError(f"regex does not compile: {exc.msg}") from None
    if compiled.match(""):
        raise ValueError("regex matches empty text")
    return compiled


class TenantDetectorSpec(Strict):
    """One tenant detector: exactly one of `regex` and `words`."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")
    category: str = Field(
        pattern=r"^[a-z][a-z0-9_]{0,31}$",
        description="what rules match on (when: {sensitivity: [...]}); e.g. confidential, "
        "or pii/secret/phi to join a built-in category",
    )
    regex: str | None = Field(default=None, description="Python regular expression")
    words: list[str] | None = Field(
        default=None, description="whole words or phrases, matched case-insensitively")

    @model_validator(mode="after")
    def _one_source(self) -> TenantDetectorSpec:
        if (self.regex is None) == (self.words is None):
            raise ValueError("give exactly one of regex and words")
        if self.regex is not None:
            _compiled(self.regex)
        if self.words is not None and not any(w.strip() for w in self.words):
            raise ValueError("words is empty")
        return self


# Values of unrelated shapes: an allow regex matching all of them would switch detection off.
_UNRELATED = ("Ada Lovelace", "ada@corp.io", "4111 1111 1111 1111", "sk_live_51Hx9QvKf2")


class AllowedValuesSpec(Strict):
    """Values public by design: exactly one of `values` and `regex`."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")
    values: list[str] | None = Field(
        default=None, description="exact values, e.g. the support address or a browser API "
        "key that ships in the company's web app (never a real secret: this file is not one)")
    regex: str | None = Field(
        default=None, description="Python regular expression a finding must match in full")

    @model_validator(mode="after")
    def _one_source(self) -> AllowedValuesSpec:
        if (self.regex is None) == (self.values is None):
            raise ValueError("give exactly one of values and regex")
        if self.regex is not None:
            compiled = _compiled(self.regex)
            if all(compiled.fullmatch(probe) for probe in _UNRELATED):
                raise ValueError("regex allows anything (it matches a name, an e-mail address "
                                 "and a key alike): list the public values themselves")
        if self.values is not None and not self.values:
            raise ValueError("values is empty")
        if self.values is not None and not all(v.strip() for v in self.values):
            raise ValueError("values holds an empty value")
        return self


ALLOW_DESCRIPTION = (
    "values declared public: a finding whose whole text is one of them is neither routed on "
    "nor masked (the company's own support address and hotline, a browser API key that "
    "ships in its web app)"
)


class SensitivitySpec(Strict):
    """What counts as a finding for routing."""

    min_confidence: float = Field(
        default=0.0, ge=0, le=1,
        description="findings below this confidence (0..1, as `gateway classify` reports "
        "them) are masked by redaction but do not make a request sensitive; e.g. 0.7 lets a "
        "lone first name in a word problem (0.6-0.65) route on complexity, while full names "
        "(0.95), e-mail addresses, cards and secrets still keep it home; 0 routes on every "
        "finding",
    )
    allow: list[AllowedValuesSpec] = Field(
        default_factory=list, description="for every tenant: " + ALLOW_DESCRIPTION)
