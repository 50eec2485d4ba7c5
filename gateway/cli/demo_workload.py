"""The demo's mixed workload: requests of the kinds a company sends, each built to exercise one
of the demo policy's decisions (small talk, everyday questions, hard problems, personal data,
secrets, long documents, a named model, streams). Deterministic for a seed.

The values planted in sensitive prompts are made up here (valid-looking card numbers, keys
in the shapes providers issue), never real data.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from typing import Any

CHAT = (
    "hi", "Hello! How are you today?", "thanks, that helped", "What's a good name for a cat?",
    "Tell me a short joke about databases.", "Good morning!", "Can you say that more briefly?",
)
QUESTIONS = (
    "Explain the difference between TCP and UDP in two short paragraphs.",
    "Summarise the main causes of the French Revolution in five bullet points.",
    "What does a load balancer do, and when would I need one?",
    "Write a polite email declining a meeting invitation for Thursday.",
    "Translate 'the invoice is overdue' into French, German and Spanish.",
    "Give me three ideas for a team offsite in spring.",
    "How do I reverse a list in Python without modifying the original?",
    "What is the capital of Australia, and why is it not Sydney?",
)
# Hard requests as people write them (proofs, derivations, system design), not puzzles written
# to match a rule: the complexity model rates most of them "high" because of what they ask.
HARD = (
    "Our Postgres primary takes 40k writes a second and replication lag jumps to minutes "
    "whenever autovacuum runs on the largest table. Walk me through diagnosing it and propose "
    "a design that keeps lag under a second, with the trade-offs.",
    "Prove that the greedy earliest-finish algorithm for interval scheduling is optimal, then "
    "show why it fails once intervals have weights and give a dynamic program that works, "
    "with its running time.",
    "Derive the variance of the ordinary least squares estimator when the errors are "
    "heteroskedastic, and explain when and why the sandwich estimator is needed.",
    "Design a rate limiter that stays correct across three data centres joined by 100 ms "
    "links. Compare token bucket and sliding window, and state exactly what consistency you "
    "can guarantee.",
    "Explain how a transformer's KV cache grows with sequence length, derive the memory it "
    "needs for a 70B model with grouped-query attention at 32k context, and propose two ways "
    "to cut it.",
    "Write a Rust function that parses an arbitrary-precision decimal string without "
    "allocating, and argue that it rejects every malformed input.",
    "Prove that every bounded monotone sequence of real numbers converges, and use it to show "
    "that the sequence a1 = 1, a(n+1) = sqrt(2 + a(n)) converges to 2.",
    "How does Spanner achieve external consistency with TrueTime? Explain commit wait, why "
    "the uncertainty bound matters, and what breaks if clocks drift beyond it.",
)
CLAUSES = (
    "The Supplier shall deliver the Goods to the Delivery Address on the Delivery Date, and "
    "risk in the Goods shall pass to the Customer on completion of delivery.",
    "Either party may terminate this Agreement by giving not less than ninety days' written "
    "notice to the other party, without prejudice to any rights accrued before termination.",
    "The Customer shall pay each invoice within thirty days of the date of the invoice, and "
    "interest on late payments shall accrue daily at four per cent above the base rate.",
    "Neither party shall be liable for any failure or delay in performing its obligations "
    "where such failure or delay results from events beyond its reasonable control.",
    "All intellectual property rights in the Deliverables shall vest in the Customer upon "
    "payment in full, and the Supplier hereby assigns such rights with full title guarantee.",
    "Each party shall keep confidential all information disclosed by the other party and "
    "shall not use it except for the purpose of performing its obligations hereunder.",
)


@dataclass(frozen=True, slots=True)
class DemoRequest:
    kind: str  # what the request is meant to show (the summary groups by it)
    model: str
    messages: tuple[dict[str, str], ...]
    max_tokens: int
    stream: bool = False

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"model": self.model, "messages": list(self.messages),
                               "max_tokens": self.max_tokens}
        if self.stream:
            out["stream"] = True
            out["stream_options"] = {"include_usage": True}
        return out


def luhn_card(rng: random.Random) -> str:
    """A 16-digit Visa-shaped number with a valid check digit, grouped as people type it."""
    digits = [4] + [rng.randrange(10) for _ in range(14)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        doubled = d * 2 if i % 2 == 0 else d
        total += doubled - 9 if doubled > 9 else doubled
    digits.append((10 - total % 10) % 10)
    text = "".join(map(str, digits))
    return " ".join(text[i:i + 4] for i in range(0, 16, 4))


def _token(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def sensitive_prompt(rng: random.Random) -> tuple[str, str]:
    """(kind, prompt) with planted personal data or a secret."""
    base32 = string.ascii_uppercase + "234567"  # what AWS key ids are written in
    choice = rng.randrange(4)
    if choice == 0:
        return "personal data", (f"Please update the billing card for Maria Lopez to "
                                 f"{luhn_card(rng)}, expiry 09/28, and confirm by email to "
                                 f"maria.lopez{rng.randrange(100)}@example.org.")
    if choice == 1:
        return "personal data", (f"Draft a reply to our customer Jonas Weber (phone +49 30 "
                                 f"{rng.randrange(1000000, 9999999)}) about his delayed "
                                 "refund.")
    key_id = "AKIA" + _token(rng, base32, 16)
    secret = _token(rng, string.ascii_letters + string.digits + "/+", 40)
    if choice == 2:
        return "secret", ("Why does this deploy script fail?\n"
                          f"export AWS_ACCESS_KEY_ID={key_id}\n"
                          f"export AWS_SECRET_ACCESS_KEY={secret}\naws s3 ls s3://reports")
    token = "ghp_" + _token(rng, string.ascii_letters + string.digits, 36)
    return "secret", f"Our CI logs show GITHUB_TOKEN={token} failing with 403. What's wrong?"


def contract(rng: random.Random, words: int) -> str:
    parts = ["MASTER SERVICES AGREEMENT\n"]
    count, section = 0, 1
    while count < words:
        clause = rng.choice(CLAUSES)
        parts.append(f"{section}. {clause}")
        count += len(clause.split())
        section += 1
    return "\n".join(parts)


def workload(count: int, seed: int = 0) -> list[DemoRequest]:
    """count requests in a realistic mix: mostly small talk and everyday questions, some
    hard problems, some with personal data or secrets, a few long documents, some asking a
    model by name, about a fifth streamed."""
    rng = random.Random(seed)
    out: list[DemoRequest] = []
    for _ in range(count):
        roll = rng.random()
        stream = rng.random() < 0.2
        if roll < 0.25:
            kind, prompt, model, cap = "small talk", rng.choice(CHAT), "auto", 48
        elif roll < 0.55:
            kind, prompt, model, cap = "everyday", rng.choice(QUESTIONS), "auto", 128
        elif roll < 0.65:
            kind, prompt, model, cap = "hard", rng.choice(HARD), "auto", 256
        elif roll < 0.80:
            kind, prompt = sensitive_prompt(rng)
            model, cap = "auto", 96
        elif roll < 0.87:
            kind, model, cap = "long document", "auto", 200
            prompt = ("Summarise the obligations of each party in this contract:\n\n"
                      + contract(rng, rng.randrange(3500, 6000)))
        else:
            kind, prompt, cap = "named model", rng.choice(QUESTIONS), 96
            model = rng.choice(("claude-sonnet", "gpt-4o", "qwen-32b"))
        out.append(DemoRequest(kind, model, ({"role": "user", "content": prompt},), cap,
                               stream))
    return out


def burst(count: int, seed: int = 1) -> list[DemoRequest]:
    """count everyday requests sent at once: more than the self-hosted engines' batch slots,
    so the cheapest rule spills the rest over to an API."""
    rng = random.Random(seed)
    return [DemoRequest("burst", "auto", ({"role": "user", "content": rng.choice(QUESTIONS)},),
                        128) for _ in range(count)]
