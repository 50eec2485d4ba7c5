"""Which tenant recorded each of the latest request ids: feedback on a request whose audit row
is still in the writer's queue, its journal or the spool (rows reach the database in batches
after the response) is accepted for that tenant instead of being refused as unknown."""

from __future__ import annotations

from collections import OrderedDict

# ~150 bytes an entry: 100K ids cost ~15 MB and cover minutes of traffic at 1K req/s, far
# longer than a batch takes to land while the database answers.
DEFAULT_CAPACITY = 100_000


class RecentRequests:
    """A bounded map request id → tenant id; the oldest id goes first when full."""

    __slots__ = ("_capacity", "_tenants")

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self._capacity = capacity
        self._tenants: OrderedDict[str, str] = OrderedDict()

    def add(self, request_id: str, tenant_id: str) -> None:
        self._tenants[request_id] = tenant_id
        if len(self._tenants) > self._capacity:
            self._tenants.popitem(last=False)

    def tenant_of(self, request_id: str) -> str | None:
        return self._tenants.get(request_id)

    def __len__(self) -> int:
        return len(self._tenants)
