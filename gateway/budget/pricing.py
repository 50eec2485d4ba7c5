"""Usage × price → integer micro-USD. Pure; money never touches a float after this point."""

from __future__ import annotations

from gateway.types import PricePerMTok, Usage

MICRO_PER_USD = 1_000_000


def cost_micro_usd(usage: Usage, price: PricePerMTok | None) -> int:
    """Cost of one request; no price (nothing configured or measured yet) costs nothing."""
    if price is None:
        return 0
    return price.cost_micro_usd(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)


def format_usd(micro_usd: int) -> str:
    return f"{micro_usd / MICRO_PER_USD:.6f}"
