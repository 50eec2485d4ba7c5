"""Person names: runs of capitalised words scored on cheap evidence.

Evidence: a known given name, an honorific, a cue phrase before or after ("my name is",
"… said"), a surname ending, letters outside ASCII, several capitalised words in a row, a name
alone on a line at the top of a contact block, and names already found elsewhere in the text
(a repeated surname, the other members of "Eklund, Michael and Hodge", the other speakers of
a transcript). No single weak signal is enough, which keeps ordinary capitalised words
("Wisdom", "Southern Tunisia") unflagged. Lines typed without capitals are true-cased first
(lower_case_lines.py) and scored the same way at a higher bar.
"""

from __future__ import annotations

import re

from gateway.classify.detectors.common_words import COMMON_WORDS
from gateway.classify.detectors.eponyms import holds_a_result, names_a_result
from gateway.classify.detectors.given_names import GIVEN_NAMES, GIVEN_NAMES_UNACCENTED
from gateway.classify.detectors.lower_case_lines import given_literals, lower_case_lines
from gateway.classify.detectors.name_cues_world import TITLES_AFTER, TITLES_WORLD
from gateway.classify.detectors.name_words import (
    AMBIGUOUS,
    COMMON_CAPITALISED,
    DISTINCT_SURNAME_ENDINGS,
    LOWER_CASE_WORDS,
    NAME_BREAKERS,
    PARTICLES,
    SURNAME_ENDINGS,
    TERM_SUFFIXES,
    TITLES,
)
from gateway.classify.detectors.person_cues import (
    cue_score,
    layout_score,
    opens_a_line_of_speech,
    starts_a_line,
)
from gateway.classify.detectors.placeholder_names import without_stock_characters
from gateway.classify.detectors.textview import TextView, make_view
from gateway.types import SensitiveSpan

# A capitalised word on the class map, not glued to a letter or digit on either side (so not
# part of a camelCase identifier); runs of them joined by a space, a hyphen, an initial ("D.")
# or one or two short lower-case words (checked against the name particles afterwards).
# Code is excluded cheaply: no word right after "." ("os.Path"), none right before "(", "[",
# "=" or an attribute dot ("Request(", "Path.home").
_END = rb"(?![A0_(\[=]|\.[Aa_(])"
_WORD = rb"[A?](?:aA)?[a?]++" + _END  # "McDowell", "DeVito", "Žilih" included
_JOIN = rb"(?: {1,2}|-)(?:A\.? |a{1,4} (?:a{1,4} )?)?"
_RUN_ASCII = re.compile(
    rb"A(?<![Aa0_?'A.]A)(?:aA)?[a?]++" + _END + rb"(?:" + _JOIN + _WORD + rb")*"
)
# Words whose first letter is not ASCII ("Šárka"): a second literal-led pass, non-ASCII text only.
_RUN_NON_ASCII = re.compile(rb"\?(?<![Aa0_?'.]\?)[a?]++" + _END + rb"(?:" + _JOIN + _WORD + rb")*")
_THRESHOLD = 0.55
# In a true-cased line every unusual word has a capital, so two of them in a row after "of"
# ("of Baroque Pop") would pass the usual bar, and so would any word after a cue ("my friend
# Lives in…"): there a name needs a higher score, and a lone word some evidence of its own.
_LOWER_CASE_THRESHOLD = 0.65
# A list's last member may end the sentence ("… Teresa and Jodi."), but "Os.path" is code.
_NEXT_IN_LIST = re.compile(r"(?:, and |, | and | & )([A-Z][^\W\d_]+)(?![\w(]|\.\w)")
_PREVIOUS_IN_LIST = re.compile(r"(?<![\w.])([A-Z][^\W\d_]+)(?:, and |, | and | & )\Z")
_SELF_INTRO = re.compile(rb"name is ([a-z][a-z?'-]+(?: [a-z][a-z?'-]+)?)")
_LOWER_GIVEN = frozenset(n.lower() for n in GIVEN_NAMES - AMBIGUOUS)

Token = tuple[int, int]
# Last letter of every term ending: one set lookup before the suffix comparison.
_TERM_LAST = frozenset(s[-1] for s in TERM_SUFFIXES)
# Last two letters of every surname ending: one set lookup before the suffix comparisons.
_ENDING_TAILS = frozenset(e[-2:] for e in (*DISTINCT_SURNAME_ENDINGS, *SURNAME_ENDINGS))
# Capitalised words that are not names on their own (a given name is never in this set).
_ORDINARY = (COMMON_CAPITALISED | COMMON_WORDS) - (GIVEN_NAMES - AMBIGUOUS)
# Words a true-cased line leaves lower-case: everyday words, and the given names that are
# everyday words too ("will", "may", "mark"), which in lower case almost never are names.
_LOWER_ORDINARY = frozenset(w.lower() for w in _ORDINARY | AMBIGUOUS) | LOWER_CASE_WORDS
_LOWER_LINE_GIVEN = _LOWER_GIVEN - LOWER_CASE_WORDS
_ARTICLES = frozenset(("der", "den"))  # particles only after another one
# Honorifics inside a run of capitalised words ("Ihr Mitarbeiter Herr Brandt", "Bonjour Mme
# Lefèvre"): the run breaks there, and what follows is scored with the title as its cue.
_TITLE_WORDS = frozenset(
    form for t in (*TITLES, *TITLES_WORLD, *TITLES_AFTER) for form in (t.capitalize(), t.upper())
)



def compile_name_search() -> None:
    """Builds the given-name search for documents with many capital-free lines now, so no
    request pays for it."""
    given_literals(_LOWER_LINE_GIVEN)


def detect_persons(view: TextView) -> list[SensitiveSpan]:
    spans = _capitalised_names(view, lower_case=False)
    spans.extend(_lower_case_introductions(view))
    for offset, true_cased in lower_case_lines(view, _LOWER_LINE_GIVEN, _LOWER_ORDINARY,
                                               PARTICLES):
        spans.extend(
            SensitiveSpan("person", "pii", s.start + offset, s.end + offset, s.confidence)
            for s in _capitalised_names(make_view(true_cased), lower_case=True)
        )
    return without_stock_characters(view.text, spans)


def _capitalised_names(view: TextView, lower_case: bool) -> list[SensitiveSpan]:
    text = view.text
    threshold = _LOWER_CASE_THRESHOLD if lower_case else _THRESHOLD
    runs = [m.span() for m in _RUN_ASCII.finditer(view.classes)]
    if not view.ascii_only:
        runs.extend(
            m.span() for m in _RUN_NON_ASCII.finditer(view.classes) if text[m.start()].isupper()
        )
        runs.sort()
    spans: list[SensitiveSpan] = []
    unknown: list[Token] = []  # lone words that are not ordinary words: where surnames recur
    for start, end in runs:
        chunk = text[start:end]
        if " " not in chunk:
            if chunk not in _ORDINARY and not _plural(chunk) and not _is_term(chunk):
                unknown.append((start, end))
                score = _lone_score(view, chunk, start, end, lower_case)
                if score >= threshold and not names_a_result(text, end):
                    spans.append(SensitiveSpan("person", "pii", start, end,
                                               round(min(0.95, score), 2)))
            continue
        for run in _split(text, start, chunk):
            score = _run_score(view, run, lower_case)
            if score >= threshold and not names_a_result(text, run[-1][1]) and not (
                    holds_a_result([text[s:e] for s, e in run])):
                spans.append(SensitiveSpan("person", "pii", run[0][0], run[-1][1],
                                           round(min(0.95, score), 2)))
    if spans:
        spans = _joined(text, spans)
        spans.extend(_propagated(text, unknown, spans))
    return spans


def _joined(text: str, spans: list[SensitiveSpan]) -> list[SensitiveSpan]:
    """Adjacent names separated by one space are one name ("Šárka" + "Ottová", found by the
    two passes separately)."""
    merged = [spans[0]]
    for span in spans[1:]:
        last = merged[-1]
        if span.start == last.end + 1 and text[last.end] == " ":
            merged[-1] = SensitiveSpan("person", "pii", last.start, span.end,
                                       max(last.confidence, span.confidence))
        else:
            merged.append(span)
    return merged


def _lone_score(view: TextView, word: str, start: int, end: int, lower_case: bool) -> float:
    """The fast path for a single capitalised word, the overwhelmingly common case."""
    score = 0.0
    if word in GIVEN_NAMES_UNACCENTED and word not in AMBIGUOUS:
        score = 0.65
    elif len(word) >= 5 and word[-2:].lower() in _ENDING_TAILS:
        lowered = word.lower()
        if lowered.endswith(DISTINCT_SURNAME_ENDINGS) and not lowered.endswith("person"):
            score = 0.55
        elif lowered.endswith(SURNAME_ENDINGS) and not lowered.endswith("person"):
            score = 0.45
    if not word.isascii() and not word.isupper():  # "ДАНО:" heads a school exercise
        score += 0.25
    if score >= _THRESHOLD or (lower_case and score == 0.0):
        return score
    evidence = score > 0.0
    return (score + cue_score(view, start, end)
            + layout_score(view, start, end, speaker=evidence))



def _split(text: str, start: int, chunk: str) -> list[list[Token]]:
    """Break a run at lower-case words that are not name particles; drop ordinary words that
    lead a run ("The", "Dear"); a place or company word ("Street", "Inc") voids its part. An
    ordinary word right after a given name stays: it is a surname ("John Green")."""
    runs: list[list[Token]] = []
    current: list[Token] = []
    void = after_title = False
    position = start
    for token in chunk.split(" "):
        span = (position, position + len(token))
        position += len(token) + 1
        if not token:
            continue
        was_title, after_title = after_title, False
        if token[0].islower() or len(token) == 1 or (len(token) == 2 and token[1] == "."):
            if token in PARTICLES or not token[0].islower():
                continue  # a particle or an initial stays inside the name
        else:
            # A title that is also a place word ("Bay") is a title only after another one
            # ("Sayın Bay Aksoy", but "Tampa Bay Rays").
            if token in _TITLE_WORDS and (was_title or token not in NAME_BREAKERS):
                if current and not void:
                    runs.append(current[:4])
                current, void, after_title = [], False, True
                continue
            if token in NAME_BREAKERS:
                void = True
                continue
            if (token not in _ORDINARY and not _is_term(token) and not _plural(token)) or (
                token in GIVEN_NAMES_UNACCENTED
            ) or (current and text[current[-1][0]:current[-1][1]] in GIVEN_NAMES_UNACCENTED):
                current.append(span)
                continue
            if not current:
                continue
        if current and not void:
            runs.append(current[:4])
        current, void = [], False
    if current and not void:
        runs.append(current[:4])
    return runs


def _run_score(view: TextView, run: list[Token], lower_case: bool) -> float:
    text = view.text
    names = [text[s:e] for s, e in run]
    start, end = run[0][0], run[-1][1]
    if len(names) == 1:
        return _lone_score(view, names[0], start, end, lower_case)
    score = 0.25  # several capitalised words in a row
    if any(w in GIVEN_NAMES_UNACCENTED and w not in AMBIGUOUS for w in names):
        score += 0.85
    elif any(w in AMBIGUOUS for w in names):
        score += 0.35
    lowered = [w.lower() for w in names if len(w) >= 5 and not w.endswith("person")]
    if any(w.endswith(DISTINCT_SURNAME_ENDINGS) for w in lowered):
        score += 0.55
    elif any(w.endswith(SURNAME_ENDINGS) for w in lowered):
        score += 0.45
    if not all(w.isascii() for w in names):
        score += 0.25
    if _has_particle(text[start:end].split()):
        score += 0.3
    if score >= 1.0:
        return score
    evidence = score > 0.25  # more than the capitals themselves
    return (score + cue_score(view, start, end)
            + layout_score(view, start, end, speaker=evidence))


def _is_term(word: str) -> bool:
    """A word shaped like an abstract noun or adjective ("Innovation", "Configurator")."""
    return (len(word) >= 7 and word[-1] in _TERM_LAST and word.lower().endswith(TERM_SUFFIXES)
            and word not in GIVEN_NAMES_UNACCENTED)


def _plural(word: str) -> bool:
    """An everyday noun in the plural ("Employees", "Products"): no surname."""
    return word[-1] == "s" and word[:-1] in _ORDINARY


def _has_particle(words: list[str]) -> bool:
    """A name particle among the words; "der" and "den" only after another ("van der Berg"):
    alone they are German articles between two nouns ("Gruppe der Ordnung")."""
    return any(word in PARTICLES and (word not in _ARTICLES or (i and words[i - 1] in PARTICLES))
               for i, word in enumerate(words))


def _propagated(
    text: str, unknown: list[Token], found: list[SensitiveSpan]
) -> list[SensitiveSpan]:
    """Names implied by confident ones: the same surname again ("… early Yefremova"), and
    the other members of a list that holds a name ("founders: Eklund, Michael and Hodge")."""
    covered = {(s.start, s.end) for s in found}
    extra: list[SensitiveSpan] = []
    surnames = {
        text[s.start:s.end].rsplit(" ", 1)[-1]
        for s in found
        if s.confidence >= 0.75 and " " in text[s.start:s.end]
    }
    if surnames:
        for start, end in unknown:
            if (start, end) not in covered and text[start:end] in surnames:
                extra.append(SensitiveSpan("person", "pii", start, end, 0.7))
    if any(_is_speaker_label(text, s.start, s.end) for s in found):
        # A transcript: once one speaker is a person, so are the other speakers.
        for start, end in unknown:
            if (start, end) not in covered and _is_speaker_label(text, start, end):
                covered.add((start, end))
                extra.append(SensitiveSpan("person", "pii", start, end, 0.6))
    queue = [(s.start, s.end) for s in found]
    while queue:
        start, end = queue.pop()
        for neighbour in _list_neighbours(text, start, end):
            word = text[neighbour[0]:neighbour[1]]
            if neighbour in covered or word in _ORDINARY or word in NAME_BREAKERS or (
                    _is_term(word)):
                continue
            covered.add(neighbour)
            queue.append(neighbour)
            extra.append(SensitiveSpan("person", "pii", neighbour[0], neighbour[1], 0.6))
    return extra


def _is_speaker_label(text: str, start: int, end: int) -> bool:
    """A word at the start of a line (or after a chat timestamp), right before a colon."""
    return opens_a_line_of_speech(text, end) and starts_a_line(text, start)


def _list_neighbours(text: str, start: int, end: int) -> list[Token]:
    neighbours = []
    after = _NEXT_IN_LIST.match(text, end)
    if after is not None:
        neighbours.append(after.span(1))
    before = _PREVIOUS_IN_LIST.search(text, max(0, start - 40), start)
    if before is not None:
        neighbours.append(before.span(1))
    return neighbours


def _lower_case_introductions(view: TextView) -> list[SensitiveSpan]:
    """"my name is lena andersson": lower-case names, only after an explicit introduction."""
    spans = []
    for at in view.occurrences(b"name is "):
        match = _SELF_INTRO.match(view.lower, at)
        if match is None:
            continue
        first = match.group(1).split(b" ")[0].decode()
        start, end = match.span(1)
        if not view.text[start].islower():
            continue
        surname = view.text[start:end].split(" ")[-1]
        if first in _LOWER_GIVEN or surname.endswith(DISTINCT_SURNAME_ENDINGS):
            spans.append(SensitiveSpan("person", "pii", start, end, 0.7))
    return spans
