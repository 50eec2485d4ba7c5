"""Alice, Bob and their cast are roles where the pair appears bare; a full name or a lone
first name is still a person."""

from __future__ import annotations

import pytest

from tests.support.found_names import persons


@pytest.mark.parametrize(
    "text",
    ["Alice and Bob run Diffie-Hellman over an authenticated channel; prove that Eve learns"
     " nothing under DDH.",
     "Alice wants to send Bob a bit that Bob learns only later: design a commitment scheme.",
     "Alice and Bob text each other; is Bob\u2019s phone or the server the weaker link?",
     "Alice and Bob take turns removing one to three stones; who wins with 21 stones?",
     "Explain how Bob's private key signs in RSA and why Alice, Carol and Dave can verify it."],
)
def test_the_stock_characters_of_a_protocol_are_no_persons(text: str) -> None:
    assert persons(text) == []


@pytest.mark.parametrize(
    ("text", "names"),
    [("Bob from accounting says the invoice is late.", ["Bob"]),
     ("Alice Chen and Bob met the auditors on Tuesday.", ["Alice Chen", "Bob"]),
     ("Ask Bob\u2019s manager about the invoice.", ["Bob"])],
)
def test_a_full_name_or_a_lone_first_name_stays_a_person(text: str, names: list[str]) -> None:
    assert persons(text) == names


def test_the_rest_of_the_text_is_still_read() -> None:
    text = "Alice and Bob share a key; Bob's manager Margaret Okonkwo approves it."
    assert persons(text) == ["Margaret Okonkwo"]
