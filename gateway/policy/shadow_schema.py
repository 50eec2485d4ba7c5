"""The policy's `shadow:` block: judge a sampled share of the requests a cheaper backend
served against the strong backend's answer, off the request path, within a daily budget."""

from __future__ import annotations

from pydantic import Field

from gateway.policy.rule_schema import Strict


class ShadowSpec(Strict):
    """shadow: {sample: 0.02, strong: gpt-frontier, judge: gpt-frontier, daily_usd: 5}"""

    sample: float = Field(ge=0, le=1, description="share of eligible requests judged")
    strong: str = Field(min_length=1, description="backend whose answer is the reference")
    judge: str = Field(min_length=1, description="backend that scores both answers")
    daily_usd: float = Field(ge=0, description="most shadow judging may cost per UTC day "
                             "(the strong and judge calls together)")
