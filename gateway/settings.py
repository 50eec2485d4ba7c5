"""Process settings from the environment (prefix GATEWAY_); read only by app.py and cli/.

Secrets (admin key, key pepper, provider API keys) come from the environment only, never
from policy YAML, and are never logged.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_POLICY = Path("policies/default.yaml")
DEFAULT_STATE_DIR = Path(".gateway")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GATEWAY_", extra="ignore")

    # Embedded default: a SQLite file and in-process state. Production: Postgres + Redis.
    database_url: str = f"sqlite+aiosqlite:///{DEFAULT_STATE_DIR}/gateway.db"
    redis_url: str | None = None
    redis_timeout_s: float = Field(default=0.25, gt=0)  # per call: Redis never hangs a request
    # A crashed replica's reservations stop counting against budgets after this long; it
    # must outlast the longest request (streams included).
    budget_reservation_ttl_s: float = Field(default=900.0, gt=0)
    limits_cache_ttl_s: float = Field(default=5.0, ge=0)  # admin-set limits reach replicas
    policy_path: Path = DEFAULT_POLICY
    policy_poll_interval_s: float = Field(default=1.0, gt=0)

    admin_key: SecretStr | None = None
    # Optional HMAC pepper for API-key hashes: with it, a stolen database alone cannot even
    # confirm a guessed key.
    key_pepper: SecretStr | None = None
    key_cache_ttl_s: float = 30.0

    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    log_level: str = "info"
    access_log: bool = False
    # Structured per-request records go here (one JSON line each); "-" means stderr.
    audit_log_path: str = "-"

    upstream_connect_timeout_s: float = 5.0
    upstream_read_timeout_s: float = 300.0
    upstream_max_connections: int = 512
    # A backend that fails this many times in a row is skipped for the cool-down.
    breaker_failures: int = 3  # consecutive failed attempts open a backend's circuit
    breaker_error_rate: float = Field(default=0.5, gt=0, le=1)  # ... or this share of them
    breaker_min_attempts: int = 20  # (the share is judged after this many attempts)
    breaker_cooldown_s: float = 10.0

    # `gateway serve` starts the simulated backends a policy declares (the demo).
    start_simulators: bool = True

    @property
    def is_embedded_db(self) -> bool:
        return self.database_url.startswith("sqlite")
