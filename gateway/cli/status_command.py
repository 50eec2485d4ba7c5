"""`gateway status`: where this shell's gateway keeps its state, which policy, database and
Redis it uses, and whether a gateway is running there. Reads settings and files only, so it
answers at once."""

from __future__ import annotations

import os

import click

from gateway.cli.database import embedded_file, without_password


@click.command()
def status() -> None:
    """Where state lives, the policy, the database and Redis in use, the running gateway."""
    from pydantic import ValidationError

    from gateway.cli import running
    from gateway.settings import Settings
    from gateway.state_home import resolve

    home = resolve()
    try:
        settings = Settings()
    except ValidationError as exc:
        raise click.ClickException(
            "settings: " + "; ".join(str(e["msg"]) for e in exc.errors())) from None
    rows = [("state", f"{home.path.resolve()}  (from {home.source})")]
    policy = ("the demo policy shipped in the package" if settings.uses_demo_policy
              else f"{settings.policy_path}  (GATEWAY_POLICY_PATH)")
    if not settings.policy_path.is_file():
        policy += "  [missing]"
    rows.append(("policy", policy))
    gateway = running.read(home.path)
    if gateway is not None and not gateway.alive():
        gateway = None
    if gateway is not None:  # what the running gateway loaded, where this shell differs
        loaded = gateway.policy or "the demo policy shipped in the package"
        configured = "" if settings.uses_demo_policy else str(settings.policy_path.resolve())
        if gateway.policy != configured:
            rows.append(("", f"the running gateway loaded {loaded}"))
    shown = without_password(settings.database_url)
    file = embedded_file(settings.database_url)
    if file is not None:
        state = "present" if file.is_file() else "not created yet"
        shown = f"{file.resolve()}  (SQLite, {state})"
    origin = "GATEWAY_DATABASE_URL" if "GATEWAY_DATABASE_URL" in os.environ else "state home"
    rows.append(("database", f"{shown}  (from {origin})"))
    redis = (without_password(settings.redis_url)
             if settings.redis_url else "none (in-process budgets and limits)")
    rows.append(("redis", redis))
    if gateway is None:
        rows.append(("gateway", "not running from this state home"))
    else:
        answer = "answering" if gateway.answers() else "not answering /healthz"
        rows.append(("gateway", f"{gateway.url}/v1  (pid {gateway.pid}, {answer})"))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        click.echo(f"{name.ljust(width)}  {value}")

