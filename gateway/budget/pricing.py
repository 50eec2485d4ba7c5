"""Usage × price → integer micro-USD. Pure; money never touches a float after this point."""

from __future__ import annotations

from gateway.types import PricePerMTok, Usage

MICRO_PER_USD = 1_000_000


def cost_micro_usd(usage: Usage, price: PricePerMTok | None) -> int:
    """Cost of one request. Prices are USD per million tokens, so micro-USD per token equals
    the per-million price: tokens × price is already in micro-USD."""
    if price is None:
        return 0
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    cached_price = price.cached_input_usd if price.cached_input_usd is not None else price.input_usd
    micro = (
        (usage.prompt_tokens - cached) * price.input_usd
        + cached * cached_price
        + usage.completion_tokens * price.output_usd
    )
    return round(micro)


def format_usd(micro_usd: int) -> str:
    return f"{micro_usd / MICRO_PER_USD:.6f}"
