"""The complexity featurizer and the shipped model: determinism, bounds, thresholds, loading."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.classify.complexity import (
    DEFAULT_MODEL_PATH,
    DEFAULT_THRESHOLDS,
    ComplexityModel,
    ComplexityModelError,
    classify,
)
from gateway.classify.complexity_features import (
    FREE,
    HEAD_CHARS,
    LEAD,
    MCQ,
    TAIL_CHARS,
    clip_text,
    extract_features,
    tokenize,
)
from gateway.types import Complexity

MCQ_PROMPT = (
    "Statement 1 | Every group of order 4 is cyclic. Statement 2 | Every cyclic group is"
    " abelian.\nA. True, True\nB. False, False\nC. True, False\nD. False, True\nAnswer:"
)
WORD_PROBLEM = (
    "Janet’s ducks lay 16 eggs per day. She eats three for breakfast and bakes muffins with"
    " four. She sells the rest for $2 each. How much does she make every day?"
)
ODD_INPUTS = ["", " ", "?", "🙂" * 50, "A.\nB.", "\x00\x01", "é" * 3000, "x" * 1_000_000]


def test_features_are_deterministic() -> None:
    for text in (MCQ_PROMPT, WORD_PROBLEM, *ODD_INPUTS):
        assert extract_features(text) == extract_features(text)


def test_tokens_fold_digits_and_drop_punctuation() -> None:
    assert tokenize("In 1984, x=2.5 (Janet’s «ducks»)") == [
        "in", "0000", "x", "0", "0", "janet", "s", "ducks",
    ]


def test_the_first_word_and_first_two_words_are_also_lead_ngrams() -> None:
    ngrams = extract_features("Pretend you are a pirate; pretend you sail.").ngrams
    assert {"^pretend", "^pretend you", "pretend", "pretend you"} <= ngrams
    # Only the opening is marked: the same words later on are plain n-grams.
    assert {g for g in ngrams if g.startswith(LEAD)} == {"^pretend", "^pretend you"}
    assert {g for g in extract_features("Hi").ngrams if g.startswith(LEAD)} == {"^hi"}
    assert extract_features("?!").ngrams == set()


def test_cjk_text_becomes_overlapping_character_pairs() -> None:
    assert tokenize("写一首诗") == ["写一", "一首", "首诗"]
    assert tokenize("用Python写代码，好吗？") == ["用", "python", "写代", "代码", "好吗"]
    assert tokenize("秋の夕暮れ") == ["秋の", "の夕", "夕暮", "暮れ"]
    assert tokenize("봄을 주제로 시") == ["봄을", "주제", "제로", "시"]
    assert tokenize("Grüße «aus» Köln") == ["grüße", "aus", "köln"]  # no CJK: words


def test_a_mostly_cjk_text_is_read_for_as_many_tokens_as_english_not_characters() -> None:
    # 1,024 characters of CJK are ~1,000 tokens where 1,024 of English are ~250: a mostly
    # CJK text is read for a quarter of the characters, its first and last 128.
    text = "甲" * 126 + "头尾" + "乙" * 300 + "中间" + "丙" * 300 + "末端" + "丁" * 126
    tokens = set(tokenize(clip_text(text)))
    assert {"头尾", "末端"} <= tokens and "中间" not in tokens
    # A few CJK words in English text do not shorten what is read.
    english = "Explain the error " + "数据库" + " in my deployment log please. " * 40
    assert "deployment" in tokenize(clip_text(english))
    assert len(tokenize(clip_text(english))) > 100


def test_format_and_option_features() -> None:
    mcq = extract_features(MCQ_PROMPT)
    assert mcq.fmt == MCQ
    assert mcq.dense["#paired_options"] == 1.0
    assert mcq.dense["#numeric_options"] == 0.0
    assert "statement" in mcq.ngrams and "every group" in mcq.ngrams
    free = extract_features(WORD_PROBLEM)
    assert free.fmt == FREE
    assert "#option_len" not in free.dense
    assert free.dense["#money"] == 1.0


def test_judgement_cues() -> None:
    # Combinations of judgements (options reusing "True"/"False", "Statement 1 | ...") against
    # recall of one fact (four distinct options, no pipes).
    judged = extract_features(MCQ_PROMPT)
    fact = extract_features(
        "Which is a mammal?\nA. whale\nB. shark\nC. trout\nD. eel\nAnswer:"
    )
    assert judged.dense["#option_diversity"] == pytest.approx(0.5)  # 4 distinct of 8 words
    assert fact.dense["#option_diversity"] == 1.0
    assert judged.dense["#pipe"] == 1.0
    assert fact.dense["#pipe"] == 0.0


def test_first_person_is_counted_and_capped() -> None:
    scenario = "I took my neighbour's car and told me it was fine."
    assert extract_features(scenario).dense["#first_person"] == pytest.approx(3 / 4)
    assert extract_features(WORD_PROBLEM).dense["#first_person"] == 0.0
    assert extract_features("I " * 100).dense["#first_person"] == pytest.approx(8 / 4)


def test_few_shot_prompt_uses_the_last_questions_options() -> None:
    shot = "Q: 2+2?\nA. 3\nB. 4\nC. 5\nD. 6\nAnswer: B\n\n"
    last = "Q: Which is a mammal?\nA. whale\nB. shark\nC. trout\nD. eel\nAnswer:"
    features = extract_features(shot + last)
    assert features.fmt == MCQ
    assert features.dense["#numeric_options"] == 0.0  # the shot's numeric options are ignored


def test_only_head_and_tail_are_read() -> None:
    text = "alpha " * 1000 + "needle " + "omega " * 1000
    clipped = clip_text(text)
    assert len(clipped) == HEAD_CHARS + 1 + TAIL_CHARS
    features = extract_features(text)
    assert "needle" not in features.ngrams
    assert {"alpha", "omega"} <= features.ngrams
    # Total length still counts: it is the one measurement of the whole prompt.
    assert features.dense["#len"] > extract_features(clipped).dense["#len"]


def test_shipped_model_loads_once_and_predicts_probabilities() -> None:
    model = ComplexityModel.load()
    assert ComplexityModel.load() is model
    for text in (MCQ_PROMPT, WORD_PROBLEM, *ODD_INPUTS):
        p = model.p_strong(text)
        assert 0.0 <= p <= 1.0


def test_p_strong_ranks_like_the_score() -> None:
    model = ComplexityModel.load()
    texts = [MCQ_PROMPT, WORD_PROBLEM, "What is 2+2?", "Summarise: " + "long text " * 300]
    by_score = sorted(texts, key=model.score)
    by_p = sorted(texts, key=model.p_strong)
    assert by_score == by_p


def test_a_long_question_scores_above_a_short_one() -> None:
    # Length carries the model's strongest, length-prior weight; if this flips, the export or
    # the featurizer broke.
    model = ComplexityModel.load()
    short = "What is the capital of France?\nA. Paris\nB. Rome\nC. Oslo\nD. Bern\nAnswer:"
    long = (
        "A landowner conveyed a parcel to a buyer by a deed that was never recorded. " * 12
        + "Which party prevails?\nA. The landowner\nB. The buyer\nC. The bank\nD. Neither\n"
        "Answer:"
    )
    assert model.p_strong(long) > model.p_strong(short)


def test_classify_thresholds() -> None:
    t = (0.2, 0.4)
    assert classify(0.0, t) == "low"
    assert classify(0.1999, t) == "low"
    assert classify(0.2, t) == "medium"
    assert classify(0.3999, t) == "medium"
    assert classify(0.4, t) == "high"
    assert classify(1.0, t) == "high"
    with pytest.raises(ValueError):
        classify(0.5, (0.6, 0.3))


def test_default_thresholds_match_the_shipped_model() -> None:
    document = json.loads(DEFAULT_MODEL_PATH.read_text(encoding="utf-8"))
    assert tuple(document["thresholds"]) == DEFAULT_THRESHOLDS
    assert ComplexityModel.load().thresholds == DEFAULT_THRESHOLDS
    assert DEFAULT_THRESHOLDS[0] < DEFAULT_THRESHOLDS[1]


def test_assess_returns_the_profile_value() -> None:
    model = ComplexityModel.load()
    result = model.assess(WORD_PROBLEM)
    assert isinstance(result, Complexity)
    assert result.label == classify(result.p_strong)


def test_model_for_another_featurizer_is_refused(tmp_path: Path) -> None:
    document = json.loads(DEFAULT_MODEL_PATH.read_text(encoding="utf-8"))
    document["featurizer"]["head_chars"] += 1
    path = tmp_path / "model.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ComplexityModelError, match="featurizer"):
        ComplexityModel.load(path)


def test_missing_or_malformed_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ComplexityModelError, match="not found"):
        ComplexityModel.load(tmp_path / "absent.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(ComplexityModelError, match="JSON"):
        ComplexityModel.load(broken)
    document = json.loads(DEFAULT_MODEL_PATH.read_text(encoding="utf-8"))
    del document["ngrams"]["free"]
    broken.write_text(json.dumps(document))
    with pytest.raises(ComplexityModelError, match="malformed"):
        ComplexityModel.load(broken)


def test_inference_cost_does_not_grow_with_prompt_length() -> None:
    # A sanity check that clipping works, not a latency target (see the benchmark numbers in
    # the report): an unclipped featurizer would be ~500x slower on the long prompt.
    model = ComplexityModel.load()
    short = WORD_PROBLEM * 6  # about 1K characters: already at the clip
    long = WORD_PROBLEM * 3000  # about 500K characters

    def best_of(text: str) -> float:
        runs = []
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(20):
                model.p_strong(text)
            runs.append(time.perf_counter() - started)
        return min(runs)

    assert best_of(long) < 5 * best_of(short)


# Any script, CJK runs of any length, full-width punctuation and control characters mixed.
_MIXED_TEXT = st.text(
    alphabet=st.one_of(st.characters(), st.sampled_from("写一首诗秋の夕暮れ봄을，。！？ \n")),
    max_size=3000,
)


@given(_MIXED_TEXT)
@settings(max_examples=200, deadline=None)
def test_tokens_are_whitespace_free_bounded_and_the_same_every_time(text: str) -> None:
    clipped = clip_text(text)
    tokens = tokenize(clipped)
    assert tokens == tokenize(clipped)
    assert all(token and not any(ch.isspace() for ch in token) for token in tokens)
    assert len(tokens) <= len(clipped)  # bounded work: never more tokens than characters
    leads = {g for g in extract_features(text).ngrams if g.startswith(LEAD)}
    assert leads == {LEAD + " ".join(tokens[:n]) for n in (1, 2) if len(tokens) >= n}
