"""`gateway policy check FILE...` (and schema export)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import click
import orjson

from gateway.policy.loader import PolicyError, load_policy
from gateway.policy.schema import PolicyFile
from gateway.types import Endpoint, TenantContext


@click.group()
def policy() -> None:
    """Validate and inspect routing policies."""


@policy.command("check")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
def check(files: tuple[Path, ...]) -> None:
    """Validate policy files; print every problem with file, line and key; exit 1 on any."""
    failed = False
    for path in files:
        try:
            loaded = load_policy(path)
        except PolicyError as exc:
            failed = True
            for problem in exc.problems:
                click.echo(str(problem), err=True)
            continue
        click.echo(f"{path}: ok ({len(loaded.backends)} backends, "
                   f"models: {', '.join(loaded.public_models())})")
    if failed:
        raise SystemExit(1)


@policy.command("schema")
@click.option("--output", "-o", type=click.Path(path_type=Path), default=None)
def schema(output: Path | None) -> None:
    """Print (or write) the JSON Schema of policy files, for editors."""
    text = json.dumps(PolicyFile.model_json_schema(), indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text)


@policy.command("explain")
@click.option("--policy", "policy_path", required=True, type=click.Path(path_type=Path))
@click.option("--tenant", required=True)
@click.option("--request", "request_path", required=True, type=click.Path(path_type=Path),
              help="a request body as JSON (e.g. a chat completion with model and messages)")
@click.option("--endpoint", type=click.Choice([e.value for e in Endpoint]),
              default=Endpoint.CHAT.value, show_default=True)
@click.option("--tags", default=None, help="comma-separated, as in x-gateway-tags")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
def explain_command(policy_path: Path, tenant: str, request_path: Path, endpoint: str,
                    tags: str | None, as_json: bool) -> None:
    """Show which backend a request would get, by which rule, and why the others were not."""
    from gateway.api.parsing import parse_route_request
    from gateway.classify.standard import standard_classifier
    from gateway.errors import GatewayError
    from gateway.routing.explain import explain, render_table

    try:
        loaded = load_policy(policy_path)
    except PolicyError as exc:
        raise click.ClickException(f"the policy does not validate:\n{exc}") from None
    try:
        route_request = parse_route_request(
            request_path.read_bytes(), Endpoint(endpoint), "explain", tags
        )
    except (OSError, GatewayError) as exc:
        raise click.ClickException(f"{request_path}: {exc}") from None
    context = TenantContext(tenant_id=tenant, tenant_name=tenant, key_id="-")
    result = asyncio.run(explain(standard_classifier(), loaded, context, route_request))
    if as_json:
        click.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(render_table(result))
