"""A name that names a result ("Maxwell's equations") is no person in the text; a person's
name before an everyday word stays one."""

from __future__ import annotations

import pytest

from gateway.classify.detectors.eponyms import holds_a_result, names_a_result
from tests.support.found_names import persons


@pytest.mark.parametrize(
    "text",
    ["Starting from Maxwell's equations in a good conductor, derive the skin depth.",
     "Explain why the Riemann Hypothesis implies a bound on prime gaps.",
     "Find the non-trivial zeros of the Riemann Zeta function numerically.",
     "Derive the Kalman filter update from Bayes' rule.",
     "Size the bets with the Kelly criterion for a biased coin."],
)
def test_a_name_of_a_result_is_no_person(text: str) -> None:
    assert persons(text) == []


@pytest.mark.parametrize(
    ("text", "names"),
    [("Sarah's test results came back this morning.", ["Sarah"]),
     ("Sarah\u2019s test results came back this morning.", ["Sarah"]),
     ("Mary's identity was confirmed by Dr. Okafor.", ["Mary", "Okafor"])],
)
def test_a_person_before_an_everyday_word_stays_one(text: str, names: list[str]) -> None:
    assert persons(text) == names


def test_what_follows_and_what_the_run_holds() -> None:
    text = "the Cauchy-Schwarz inequality"
    assert names_a_result(text, text.index("-Schwarz")) is True  # after "Cauchy"
    assert names_a_result("Maxwell’s equations", 7) is True
    assert names_a_result("Maxwell said so", 7) is False
    assert holds_a_result(["Riemann", "Hypothesis"]) and not holds_a_result(["Anna", "Berg"])
