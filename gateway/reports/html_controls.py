"""The served report page's controls: range presets (1 h, 24 h, 7 d, 30 d, custom days) and a
tenant picker, as one plain GET form: no script, native controls with labels, so they work
from the keyboard and the choice lives in the URL (and so survives the login redirect)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from gateway.reports.page_data import ReportRange

PRESETS = (("1h", "1 h"), ("24h", "24 h"), ("7d", "7 d"), ("30d", "30 d"))
CUSTOM = "custom"
DEFAULT_PRESET = "30d"  # what the page shows with no range asked for (page_data.DEFAULT_DAYS)

CSS = """
.controls { display: flex; flex-wrap: wrap; gap: 10px 18px; align-items: end; margin: 14px 0 4px;
  background: #fff; border: 1px solid #e1e5ea; border-radius: 8px; padding: 10px 14px; }
.controls fieldset { border: 0; margin: 0; padding: 0; display: flex; flex-wrap: wrap;
  gap: 6px 10px; align-items: center; }
.controls legend, .controls .field > label { font-size: 12px; color: #5b6670;
  text-transform: uppercase; letter-spacing: .04em; }
.controls .field { display: flex; flex-direction: column; gap: 2px; }
.controls input, .controls select, .controls button { font: inherit; }
.controls :focus-visible { outline: 2px solid #08519c; outline-offset: 2px; }
"""


@dataclass(frozen=True, slots=True)
class Asked:
    """The range as the URL asked for it: a preset (`range`), or `since`/`until` as given."""

    range: str | None = None
    since: str | None = None
    until: str | None = None

    def preset(self) -> str:
        """The choice to show as selected."""
        if self.range in (*dict(PRESETS), CUSTOM):
            return self.range
        if self.since in dict(PRESETS) and self.until is None:
            return self.since
        if self.since is None and self.until is None:
            return DEFAULT_PRESET
        return CUSTOM

    def bounds(self) -> tuple[str | None, str | None]:
        """(since, until) in the syntax every report takes: a preset reaches up to now; the
        custom choice takes the two days given."""
        if self.range in dict(PRESETS):
            return self.range, None
        return self.since or None, self.until or None


def render_controls(asked: Asked, shown: ReportRange, tenants: Sequence[str],
                    action: str = "/admin/reports") -> str:
    chosen = asked.preset()
    radios = "".join(
        f'<input type="radio" id="range-{value}" name="range" value="{value}"'
        f'{" checked" if value == chosen else ""}><label for="range-{value}">{label}</label>'
        for value, label in (*PRESETS, (CUSTOM, "Custom"))
    )
    days = (
        f'<span class="field"><label for="since">From (UTC day)</label><input type="date" '
        f'id="since" name="since" value="{shown.since.isoformat()}"></span>'
        f'<span class="field"><label for="until">To</label><input type="date" id="until" '
        f'name="until" value="{shown.until.isoformat()}"></span>'
    )
    names = sorted(set(tenants) | ({shown.tenant} if shown.tenant else set()))
    options = '<option value="">All tenants</option>' + "".join(
        f'<option value="{escape(name)}"{" selected" if name == shown.tenant else ""}>'
        f"{escape(name)}</option>" for name in names
    )
    return (
        f'<form class="controls" id="controls" method="get" action="{escape(action)}" '
        'aria-label="Range and tenant">'
        f"<fieldset><legend>Range</legend>{radios}</fieldset>{days}"
        f'<span class="field"><label for="tenant">Tenant</label>'
        f'<select id="tenant" name="tenant">{options}</select></span>'
        '<button type="submit">Show</button></form>'
        '<p class="note">Presets reach up to now; the page shows the whole UTC days they '
        "touch. From and To apply with Custom.</p>"
    )
