"""Protected health information: medical-record and health-plan numbers (an identifier right
after its label), and diagnoses tied to a person.

A question about medicine in general is not personal data: a condition is flagged only near
a person's name or identifier found in the same text, or in a first-person or family
disclosure ("I was diagnosed with …", "my son has …").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gateway.classify.detectors.health_terms import (
    CONDITION_WORDS,
    DIAGNOSIS,
    IDENTIFIER,
    PLAN_NUMBER,
    RECORD_NUMBER,
)
from gateway.classify.detectors.textview import TextView
from gateway.types import SensitiveSpan

_NEAR = 150  # characters either side of a person in which a condition is theirs
_DISCLOSURE_REACH = 60
# First-person disclosures ("I was diagnosed with …", "I have diabetes").
_SELF_CUES = (b"diagnos", b"suffer", b"i have ")
# Family disclosures, checked where "my " occurs ("my son has epilepsy").
_FAMILY = re.compile(rb"my (?:[a-z]+ )?(?:son|daughter|wife|husband|child|kid|baby|mother|mom|"
                     rb"father|dad|brother|sister|partner|grandmother|grandfather)(?:'s)? "
                     rb"(?:has|had|was|is|got)\b")
_PERSONAL_TYPES = frozenset({"person", "us_ssn", "date_of_birth", "email", "phone",
                             "medical_record_number", "health_plan_number"})
_WORDS = re.compile(rb"[a-z']+")

_LABEL_CUES = (b"mrn", b"medic", b"patient", b"member", b"insurance", b"policy", b"health",
                b"nhs")


def detect_health_identifiers(view: TextView) -> list[SensitiveSpan]:
    """An identifier right after a medical-record or health-plan label."""
    spans = []
    for at in view.occurrences(*_LABEL_CUES):
        for label, kind in ((RECORD_NUMBER, "medical_record_number"),
                            (PLAN_NUMBER, "health_plan_number")):
            match = label.match(view.lower, at)
            if match is None:
                continue
            identifier = IDENTIFIER.match(view.text, match.end())
            if identifier is not None:
                value = identifier.group().rstrip(" -")
                spans.append(SensitiveSpan(kind, "phi", identifier.start(),
                                           identifier.start() + len(value), 0.85))
            break
    return spans


def detect_diagnoses(view: TextView, found: Sequence[SensitiveSpan]) -> list[SensitiveSpan]:
    """Conditions within reach of a person or identifier already found, or disclosed."""
    size = len(view.text)
    windows = [
        (max(0, s.start - _NEAR), min(size, s.end + _NEAR), 0.8)
        for s in found
        if s.type in _PERSONAL_TYPES
    ]
    for at in view.occurrences(*_SELF_CUES):
        windows.append((at, min(size, at + _DISCLOSURE_REACH), 0.65))
    for at in view.occurrences(b"my "):
        if _FAMILY.match(view.lower, at):
            windows.append((at, min(size, at + _DISCLOSURE_REACH), 0.65))
    spans: list[SensitiveSpan] = []
    for lo, hi, confidence in _merged(windows):
        # One cheap set test per window before the vocabulary regex runs on it.
        if CONDITION_WORDS.isdisjoint(_WORDS.findall(view.lower, lo, hi)):
            continue
        for match in DIAGNOSIS.finditer(view.lower, lo, hi):
            if _standalone(view.text, match.start(), match.end()):
                spans.append(SensitiveSpan("diagnosis", "phi", match.start(), match.end(),
                                           confidence))
    return spans


def _standalone(text: str, start: int, end: int) -> bool:
    """A whole word of prose: the byte view's word boundary also falls beside a letter
    outside ASCII (Finnish "hämmästyttävästi" holds "sti"), and a C++ namespace is code
    ("std::string")."""
    if start > 0 and text[start - 1].isalnum():
        return False
    return not (end < len(text) and (text[end].isalnum() or text.startswith("::", end)))


def _merged(windows: list[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    merged: list[tuple[int, int, float]] = []
    for lo, hi, confidence in sorted(windows):
        if merged and lo <= merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(hi, last[1]), max(confidence, last[2]))
        else:
            merged.append((lo, hi, confidence))
    return merged
