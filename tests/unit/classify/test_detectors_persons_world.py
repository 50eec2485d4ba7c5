"""Person names in other languages' text: honorifics inside a run of capitalised words,
titles and cues written the way each language writes them, a name typed without the accents
the list spells it with, and the fourth given-name batch's hygiene."""

from __future__ import annotations

import pytest

from gateway.classify.detectors.common_words import COMMON_WORDS
from gateway.classify.detectors.given_names import GIVEN_NAMES
from gateway.classify.detectors.given_names_europe import EUROPE_GIVEN_NAMES
from gateway.classify.detectors.name_words import AMBIGUOUS, COMMON_CAPITALISED
from tests.support.found_names import persons


@pytest.mark.parametrize(
    ("text", "names"),
    [  # The honorific sits inside a run of capitalised words (German nouns, a greeting).
        ("Gestern hat Ihre Kollegin Frau Albrecht zweimal angerufen.", ["Albrecht"]),
        ("Bonjour Mme Garnier, voici le devis corrigé.", ["Garnier"]),
        ("Estimada Señora Ibarra: le enviamos la factura.", ["Ibarra"]),
        ("Sayın Bay Aksoy, toplantı yarın saat onda.", ["Aksoy"]),
        # Written as natives abbreviate them, dot or not, after an elided article.
        ("Ho parlato con l'avv. Marchesi della clausola.", ["Marchesi"]),
        ("Het dossier ligt bij dhr. Verhoeven op kantoor.", ["Verhoeven"]),
        ("Proszę przekazać dokumenty pani Zielińskiej jutro.", ["Zielińskiej"]),
        ("M. Garnier arrive lundi.", ["Garnier"]),
        # A self-introduction, and an honorific after the name.
        ("Bonjour, je m'appelle Garnier et j'ai une question.", ["Garnier"]),
        ("Aksoy Bey toplantıya katılacak.", ["Aksoy"]),
        ("Tanaka-san approved the budget yesterday.", ["Tanaka"]),
    ],
)
def test_titles_and_cues_of_other_languages(text: str, names: list[str]) -> None:
    assert persons(text) == names


def test_der_after_another_particle_is_still_part_of_a_name() -> None:
    assert persons("The report came from Brouwer van der Heijden yesterday.") == [
        "Brouwer van der Heijden"]


def test_a_name_typed_without_the_accents_the_list_gives_it() -> None:
    assert "Élodie" in GIVEN_NAMES and "Elodie" not in GIVEN_NAMES
    assert persons("Please forward the minutes to Elodie before Friday.") == ["Elodie"]


def test_accents_that_tell_words_apart_are_kept() -> None:
    # Without its accents "Mình" (Vietnamese: I) would be the name Minh.
    assert "Minh" in GIVEN_NAMES
    assert persons("Mình mới mua laptop, cài Python thế nào?") == []


@pytest.mark.parametrize(
    "text",
    ["Hola Mundo en Python, paso a paso.",  # an informal greeting is no name cue
     "Laut Vertrag ist die Lieferung am Montag fällig.",  # "according to" a document
     "The Tampa Bay Rays won again.",  # a place word that is also a Turkish title
     # "der" between two nouns is an article, a name particle only after "van" or "von".
     "Zeige, dass jede Gruppe der Ordnung 15 zyklisch ist."],
)
def test_other_languages_everyday_text_is_not_a_name(text: str) -> None:
    assert persons(text) == []


def test_the_fourth_batch_of_given_names_holds_no_everyday_word() -> None:
    everyday = COMMON_WORDS | COMMON_CAPITALISED | AMBIGUOUS
    assert not EUROPE_GIVEN_NAMES & everyday
    assert all(len(name) > 3 for name in EUROPE_GIVEN_NAMES)
    assert EUROPE_GIVEN_NAMES <= GIVEN_NAMES
