"""The Presidio plug-in: its findings mapped to the gateway's span types, long texts in
pieces, its failures never failing a request. Uses the real analyzer and spaCy model."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.classify.presidio import (
    DEFAULT_ENTITIES,
    PIECE_CHARS,
    PresidioConfig,
    PresidioFinder,
    PresidioUnavailable,
    pieces,
    presidio_config,
    presidio_scan,
)
from gateway.classify.standard import standard_classifier
from gateway.types import Endpoint, RouteRequest, SensitiveSpan

pytest.importorskip("presidio_analyzer")


@pytest.fixture(scope="module")
def config() -> PresidioConfig:
    return presidio_config("", 0.4, "")


def chat(text: str) -> RouteRequest:
    return RouteRequest("r", Endpoint.CHAT, "auto",
                        {"messages": [{"role": "user", "content": text}]})


@given(st.text(alphabet="ab \n", max_size=400), st.integers(min_value=8, max_value=60))
def test_pieces_cover_the_text_in_order_within_the_limit(text: str, limit: int) -> None:
    parts = list(pieces(text, limit))
    assert "".join(p for _, p in parts) == text
    assert all(len(p) <= limit for _, p in parts)
    assert [o for o, _ in parts] == [sum(len(p) for _, p in parts[:i]) for i in range(len(parts))]


def test_pieces_are_cut_after_a_line_break_rather_than_inside_a_name() -> None:
    text = "x" * 70 + "\nAda Lovelace wrote notes"
    first = next(pieces(text, 80))[1]
    assert first.endswith("\n")


def test_a_person_becomes_a_person_span_with_offsets(config: PresidioConfig) -> None:
    text = "Why is Katrine so impulsive?"
    [span] = presidio_scan(text, config)
    assert (span.type, span.category) == ("person", "pii")
    assert text[span.start:span.end] == "Katrine" and 0 < span.confidence <= 1


def test_weak_findings_stay_below_the_score_and_q3_is_nobody(config: PresidioConfig) -> None:
    assert presidio_scan("The number is 123456789.", config) == []  # a passport at 0.05
    everything = PresidioConfig(DEFAULT_ENTITIES, 0.0, config.model)
    assert any(s.type == "presidio.us_passport"
               for s in presidio_scan("The number is 123456789.", everything))
    assert presidio_scan("Please ask about the Q3 plan.", config) == []


def test_findings_beyond_the_first_piece_keep_their_offsets(config: PresidioConfig) -> None:
    filler = "The weather was mild and the report was long.\n" * (PIECE_CHARS // 40)
    text = filler + "Why is Katrine so impulsive?"
    spans = presidio_scan(text, config)
    assert any(text[s.start:s.end] == "Katrine" for s in spans)


def test_a_missing_model_or_package_is_named_with_what_to_install() -> None:
    with pytest.raises(PresidioUnavailable, match="pip install"):
        presidio_config("PERSON", 0.4, "en_core_web_nonexistent")
    chosen = presidio_config(" person , us_passport", 0.5, "")
    assert chosen.entities == ("PERSON", "US_PASSPORT") and chosen.model


async def test_the_profile_adds_presidio_findings_to_the_built_in_ones(
    config: PresidioConfig,
) -> None:
    with ThreadPoolExecutor(1) as pool:
        classifier = standard_classifier(extra=PresidioFinder(pool, config))
        profile = await classifier.profile(chat("Why is Zebulon so impulsive? Mail a@b.co.uk"))
        plain = await standard_classifier().profile(chat("Why is Zebulon so impulsive?"))
    assert {s.type for s in profile.spans} == {"person", "email"}
    assert profile.sensitivity == ("pii",) and plain.spans == ()


class Broken:
    async def find(self, text: str) -> list[SensitiveSpan]:
        raise RuntimeError("worker died analysing: Ada Lovelace, 4111 1111 1111 1111")


async def test_a_failing_second_opinion_leaves_the_built_in_findings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    classifier = standard_classifier(extra=Broken())
    with caplog.at_level(logging.WARNING):
        profile = await classifier.profile(chat("Write to jane.roe@northwindtraders.com"))
    assert [s.type for s in profile.spans] == ["email"]
    assert "extra sensitivity finder failed (RuntimeError)" in caplog.text
    assert "Ada Lovelace" not in caplog.text  # an error may quote the text: not logged


async def test_a_long_text_split_across_workers_keeps_its_offsets(
    config: PresidioConfig,
) -> None:
    text = "The weather was mild and the report was long.\n" * 200 + "Why is Katrine so shy?"
    with ThreadPoolExecutor(2) as pool:
        whole = await PresidioFinder(pool, config, 1).find(text)
        split = await PresidioFinder(pool, config, 2).find(text)
    assert [text[s.start:s.end] for s in split] == ["Katrine"]
    assert split == whole
