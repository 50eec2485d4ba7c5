"""The name table is consistent: every dialect says where running and waiting are, names carry
their engine's prefix, counters their `_total`, and no alias is listed twice for one signal."""

from __future__ import annotations

import pytest

from gateway.scraper.metric_names import DIALECTS, VLLM, Dialect, Signal, sample_names


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.engine.value)
def test_dialect_is_consistent(dialect: Dialect) -> None:
    assert {Signal.RUNNING, Signal.WAITING} <= dialect.gauges.keys()
    tables = (dialect.gauges, dialect.counters, dialect.histograms)
    for table in tables:
        for aliases in table.values():
            assert aliases and len(set(aliases)) == len(aliases)
            assert all(name.startswith(dialect.prefix) for name in aliases)
    for aliases in dialect.counters.values():
        assert all(name.endswith("_total") for name in aliases)
    # A signal is read one way only (the counter path and the gauge fallback differ by signal).
    for one, other in ((0, 1), (0, 2), (1, 2)):
        assert not tables[one].keys() & tables[other].keys()


def test_engines_are_told_apart_by_prefix() -> None:
    prefixes = [d.prefix for d in DIALECTS]
    assert len(set(prefixes)) == len(prefixes)
    assert not any(a != b and a.startswith(b) for a in prefixes for b in prefixes)


def test_sample_names_cover_histogram_sum_and_count() -> None:
    names = sample_names(VLLM)
    assert {"vllm:time_to_first_token_seconds_sum", "vllm:time_to_first_token_seconds_count",
            "vllm:time_per_output_token_seconds_count", "vllm:cache_config_info",
            "vllm:gpu_cache_usage_perc", "vllm:prompt_tokens_total"} <= names  # fmt: skip
    assert not any(name.endswith("_bucket") for name in names)
