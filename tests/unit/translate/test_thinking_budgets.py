"""One reasoning-effort ⇄ thinking-budget table (translate/anthropic_vocabulary.py), read
both ways: a chat client's effort becomes a Claude budget, a Claude client's budget an
OpenAI effort, and no other module keeps its own copy."""

from __future__ import annotations

import re
from pathlib import Path

import gateway
from gateway.translate.anthropic_request import to_messages_request
from gateway.translate.anthropic_vocabulary import (
    COMMON_EFFORTS,
    THINKING_BUDGETS,
    effort_for_budget,
)
from gateway.types import Backend

CLAUDE = Backend("claude", "anthropic", "http://c/v1", "claude-x", "external", 200_000, 4)
# An effort name mapped to a number: what a budget table looks like wherever it is written.
TABLE_ROW = re.compile(r"""["'](?:minimal|low|medium|high|xhigh|max)["']\s*:\s*\d""")


def test_there_is_one_effort_budget_table_in_the_package() -> None:
    root = Path(gateway.__file__).parent
    holders = sorted(str(path.relative_to(root)) for path in root.rglob("*.py")
                     if TABLE_ROW.search(path.read_text(encoding="utf-8")))
    assert holders == ["translate/anthropic_vocabulary.py"]


def test_an_effort_and_its_budget_read_back_as_each_other() -> None:
    for effort in COMMON_EFFORTS:
        assert effort_for_budget({"budget_tokens": THINKING_BUDGETS[effort]}) == effort


def test_budgets_between_and_beyond_the_table_take_the_effort_that_covers_them() -> None:
    assert effort_for_budget({"budget_tokens": 1500}) == "medium"
    assert effort_for_budget({"budget_tokens": 3000}) == "high"
    assert effort_for_budget({"budget_tokens": 32_000}) == "high"  # what every model takes
    assert effort_for_budget({"type": "adaptive"}) == "medium"


def test_a_chat_clients_effort_becomes_the_tables_budget_for_claude() -> None:
    for effort, budget in THINKING_BUDGETS.items():
        body = to_messages_request({"messages": [{"role": "user", "content": "hi"}],
                                    "reasoning_effort": effort}, CLAUDE, stream=False).body
        assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
