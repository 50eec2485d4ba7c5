"""Builds the request's Profile: every fact the policy routes on, computed once."""

from __future__ import annotations

from gateway.classify.tokens import estimate_prompt_tokens
from gateway.types import Profile, RouteRequest


def profile_request(request: RouteRequest) -> Profile:
    return Profile(
        prompt_tokens=estimate_prompt_tokens(request.endpoint, request.payload),
        max_output_tokens=request.max_output_tokens,
    )
