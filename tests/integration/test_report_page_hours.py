"""A young deployment's report page on SQLite and Postgres: the cost chart has hours, and
they add up to the day the cost model prices."""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from tests.integration.test_plan_from_audit import report_page, traffic  # noqa: F401 (a fixture)


async def test_a_day_old_deployment_sees_its_hours(engine: AsyncEngine, tmp_path: Path,
                                                   traffic: None) -> None:  # noqa: F811
    page = await report_page(engine, tmp_path)
    cost = page[page.index('<section id="cost">'):page.index('<section id="mix">')]
    assert "<h2>Cost per hour</h2>" in cost
    labels = re.findall(r'text-anchor="middle"[^>]*>([^<]+)<', cost)
    # The first request started at 11:09:50; llama-8b's GPUs are paid from then to midnight.
    assert labels[0] == "11:00" and len(labels) <= 13
    # Every bar's parts, summed, are the page's total cost (the one cost model's).
    parts = [float(v.replace(",", "")) for v in
             re.findall(r"<title>\d\d:00 · (?!baseline)[^:]+: \$([\d.,]+)</title>", cost)]
    total = re.search(r'<div class="k">Cost</div><div class="v">\$([\d.,]+)<', page)
    assert total is not None and parts
    # Each part is printed to the precision its size deserves: they agree to within that.
    assert abs(sum(parts) - float(total.group(1).replace(",", ""))) <= 0.02 * sum(parts)
