"""The handlers' one way to the running gateway's components: `components_of(request)`,
typed and checked, and `Parts`, the same as a FastAPI dependency. The inference routes skip
FastAPI (api/hot_path.py), so their handlers call `components_of` themselves."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from starlette.requests import Request

from gateway.components import Components


def components_of(request: Request) -> Components:
    """What the lifespan assembled into `app.state.components` (app.py)."""
    found = request.app.state.components
    if not isinstance(found, Components):
        raise TypeError(f"app.state.components is a {type(found).__name__}, not Components")
    return found


async def _components(request: Request) -> Components:
    # async: FastAPI runs a plain `def` dependency in its thread pool, a hop per request.
    return components_of(request)


Parts = Annotated[Components, Depends(_components)]
