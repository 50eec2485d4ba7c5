"""Name cues in languages other than English: honorifics, self-introductions, letter
salutations, attributions and role nouns before a name, honorifics after one ("Ahmet Bey").
Written from general knowledge of each language's conventions; merged into name_words'
lists. Cues are matched against the text view, where every character outside ASCII is "?"
(view_form)."""

from __future__ import annotations

# Before a surname or full name, compared lower-case; an optional dot follows any of them.
# Left out where the word is common English or common before a capitalised noun: "me"
# (French Maître), "on" (Italian onorevole), "hasta", "día".
TITLES_WORLD = (
    # German, Dutch
    "herrn", "hr", "frl", "dipl", "dhr", "mevr", "mw", "heer", "mevrouw", "juffrouw",
    # Spanish, Portuguese
    "señor", "señora", "señorita", "doña", "dra", "lic", "ing", "senhor", "senhora", "eng",
    # French ("M." only with its dot: a lone "m" is a unit)
    "mademoiselle",
    # Italian
    "sig", "sig.ra", "sig.na", "sigg", "dott", "dott.ssa", "avv", "prof.ssa", "signorina",
    # Polish
    "pan", "pani", "panu", "pana", "panią", "panem", "mgr", "inż",
    # Turkish
    "bay", "bayan", "sayın",
)
TITLES_WITH_DOT = ("m.",)  # "M. Dupont"

# Explicit self-introductions: as strong as "my name is".
INTRODUCTIONS = (
    "me llamo ", "mi nombre es ", "je m'appelle ", "mon nom est ", "ich heiße ",
    "mein name ist ", "meu nome é ", "me chamo ", "mi chiamo ", "il mio nome è ",
    "nazywam się ", "mam na imię ", "benim adım ", "mijn naam is ", "ik heet ",
)
# Formal letter salutations ("Sehr geehrter Herr …" has its title too): medium weight, since
# a firm can be addressed the same way. Informal greetings ("hola", "ciao") are left out:
# "Hola Mundo" is not a person.
SALUTATIONS = (
    "sehr geehrte ", "sehr geehrter ", "geachte ", "estimado ", "estimada ", "prezado ",
    "prezada ", "gentile ", "cher ", "chère ", "szanowny ", "szanowna ",
)
# "According to …": firms and documents are cited too ("laut Vertrag"), so weak.
ATTRIBUTIONS = ("laut ", "según ", "selon ", "secondo ", "segundo ", "według ", "volgens ")
# A role right before a name ("Kollege Brandt", "la collega Ferri"), as strong as English's.
ROLES = (
    "kollege ", "kollegin ", "kunde ", "kundin ", "mitarbeiter ", "mitarbeiterin ",
    "colega ", "cliente ", "collègue ", "collega ", "kolega ", "klient ", "klientka ",
    "paciente ", "pacjent ", "pacjentka ", "patiënt ", "doktor ", "müşteri ",
)
# Honorifics written after the name: they end a run of capitalised words ("Aksoy Bey") and,
# matched on the text as written (AFTER), count as a cue for the name before them.
TITLES_AFTER = ("bey", "hanım", "hanim")
AFTER = (" Bey ", " Bey,", " Bey.", " Hanım ", " Hanım,", " Hanım.", " Hanim ", "-san ",
         "-san,", "-sama ", "-sensei ")


def view_form(text: str) -> bytes:
    """The bytes the text view holds for `text`: one "?" for each character outside ASCII."""
    return text.encode("ascii", "replace")
