"""`POST /v1/feedback`: a tenant scores one of its own requests, `{"request_id", "score"}`
(0-1) or `{"request_id", "label": "good" | "bad"}`. Another tenant's request and an unknown
id are both a 404 (a key learns nothing about other tenants' ids). A request whose audit row
is still on its way to the database (rows land in batches after the response) is found in
the audit writer's recent ids, so feedback sent right after the answer is not refused; an id
found nowhere is looked up again for a second before the 404, for another replica's rows."""

from __future__ import annotations

import asyncio
import math
import re
from typing import Any

import orjson
from fastapi import APIRouter
from sqlalchemy.exc import SQLAlchemyError
from starlette.requests import Request

from gateway.api.auth import authenticate_tenant
from gateway.api.parts import Parts
from gateway.errors import DatabaseUnavailable, InvalidRequest, NotFound

MAX_FEEDBACK_BYTES = 4096
# An id neither this process recorded nor the database holds may be another replica's whose
# batch has not landed yet (the writer stores every 0.2 s): look again before a 404.
UNSEEN_RETRIES_S = (0.0, 0.3, 0.7)
OUR_IDS = re.compile(r"req_[0-9a-f]{24}")  # api/parsing.new_request_id: others are not retried
LABEL_SCORES = {"good": 1.0, "bad": 0.0}
FIELDS = ("request_id", "score", "label")

router = APIRouter()


FEEDBACK_BODY = {"requestBody": {"required": True, "content": {"application/json": {"schema": {
    "type": "object",
    "required": ["request_id"],
    "properties": {
        "request_id": {"type": "string", "minLength": 1, "maxLength": 64,
                       "description": "the x-request-id of one of your requests"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "label": {"type": "string", "enum": ["good", "bad"]},
    },
    "additionalProperties": False,
    "oneOf": [{"required": ["score"]}, {"required": ["label"]}],
}}}}}


@router.post("/v1/feedback", openapi_extra=FEEDBACK_BODY)
async def feedback(request: Request, parts: Parts) -> dict[str, Any]:
    tenant = await authenticate_tenant(request, parts.authenticator)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_FEEDBACK_BYTES:
        raise InvalidRequest(f"a feedback body is at most {MAX_FEEDBACK_BYTES} bytes")
    body = await request.body()
    if len(body) > MAX_FEEDBACK_BYTES:
        raise InvalidRequest(f"a feedback body is at most {MAX_FEEDBACK_BYTES} bytes")
    request_id, score, label = parse_feedback(body)
    outcomes = parts.outcomes
    try:
        owner = parts.audit.recent.tenant_of(request_id)
        retries = UNSEEN_RETRIES_S if OUR_IDS.fullmatch(request_id) else (0.0,)
        for wait_s in retries if owner is None else ():
            await asyncio.sleep(wait_s)  # another replica's row may be a batch away
            owner = await outcomes.request_tenant(request_id)
            if owner is not None:
                break
        if owner != tenant.tenant_id:
            raise NotFound(f"no request {request_id!r} for this key's tenant",
                           param="request_id", code="request_not_found")
        await outcomes.save_feedback(request_id, tenant.tenant_id, score, label)
    except (SQLAlchemyError, OSError) as exc:
        raise DatabaseUnavailable("feedback could not be stored: the database did not "
                                  "answer; try again") from exc
    return {"object": "feedback", "request_id": request_id, "score": score, "label": label}


def parse_feedback(body: bytes) -> tuple[str, float, str | None]:
    """(request_id, score 0-1, label or None), or a 400 naming the parameter at fault."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise InvalidRequest("the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise InvalidRequest("the body must be a JSON object")
    for key in data:
        if key not in FIELDS:
            raise InvalidRequest(f"unknown parameter {key!r}", param=str(key),
                                 code="unknown_parameter")
    request_id = data.get("request_id")
    if not isinstance(request_id, str) or not request_id or len(request_id) > 64:
        raise InvalidRequest("request_id must be the x-request-id of one of your requests",
                             param="request_id")
    if ("score" in data) == ("label" in data):
        raise InvalidRequest("give either score (0-1) or label (good or bad)", param="score")
    if "label" in data:
        label = data["label"]
        if not isinstance(label, str) or label not in LABEL_SCORES:
            raise InvalidRequest("label must be \"good\" or \"bad\"", param="label")
        return request_id, LABEL_SCORES[label], label
    score = data["score"]
    if (not isinstance(score, int | float) or isinstance(score, bool)
            or not math.isfinite(score) or not 0 <= score <= 1):
        raise InvalidRequest("score must be a number from 0 to 1", param="score")
    return request_id, float(score), None
