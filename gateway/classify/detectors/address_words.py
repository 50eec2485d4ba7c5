"""Street-address vocabulary (English and European street types, unit words) and the regular
expressions built from it. Compiled once at import."""

from __future__ import annotations

import re

from gateway.classify.detectors.word_trie import trie_pattern

# Street-type words that follow the street name ("Crown St", "Villacher Strasse").
STREET_TYPES = (
    "street st str avenue ave road rd drive dr lane ln boulevard blvd court ct place pl terrace "
    "ter way square sq parkway pkwy highway hwy circle cir trail trl crescent cres close row walk "
    "alley plaza gardens grove heights strasse straße gasse weg platz allee ring damm ufer "
    "laan straat plein gracht kade vej gade allé gata gatan vägen väg katu tie kuja polku tori "
    "tér utca út körút ulica aleja trg ulitsa prospekt veien vegen braut stræti"
).split()
# Street-type words that come first ("Rua do Arenque 1634", "Via Franscini 71").
STREET_PREFIXES = (
    "rua rue via viale vicolo piazza corso largo strada avenida av travessa praça calle carrer "
    "paseo camino plaza chemin quai impasse allée boulevard avenue ulica ul aleja"
).split()
# Endings of compound street names written as one word ("Koskikatu", "Mellemvej").
STREET_SUFFIXES = tuple(
    "strasse straße gasse weg platz allee vej gade gata gatan vägen väg katu tie kuja polku laan "
    "straat gracht veien vegen veg braut stræti vænget vangen torget stien bakken".split()
)
# Abbreviated types written after the name ("Király u. 15.", "Pentelis Str. 35").
STREET_ABBREVIATIONS = ("u.", "ul.", "str.", "út", "utca", "tér", "trg", "al.")

# Any of these words in the window around an anchor lets the street patterns run at all.
GATE_WORDS = frozenset(STREET_TYPES) | frozenset(STREET_PREFIXES) | frozenset(
    "u ul str box postbox postfach psc apo fpo dpo usns usnv uss apt suite unit".split()
)

UNIT = r"(?:apt\.?|apartment|suite|ste\.?|unit|flat|floor|fl\.|room|rm\.?|#)\s?\d{1,5}[a-z]?\b"
_TOKEN = r"[^\W\d_][\w'’.-]{0,30}"
_TYPES = trie_pattern(STREET_TYPES)
_PREFIXES = trie_pattern(STREET_PREFIXES)
_SUFFIXES = trie_pattern(STREET_SUFFIXES)
_ABBREVIATIONS = "|".join(re.escape(t) for t in STREET_ABBREVIATIONS)
_HOUSE = r"\d{1,6}[a-z]?(?:[-/]\d{1,5}[a-z]?)?"

# One street line with an explicit street word; the group name says which form matched.
STREET_LINE = re.compile(
    rf"(?P<typed>\b(?:\d{{1,6}}\s)?{_HOUSE},?\s(?:{_TOKEN}\s){{0,4}}?(?:{_TYPES})\b\.?"
    rf"(?:\s{_HOUSE}\b)?)"
    rf"|(?P<prefixed>\b(?:\d{{1,6}}\s)?(?:{_HOUSE}\s)?(?:{_PREFIXES})\.?\s(?:{_TOKEN}\s){{0,4}}?"
    rf"{_HOUSE}\b|\b(?:\d{{1,6}}\s)?{_HOUSE}\s(?:{_PREFIXES})\.?(?:\s{_TOKEN}){{1,4}})"
    rf"|(?P<typed_after>\b(?:{_TOKEN}\s){{1,3}}?(?:{_TYPES})\.?\s{_HOUSE}\b)"
    rf"|(?P<compound>\b(?:\d{{1,6}}\s)?(?:{_HOUSE}\s)?[^\W\d_][\w'’-]*(?:{_SUFFIXES})\s{_HOUSE}"
    rf"\b\.?)"
    rf"|(?P<abbreviated>\b(?:\d{{1,6}}\s)?(?:{_HOUSE}\s)?{_TOKEN}(?:\s{_TOKEN})?\s"
    rf"(?:{_ABBREVIATIONS})\s?{_HOUSE}\b\.?)"
    rf"|(?P<box>\b(?:p\.?\s?o\.?\s?box|post(?:al)? office box|postbox|postfach|caixa postal"
    rf"|apartado)\s?\d{{1,6}}\b)"
    rf"|(?P<military>\b(?:psc|unit|cmr)\s\d{{3,5}},?\s+box\s\d{{3,5}}(?:\s+(?:apo|fpo|dpo)\s"
    rf"(?:aa|ae|ap)\s\d{{5}})?|\b(?:(?:usns|usnv|uss|usnc)\s{_TOKEN}(?:\s{_TOKEN})?\s*\n?\s*)?"
    rf"(?:apo|fpo|dpo)\s(?:aa|ae|ap)\s\d{{5}}\b)",
    re.IGNORECASE,
)
# House number, capitalised street words, number: "28245 Puruntie 82".
SANDWICH = re.compile(r"\b(?:\d{1,6}\s)?\d{1,6}\s(?:[A-ZÀ-ÞĀ-ŽΑ-Ω][\w'’.-]{1,30}\s){1,3}\d{1,5}\b")
# Words then a number ("Joaquin Suarez 2906"): an address only after an address cue.
NAMED = re.compile(
    r"(?!(?:in|is|at|on|to|of|it|its|it's|i'll|i'm|and|the|a|an|my|me|turn|be|was|by|for|"
    r"from|with|number|page|chapter|version|step|room|level|year|age|under|over)\b)"
    r"[^\W\d_][\w'’.-]{1,30}(?:\s[^\W\d_][\w'’.-]{1,30}){0,2}\s" + _HOUSE + r"\b",
    re.IGNORECASE,
)
STRENGTH = {
    "typed": 0.8, "typed_after": 0.75, "prefixed": 0.8, "compound": 0.75, "abbreviated": 0.7,
    "box": 0.8, "military": 0.85, "sandwich": 0.55, "named": 0.35,
}
CONTINUATION_UNIT = re.compile(rf"[ \t]*,?[ \t]*(?:\n[ \t>?]*)?{UNIT}", re.IGNORECASE)
# A following line or comma part that looks like city / region / postcode / country.
CONTINUATION_PART = re.compile(
    r"[ \t]*(?:,[ \t]*|\n[ \t>?]*(?:,[ \t]*)?)"
    r"((?:[A-ZÀ-ÞĀ-ŽΑ-Ω0-9][\w'’.()-]*|de|del|da|do|dos|la|le|am|an|der|sur|upon|on)"
    r"(?:[ \t]+(?:[A-ZÀ-ÞĀ-ŽΑ-Ω0-9][\w'’.()-]*|de|del|da|do|dos|la|le|am|an|der|sur|upon|on)"
    r"){0,5})"
)
# Phrases that announce an address; a word trie, searched only in a small window.
CONTEXT_PHRASES = (
    "address", "lives at", "lives in", "lives on", "live at", "live in", "live on", "lived at",
    "lived in", "located at", "located in", "located on", "sent to", "send to", "send it to",
    "send them to", "ship to", "shipped to", "deliver to", "delivered to", "mail to", "post to",
    "return to", "returned to", "moved to", "move to", "meet me at", "meet you at", "meet at",
    "is at", "stop at", "off at", "corner of", "headquarter", "office is at", "offices are at",
    "resides at", "resides in", "residing at",
)
CONTEXT = re.compile((r"(?:" + trie_pattern(CONTEXT_PHRASES) + r")\b").encode())
CORNER = re.compile(
    r"[Tt]he corner of ((?:[^\W_][\w'’.-]*\s){1,5}?)and\s((?:[^\W_][\w'’.-]*)"
    r"(?:\s[^\W_][\w'’.-]*){0,3})"
)
