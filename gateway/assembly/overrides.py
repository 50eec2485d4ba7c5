"""What a caller of create_app may hand in instead of the part the settings would build:
tests inject a fixed policy, their own providers or HTTP transports, and keep real parts for
everything else."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from gateway.policy.loader import PolicySet
from gateway.upstream import Provider


@dataclass(frozen=True, slots=True)
class Overrides:
    policy: PolicySet | None = None  # fixed: the policy file is neither read nor watched
    # Provider kind → provider, instead of the built-in set. Handed over: closed at shutdown
    # like the parts the app builds (an aiohttp pool belongs to the app's event loop).
    providers: Mapping[str, Provider] | None = None
    # Under the clients that scrape /metrics and DCGM exporters, and that ask backends for
    # their own token counts; each closes with its client at shutdown (httpx's rule).
    scrape_transport: httpx.AsyncBaseTransport | None = None
    tokenize_transport: httpx.AsyncBaseTransport | None = None
