"""Capitalised words that head a section, fill a table or name a concept are no persons; the
names beside them, and speakers in a transcript, still are."""

from __future__ import annotations

import pytest

from tests.support.found_names import persons


@pytest.mark.parametrize(
    "text",
    ['Summarise chapter 4 of "Strategic Management of Technological Innovation" for me.',
     'print("Welcome to AutoGluon Learning to Rank Configurator!")',
     "Contractor shall follow US and Licensing Agreements specified in Annex A.",
     "the following functionalities:\n\n**Music Player Functionalities:**\n\n* Shuffle",
     "Before you apply:\n\nRésumé Tips: \n\nKeep it to one page.",
     "Tanfolyam;Python;Android 1\nMegtakarítás:;;;37973;0\nVásárolni:;;;126873;152273",
     "51 840\nДАНО:\nА) Кредит (ТК) = 51 840 BYN;\nНАЙТИ:\n1) МКСДЛ=КСДЛ/12;",
     "extract math knowledge from the following text and express it in wolfram language"],
)
def test_headings_cells_and_terms_are_no_persons(text: str) -> None:
    assert persons(text) == []


@pytest.mark.parametrize(
    ("text", "names"),
    [('Summarise "Management of Innovation" by Melissa Schilling.', ["Melissa Schilling"]),
     ("Minutes taken by Clément Laurent.", ["Clément Laurent"]),
     ("Amy: are we still on for Friday?\nBjörn: yes, at noon", ["Amy", "Björn"]),
     ("Precious Okonkwo signed the contract.", ["Precious Okonkwo"])],
)
def test_names_beside_them_stay_persons(text: str, names: list[str]) -> None:
    assert persons(text) == names


def test_the_other_speakers_of_a_transcript_are_still_found() -> None:
    # "Quillon" is in no name list: only being a speaker beside a found one makes it a person.
    text = "Amy: are we still on for Friday?\nQuillon: yes, at noon\nAmy: great"
    assert persons(text) == ["Amy", "Quillon", "Amy"]


def test_a_heading_beside_a_speaker_is_no_speaker() -> None:
    text = "Amy: are we still on for Friday?\nQuillon Notes:\n- bring the slides"
    assert "Quillon Notes" not in persons(text) and "Quillon" not in persons(text)
