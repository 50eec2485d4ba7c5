"""A browser's way into the report page: a login form that trades the admin key for a session
cookie (HttpOnly, SameSite=Strict, Path=/admin, Secure over HTTPS) that only the read-only
report page accepts.

The cookie holds an expiry (in milliseconds) and an HMAC of it under the admin key, never the
key: every replica accepts it, and rotating the admin key ends every session. Logging out
ends every session issued until then, server-side: the admin log records it, and every
replica reads it before accepting a cookie. Login and logout refuse cross-site requests
(their Origin, else Referer, must be this host).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import time
from datetime import UTC
from urllib.parse import parse_qs, quote, urlsplit

from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from gateway.api.auth import admin_key_failed, client_address, key_matches
from gateway.api.parts import components_of
from gateway.tenancy.login_throttle import retry_after

COOKIE = "gateway_admin_session"
SESSION_S = 8 * 3600
MAX_FORM_BYTES = 4096
REPORT_PAGE = "/admin/reports"
PAGE_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
}

router = APIRouter(prefix="/admin", include_in_schema=False)


REVOKE_ACTION = "session.revoke"  # in the admin log: sessions issued before it are over
MAX_EXPIRY_DIGITS = 16  # milliseconds until the year 2286; a longer number is forged


def _sign(admin_key: str, expires_ms: int) -> str:
    mac = hmac.new(admin_key.encode(), f"report-session-ms|{expires_ms}".encode(),
                   hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()).decode().rstrip("=")


def session_value(admin_key: str, now_s: float) -> str:
    expires_ms = int(now_s * 1000) + SESSION_S * 1000
    return f"{expires_ms}.{_sign(admin_key, expires_ms)}"


def session_expiry_ms(value: str | None, admin_key: str | None, now_s: float) -> int | None:
    """The expiry of a genuine, unexpired session cookie; None for anything else."""
    if not value or not admin_key:
        return None
    expires_text, _, mac = value.partition(".")
    # isdigit() alone admits "²" and other digits int() refuses, and int() refuses numbers
    # over 4,300 digits: either would be a 500 for a forged cookie.
    if not (expires_text.isascii() and expires_text.isdigit()
            and len(expires_text) <= MAX_EXPIRY_DIGITS):
        return None
    expires_ms = int(expires_text)
    if expires_ms < now_s * 1000 or not key_matches(mac, _sign(admin_key, expires_ms)):
        return None
    return expires_ms


def valid_session(value: str | None, admin_key: str | None, now_s: float) -> bool:
    return session_expiry_ms(value, admin_key, now_s) is not None


async def has_session(request: Request, admin_key: str | None) -> bool:
    """A genuine cookie, issued after the last logout (read from the admin log)."""
    expires_ms = session_expiry_ms(request.cookies.get(COOKIE), admin_key, time.time())
    if expires_ms is None:
        return False
    parts = components_of(request)
    revoked = await parts.admin_log.last(REVOKE_ACTION)
    if revoked is None:
        return True
    if revoked.tzinfo is None:  # SQLite hands back naive UTC
        revoked = revoked.replace(tzinfo=UTC)
    return expires_ms - SESSION_S * 1000 > revoked.timestamp() * 1000


def same_origin(request: Request) -> bool:
    """Whether a state-changing form post comes from this host's own pages: the browser's
    Sec-Fetch-Site says so, or (older browsers) its Origin, else Referer, names this Host
    (these pages send no referrer, so their own posts carry Origin "null": Sec-Fetch-Site
    is what tells them apart). A client that sends none of them (not a browser) is let
    through; the cookie's SameSite=Strict stays the first line."""
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")  # "none": typed or bookmarked by the user
    source = request.headers.get("origin") or request.headers.get("referer")
    if source is None:
        return True
    host = request.headers.get("host", "").lower()
    netloc = urlsplit(source).netloc.lower() if source != "null" else ""
    return bool(host) and netloc == host


def _admin_key(request: Request) -> str | None:
    parts = components_of(request)
    return parts.secrets.admin_key  # re-read when its file rotates: old sessions end


def _form(error: str | None, target: str) -> str:
    message = f'<p class="error">{html.escape(error)}</p>' if error else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Gateway reports: sign in</title>
<style>body{{font-family:system-ui,sans-serif;max-width:26rem;margin:4rem auto;color:#222}}
input{{width:100%;padding:.5rem;margin:.5rem 0;box-sizing:border-box}}
button{{padding:.5rem 1.2rem}}.error{{color:#b00020}}</style></head>
<body><h1>Gateway reports</h1>{message}
<form method="post" action="/admin/login">
<label for="key">Admin key</label>
<input id="key" name="key" type="password" autocomplete="current-password" autofocus required>
<input type="hidden" name="next" value="{html.escape(target)}">
<button type="submit">Sign in</button></form>
<p>The key is GATEWAY_ADMIN_KEY (the demo prints it at start). Signing in sets a cookie for
this page only, valid for 8 hours.</p></body></html>"""


def _safe_target(value: str | None) -> str:
    """Only the report page (with its own query) may follow a login: no open redirect."""
    if value and value.startswith(REPORT_PAGE) and "//" not in value and "\\" not in value:
        return value
    return REPORT_PAGE


@router.get("/login", response_class=HTMLResponse)
async def login_page(request: Request) -> HTMLResponse:
    target = _safe_target(request.query_params.get("next"))
    if _admin_key(request) is None:
        return HTMLResponse(_form("The admin API is disabled: set GATEWAY_ADMIN_KEY.", target),
                            status_code=403, headers=PAGE_HEADERS)
    return HTMLResponse(_form(None, target), headers=PAGE_HEADERS)


@router.post("/login")
async def login(request: Request) -> Response:
    admin_key = _admin_key(request)
    body = await request.body()
    fields = parse_qs(body[:MAX_FORM_BYTES].decode("utf-8", "replace"))
    target = _safe_target((fields.get("next") or [None])[0])
    given = (fields.get("key") or [""])[0].strip()
    if not same_origin(request):
        return HTMLResponse(_form("Sign in from this gateway's own page.", target),
                            status_code=403, headers=PAGE_HEADERS)
    if admin_key is None:
        return HTMLResponse(_form("The admin API is disabled: set GATEWAY_ADMIN_KEY.", target),
                            status_code=403, headers=PAGE_HEADERS)
    parts = components_of(request)
    address = client_address(request)
    wait = parts.login_throttle.wait_s(address)
    if wait > 0:  # refused before the key is compared: waiting is the only way on
        parts.metrics.admin_auth_failures.labels(outcome="throttled").inc()
        return HTMLResponse(
            _form(f"Too many wrong keys: try again in {retry_after(wait)} s.", target),
            status_code=429, headers={**PAGE_HEADERS, "retry-after": retry_after(wait)})
    if not given or not key_matches(given, admin_key):
        admin_key_failed(parts, address)
        return HTMLResponse(_form("That is not the admin key.", target), status_code=401,
                            headers=PAGE_HEADERS)
    parts.login_throttle.succeeded(address)
    response = RedirectResponse(target, status_code=303, headers=PAGE_HEADERS)
    response.set_cookie(COOKIE, session_value(admin_key, time.time()), max_age=SESSION_S,
                        path="/admin", httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    if not same_origin(request):
        return Response("cross-site logout refused", status_code=403,
                        media_type="text/plain", headers=PAGE_HEADERS)
    if await has_session(request, _admin_key(request)):
        # Only a signed-in browser may end the sessions (a stranger could otherwise sign the
        # admin out at will); every copy of every earlier cookie stops working, everywhere.
        parts = components_of(request)
        await parts.admin_log.record("admin-session", REVOKE_ACTION, "report-page")
    response = RedirectResponse("/admin/login", status_code=303, headers=PAGE_HEADERS)
    response.delete_cookie(COOKIE, path="/admin", httponly=True, samesite="strict")
    return response


def login_redirect(request: Request) -> RedirectResponse:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/admin/login?next={quote(target, safe='')}", status_code=303,
                            headers=PAGE_HEADERS)
