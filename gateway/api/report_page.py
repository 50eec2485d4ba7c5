"""GET /admin/reports: the HTML report page (charts of cost, route mix, latency and savings)
for a range of UTC days and optionally one tenant. Admin key required."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from starlette.responses import HTMLResponse

from gateway.api.admin import Admin, admin_components
from gateway.errors import InvalidRequest
from gateway.reports.html_page import render_page
from gateway.reports.page_data import RangeError, load_page, report_range

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
    parts: Admin,
    # Strict: a date as the document says (YYYY-MM-DD), not a number read as a timestamp.
    since: Annotated[date | None, Query(strict=True)] = None,
    until: Annotated[date | None, Query(strict=True)] = None,
    tenant: str | None = None,
) -> HTMLResponse:
    try:
        rng = report_range(since, until, tenant)
    except RangeError as exc:
        raise InvalidRequest(str(exc), param="since") from None
    data = await load_page(parts.engine, rng)
    return HTMLResponse(render_page(data), headers=HEADERS)
