"""A budget or rate 429's explanation, against figures worked out by hand."""

from __future__ import annotations

from gateway.budget.limits import Admission, LimitReason, ScopeUsage
from gateway.routing.budgeting import refusal
from gateway.routing.refusals import Candidate, WorstCase, budget_explanation, rate_explanation
from gateway.types import BudgetLimits, PricePerMTok, RateLimits, ScopeLimits

# $2/$10 per Mtok: 100 prompt tokens cost 200 µUSD, each output token 10 µUSD.
FRONTIER = Candidate("gpt-frontier", PricePerMTok(2.0, 10.0), 100)
LOCAL = Candidate("llama-8b", PricePerMTok(0.1, 0.2), 110)  # its own tokenizer: 110 tokens
WORST = WorstCase(cost_micro_usd=2200, tokens=310, output_tokens=200, output_defaulted=False,
                  candidates=(LOCAL, FRONTIER))
USAGE = ScopeUsage("tenant", spent_day_micro_usd=1, spent_month_micro_usd=1, tokens_day=20,
                   tokens_month=20, reserved_micro_usd=0, reserved_tokens=0, in_flight=0)


def test_a_spend_refusal_names_limit_spent_reserved_and_what_fits() -> None:
    limits = ScopeLimits("tenant", budget=BudgetLimits(daily_micro_usd=2000))
    why = budget_explanation(Admission(False, LimitReason.DAILY_USD, "tenant"), limits, WORST,
                             USAGE)
    # Room 2000 - 1 = 1999 µUSD; the frontier's prompt takes 200: 179 output tokens (1990).
    assert why == (
        "Limit $0.002000; spent $0.000001; held by requests in flight $0.000000. "
        "This request reserved $0.002200: its prompt and max_tokens 200 at the price of "
        "gpt-frontier, the dearest backend that may serve it (a fallback may). "
        "The same request with max_tokens up to 179 would be admitted now.")
    error = refusal(Admission(False, LimitReason.DAILY_USD, "tenant"), why)
    assert error.status == 429 and error.code == "insufficient_quota"
    assert error.message.startswith("You exceeded the daily spend budget of your organization. "
                                    "Limit $0.002000;")
    assert error.message.endswith("It resets at the start of the next UTC day.")


def test_a_spent_budget_says_nothing_fits_and_tokens_count_the_longest_prompt() -> None:
    limits = ScopeLimits("tenant", budget=BudgetLimits(daily_tokens=250))
    spent = ScopeUsage("tenant", 0, 0, 250, 250, 0, 0, 0)
    why = budget_explanation(Admission(False, LimitReason.DAILY_TOKENS, "tenant"), limits, WORST,
                             spent)
    assert why == "Limit 250 tokens; spent 250 tokens; held by requests in flight 0 tokens."
    some = ScopeUsage("tenant", 0, 0, 40, 40, 0, 0, 0)
    why = budget_explanation(Admission(False, LimitReason.DAILY_TOKENS, "tenant"), limits, WORST,
                             some)
    # 250 - 40 = 210 tokens of room, less the longest prompt (110): 100 output tokens.
    assert why.endswith("The same request with max_tokens up to 100 would be admitted now.")


def test_an_unset_max_tokens_is_named_as_assumed() -> None:
    worst = WorstCase(41_160, 4206, 4096, True, (FRONTIER,))
    why = budget_explanation(Admission(False, LimitReason.DAILY_USD, "tenant"),
                             ScopeLimits("tenant", budget=BudgetLimits(daily_micro_usd=2000)),
                             worst, USAGE)
    assert "its prompt and max_tokens unset, so 4096 assumed at the price of" in why


def test_a_tpm_refusal_says_when_a_request_can_never_fit() -> None:
    limits = ScopeLimits("tenant", rate=RateLimits(tpm=300))
    why = rate_explanation(Admission(False, LimitReason.TPM, "tenant", 2.0), limits, WORST)
    assert why == ("Limit 300 tokens per minute. This request reserved 310 tokens: its prompt "
                   "and max_tokens 200. It can never fit; with max_tokens up to 190 it would.")
    error = refusal(Admission(False, LimitReason.TPM, "tenant", 2.0), why)
    assert error.code == "rate_limit_exceeded"
    assert error.message.endswith("it would. Please try again in 2s.")
    rpm = rate_explanation(Admission(False, LimitReason.RPM, "tenant", 1.0),
                           ScopeLimits("tenant", rate=RateLimits(rpm=2)), WORST)
    assert rpm == "Limit 2 requests per minute."
