"""Usage × price → integer micro-USD. Pure; money never touches a float after this point."""

from __future__ import annotations

from gateway.types import Backend, PricePerMTok, Usage

MICRO_PER_USD = 1_000_000


def cost_micro_usd(usage: Usage, price: PricePerMTok | None) -> int:
    """Cost of one request; no price (nothing configured or measured yet) costs nothing."""
    if price is None:
        return 0
    return price.cost_micro_usd(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens,
                                usage.cache_write_tokens)


def format_usd(micro_usd: int) -> str:
    return f"{micro_usd / MICRO_PER_USD:.6f}"


# Below this much measured throughput the GPUs are mostly idle: the measured price says so
# (idle GPUs still cost money) but budgets would swing wildly on a quiet minute, so budgets
# keep the configured estimate until the deployment is doing real work.
MIN_MEASURED_TOKENS_PER_HOUR = 10_000.0


def effective_price(backend: Backend, tokens_per_hour: float | None) -> PricePerMTok | None:
    """Self-hosted $/token from what the GPUs cost and what they served (rolling window):
    GPU hourly cost × count ÷ measured tokens per hour. None without GPU cost or measurement.
    One price for input and output: the GPU-hour is the same whichever token it produced."""
    hourly_usd = backend.engine.gpu_hourly_usd if backend.engine is not None else None
    if hourly_usd is None or not tokens_per_hour:
        return None
    if tokens_per_hour < MIN_MEASURED_TOKENS_PER_HOUR:
        return None
    per_mtok = hourly_usd / tokens_per_hour * 1e6
    return PricePerMTok(per_mtok, per_mtok)
