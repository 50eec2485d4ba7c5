"""Names that are the name of a result, not of a person in the text: "Maxwell's equations",
"Riemann zeta function", "Xavier initialization", "the Kelly criterion". Hard technical
requests are full of them, and a person finding would keep such a request home. Only words
that almost never follow a person in everyday text count ("Sarah's test results" is a
person: "test" is not here)."""

from __future__ import annotations

import re

# Written from general knowledge of mathematics, statistics, physics, computing and finance.
_TERMS = (
    "equation", "equations", "theorem", "theorems", "lemma", "conjecture", "inequality",
    "inequalities", "criterion", "initialization", "initialisation", "transform",
    "transforms", "integral", "integrals", "algorithm", "algorithms", "divergence",
    "decomposition", "factorization", "factorisation", "polynomial", "polynomials",
    "distribution", "distributions", "equivalence", "formula", "zeta", "manifold", "manifolds",
    "constant", "paradox", "hypothesis", "operator", "operators", "estimator", "functional",
    "interpolation", "quadrature", "elimination", "sieve", "spline", "splines", "tableau",
    "invariant", "invariants", "ratio", "matrix", "matrices", "kernel", "entropy",
    "complexity", "filter", "filters",
)  # not "identity", "numbers", "space", "tree": "Mary's identity" is a person
# What follows the name: an optional possessive or hyphenated partner ("-Hochberg"), then
# the term, any case.
_AFTER = re.compile(
    r"(?:['’]s?|[-–][A-Z][\w'’]*)?\s+(?:" + "|".join(_TERMS) + r")\b", re.IGNORECASE)


TERMS = frozenset(_TERMS)


def names_a_result(text: str, end: int) -> bool:
    """Whether the capitalised word or run ending at `end` is followed by a term it names."""
    return _AFTER.match(text, end) is not None


def holds_a_result(words: list[str]) -> bool:
    """Whether a run of capitalised words holds the term itself ("Riemann Hypothesis")."""
    return any(word.lower() in TERMS for word in words[1:])
