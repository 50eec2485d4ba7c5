"""AWS secret access keys: found beside an access key id or a word that says AWS or secret,
not as any 40-character run (git hashes, words, base64 without context)."""

from __future__ import annotations

import pytest

from gateway.classify.sensitivity import SensitivityScanner

SECRET = "wJ8rTq2Lm9Xv4Nk7Pz3Bc6Hd1Yf5Gs0Ue8Ai2Ko7"
SCANNER = SensitivityScanner()


def found(text: str) -> list[str]:
    return [text[s.start:s.end] for s in SCANNER.scan_for_redaction(text)
            if s.type == "secret.aws_secret_key"]


@pytest.mark.parametrize("text", [
    f"my AWS secret is {SECRET}",
    f"AKIA4Q7ZJ3WT6M2RXB5N {SECRET}",
    f"AWS_SECRET_ACCESS_KEY: {SECRET}",
    f"export AWS_SECRET_ACCESS_KEY={SECRET}",  # the shell form: '=' right before the key
    f"aws_secret_access_key={SECRET}\nregion=eu-west-1",
    f'{{"SecretAccessKey": "{SECRET}", "AccessKeyId": "ASIA4Q7ZJ3WT6M2RXB5N"}}',
    f"{SECRET} is the secret for AKIA4Q7ZJ3WT6M2RXB5N",
])
def test_found_beside_its_context(text: str) -> None:
    assert found(text) == [SECRET]


@pytest.mark.parametrize("text", [
    SECRET,  # no context: too many other things are 40 random characters
    "aws commit 3f786850e387550fdab836ed7e6dc881de23001b",  # a git hash
    "the secret is ThisIsAVeryLongIdentifierMadeOfWordsAbc1",  # words
    "aws " + "A" * 20 + "a" * 19 + "1",  # not random
    f"aws blob {SECRET}{SECRET}",  # 80 characters: part of a longer base64 run, not a key
])
def test_not_found_without_context_or_randomness(text: str) -> None:
    assert found(text) == []
