"""GET /admin/reports: the HTML report page (charts of cost, route mix, latency and savings)
for a range of UTC days and optionally one tenant. Admin key required."""

from __future__ import annotations

from datetime import date

from fastapi import APIRouter, Depends
from starlette.responses import HTMLResponse

from gateway.api.admin import Admin, admin_components
from gateway.errors import InvalidRequest
from gateway.reports.gpus import declared_gpus
from gateway.reports.html_page import render_page
from gateway.reports.page_data import RangeError, load_page, report_range
from gateway.tools.capacity_html import capacity_section

router = APIRouter(prefix="/admin", dependencies=[Depends(admin_components)])

# The page is self-contained: nothing may load, run or be framed; only its own inline CSS.
HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",  # spend per tenant does not belong in shared caches
    "referrer-policy": "no-referrer",
}


@router.get("/reports", response_class=HTMLResponse)
async def report_page(
    parts: Admin, since: date | None = None, until: date | None = None,
    tenant: str | None = None,
) -> HTMLResponse:
    try:
        rng = report_range(since, until, tenant)
    except RangeError as exc:
        raise InvalidRequest(str(exc), param="since") from None
    policy = parts.policy.current
    data = await load_page(parts.engine, rng, declared_gpus(policy),
                           {name: b.zone for name, b in policy.backends.items()})
    start, end = rng.bounds(data.generated_at)
    capacity = await capacity_section(parts.engine, policy, start, end) \
        if rng.tenant is None else ""
    return HTMLResponse(render_page(data, [capacity]), headers=HEADERS)
