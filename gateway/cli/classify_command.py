"""`gateway classify FILE.jsonl`: classify prompts offline, one JSON line out per line in.

Input lines are `{"prompt": str}` or `{"messages": [...]}` (a chat). Output lines are
`{"prompt_tokens", "complexity": {"p_strong", "class"}, "task": {"type", "p"},
"sensitivity": {"categories", "spans": [{"type", "start", "end", "confidence"}]}}`.
Evaluation tools depend on this shape: keep it stable. Span offsets index the prompt, or
for a chat the message texts joined with newlines. Token counts are exact (o200k).
`--policy P --tenant T` adds that tenant's own detectors and drops the values the policy
allows for it, as the gateway does for its requests; `--presidio` adds Presidio's findings
(settings GATEWAY_PRESIDIO_*), as a gateway with it turned on does.
"""

from __future__ import annotations

import asyncio
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO

import click
import orjson

from gateway.classify.presidio import PresidioFinder, PresidioUnavailable, presidio_config
from gateway.types import Endpoint, RouteRequest, TenantDetector

FORCE_EXACT = (0,)  # a threshold every prompt is above: always count exactly


@click.command("classify")
@click.argument("source", type=click.Path(path_type=Path, allow_dash=True, exists=True,
                                          dir_okay=False))
@click.option("--output", "-o", type=click.Path(path_type=Path), default=None,
              help="write here instead of stdout")
@click.option("--policy", "policy_path", type=click.Path(path_type=Path, exists=True),
              default=None, help="with --tenant: the policy declaring the tenant's detectors")
@click.option("--tenant", default=None, help="apply this tenant's own detectors too")
@click.option("--presidio", is_flag=True,
              help="also run Presidio (installed with the `presidio` extra)")
@click.option("--router", "router_dir", type=click.Path(path_type=Path, exists=True,
              file_okay=False), default=None,
              help="score complexity with this router (from `gateway router fit`)")
@click.option("--task-model", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              default=None, help="type tasks with this model (from `gateway classifier "
              "fit-tasks`); default: GATEWAY_TASK_MODEL, else the shipped one")
@click.option("--progress/--no-progress", default=None,
              help="print the complexity class cut-offs, and count prompts as they are done,"
              " on stderr; default: when stderr is a terminal")
def classify_command(
    source: Path, output: Path | None, policy_path: Path | None, tenant: str | None,
    presidio: bool, progress: bool | None, router_dir: Path | None, task_model: Path | None,
) -> None:
    """Classify each prompt of a JSONL file ({"prompt": ...} or {"messages": [...]}, with an
    optional "id" that is copied to the output): tokens, complexity, task, sensitivity."""
    from gateway.classify.complexity_encoder import EncoderModelError
    from gateway.classify.standard import load_complexity, standard_classifier
    from gateway.classify.task_type import TaskModelError
    from gateway.settings import Settings

    detectors = _tenant_detectors(policy_path, tenant)
    settings = Settings()
    try:
        complexity = load_complexity(settings.complexity_model, settings.encoder_table)
        classifier = standard_classifier(extra=presidio_finder() if presidio else None,
                                         task_model=task_model or settings.task_model,
                                         complexity_model=settings.complexity_model,
                                         encoder_table=settings.encoder_table)
    except (TaskModelError, EncoderModelError) as exc:
        raise click.ClickException(str(exc)) from None
    thresholds = complexity.thresholds
    cuts = f"complexity classes: {describe_cuts(complexity.thresholds, complexity.document)}"
    if router_dir is not None:
        from gateway.classify.router_model import RouterModel, RouterModelError

        try:
            router = RouterModel.load(router_dir)
        except RouterModelError as exc:
            raise click.ClickException(str(exc)) from None
        classifier = classifier.with_complexity(router)
        thresholds = router.thresholds
        cuts = (f"complexity classes (router): low < {thresholds[0]:.4f} <= medium <"
                f" {thresholds[1]:.4f} <= high")
    text_in = sys.stdin if str(source) == "-" else source.open(encoding="utf-8")
    out: IO[bytes] = sys.stdout.buffer if output is None else output.open("wb")
    try:
        show = sys.stderr.isatty() if progress is None else progress
        if show:  # on a terminal: where the classes are cut, before the first line out
            click.echo(cuts, err=True)
        asyncio.run(_run(classifier, text_in, out, detectors, show, thresholds))
    finally:
        if output is not None:
            out.close()
        if text_in is not sys.stdin:
            text_in.close()


def describe_cuts(thresholds: tuple[float, float], document: dict[str, object]) -> str:
    """The class cut-offs and where they come from, in one line."""
    line = f"low < {thresholds[0]:.4f} <= medium < {thresholds[1]:.4f} <= high (p_strong)"
    training = document.get("training")
    reference = training.get("reference") if isinstance(training, dict) else None
    if isinstance(reference, dict):
        low, high = reference.get("quantiles", (0.5, 0.8))
        line += (f"; cut at the {low:.0%} and {high:.0%} quantiles of"
                 f" {reference.get('prompts')} requests of {', '.join(reference.get('files', []))}")
    return line


def presidio_finder() -> PresidioFinder:
    """Presidio as the settings configure it, in a thread of this process (a command line
    has no event loop to keep free)."""
    from gateway.settings import Settings

    settings = Settings()
    try:
        config = presidio_config(settings.presidio_entities, settings.presidio_min_score,
                                 settings.presidio_model)
    except PresidioUnavailable as exc:
        raise click.ClickException(str(exc)) from None
    return PresidioFinder(ThreadPoolExecutor(1), config)


def _tenant_detectors(
    policy_path: Path | None, tenant: str | None
) -> tuple[TenantDetector, ...]:
    if (policy_path is None) != (tenant is None):
        raise click.UsageError("--policy and --tenant go together")
    if policy_path is None or tenant is None:
        return ()
    from gateway.policy.loader import PolicyError, load_policy

    try:
        policy = load_policy(policy_path)
    except PolicyError as exc:
        raise click.ClickException(f"the policy does not validate:\n{exc}") from None
    if tenant not in policy.tenant_specs:
        raise click.ClickException(f"the policy has no tenant {tenant!r}")
    return policy.tenant_detectors(tenant)


async def _run(  # type: ignore[no-untyped-def]
    classifier, lines: IO[str], out: IO[bytes], detectors: tuple[TenantDetector, ...],
    progress: bool = False, thresholds: tuple[float, float] | None = None,
) -> None:
    done, shown_at = 0, time.monotonic()
    for number, line in enumerate(lines, 1):
        if progress and time.monotonic() - shown_at >= 0.5:
            click.echo(f"\rclassified {done:,} prompts", nl=False, err=True)
            shown_at = time.monotonic()
        if not line.strip():
            continue
        done += 1
        given_id, request = _request(line, number)
        profile = await classifier.profile(
            request, FORCE_EXACT, complexity_thresholds=thresholds, detectors=detectors)
        complexity = profile.complexity
        head = {} if given_id is None else {"id": given_id}  # so results join back to inputs
        out.write(orjson.dumps({
            **head,
            "prompt_tokens": profile.prompt_tokens,
            "complexity": {"p_strong": round(complexity.p_strong, 6), "class": complexity.label}
            if complexity else None,
            "task": {"type": profile.task.type, "p": round(profile.task.p, 4)}
            if profile.task else None,
            "sensitivity": {
                "categories": list(profile.sensitivity),
                "spans": [{"type": s.type, "start": s.start, "end": s.end,
                           "confidence": round(s.confidence, 4)} for s in profile.spans],
            },
        }) + b"\n")
    if progress:
        click.echo(f"\rclassified {done:,} prompts", err=True)


def _request(line: str, number: int) -> tuple[object, RouteRequest]:
    """The input's own `id` (any JSON value, echoed back) and the request to classify."""
    try:
        item = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise click.ClickException(f"line {number}: not JSON ({exc})") from None
    given_id = item.get("id") if isinstance(item, dict) else None
    if isinstance(item, dict) and isinstance(item.get("prompt"), str):
        return given_id, RouteRequest(str(number), Endpoint.COMPLETIONS, "-",
                                      {"prompt": item["prompt"]})
    if isinstance(item, dict) and isinstance(item.get("messages"), list):
        return given_id, RouteRequest(str(number), Endpoint.CHAT, "-",
                                      {"messages": item["messages"]})
    raise click.ClickException(f"line {number}: expected {{\"prompt\": str}} or "
                               "{\"messages\": [...]}")
