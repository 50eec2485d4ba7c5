"""Person names beyond capitalised prose: lines typed without capitals, speakers in a
transcript, the last member of a list, and the given-name lists' hygiene."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.classify.detectors.common_words import COMMON_WORDS
from gateway.classify.detectors.given_names import GIVEN_NAMES
from gateway.classify.detectors.given_names_world import WORLD_GIVEN_NAMES
from gateway.classify.detectors.lower_case_lines import _SEPARATORS, _naming, lower_case_lines
from gateway.classify.detectors.name_words import (
    AMBIGUOUS,
    COMMON_CAPITALISED,
    LOWER_CASE_WORDS,
)
from gateway.classify.detectors.textview import make_view
from tests.support.found_names import persons


@pytest.mark.parametrize(
    ("text", "names"),
    [("follow up with kristoffer haugen next week", ["kristoffer haugen"]),
     ("we had dinner with sigrid, mads and yvonne.", ["sigrid", "mads", "yvonne"]),
     ("Subject: visit\nhey, can you ask tomasz about the keys", ["tomasz"]),
     ("the true gender of bertram has been debated", ["bertram"])],
)
def test_names_in_lines_without_capitals(text: str, names: list[str]) -> None:
    assert persons(text) == names


@pytest.mark.parametrize(
    "text",
    ["my friend lives in the city and works from home",  # a cue, but no name after it
     "the gene expression was measured and drew a clear line",  # names that are words here
     "import adam\nfrom torch import optim, adam",  # code
     "    total = compute(adam, eve)\n",
     "see you at the rally; bring the banners and a flask of tea"],
)
def test_no_names_in_ordinary_lower_case_text(text: str) -> None:
    assert persons(text) == []


def test_a_line_with_a_capital_is_left_to_the_ordinary_pass() -> None:
    view = make_view("Call sigrid today\nremind sigrid about the cabin\n")
    lines = list(lower_case_lines(view, frozenset({"sigrid"}), frozenset({"about", "the"}),
                                  frozenset()))
    # One line, with its offset in the whole text, true-cased with the same length.
    assert lines == [(18, "Remind Sigrid about the Cabin")]


def test_true_casing_keeps_offsets_when_a_capital_is_longer() -> None:
    # "ŉ" upper-cases to two characters: such a word keeps its lower-case form.
    text = "ask ŉoah and sigrid about it"
    [(offset, line)] = lower_case_lines(make_view(text), frozenset({"sigrid"}),
                                        frozenset({"ask", "about"}), frozenset())
    assert offset == 0 and len(line) == len(text) and "Sigrid" in line


def test_other_speakers_of_a_transcript_are_people_once_one_is() -> None:
    text = "Odalric: Where were you?\nMargit: At the station.\nNote: no reply"
    assert persons(text) == ["Odalric", "Margit"]


@pytest.mark.parametrize("stamp", ["[13:05] ", "10:45 AM ", "[12/03/24, 10:45:12] ",
                                   "12/03/2024, 10:45 - "])
def test_speakers_of_a_chat_export_after_its_timestamps(stamp: str) -> None:
    text = f"{stamp}Odalric Vance: Where were you?\n{stamp}Quillon: At the station."
    assert persons(text) == ["Odalric Vance", "Quillon"]


def test_a_log_with_timestamps_has_no_speakers() -> None:
    assert persons("[12:00:01] Server: started\n[12:00:02] Worker: ready") == []
    assert persons("Meeting at 10:45 Monday: bring the slides") == []


def test_labels_alone_are_not_people() -> None:
    assert persons("Odalric: yes\nSummary: fine") == []



def test_headings_before_a_colon_are_not_speakers() -> None:
    text = ("Crew Selection: assign a random crew.\nRoof: add a triangle.\n"
            "Finishing Touches: add colours.\nAdditional Guidelines: keep it short.")
    assert persons(text) == []
    # A speaker label still counts where its words show a name.
    assert persons("Odalric Vance: Where were you?\nMargit: At the station.") == [
        "Odalric Vance", "Margit"]


def test_a_numbered_step_that_says_edit_is_no_name() -> None:
    assert persons("4) Edit web.conf to set the port.\n5) Edit index.html") == []

def test_the_last_member_of_a_list_before_a_full_stop() -> None:
    assert persons("They invited Ingrid, Paavo and Quillon.") == ["Ingrid", "Paavo", "Quillon"]
    assert persons("Ask Paavo and Requests.get about it") == ["Paavo"]


def test_new_given_names_are_not_everyday_words() -> None:
    everyday = COMMON_WORDS | COMMON_CAPITALISED | AMBIGUOUS
    assert not WORLD_GIVEN_NAMES & everyday
    assert all(len(name) > 3 for name in WORLD_GIVEN_NAMES)
    assert WORLD_GIVEN_NAMES <= GIVEN_NAMES


def test_lower_case_words_are_lower_case() -> None:
    assert all(word == word.lower() for word in LOWER_CASE_WORDS)


NAMES = frozenset({"sigrid", "ana", "zoé", "bo"})


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(
    st.lists(st.sampled_from(["sigrid", "ana", "zoé", "bo", "banana", "bob", "x1", "é", "--",
                              "ana,", "(bo)", "sigrid's", "over", "zoé."]),
             min_size=1, max_size=6).map(" ".join),
    min_size=0, max_size=40))
def test_the_compiled_line_filter_never_drops_a_line_that_names_someone(
        lines: list[str]) -> None:
    """The lines a given name is looked for in (one compiled pass for many lines) include
    every line where the word-by-word check finds one."""
    wanted = [i for i, line in enumerate(lines)
              if not NAMES.isdisjoint(line.translate(_SEPARATORS).split())]
    assert set(wanted) <= set(_naming(lines, NAMES))


def test_a_long_document_with_one_lower_case_name_still_yields_that_line() -> None:
    filler = "\n".join(f"line {i} of the banana report, anatomy and bobbins" for i in range(60))
    text = filler + "\nremind sigrid about the cabin\n" + filler
    view = make_view(text)
    found = list(lower_case_lines(view, frozenset({"sigrid", "ana", "bo"}),
                                  frozenset({"about", "the"}), frozenset()))
    assert [(text[o:o + len(line)].lower(), line) for o, line in found] == [
        ("remind sigrid about the cabin", "Remind Sigrid about the Cabin")]


def test_a_lone_surrogate_in_a_long_document_does_not_fail_the_scan() -> None:
    text = "\n".join(["follow up with kristoffer haugen \ud800 next week"] * 20)
    assert persons(text) == ["kristoffer haugen"] * 20
