"""Client-chosen labels in the audit record: a tag is too short for the prompt detectors'
context words, so a long random run in one (a bare 40-character AWS secret key) is masked by
its entropy; model names, dates and word-made identifiers are kept."""

from __future__ import annotations

import random
import string

import pytest

from gateway.routing.audit_labels import mask_random_runs


def random_key(seed: int, length: int = 40) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(length))


@pytest.mark.parametrize("seed", range(20))
def test_a_bare_aws_secret_key_in_a_tag_is_masked(seed: int) -> None:
    key = random_key(seed)
    assert mask_random_runs(key) == "[SECRET_1]"
    assert mask_random_runs(f"ci-{key}") == "ci-[SECRET_1]"


@pytest.mark.parametrize("label", [
    "meta-llama/Llama-3.1-8B-Instruct", "Qwen2.5-72B-Instruct-AWQ", "project_2026_Q3_marketing",
    "batch-2026-11-28", "c0cdab1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b", "SomeCamelCaseIdentifierName2",
    "gpt-4o-mini-2024-07-18", "team=search/env=prod",
])
def test_ordinary_labels_are_kept(label: str) -> None:
    assert mask_random_runs(label) == label
