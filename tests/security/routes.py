"""Every HTTP route of the real app, read from the app itself, so a route added later is
covered by the security tests without anyone remembering to list it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gateway.api import messages, openai
from gateway.api.hot_path import HotPathApp


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str  # as declared: "/admin/tenants/{name}/keys"

    def url_path(self, **values: str) -> str:
        """The path with each {parameter} filled (by name, else with "x")."""
        return re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: values.get(m.group(1), "x"), self.path)


def _walk(routes: Iterable[object], prefix: str) -> Iterator[tuple[str, frozenset[str]]]:
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:  # FastAPI keeps included routers as one nested route
            prefix_of_include = route.include_context.prefix or ""  # type: ignore[attr-defined]
            yield from _walk(included.routes, prefix + prefix_of_include)
            continue
        path = getattr(route, "path", None)
        if isinstance(path, str):
            yield prefix + path, frozenset(getattr(route, "methods", None) or ())


def endpoints(app: HotPathApp) -> list[Endpoint]:
    """Every (method, path) the app serves, FastAPI routes and the hot-path ones alike. HEAD
    is left out: Starlette adds it beside every GET."""
    found = {Endpoint(method, path) for path, methods in _walk(app.app.routes, "")
             for method in methods if method != "HEAD"}
    found |= {Endpoint(method, path) for method, path in (*openai.HOT_ROUTES, *messages.HOT_ROUTES)}
    # The walk must see at least what the OpenAPI schema documents, or it has missed a router.
    documented = {re.sub(r"\{(\w+)\}", r"\1", p) for p in app.app.openapi()["paths"]}
    walked = {re.sub(r"\{(\w+)(?::\w+)?\}", r"\1", e.path) for e in found}
    assert documented <= walked, f"routes the walk missed: {sorted(documented - walked)}"
    return sorted(found, key=lambda e: (e.path, e.method))
