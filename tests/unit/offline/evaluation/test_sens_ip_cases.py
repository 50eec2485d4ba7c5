"""IP address scoring on Presidio's recognizer cases: the policy's reading of an expected
address, the counts on a hand-made file, the CLI table, and the figures on the real cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import gateway.cli.sensitivity_commands  # noqa: F401  (registers eval-sensitivity)
from gateway.classify.sensitivity import SensitivityScanner
from gateway.cli.classifier_commands import classifier
from gateway.offline.evaluation.sensitivity_ip_cases import (
    address_class,
    evaluate_ip_cases,
    load_ip_cases,
)

RECOGNIZER_CASES = Path("/work/shared/data/pii/presidio_recognizer_cases.jsonl")
ROWS = [
    {"text": "host [2a00::1]:443 up", "entities": ["IP_ADDRESS"], "expected_len": 1,
     "expected_positions": [[6, 13]]},
    {"text": "docs 2001:db8::1 and 10.0.0.1", "entities": ["IP_ADDRESS"], "expected_len": 2,
     "expected_positions": [[5, 16], [21, 29]]},
    {"text": "std::cout", "entities": ["IP_ADDRESS"], "expected_len": 0,
     "expected_positions": []},
    {"text": "8.8.8.8", "entities": ["IP_ADDRESS"], "expected_len": 1, "expected_positions": []},
    {"text": "121000358", "entities": ["ABA_ROUTING_NUMBER"], "expected_len": 1},
    {"text": "anything", "entities": None, "expected_len": 0},
]


def write_cases(path: Path) -> None:
    path.write_text("\n".join(json.dumps(row) for row in ROWS) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("literal", "expected"),
    [("8.8.8.8", "public"), ("[2a00::1]", "public"), ("2a00::/32", "public"),
     ("192.0.2.1", "documentation"), ("2001:db8::1%eth0", "documentation"),
     ("10.0.0.0/8", "internal"), ("::1", "internal"), ("fe80::1%eth0", "internal"),
     ("192.168.1", None), ("gggg::1", None)],
)
def test_address_class_reads_the_address_under_its_decoration(literal: str,
                                                              expected: str | None) -> None:
    assert address_class(literal) == expected


def test_counts_on_hand_made_cases(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    write_cases(path)
    cases, unpositioned = load_ip_cases(path)
    assert len(cases) == 3 and unpositioned == 1
    report = evaluate_ip_cases(SensitivityScanner(), cases, unpositioned, rounds=200)
    by_class = {s.address_class: (s.gold, s.routed, s.masked) for s in report.scores}
    assert by_class == {"public": (1, 1, 1), "documentation": (1, 0, 1), "internal": (1, 0, 0)}
    assert (report.negatives, report.negatives_flagged) == (1, 0)


def test_cli_prints_the_ip_table(tmp_path: Path) -> None:
    (tmp_path / "pii").mkdir()
    write_cases(tmp_path / "pii" / "presidio_recognizer_cases.jsonl")
    result = CliRunner().invoke(classifier, ["eval-sensitivity", "--data", str(tmp_path),
                                             "--no-latency", "--bootstrap", "100"])
    assert result.exit_code == 0, result.output
    assert "Presidio recognizer cases" in result.output
    assert "cases without an address flagged: 0/1" in result.output


@pytest.mark.skipif(not RECOGNIZER_CASES.exists(), reason="shared data not present")
def test_every_public_and_documentation_address_is_found_on_presidio_cases() -> None:
    cases, unpositioned = load_ip_cases(RECOGNIZER_CASES)
    report = evaluate_ip_cases(SensitivityScanner(), cases, unpositioned, rounds=0)
    by_class = {s.address_class: s for s in report.scores}
    assert by_class["public"].routed == by_class["public"].gold > 0
    assert by_class["documentation"].masked == by_class["documentation"].gold > 0
    assert by_class["documentation"].routed == 0 and by_class["internal"].masked == 0
    assert report.negatives_flagged == 0
