"""Credentials: provider token formats, JWTs, private keys, URL passwords and generic
key = value assignments, with the placeholder and allowlist logic that keeps examples out."""

from __future__ import annotations

import base64
import json
import random
import string

import pytest

from gateway.classify.detectors.secret_values import (
    is_placeholder,
    looks_like_words,
    shannon_entropy,
)
from gateway.classify.sensitivity import SensitivityScanner

SCANNER = SensitivityScanner()
RNG = random.Random(7)


def rand(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


ALNUM = string.ascii_letters + string.digits
B32 = string.ascii_uppercase + "234567"


def secrets_in(text: str) -> list[str]:
    return [s.type for s in SCANNER.scan(text) if s.category == "secret"]


def b64url(obj: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    ("text", "kind"),
    [(f"aws_access_key_id = AKIA{rand(B32, 16)}", "secret.aws_access_key"),
     (f"token: ghp_{rand(ALNUM, 36)}", "secret.github_token"),
     (f"export GITLAB=glpat-{rand(ALNUM, 20)}", "secret.gitlab_token"),
     (f"SLACK=xoxb-{rand(string.digits, 12)}-{rand(string.digits, 12)}-{rand(ALNUM, 24)}",
      "secret.slack_token"),
     (f"stripe.api_key = 'sk_live_{rand(ALNUM, 24)}'", "secret.stripe_key"),
     (f"OPENAI_API_KEY=sk-proj-{rand(ALNUM, 20)}T3BlbkFJ{rand(ALNUM, 20)}", "secret.openai_key"),
     (f"key sk-ant-api03-{rand(ALNUM + '-_', 93)}AA", "secret.anthropic_key"),
     (f"Bearer {b64url({'alg': 'HS256', 'typ': 'JWT'})}.{b64url({'sub': '42'})}."
      f"{rand(ALNUM, 43)}", "secret.jwt"),
     (f"maps key AIza{rand(ALNUM + '-_', 35)}", "secret.gcp_api_key"),
     (f"hook https://hooks.slack.com/services/T{rand(B32, 8)}/B{rand(B32, 8)}/{rand(ALNUM, 24)}",
      "secret.slack_webhook")],
)
def test_provider_tokens(text: str, kind: str) -> None:
    assert kind in secrets_in(text)


def test_a_token_right_after_an_equals_sign_at_the_start() -> None:
    # The candidate run opens with "=": the token after it is still tried.
    key = f"AKIA{rand(B32, 16)}"
    assert secrets_in(f"={key}") == ["secret.aws_access_key"]
    assert secrets_in(f"x={key}") == ["secret.aws_access_key"]


@pytest.mark.parametrize(
    "text",
    ["key = AKIAXXXXXXXXXXXXXXXX", "aws_access_key: AKIAIOSFODNN7EXAMPLE",
     "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "pk_live_j5krY8XTgIcDaHDb3YrsAfCl",
     "xoxb-xxxxxxxxx-xxxxxxxxxx-xxxxxxxxxxxx", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
     "sgp_5555555dAAAAA7777777CcccCFaaaaaaaaaaaaaa"],
)
def test_placeholders_and_public_keys_are_not_secrets(text: str) -> None:
    assert secrets_in(text) == []


def test_private_key_block_needs_a_real_body() -> None:
    body = "\n".join(rand(ALNUM + "+/", 64) for _ in range(4))
    assert secrets_in(f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
                      ) == ["secret.private_key"]
    assert secrets_in("-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----") == []
    assert secrets_in(f"-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----") == []


@pytest.mark.parametrize(
    "text",
    [f'api_key = "{rand(ALNUM, 32)}"', f'"client_secret": "{rand(ALNUM, 40)}"',
     f"DB_PASSWORD={rand(ALNUM, 10)}!", f"Authorization: Bearer {rand(ALNUM, 40)}",
     "curl -u deploy:S3cr3t!Pass https://api.example.net", "Authorization: Basic dXNlcjpwYXNz",
     "DATABASE_URL=postgres://app:Zx9kq2LwPp@db.internal:5432/app"],
)
def test_generic_assignments(text: str) -> None:
    assert secrets_in(text)


@pytest.mark.parametrize(
    "text",
    ['api_key = "${API_KEY}"', "password = changeme", "token: <your token here>",
     'key_id = "a8f3c9d2e1b7f6a5c4d3"', f'public_key = "{rand(ALNUM, 44)}"',
     'author = "james.fake@ymail.com"', "apiUrl=apigee.corpint.com",
     "MAX_TOKENS = 4096", 'cl_api_key = "a-fake-api-key"', "curl -u username:password",
     "https://user:password@example.com", "Authorization: Bearer $TOKEN",
     'LLM_SECRET_NAME = "NEXUS-GPT4-API-KEY"', "if token == expected_token_value:"],
)
def test_not_secrets(text: str) -> None:
    assert secrets_in(text) == []


def test_value_checks() -> None:
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy(rand(ALNUM, 40)) > 4.0
    assert is_placeholder("xxxxxxxxxx") and is_placeholder("${TOKEN}")
    assert is_placeholder("<insert key>") and is_placeholder("abcdefghij12")
    assert not is_placeholder(rand(ALNUM, 32))
    assert looks_like_words("id-Gost28147-89-None-KeyMeshing")
    assert not looks_like_words("adf4b1dbRdW3rOcB7xLthrM4BTBGK1qPLkHigpN1bXD6z")


def test_values_in_alphabet_or_digit_order_are_made_up() -> None:
    made_up = "api03-abc123xyz-456def789ghij-klmnopqrstuvwx-3456yza789bcde"
    assert is_placeholder(made_up) and is_placeholder("k9-345678-x") and is_placeholder("FEDCBA-1")
    assert not is_placeholder("klmno-x9Qz-34567-zyxwv")  # five in order is still chance
    # Random keys almost never hold six characters in order: none of 2,000 here do.
    assert not any(is_placeholder(rand(ALNUM, 100)) for _ in range(1000))
    assert not any(is_placeholder(rand("0123456789abcdef", 64)) for _ in range(1000))


def test_spans_cover_only_the_credential() -> None:
    value = rand(ALNUM, 32)
    text = f'config = {{"api_key": "{value}"}}'
    (span,) = SCANNER.scan(text)
    assert text[span.start:span.end] == value
    assert value not in repr(span)


def _realistic(seed: int) -> dict[str, str]:
    """Current vendor key formats at the lengths they are issued in."""
    rng = random.Random(seed)
    chars = string.ascii_letters + string.digits

    def run(n: int, extra: str = "_-") -> str:
        return "".join(rng.choice(chars + extra) for _ in range(n))

    digits = "".join(rng.choice(string.digits) for _ in range(13))
    return {
        "openai_key": f"sk-proj-{run(156)}",
        "anthropic_key": f"sk-ant-api03-{run(93)}AA",
        "gcp_api_key": f"AIza{run(35)}",
        "slack_token": f"xoxb-{digits}-{digits[::-1]}-{run(24, '')}",
    }


@pytest.mark.parametrize("seed", range(5))
def test_current_vendor_key_formats_are_flagged_in_prompts(seed: int) -> None:
    scanner = SensitivityScanner()
    for kind, key in _realistic(seed).items():
        text = f"Here is what I use: {key} and the call still fails."
        spans = scanner.scan_for_redaction(text)
        assert [(s.type, text[s.start:s.end]) for s in spans] == [(f"secret.{kind}", key)]
