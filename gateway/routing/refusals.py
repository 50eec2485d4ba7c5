"""Why a budget or rate limit refused a request, in words a client can act on: the limit, what
is spent and held in flight, what this request reserved and why, and what would be admitted."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.budget.limits import Admission, LimitReason, ScopeUsage
from gateway.budget.pricing import format_usd
from gateway.types import BudgetLimits, PricePerMTok, RateLimits, ScopeLimits


@dataclass(frozen=True, slots=True)
class Candidate:
    name: str
    price: PricePerMTok | None
    prompt_tokens: int  # by this backend's own tokenizer

    def cost(self, output_tokens: int) -> int:
        if self.price is None:
            return 0
        return self.price.cost_micro_usd(self.prompt_tokens, output_tokens)


@dataclass(frozen=True, slots=True)
class WorstCase:
    """What admission reserves (the whole prompt and every output token allowed, at the
    dearest candidate's price: a fallback may serve it), and how that was reached."""

    cost_micro_usd: int
    tokens: int
    output_tokens: int
    output_defaulted: bool  # the client set no max_tokens: a default was assumed
    candidates: tuple[Candidate, ...]

    @property
    def dearest(self) -> str | None:
        if not self.candidates:
            return None
        return max(self.candidates, key=lambda c: c.cost(self.output_tokens)).name

    def largest_output_costing(self, room_micro_usd: int) -> int | None:
        """The most output tokens whose worst case fits in `room_micro_usd`; None if even
        none do (the prompt alone is too dear)."""
        best = self.output_tokens
        for c in self.candidates:
            if c.cost(0) > room_micro_usd:
                return None
            if c.price is None or c.price.output_usd <= 0:
                continue
            n = min(best, int((room_micro_usd - c.cost(0)) / c.price.output_usd) + 1)
            while n > 0 and c.cost(n) > room_micro_usd:  # rounding: step down to a fit
                n -= 1
            best = n
        return best

    def largest_output_counting(self, room_tokens: int) -> int | None:
        prompt = max((c.prompt_tokens for c in self.candidates), default=0)
        return None if room_tokens < prompt else min(self.output_tokens, room_tokens - prompt)


def _usd(micro_usd: int) -> str:
    return f"-${format_usd(-micro_usd)}" if micro_usd < 0 else f"${format_usd(micro_usd)}"


def _reserved_words(worst: WorstCase, money: bool) -> str:
    amount = _usd(worst.cost_micro_usd) if money else f"{worst.tokens} tokens"
    output = (f"max_tokens unset, so {worst.output_tokens} assumed" if worst.output_defaulted
              else f"max_tokens {worst.output_tokens}")
    where = (f" at the price of {worst.dearest}, the dearest backend that may serve it "
             "(a fallback may)" if money and worst.dearest else "")
    return f"This request reserved {amount}: its prompt and {output}{where}."


def budget_explanation(admission: Admission, limits: ScopeLimits | None, worst: WorstCase,
                       usage: ScopeUsage | None) -> str:
    """The sentences after "You exceeded the ... budget of ...": limit, spent, in flight,
    reserved and why, and what would be admitted now."""
    reason = admission.reason
    budget = limits.budget if limits is not None else None
    limit = _budget_limit(budget, reason)
    money = reason is not None and reason.money
    daily = reason is not None and reason.daily
    words: list[str] = []
    if limit is not None and usage is not None:
        spent = ((usage.spent_day_micro_usd if daily else usage.spent_month_micro_usd) if money
                 else (usage.tokens_day if daily else usage.tokens_month))
        held = usage.reserved_micro_usd if money else usage.reserved_tokens
        show = _usd if money else (lambda n: f"{n} tokens")
        words.append(f"Limit {show(limit)}; spent {show(spent)}; held by requests in flight "
                     f"{show(held)}.")
        room = limit - spent - held
        if spent < limit:
            words.append(_reserved_words(worst, money))
            fits = (worst.largest_output_costing(room) if money
                    else worst.largest_output_counting(room))
            if fits is not None and fits > 0:
                words.append(f"The same request with max_tokens up to {fits} would be "
                             "admitted now.")
            elif held > 0:
                words.append("Nothing like it fits until requests in flight settle.")
    else:  # the store could not say what is spent
        words.append(_reserved_words(worst, money))
    return " ".join(words)


def rate_explanation(admission: Admission, limits: ScopeLimits | None,
                     worst: WorstCase) -> str:
    rate: RateLimits | None = limits.rate if limits is not None else None
    reason = admission.reason
    if rate is None or reason is None:
        return ""
    limit = {LimitReason.RPM: rate.rpm, LimitReason.TPM: rate.tpm,
             LimitReason.CONCURRENT: rate.concurrent}.get(reason)
    if limit is None:
        return ""
    if reason is LimitReason.RPM:
        return f"Limit {limit} requests per minute."
    if reason is not LimitReason.TPM:
        return f"Limit {limit} at once."
    text = f"Limit {limit} tokens per minute. " + _reserved_words(worst, money=False)
    if worst.tokens > limit:
        fits = worst.largest_output_counting(limit)
        text += (f" It can never fit; with max_tokens up to {fits} it would." if fits
                 else " Its prompt alone exceeds the limit.")
    return text


def _budget_limit(budget: BudgetLimits | None, reason: LimitReason | None) -> int | None:
    if budget is None or reason is None:
        return None
    return {LimitReason.DAILY_USD: budget.daily_micro_usd,
            LimitReason.MONTHLY_USD: budget.monthly_micro_usd,
            LimitReason.DAILY_TOKENS: budget.daily_tokens,
            LimitReason.MONTHLY_TOKENS: budget.monthly_tokens}.get(reason)
