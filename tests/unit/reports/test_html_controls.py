"""The report page's range and tenant controls: which choice shows as selected, what range
each choice asks for, and names escaped."""

from __future__ import annotations

from datetime import date

import pytest

from gateway.reports.html_controls import Asked, render_controls
from gateway.reports.page_data import ReportRange

SHOWN = ReportRange(date(2026, 11, 21), date(2026, 11, 27), "acme")


@pytest.mark.parametrize(("asked", "preset", "bounds"), [
    (Asked(), "30d", (None, None)),  # the page's default: 30 days
    (Asked(range="24h", since="2026-11-01", until="2026-11-02"), "24h", ("24h", None)),
    (Asked(range="custom", since="2026-11-01", until="2026-11-02"), "custom",
     ("2026-11-01", "2026-11-02")),
    (Asked(range="custom", since="", until=""), "custom", (None, None)),
    (Asked(since="7d"), "7d", ("7d", None)),  # a link from before the controls
    (Asked(since="2026-11-01"), "custom", ("2026-11-01", None)),
    (Asked(range="bogus", since="1h"), "1h", ("1h", None)),
])
def test_each_choice_selects_itself_and_asks_for_its_range(
    asked: Asked, preset: str, bounds: tuple[str | None, str | None]
) -> None:
    assert asked.preset() == preset
    assert asked.bounds() == bounds


def test_the_form_is_plain_html_with_a_label_for_every_control() -> None:
    page = render_controls(Asked(range="7d"), SHOWN, ["globex", "acme"])
    assert page.startswith('<form class="controls" id="controls" method="get" '
                           'action="/admin/reports"')
    assert "<script" not in page
    assert '<input type="radio" id="range-7d" name="range" value="7d" checked>' in page
    assert page.count(" checked") == 1
    for control in ("range-1h", "range-24h", "range-7d", "range-30d", "range-custom", "since",
                    "until", "tenant"):
        assert f'id="{control}"' in page and f'<label for="{control}">' in page
    assert 'value="2026-11-21"' in page and 'value="2026-11-27"' in page
    assert ('<option value="">All tenants</option><option value="acme" selected>acme</option>'
            '<option value="globex">globex</option>') in page


def test_tenant_names_are_escaped() -> None:
    evil = '"><script>x()</script>'
    page = render_controls(Asked(), ReportRange(date(2026, 11, 1), date(2026, 11, 2)), [evil])
    assert "<script>" not in page and "&lt;script&gt;" in page
