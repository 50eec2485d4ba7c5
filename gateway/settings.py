"""Process settings from the environment (prefix GATEWAY_); read only by the composition
root (app.py, assembly/) and cli/.

Secrets (admin key, metrics key, key pepper, provider API keys) come from the environment
or from files (GATEWAY_*_FILE; a policy's api_key_file), never from policy YAML, and are never
logged.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from gateway.package_data import demo_policy_path
from gateway.secret_files import read_secret_file, refuse_both
from gateway.state_home import resolve as state_home


def _embedded_database_url() -> str:
    return f"sqlite+aiosqlite:///{state_home().database_file}"


class Settings(BaseSettings):
    # hide_input_in_errors: a validation error must not print the secrets it was given.
    model_config = SettingsConfigDict(env_prefix="GATEWAY_", extra="ignore",
                                      hide_input_in_errors=True)

    # Embedded default: a SQLite file in the state home (gateway/state_home.py) and
    # in-process state. Production: Postgres + Redis.
    database_url: str = Field(default_factory=_embedded_database_url)
    redis_url: str | None = None
    redis_timeout_s: float = Field(default=0.25, gt=0)  # per call: Redis never hangs a request
    # A crashed replica's reservations stop counting against budgets after this long; it
    # must outlast the longest request (streams included).
    budget_reservation_ttl_s: float = Field(default=900.0, gt=0)
    # With Redis, each replica leases slices of budgets and rate limits for this long and
    # admits against them locally (gateway/budget/leasing.py); 0 asks Redis per request.
    budget_lease_s: float = Field(default=0.5, ge=0)
    # While Redis is away, each replica serves a fail_open tenant at most this share of what
    # was left of its budget (read from the audit log); gateway/routing/spend_guard.py.
    budget_fail_open_share: float = Field(default=0.1, ge=0, le=1)
    # A request's header block must arrive within this long and stay under this size
    # (uvicorn bounds neither; gateway/cli/connection_guard.py).
    header_timeout_s: float = Field(default=15.0, gt=0)
    max_header_bytes: int = Field(default=65536, ge=4096)
    limits_cache_ttl_s: float = Field(default=5.0, ge=0)  # admin-set limits reach replicas
    # Unset: the demo policy shipped in the package (simulated backends, started by serve).
    policy_path: Path = Field(default_factory=demo_policy_path)
    policy_poll_interval_s: float = Field(default=1.0, gt=0)

    admin_key: SecretStr | None = None
    # What a Prometheus server sends to read /metrics (the admin key works too); with neither
    # set, /metrics answers 401: its counters carry tenant names.
    metrics_key: SecretStr | None = None
    # Optional HMAC pepper for API-key hashes: with it, a stolen database alone cannot even
    # confirm a guessed key.
    key_pepper: SecretStr | None = None
    # The same three secrets as files (Docker secrets, Kubernetes Secret volumes): never in
    # the environment, where `docker inspect` and child processes see them. The admin and
    # metrics keys are re-read when their file changes; the pepper only at start-up (it is
    # part of every stored key hash: a new one would lock every key out).
    admin_key_file: Path | None = None
    metrics_key_file: Path | None = None
    key_pepper_file: Path | None = None
    # The database password as a file, put into database_url (which then names no password):
    # how Docker secrets and Kubernetes Secrets hand it over. Read at start-up.
    database_password_file: Path | None = None
    # Where `gateway serve --workers N` (N > 1) keeps the workers' shared Prometheus
    # counters, emptied at start-up; unset: a fresh temporary directory.
    metrics_dir: Path | None = None
    # A verified key is re-checked against the database after this long. Revocations and
    # tenant changes reach every replica at once over Postgres LISTEN/NOTIFY; this TTL is the
    # bound only while that channel is down (and on SQLite, which has none).
    key_cache_ttl_s: float = Field(default=30.0, ge=0)
    # While the database is unreachable, keys verified within this long keep working.
    key_cache_stale_s: float = Field(default=3600.0, ge=0)
    # Keep verified keys' hashes and the admin-set limits last read in
    # <audit spool dir>/last-known.json, so a restart while the database is down serves them.
    key_cache_persist: bool = True

    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    # A body not fully received by then is answered 408 (a trickling client holds a slot).
    body_read_timeout_s: float = Field(default=30.0, gt=0)
    # Bodies being received at once, all requests of the process together (503 beyond).
    max_inflight_body_bytes: int = Field(default=256 * 1024 * 1024, ge=1024)
    # Stored Responses API responses (conversation state) are kept this long, as at OpenAI.
    responses_retention_days: float = Field(default=30.0, gt=0)
    log_level: str = "info"
    # On SIGTERM `gateway serve` stops accepting, gives in-flight requests (streams too) this
    # long to finish, then cancels the rest; the lifespan then drains the audit queue.
    shutdown_grace_s: float = Field(default=30.0, gt=0)
    access_log: bool = False
    # Audit rows go to the database; while it is unreachable, to this spool directory (unset:
    # beside the embedded SQLite file, else .gateway/audit-spool), replayed when it returns.
    audit_spool_dir: Path | None = None
    # Each audit row is also appended to a write-ahead journal in the spool directory before
    # its response completes (one write(2); survives kill -9), fdatasynced this often: a power
    # loss can cost the rows of the last interval. Off: a crash loses the last ~0.2 s.
    audit_journal: bool = True
    audit_journal_fsync_s: float = Field(default=0.1, gt=0)
    # Journal rows not yet stored in the database or the spool, at most; beyond, a row is
    # held in memory only (as on a full disk) and readiness fails until it drains.
    audit_journal_max_bytes: int = Field(default=64 * 1024 * 1024, ge=65536)
    # Optionally also one JSON line per request here ("-" means stderr): a mirror to tail.
    audit_log_path: str | None = None

    upstream_connect_timeout_s: float = 5.0
    upstream_read_timeout_s: float = 300.0
    upstream_max_connections: int = 512
    # A backend that fails this many times in a row is skipped for the cool-down.
    breaker_failures: int = 3  # consecutive failed attempts open a backend's circuit
    breaker_error_rate: float = Field(default=0.5, gt=0, le=1)  # ... or this share of them
    breaker_min_attempts: int = 20  # (the share is judged after this many attempts)
    breaker_cooldown_s: float = 10.0

    # Optional second opinion on sensitivity: Microsoft Presidio (the `presidio` extra), in
    # worker processes of its own beside the built-in detectors. It costs milliseconds per
    # request where the built-in scan costs microseconds, so it is off unless asked for.
    presidio: bool = False
    presidio_entities: str = ""  # comma-separated Presidio entities; empty: the defaults
    presidio_min_score: float = Field(default=0.4, ge=0, le=1)
    presidio_model: str = ""  # a spaCy pipeline package; empty: the first English one installed
    presidio_workers: int = Field(default=2, ge=1)

    # A task-type model fitted to this organisation's own labelled prompts (`gateway
    # classifier fit-tasks`); unset: the shipped one. Fitted routers keep reading the shipped
    # model's probabilities, the ones they were fitted on.
    task_model: Path | None = None
    # The complexity model and the static encoder table it reads (`gateway classifier
    # train-complexity` / `distill`); unset: the shipped ones. A model is refused beside a
    # table other than the one it was trained on.
    complexity_model: Path | None = None
    encoder_table: Path | None = None
    # minilm: the accurate mode, scoring complexity with the full int8 MiniLM in worker
    # processes (milliseconds a request; the `encoder` extra), over its own model
    # (`train-complexity --encoder minilm`). static: the distilled table, ~0.1 ms.
    complexity_encoder: Literal["static", "minilm"] = "static"
    complexity_encoder_workers: int = Field(default=2, ge=1)

    # `gateway serve` starts the simulated backends a policy declares (the demo).
    start_simulators: bool = True
    # `gateway serve` refuses to start, in one line, when the database or Redis does not
    # answer; true: it starts anyway (alive, not ready until they answer), for orchestrators
    # that restart replicas while a dependency is down (cli/preflight.py).
    start_degraded: bool = False

    # OpenTelemetry traces, under the standard OTEL_* names (no GATEWAY_ prefix): off unless
    # an OTLP/HTTP endpoint is set. The generic endpoint gets /v1/traces appended.
    otel_exporter_otlp_endpoint: str | None = Field(default=None, validation_alias=AliasChoices(
        "otel_exporter_otlp_endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT"))
    otel_exporter_otlp_traces_endpoint: str | None = Field(
        default=None, validation_alias=AliasChoices(
            "otel_exporter_otlp_traces_endpoint", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    otel_service_name: str = Field(default="llm-routing-gateway", validation_alias=AliasChoices(
        "otel_service_name", "OTEL_SERVICE_NAME"))
    otel_sdk_disabled: bool = Field(default=False, validation_alias=AliasChoices(
        "otel_sdk_disabled", "OTEL_SDK_DISABLED"))

    @model_validator(mode="after")
    def _secret_files(self) -> Settings:
        """Each secret given one way at most; a file's content becomes the value (read here,
        so a missing or empty file stops start-up with a message naming the setting)."""
        for name in ("admin_key", "metrics_key", "key_pepper"):
            env_name = f"GATEWAY_{name.upper()}"
            path: Path | None = getattr(self, f"{name}_file")
            inline: SecretStr | None = getattr(self, name)
            # Empty counts as unset (compose passes `${VAR:-}` through as "").
            refuse_both(env_name, inline if inline and inline.get_secret_value() else None,
                        path)
            if path is not None:
                try:
                    setattr(self, name, SecretStr(read_secret_file(path)))
                except ValueError as exc:
                    raise ValueError(f"{env_name}_FILE: {exc}") from None
        if self.database_password_file is not None:
            from sqlalchemy.engine import make_url  # here: `gateway status` needs no SQLAlchemy

            url = make_url(self.database_url)
            if url.password:
                raise ValueError("GATEWAY_DATABASE_URL has a password and "
                                 "GATEWAY_DATABASE_PASSWORD_FILE is set: give it one way")
            try:
                password = read_secret_file(self.database_password_file)
            except ValueError as exc:
                raise ValueError(f"GATEWAY_DATABASE_PASSWORD_FILE: {exc}") from None
            self.database_url = url.set(password=password).render_as_string(hide_password=False)
        return self

    @property
    def uses_demo_policy(self) -> bool:
        return self.policy_path == demo_policy_path()

    @property
    def is_embedded_db(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def spool_dir(self) -> Path:
        if self.audit_spool_dir is not None:
            return self.audit_spool_dir
        from sqlalchemy.engine import make_url

        # Beside its database, so a spool is only ever replayed into the database it missed.
        url = make_url(self.database_url)
        if self.is_embedded_db and url.database and url.database != ":memory:":
            return Path(url.database).parent / "audit-spool"
        # One folder per database (host, port, name; never the password), so gateways started
        # from one directory against different databases never replay into the wrong one.
        where = f"{url.host}:{url.port}/{url.database}".encode()
        return state_home().path / f"audit-spool-{hashlib.sha256(where).hexdigest()[:12]}"
