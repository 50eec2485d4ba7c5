"""GET /v1/responses/{id}/input_items: a page of a stored response's input items, as
`client.responses.input_items.list` asks for it (`order`, `after`, `limit` from the query)."""

from __future__ import annotations

from typing import Any

from gateway.errors import InvalidRequest
from gateway.translate.responses import listed_item


def input_items_page(response_id: str, context: list[dict[str, Any]], order: str | None,
                     after: str | None, limit: str | None) -> dict[str, Any]:
    """A page of a stored response's input items, each with an id (the client's own, or one
    derived from the response id and the item's place, so pages stay stable)."""
    if order not in (None, "asc", "desc"):
        raise InvalidRequest("order: expected 'asc' or 'desc'", param="order")
    try:
        size = 20 if limit is None else int(limit)
    except ValueError:
        size = 0
    if not 1 <= size <= 100:
        raise InvalidRequest("limit: an integer from 1 to 100 is required", param="limit")
    suffix = response_id.removeprefix("resp_")
    items = [listed_item(item, f"{suffix}{i:04d}") for i, item in enumerate(context)]
    if order != "asc":
        items.reverse()
    if after is not None:
        position = next((i for i, item in enumerate(items) if item["id"] == after), None)
        if position is None:
            raise InvalidRequest(f"after: no input item {after!r} in this response",
                                 param="after")
        items = items[position + 1:]
    page = items[:size]
    return {"object": "list", "data": page,
            "first_id": page[0]["id"] if page else None,
            "last_id": page[-1]["id"] if page else None,
            "has_more": len(items) > size}
