"""Text-based personal data: e-mail, names, street addresses, health information."""

from __future__ import annotations

import pytest

from gateway.classify.sensitivity import SensitivityScanner

SCANNER = SensitivityScanner()


def found(text: str, kind: str) -> list[str]:
    return [text[s.start:s.end] for s in SCANNER.scan(text) if s.type == kind]


def test_email() -> None:
    assert found("write to Jane.Doe+news@mail.acme-corp.co.uk today", "email") == [
        "Jane.Doe+news@mail.acme-corp.co.uk"]


@pytest.mark.parametrize(
    "text",
    ["clone git@github.com:org/repo.git", "see john@example.com in the docs",
     "@property\ndef name(self):", "a @ b", "noreply@github.com sent it"],
)
def test_not_an_email_of_a_person(text: str) -> None:
    assert found(text, "email") == []


@pytest.mark.parametrize(
    ("text", "name"),
    [("My name is Sarah", "Sarah"),
     ("Please correct it to Dr. Berta Szöllössy?", "Berta Szöllössy"),
     ("Ask Anna Kowalska about it", "Anna Kowalska"),
     ("The transfer was approved by Mr. Oyelaran yesterday.", "Oyelaran"),
     ("Pálmi Einarsson will join the call.", "Pálmi Einarsson"),
     ('"It works," says Okonkwo.', "Okonkwo"),
     ("Maika van de Noort\nAccount manager\nmaika@firm.nl", "Maika van de Noort"),
     ("I spoke to Tom Banks yesterday about the lease.", "Tom Banks"),
     ("Please forward the contract to Daniel Fields.", "Daniel Fields")],
)
def test_person_found(text: str, name: str) -> None:
    assert name in found(text, "person")


@pytest.mark.parametrize(
    "text",
    ["Capitalized words like Wisdom and Discipline are often mistaken with names.",
     "Excuse me, Sir bot, but I really don't like this tone",
     "The Python Software Foundation released Python 3.12 in October.",
     "God gave rock and roll to you",
     "CAN I SPEAK TO A REAL PERSON?!?!",
     "class Request(BaseModel):\n    response: Response = Field(default=None)",
     "Southern Tunisia has a dry climate.",
     "Explain the fall of the Roman Empire and draw parallels to today.",
     "Describe each of the naval battles of Leyte Gulf and of Surigao Strait.",
     "Direct messages to Ubisoft Employees are not allowed.",
     "The system shall let users sell Configured to Ordered Products."],
)
def test_no_person_in_ordinary_text(text: str) -> None:
    assert found(text, "person") == []


@pytest.mark.parametrize(
    ("text", "address"),
    [("I live at 221 Baker Street, London", "221 Baker Street, London"),
     ("Send it to 28245 Puruntie 82 Apt. 595", "28245 Puruntie 82 Apt. 595"),
     ("Our office: Villacher Strasse 89", "Villacher Strasse 89"),
     ("Mail goes to PO Box 1234", "PO Box 1234"),
     ("Ship to PSC 1234, Box 5678\nAPO AE 09876", "PSC 1234, Box 5678\nAPO AE 09876"),
     ("Meet me at the corner of Main St and Elm Road", "the corner of Main St and Elm Road"),
     ("Please enter on hegyalja út 98 by the gate", "hegyalja út 98"),
     ("Ship it to 221B Baker Street, London NW1 6XE.", "221B Baker Street, London NW1 6XE")],
)
def test_street_address_found(text: str, address: str) -> None:
    assert any(address in a for a in found(text, "street_address"))


@pytest.mark.parametrize(
    "text",
    ["See Chapter 12 Section 3 for details", "Python 3 Tutorial", "Scenario 1 | I ran",
     "The corner of {street_name} and {street_name}", "In 2004 Paris hosted 3 events",
     "the 12th code would be written to row 4, column 2",
     "If I can walk 1700 steps every 15 min, how long would it take me?",
     "between April 1 and April 10, there is a single row instead of 10",
     "Assume 1 G acceleration to half way and 1 G deceleration after."],
)
def test_no_street_address_in_ordinary_text(text: str) -> None:
    assert found(text, "street_address") == []


def test_health_identifiers_after_their_label() -> None:
    text = "Patient record: MRN: 4471829, member ID: XJH123456789, NHS number 943 476 5919."
    assert found(text, "medical_record_number") == ["4471829"]
    assert found(text, "health_plan_number") == ["XJH123456789", "943 476 5919"]
    assert found("Our policy is strict about 2024 changes", "health_plan_number") == []


def test_diagnosis_only_when_tied_to_a_person() -> None:
    assert found("Anna Kowalska was diagnosed with type 2 diabetes last year.", "diagnosis") == [
        "type 2 diabetes"]
    assert found("I was diagnosed with bipolar disorder", "diagnosis") == ["bipolar disorder"]
    assert found("my son has epilepsy", "diagnosis") == ["epilepsy"]
    assert found("What are the early symptoms of type 2 diabetes?", "diagnosis") == []
    assert found("Explain how insulin regulates glucose in diabetes.", "diagnosis") == []



def test_a_condition_inside_a_word_or_a_namespace_is_no_diagnosis() -> None:
    # Each text holds a first-person cue, so a condition word here would be a disclosure.
    assert found("I have a list stored in a std::string and std::vector.", "diagnosis") == []
    assert found("I have heard Lauri say it hämmästyttävästi well.", "diagnosis") == []
    assert found("I have an STD and need advice.", "diagnosis") == ["STD"]

def test_phi_category() -> None:
    spans = SCANNER.scan("Anna Kowalska has asthma; MRN 4471829")
    assert {s.category for s in spans} == {"pii", "phi"}
