"""GET /admin/reports: the HTML report page (charts of cost, route mix, latency and savings)
for a range of UTC days and optionally one tenant, chosen with the page's own controls. The
admin key as a bearer token, or the session cookie of the login form (api/admin_session.py);
a browser with neither is sent to the form."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse, Response

from gateway.api.admin_session import has_session, login_redirect
from gateway.api.auth import bearer_token, require_admin_throttled
from gateway.api.parts import Parts
from gateway.errors import InvalidRequest
from gateway.reports.gpus import declared_gpus
from gateway.reports.html_controls import Asked, render_controls
from gateway.reports.html_page import render_page
from gateway.reports.page_data import RangeError, report_range
from gateway.reports.periods import page_days

router = APIRouter(prefix="/admin")

# The page is self-contained: nothing may load, run or be framed; only its own inline CSS.
HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",  # spend per tenant does not belong in shared caches
    "referrer-policy": "no-referrer",
}


@router.get("/reports", response_class=HTMLResponse)
async def report_page(
    request: Request, since: str | None = None, until: str | None = None,
    tenant: str | None = None, range: str | None = None,  # the URL's own name
    *, parts: Parts,
) -> Response:
    admin_key = parts.secrets.admin_key  # re-read when its file rotates
    if not await has_session(request, admin_key):
        wants_page = "text/html" in request.headers.get("accept", "")
        if admin_key and wants_page and bearer_token(request) is None:
            return login_redirect(request)
        require_admin_throttled(request, parts)
    # The form's choice (a preset, or custom days), or since/until as any link gives them.
    asked = Asked(range, since, until)
    first, last = page_days(*asked.bounds(), datetime.now(UTC))  # the CLI's syntax: 7d, dates
    try:
        rng = report_range(first, last, tenant)
    except RangeError as exc:
        raise InvalidRequest(str(exc), param="since") from None
    policy = parts.policy.current
    data = await parts.reports.page(rng, declared_gpus(policy),
                                    {name: b.zone for name, b in policy.backends.items()})
    start, end = rng.bounds(data.generated_at)
    capacity = await parts.capacity.section(policy, start, end) if rng.tenant is None else ""
    names = [row.name for row in await parts.tenants.list_tenants()]
    controls = render_controls(asked, rng, names)
    return HTMLResponse(render_page(data, [capacity], controls), headers=HEADERS)
