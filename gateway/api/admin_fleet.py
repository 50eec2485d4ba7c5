"""GET /admin/fleet: the live fleet as the router sees it, one JSON object per backend."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from starlette.requests import Request

from gateway.api.admin import admin_components
from gateway.components import Components
from gateway.routing.fleet_view import fleet_view

router = APIRouter(prefix="/admin", dependencies=[Depends(admin_components)])


@router.get("/fleet")
async def fleet(request: Request) -> dict[str, Any]:
    parts: Components = request.app.state.components
    return {"backends": fleet_view(parts.fleet.details(), parts.policy.current)}
