"""DCGM exporter pages → mean GPU utilisation and memory used, on dcgm-exporter's own format."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.scraper.dcgm import DcgmParseError, parse_dcgm
from tests.support.mock_dcgm import DcgmState, dcgm_page


def test_two_gpus_are_averaged_and_summed() -> None:
    sample = parse_dcgm(dcgm_page(DcgmState([90.0, 30.0], [70_000.0, 10_000.0])))
    assert sample.gpus == 2
    assert sample.util == pytest.approx(0.6)
    assert sample.memory_used_bytes == 80_000 * 1024 * 1024


def test_a_page_without_the_series_is_refused() -> None:
    with pytest.raises(DcgmParseError):
        parse_dcgm("# HELP vllm:num_requests_running x\nvllm:num_requests_running 3\n")


def test_labels_with_spaces_and_braces_do_not_confuse_the_value() -> None:
    page = 'DCGM_FI_DEV_GPU_UTIL{modelName="NVIDIA A100 {SXM4} 80GB",gpu="0"} 42\n'
    assert parse_dcgm(page).util == pytest.approx(0.42)
    assert parse_dcgm("DCGM_FI_DEV_GPU_UTIL 7\n").util == pytest.approx(0.07)


@given(st.lists(st.floats(0, 100), min_size=1, max_size=8),
       st.lists(st.floats(0, 200_000), min_size=1, max_size=8))
def test_any_page_parses_within_bounds(utils: list[float], used: list[float]) -> None:
    sample = parse_dcgm(dcgm_page(DcgmState(utils, used)))
    assert sample.util is not None and 0.0 <= sample.util <= 1.0
    assert sample.memory_used_bytes is not None and sample.memory_used_bytes >= 0
