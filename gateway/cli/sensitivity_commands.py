"""`gateway classifier eval-sensitivity --data DIR`: detector quality on the shared data sets
and scan latency, printed as tables (registered on the `classifier` group when imported)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gateway.cli.classifier_commands import classifier
from gateway.cli.classify_command import presidio_finder

if TYPE_CHECKING:  # loaded when a command runs (cli/main.py): usage errors answer at once
    from gateway.classify.presidio import WithPresidio
    from gateway.classify.sensitivity import SensitivityScanner
    from gateway.offline.evaluation.sensitivity_bench import Latency
    from gateway.offline.evaluation.sensitivity_eval import (
        PiiReport,
        SecretScore,
        Split,
    )
    from gateway.offline.evaluation.sensitivity_ip_cases import IpCaseReport
    from gateway.offline.evaluation.sensitivity_names_world import NameRecall
    from gateway.offline.evaluation.sensitivity_word_problems import FlagRate


@classifier.command("eval-sensitivity")
@click.option("--data", "data_root", required=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="data root holding pii/ and secrets/")
@click.option("--latency/--no-latency", default=True, show_default=True,
              help="also time the scan at 200 / 2K / 32K / 128K tokens")
@click.option("--details", is_flag=True, help="list the rules behind misses and false positives")
@click.option("--presidio", is_flag=True,
              help="the built-in detectors plus Presidio, as GATEWAY_PRESIDIO_* configures it")
@click.option("--split", type=click.Choice(["all", "tune", "holdout"]), default="all",
              show_default=True,
              help="which Presidio templates to score: the held-out 30 %, the rest, or all")
@click.option("--bootstrap", "rounds", type=click.IntRange(min=0), default=2000,
              show_default=True, help="bootstrap rounds for 90 %% recall intervals (0: none)")
@click.option("--word-problems/--no-word-problems", default=True, show_default=True,
              help="also count GSM8K / MMLU prompts flagged (routing/routellm_mmlu_gsm8k.jsonl)")
@click.option("--ip-cases/--no-ip-cases", default=True, show_default=True,
              help="also score IP addresses on Presidio's recognizer cases "
                   "(pii/presidio_recognizer_cases.jsonl)")
@click.option("--names", "names_path", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("evaluation") / "names_other_languages.jsonl", show_default=True,
              help="sentences in other languages with the person names they hold, scored "
                   "when the file exists")
def eval_sensitivity(data_root: Path, latency: bool, details: bool, presidio: bool,
                     split: Split, rounds: int, word_problems: bool, ip_cases: bool,
                     names_path: Path) -> None:
    """Precision/recall per entity type, false alarms, IP address forms, secrets recall/FP,
    word problems flagged, scan latency."""
    from gateway.classify.presidio import WithPresidio
    from gateway.classify.sensitivity import SensitivityScanner
    from gateway.offline.evaluation.sensitivity_bench import latency_table
    from gateway.offline.evaluation.sensitivity_eval import (
        evaluate_pii,
        evaluate_secrets,
        load_pii_examples,
        load_secret_cases,
        select_split,
    )
    from gateway.offline.evaluation.sensitivity_ip_cases import evaluate_ip_cases, load_ip_cases
    from gateway.offline.evaluation.sensitivity_names_world import load_name_examples, name_recall
    from gateway.offline.evaluation.sensitivity_word_problems import word_problem_flags

    scanner: SensitivityScanner | WithPresidio = SensitivityScanner()
    if presidio:
        scanner = WithPresidio(scanner, presidio_finder().config)
    synthetic = data_root / "pii" / "presidio_synth_dataset_v2.json"
    if synthetic.exists():
        examples = select_split(load_pii_examples(synthetic), split)
        click.echo(f"(split: {split}, {len(examples)} sentences)")
        click.echo(format_pii(evaluate_pii(scanner, examples, rounds=rounds)))
    else:
        click.echo(f"(no {synthetic}: PII evaluation skipped)")
    recognizer = data_root / "pii" / "presidio_recognizer_cases.jsonl"
    if ip_cases and recognizer.exists():
        found, unpositioned = load_ip_cases(recognizer)
        click.echo(format_ip_cases(evaluate_ip_cases(scanner, found, unpositioned, rounds)))
    if names_path.exists():
        click.echo(format_names(name_recall(scanner, load_name_examples(names_path), rounds),
                                names_path))
    cases = load_secret_cases(data_root / "secrets")
    if cases:
        click.echo(format_secrets(evaluate_secrets(scanner, cases), details))
    else:
        click.echo(f"(no secret cases under {data_root / 'secrets'}: skipped)")
    problems = data_root / "routing" / "routellm_mmlu_gsm8k.jsonl"
    if word_problems and problems.exists():
        click.echo(format_word_problems(
            [(threshold, word_problem_flags(scanner, problems, threshold))
             for threshold in (0.0, 0.7)]))
    if latency:
        click.echo(format_latency(latency_table(scanner, data_root)))


def format_pii(report: PiiReport) -> str:
    from gateway.offline.evaluation.sensitivity_eval import ENTITY_MAP

    mapping = ", ".join(f"{k}→{v}" for k, v in ENTITY_MAP.items())
    lines = [
        "PII, span level (Presidio synthetic sentences)",
        f"  mapping: {mapping}",
        f"  {'type':<28}{'gold':>6}{'recall':>9}{'90% CI':>15}{'predicted':>11}"
        f"{'precision':>11}",
    ]
    for score in report.scores:
        recall = f"{score.recall:.3f}" if score.gold else "-"
        interval = report.interval(score.type)
        ci = f"{interval.low:.3f}-{interval.high:.3f}" if interval else "-"
        lines.append(f"  {score.type:<28}{score.gold:>6}{recall:>9}{ci:>15}"
                     f"{score.predicted:>11}{score.precision:>11.3f}")
    lines.append(f"  false alarms on sentences without personal data: {report.false_alarms}/"
                 f"{report.clean_sentences} = {report.false_alarm_rate:.3f}")
    return "\n".join(lines) + "\n"


def format_ip_cases(report: IpCaseReport) -> str:
    lines = ["IP addresses, span level (Presidio recognizer cases), by the policy's reading of "
             "the expected address",
             f"  {'address':<16}{'gold':>6}{'routed':>9}{'90% CI':>15}{'masked':>9}"
             f"{'90% CI':>15}"]
    for score in report.scores:
        cells = []
        for found, interval in ((score.routed, score.routed_interval),
                                (score.masked, score.masked_interval)):
            recall = f"{found / score.gold:.3f}" if score.gold else "-"
            ci = f"{interval.low:.3f}-{interval.high:.3f}" if interval else "-"
            cells.append(f"{recall:>9}{ci:>15}")
        lines.append(f"  {score.address_class:<16}{score.gold:>6}{''.join(cells)}")
    lines.append("  (public: routed on; documentation: masked stand-ins; internal: private, "
                 "loopback, link-local, not reported)")
    lines.append(f"  cases without an address flagged: {report.negatives_flagged}/"
                 f"{report.negatives}; positive cases without positions, skipped: "
                 f"{report.unpositioned}")
    return "\n".join(lines) + "\n"


def format_names(rows: list[NameRecall], path: Path) -> str:
    lines = [f"Person names in other languages' text ({path})",
             f"  {'language':<10}{'names':>7}{'recall':>9}{'90% CI':>15}"]
    for row in rows:
        ci = f"{row.interval.low:.3f}-{row.interval.high:.3f}" if row.interval else "-"
        lines.append(f"  {row.language:<10}{row.names:>7}{row.recall:>9.3f}{ci:>15}")
    return "\n".join(lines) + "\n"


def format_secrets(scores: list[SecretScore], details: bool) -> str:
    lines = ["Secrets (case level: any secret span flags the case; for detect-secrets' "
             "ip_public plugin, an IP address span)",
             f"  {'source':<16}{'positives':>10}{'recall':>9}{'traps':>8}{'FP rate':>9}"]
    for score in scores:
        lines.append(f"  {score.source:<16}{score.positives:>10}{score.recall:>9.3f}"
                     f"{score.traps:>8}{score.false_positive_rate:>9.3f}")
    positives = sum(s.positives for s in scores)
    traps = sum(s.traps for s in scores)
    if positives and traps:
        lines.append(f"  {'all':<16}{positives:>10}"
                     f"{sum(s.detected for s in scores) / positives:>9.3f}{traps:>8}"
                     f"{sum(s.false_positives for s in scores) / traps:>9.3f}")
    if details:
        for score in scores:
            missed = ", ".join(f"{rule} ×{n}" for rule, n in score.missed_rules) or "none"
            tripped = ", ".join(f"{rule} ×{n}" for rule, n in score.trap_rules) or "none"
            lines.append(f"  {score.source} missed: {missed}")
            lines.append(f"  {score.source} traps flagged: {tripped}")
    return "\n".join(lines) + "\n"


def format_word_problems(rates: list[tuple[float, list[FlagRate]]]) -> str:
    lines = ["Word problems flagged (no real personal data in them)",
             f"  {'min_confidence':>15}{'benchmark':>11}{'prompts':>9}{'flagged':>9}"
             f"{'rate':>8}{'person':>8}"]
    for threshold, per_benchmark in rates:
        for r in per_benchmark:
            lines.append(f"  {threshold:>15.2f}{r.benchmark:>11}{r.prompts:>9}{r.flagged:>9}"
                         f"{r.rate:>8.3f}{r.person_flagged:>8}")
    return "\n".join(lines) + "\n"


def format_latency(results: list[Latency]) -> str:
    lines = ["Scan latency (mixed prose, code, JSON, personal data, configuration)",
             f"  {'tokens':>8}{'chars':>9}{'runs':>6}{'p50 ms':>9}{'p99 ms':>9}{'spans':>7}"]
    for r in results:
        lines.append(f"  {r.tokens:>8}{r.chars:>9}{r.runs:>6}{r.p50_ms:>9.3f}{r.p99_ms:>9.3f}"
                     f"{r.spans:>7}")
    return "\n".join(lines) + "\n"
