"""The evaluation: span matching, counts on a tiny hand-made data set, the CLI, and (when the
shared data is present) the targets on the real data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import gateway.cli.sensitivity_commands  # noqa: F401  (registers eval-sensitivity)
from gateway.classify.sensitivity import SensitivityScanner
from gateway.cli.classifier_commands import classifier
from gateway.offline.evaluation.sensitivity_eval import (
    GoldSpan,
    PiiExample,
    evaluate_pii,
    evaluate_secrets,
    load_pii_examples,
    load_secret_cases,
    select_split,
)
from gateway.offline.evaluation.sensitivity_word_problems import word_problem_flags

SHARED_DATA = Path("/work/shared/data")


def write_data(root: Path) -> None:
    (root / "pii").mkdir(parents=True)
    (root / "secrets").mkdir()
    sentences = [
        {"full_text": "Mail anna.k@acme-corp.com now",
         "spans": [{"entity_type": "EMAIL_ADDRESS", "start_position": 5, "end_position": 25}]},
        {"full_text": "Ask Anna Kowalska at 28245 Puruntie 82 Apt. 595",
         "spans": [{"entity_type": "PERSON", "start_position": 4, "end_position": 17},
                   {"entity_type": "STREET_ADDRESS", "start_position": 21, "end_position": 26},
                   {"entity_type": "STREET_ADDRESS", "start_position": 27, "end_position": 38},
                   {"entity_type": "STREET_ADDRESS", "start_position": 39, "end_position": 47}]},
        {"full_text": "Call Bob on +1-202-555-0143",
         "spans": [{"entity_type": "PERSON", "start_position": 5, "end_position": 8}]},
        {"full_text": "Paris is lovely in June",
         "spans": [{"entity_type": "GPE", "start_position": 0, "end_position": 5}]},
        {"full_text": "What are my options?", "spans": []},
        {"full_text": "Mail me at zed@acme-corp.com", "spans": []},
    ]
    (root / "pii" / "presidio_synth_dataset_v2.json").write_text(json.dumps(sentences))
    detect = [{"plugin": "aws_key", "text": "AKIAQ3T7XKZL5MNB2VWD", "should_flag": True},
              {"plugin": "aws_key", "text": "AKIAXXXXXXXXXXXXXXXX", "should_flag": False},
              {"plugin": "ip_public", "text": "8.8.8.8", "should_flag": True}]
    gitleaks = [{"rule_ids": ["generic-api-key"], "text": "api_key = ${API_KEY}",
                 "should_flag": False},
                {"rule_ids": ["generic-api-key"], "text": 'secret = "q8Lw2Zx9kPv4Tn7Rb3Ys"',
                 "should_flag": True}]
    (root / "secrets" / "detect_secrets_cases.jsonl").write_text(
        "\n".join(json.dumps(r) for r in detect))
    (root / "secrets" / "gitleaks_cases.jsonl").write_text(
        "\n".join(json.dumps(r) for r in gitleaks))


def test_pii_counts(tmp_path: Path) -> None:
    write_data(tmp_path)
    report = evaluate_pii(SensitivityScanner(),
                          load_pii_examples(tmp_path / "pii" / "presidio_synth_dataset_v2.json"))
    scores = {s.type: s for s in report.scores}
    assert (scores["email"].gold, scores["email"].found, scores["email"].predicted) == (1, 1, 2)
    assert scores["email"].precision == 0.5  # the address in the unlabelled sentence
    assert (scores["street_address"].gold, scores["street_address"].found) == (3, 3)
    assert scores["street_address"].predicted == scores["street_address"].correct == 1
    assert (scores["person"].gold, scores["person"].found) == (2, 2)
    assert scores["phone"].gold == 0 and scores["phone"].predicted == 1
    assert (report.clean_sentences, report.false_alarms) == (2, 1)


def test_secret_counts(tmp_path: Path) -> None:
    write_data(tmp_path)
    scores = {s.source: s for s in evaluate_secrets(
        SensitivityScanner(), load_secret_cases(tmp_path / "secrets"))}
    detect, gitleaks = scores["detect-secrets"], scores["gitleaks"]
    assert (detect.positives, detect.detected, detect.traps, detect.false_positives) == (2, 2, 1, 0)
    assert (gitleaks.recall, gitleaks.false_positive_rate) == (1.0, 0.0)


def test_cli_prints_tables(tmp_path: Path) -> None:
    write_data(tmp_path)
    result = CliRunner().invoke(classifier, ["eval-sensitivity", "--data", str(tmp_path),
                                             "--no-latency", "--details", "--split", "all"])
    assert result.exit_code == 0, result.output
    assert "90% CI" in result.output and "(split: all, 6 sentences)" in result.output
    assert "street_address" in result.output and "false alarms" in result.output
    assert "gitleaks" in result.output and "detect-secrets missed: none" in result.output


@pytest.mark.skipif(not (SHARED_DATA / "pii").exists(), reason="shared data not present")
def test_targets_on_shared_data() -> None:
    scanner = SensitivityScanner()
    report = evaluate_pii(scanner, load_pii_examples(
        SHARED_DATA / "pii" / "presidio_synth_dataset_v2.json"))
    recall = {s.type: s.recall for s in report.scores if s.gold}
    for kind in ("email", "iban", "us_ssn", "payment_card", "ip_address"):
        assert recall[kind] >= 0.99, kind
    assert recall["phone"] >= 0.9
    assert recall["person"] >= 0.78
    assert recall["street_address"] >= 0.7
    assert report.false_alarm_rate <= 0.05
    secrets = {s.source: s for s in evaluate_secrets(
        scanner, load_secret_cases(SHARED_DATA / "secrets"))}
    assert secrets["gitleaks"].recall >= 0.95


def test_split_keeps_each_template_on_one_side() -> None:
    examples = [PiiExample(f"Text {i}", (), False, template_id=i % 40) for i in range(400)]
    tune, held = select_split(examples, "tune"), select_split(examples, "holdout")
    assert len(tune) + len(held) == 400 and select_split(examples, "all") == examples
    assert not {e.template_id for e in tune} & {e.template_id for e in held}
    assert 0.15 < len(held) / 400 < 0.45  # about 30 % of templates


def test_recall_interval_brackets_the_estimate_and_widens_with_disagreement() -> None:
    name = [GoldSpan("person", 4, 8)]
    hit = [PiiExample("Ask Anna now", tuple(name), True, template_id=t) for t in range(20)]
    miss = [PiiExample("Ask zzzz now", tuple(name), True, template_id=t) for t in range(20, 30)]
    report = evaluate_pii(SensitivityScanner(), hit + miss, rounds=500)
    (score,) = [s for s in report.scores if s.type == "person"]
    interval = report.interval("person")
    assert interval is not None and score.recall == 20 / 30
    assert 0.0 < interval.low < score.recall < interval.high < 1.0
    agreed = evaluate_pii(SensitivityScanner(), hit, rounds=500).interval("person")
    assert agreed is not None and (agreed.low, agreed.high) == (1.0, 1.0)


def test_word_problems_flagged(tmp_path: Path) -> None:
    rows = [{"benchmark": "gsm8k", "prompt": "Natalia sold 48 clips. How many are left?"},
            {"benchmark": "gsm8k", "prompt": "A train leaves at noon. When does it arrive?"},
            {"benchmark": "mmlu", "prompt": "Which gas is most abundant in air?"}]
    path = tmp_path / "routellm_mmlu_gsm8k.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    rates = {r.benchmark: r for r in word_problem_flags(SensitivityScanner(), path)}
    assert (rates["gsm8k"].prompts, rates["gsm8k"].flagged, rates["gsm8k"].person_flagged) == (
        2, 1, 1)
    assert rates["mmlu"].flagged == 0 and rates["gsm8k"].rate == 0.5
    # "Natalia" alone scores below 0.7: at that threshold nothing routes.
    strict = word_problem_flags(SensitivityScanner(), path, min_confidence=0.7)
    assert all(r.flagged == 0 for r in strict)
