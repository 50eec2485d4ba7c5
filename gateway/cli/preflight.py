"""What `gateway serve` checks before it starts anything: its port is free, and the database
and Redis it is configured for answer. Each failure is one line (SetupError) instead of a
gateway that starts, logs tracebacks and serves nothing."""

from __future__ import annotations

import asyncio
import errno
import socket
from typing import TYPE_CHECKING

from gateway.errors import SetupError

if TYPE_CHECKING:
    from gateway.settings import Settings

PROBE_TIMEOUT_S = 3.0  # a database or Redis that has not answered by then is taken as down


def check_port(host: str, port: int) -> None:
    """Bind and release at once, as uvicorn will bind (SO_REUSEADDR: a port in TIME_WAIT is
    free). Only a refusal is reported; the real bind comes a moment later."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise SetupError(
                    f"port {port} on {host} is in use (another gateway? `gateway status` "
                    "names one started from this state home); pick another with --port"
                ) from None
            raise SetupError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; "
                             "check --host and --port") from None


def check_services(settings: Settings) -> list[str]:
    """Raises SetupError when Redis, or the database, does not answer. Two exceptions, the
    ones the resilience design exists for, start degraded with a warning line each (the
    lines returned): a Postgres that is down while the spool holds keys verified before
    (last-known.json), served until it answers; and anything down under
    GATEWAY_START_DEGRADED (alive, not ready)."""
    from gateway.cli.database import unreachable

    failures = asyncio.run(_probe(settings))
    redis_failure = failures.get("redis")
    database_failure = failures.get("database")
    fatal: list[str] = []
    warnings: list[str] = []
    if redis_failure is not None:
        fatal.append(f"{redis_failure}; start it, or fix the setting")
    if database_failure is not None:
        line = unreachable(settings.database_url, database_failure)
        known = _last_known_keys(settings)
        if known:
            warnings.append(f"warning: {line}; serving the {known} keys verified before "
                            "(last-known.json) until it answers")
        else:
            fatal.append(f"{line}; start it, or fix the setting")
    if settings.start_degraded:
        return warnings + [f"warning: {line} (GATEWAY_START_DEGRADED: starting, not ready)"
                           for line in fatal]
    if fatal:
        raise SetupError(" and ".join(fatal))
    return warnings


async def _probe(settings: Settings) -> dict[str, BaseException | str]:
    found: dict[str, BaseException | str] = {}
    # The embedded file is opened (and migrated) by serve itself, with its own one-line error.
    checks = [("database", _database(settings.database_url))] if not settings.is_embedded_db \
        else []
    if settings.redis_url:
        checks.append(("redis", _redis(settings.redis_url)))
    results = await asyncio.gather(*(check for _, check in checks))
    for (name, _), failure in zip(checks, results, strict=True):
        if failure is not None:
            found[name] = failure
    return found


async def _database(url: str) -> BaseException | None:
    from sqlalchemy.exc import SQLAlchemyError

    from gateway.db.engine import create_engine
    from gateway.db.probe import DatabaseProbe

    engine = create_engine(url)
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_S):
            await DatabaseProbe(engine).ping()
    except TimeoutError:
        return TimeoutError(f"no answer within {PROBE_TIMEOUT_S:g} s")
    except (OSError, SQLAlchemyError) as exc:  # refused, unknown host, bad password
        return exc
    finally:
        await engine.dispose()
    return None


async def _redis(url: str) -> str | None:
    from redis.asyncio import Redis
    from redis.exceptions import RedisError

    from gateway.cli.database import without_password

    client = Redis.from_url(url, socket_connect_timeout=PROBE_TIMEOUT_S,
                            socket_timeout=PROBE_TIMEOUT_S)
    try:
        await client.ping()
    except (RedisError, OSError) as exc:
        reason = (str(exc).strip() or "no reason given").splitlines()[0][:200]
        return (f"redis {without_password(url)} failed (GATEWAY_REDIS_URL): "
                f"{type(exc).__name__}: {reason}")
    finally:
        await client.aclose()
    return None


def _last_known_keys(settings: Settings) -> int:
    from gateway.db.last_known import LastKnownFile

    store = LastKnownFile(settings.spool_dir / "last-known.json")
    store.load()
    return store.count("keys") if settings.key_cache_persist else 0
