"""GET /admin/fleet: the live fleet as the router sees it, one JSON object per backend."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from gateway.api.admin import Admin, admin_components
from gateway.routing.fleet_view import fleet_view

router = APIRouter(prefix="/admin", dependencies=[Depends(admin_components)])


@router.get("/fleet")
async def fleet(parts: Admin) -> dict[str, Any]:
    return {"backends": fleet_view(parts.fleet.details(), parts.policy.current)}
