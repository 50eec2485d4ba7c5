"""Cheap prompt features for the complexity model, shared by training and inference.

One function, `extract_features`, so the features a model was trained on are exactly the
features it is served with. Work is bounded: only the first HEAD_CHARS and last TAIL_CHARS
characters are read (plus the total length, which is O(1)), so a 128K-token prompt costs about
as much as a 250-token one.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Set
from dataclasses import dataclass
from itertools import pairwise

# Bump when the features change: a model trained on another version is refused at load time.
# 3: the lead n-grams ("^first", "^first second") joined the set; CJK text is tokenized into
# character pairs; full-width CJK punctuation separates tokens.
FEATURIZER_VERSION = 3
# Marks the prompt's first word and first two words as n-grams of their own: the instruction's
# opening ("pretend you", "translate", "summarise the") names the task more reliably than the
# same words further in. Tokens never hold "^" (punctuation becomes a space), so no clash.
LEAD = "^"

# Question stems sit at the start, the actual ask and any answer options at the end; the middle
# of a long prompt (a pasted document) says little about difficulty and would cost linear time.
HEAD_CHARS = 512
TAIL_CHARS = 512

MCQ = "mcq"  # the prompt lists lettered answer options (A. … B. …)
FREE = "free"  # anything else: open questions, word problems, chat
FORMATS = (MCQ, FREE)

# Tokenizing is C-level byte translation plus split, several times faster than a regex
# tokenizer in CPython (str.translate is only fast on pure-ASCII text, bytes.translate always):
# ASCII punctuation becomes a space (the symbols that carry signal are counted as dense
# features instead) and every digit becomes "0", so "1984" and "2024" are the same token
# "0000": which number appears is noise, that numbers (and how long) appear is signal.
# UTF-8 continuation bytes are >= 0x80 and untouched, so the result always decodes.
_BYTE_TABLE = bytes.maketrans(
    string.punctuation.encode() + b"123456789", b" " * len(string.punctuation) + b"0" * 9
)
_UNICODE_PUNCTUATION = re.compile("[‘’“”–—…«»·•，。、！？：；（）「」『』《》【】～]")
# Hiragana, katakana, CJK ideographs (extension A and the main block) and Hangul syllables.
_CJK_RUN = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_OPTION = re.compile(r"^\(?([A-Ea-e])[.)]\s", re.MULTILINE)
_MAX_OPTIONS = 6
_DIGITS = "0123456789"
_MATH_CHARS = "=+*/^<>"
_CODE_CHARS = "{};"
_NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty"
    " hundred thousand half twice double triple third quarter dozen".split()
)
_FRACTION_WORDS = frozenset(("half", "third", "quarter", "fraction", "fractions"))
# First-person narration ("I took my neighbour's car"): scenario judgements, which the cheap
# model gets wrong far more often across subjects. Roman numeral "I" also counts; harmless.
_FIRST_PERSON = ("i", "my", "me")
_MAX_FIRST_PERSON = 8
_CODE_WORDS = frozenset(("def", "return", "print", "printf", "int", "void", "var", "const"))
# Length thresholds (characters) turned into step features, so a linear model can bend its
# response to length instead of assuming it is log-linear.
_LENGTH_STEPS = (150, 300, 600, 1200, 2400)


@dataclass(frozen=True, slots=True)
class PromptFeatures:
    """What the model sees of one prompt: its format, its n-grams, and dense measurements."""

    fmt: str  # MCQ or FREE
    # unigrams "word", bigrams "word word" and the lead "^word", "^word word"; presence only
    # (never mutated)
    ngrams: Set[str]
    dense: dict[str, float]  # name → value, scaled to roughly [0, 2]


def clip_text(text: str, head: int = HEAD_CHARS, tail: int = TAIL_CHARS) -> str:
    """The part of the prompt the features read: head and tail, joined by a newline."""
    if len(text) <= head + tail:
        return text
    return text[:head] + "\n" + text[-tail:]


def tokenize(clipped: str) -> list[str]:
    lowered = clipped.lower()
    if not lowered.isascii():
        runs = _CJK_RUN.findall(lowered)
        # One CJK character is about one token where an English token is about four
        # characters: a mostly-CJK text is read for as many tokens, not characters.
        if runs and sum(map(len, runs)) * 4 > len(lowered):
            lowered = clip_text(lowered, HEAD_CHARS // 4, TAIL_CHARS // 4)
        lowered = _UNICODE_PUNCTUATION.sub(" ", lowered)
        if runs:
            lowered = _CJK_RUN.sub(_character_bigrams, lowered)
    # surrogatepass: a lone surrogate (valid in a str, not in UTF-8) passes through whole.
    return (lowered.encode("utf-8", "surrogatepass").translate(_BYTE_TABLE)
            .decode("utf-8", "surrogatepass").split())


def _character_bigrams(run: re.Match[str]) -> str:
    # Chinese and Japanese put no spaces between words (Korean spaces whole phrases), so a
    # split on whitespace would make a clause one token seen once: overlapping character
    # pairs are the tokens instead ("写一首诗" → "写一 一首 首诗"), as in CJK search engines.
    text = run.group()
    if len(text) == 1:
        return f" {text} "
    return " " + " ".join(map("".join, pairwise(text))) + " "


# The last text featurized and its features: the complexity and task models read the same
# question one after the other, and this way it is tokenized once. Keyed by identity (the
# same str object), so the check is O(1); one tuple, replaced whole, so concurrent callers
# can only miss it, never see another text's features.
_last: tuple[str, PromptFeatures] | None = None


def extract_features(text: str) -> PromptFeatures:
    global _last
    last = _last
    if last is not None and last[0] is text:
        return last[1]
    features = _extract(text)
    _last = (text, features)
    return features


def _extract(text: str) -> PromptFeatures:
    clipped = clip_text(text)
    tokens = tokenize(clipped)
    ngrams = set(tokens)
    ngrams.update(map(" ".join, pairwise(tokens)))
    if tokens:
        ngrams.add(LEAD + tokens[0])
        if len(tokens) > 1:
            ngrams.add(f"{LEAD}{tokens[0]} {tokens[1]}")

    options = _last_option_block(clipped)
    fmt = MCQ if len(options) >= 2 else FREE
    dense = _dense_features(len(text), clipped, ngrams)
    first_person = sum(map(tokens.count, _FIRST_PERSON))
    dense["#first_person"] = min(first_person, _MAX_FIRST_PERSON) / 4.0
    if fmt == MCQ:
        dense.update(_option_features(clipped, options))
        stem = clipped[: options[0].start()]
    else:
        stem = clipped
    dense["#stem_len"] = math.log1p(len(stem)) / 8.0
    dense["#sentences"] = math.log1p(stem.count(". ") + stem.count("? ") + 1) / 3.0
    dense["#question_mark"] = float("?" in stem)
    return PromptFeatures(fmt=fmt, ngrams=ngrams, dense=dense)


def _last_option_block(clipped: str) -> list[re.Match[str]]:
    """The answer options of the last question: few-shot prompts carry earlier questions'
    options too, and only the one being asked matters (bounded work either way)."""
    block: list[re.Match[str]] = []
    for match in reversed(list(_OPTION.finditer(clipped))[-_MAX_OPTIONS:]):
        block.append(match)
        if match.group(1) in "Aa":
            break
    block.reverse()
    return block


def _dense_features(total_chars: int, clipped: str, ngrams: Set[str]) -> dict[str, float]:
    """Length, numeracy and code measurements, by C-level counting over the clipped text."""
    digits = sum(clipped.count(d) for d in _DIGITS)
    # "0 0" is two digit runs in a row, e.g. "2.5" or "3/4" once punctuation became spaces.
    split_number = "0 0" in ngrams
    # Scales keep every value within about [0, 2] so one ridge penalty suits them all.
    dense = {
        "#len": math.log1p(total_chars) / 8.0,
        "#digits": math.log1p(digits) / 4.0,
        "#number_words": len(_NUMBER_WORDS & ngrams) / 4.0,
        "#math": math.log1p(sum(clipped.count(c) for c in _MATH_CHARS)) / 3.0,
        "#commas": math.log1p(clipped.count(",")) / 3.0,
        "#lines": math.log1p(clipped.count("\n")) / 3.0,
        "#fraction": float((split_number and "/" in clipped) or bool(_FRACTION_WORDS & ngrams)),
        "#code": float(
            any(c in clipped for c in _CODE_CHARS) or "==" in clipped or bool(_CODE_WORDS & ngrams)
        ),
        "#money": float("$" in clipped),
        "#percent": float("%" in clipped or "percent" in ngrams),
        "#decimal": float(split_number and "." in clipped),
        # "Statement 1 | … Statement 2 | …", "Scenario 1 | …": two claims judged at once.
        "#pipe": float("|" in clipped),
    }
    for step in _LENGTH_STEPS:
        if total_chars > step:
            dense[f"#len>{step}"] = 1.0
    return dense


def _option_features(clipped: str, options: list[re.Match[str]]) -> dict[str, float]:
    """Shape of the answer options: length, numeric (a calculation), paired judgements."""
    ends = [match.start() for match in options[1:]] + [len(clipped)]
    # First line only: the last option is usually followed by the "Answer:" cue.
    bodies = [
        clipped[match.end() : end].split("\n", 1)[0]
        for match, end in zip(options, ends, strict=True)
    ]
    count = len(bodies)
    numeric = sum(any(d in body for d in _DIGITS) for body in bodies)
    # "True, False" / "Wrong, Not wrong": two judgements per question (Statement 1 | 2 ...).
    paired = sum(body.count(",") == 1 and len(body) < 24 for body in bodies)
    # Options that reuse the same few words ("Wrong, Not wrong", "I and II only", "True,
    # False") grade combinations of judgements rather than recall of one fact; this transfers
    # to unseen subjects where the words themselves do not.
    words = " ".join(bodies).lower().split()
    return {
        "#option_diversity": len(set(words)) / len(words) if words else 1.0,
        "#option_len": math.log1p(sum(map(len, bodies)) / count) / 5.0,
        "#numeric_options": numeric / count,
        "#paired_options": float(paired == count),
    }
