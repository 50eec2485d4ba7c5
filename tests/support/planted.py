"""Realistic personal data and secrets, one for every kind of finding the built-in detectors
make, each in the short phrase that gives it its context. No reserved domains, published
test cards or documented example keys: each one is a value a detector must treat as real."""

from __future__ import annotations

# kind → (phrase a client might send, the value inside it that must never be stored)
PLANTED: dict[str, tuple[str, str]] = {
    "email": ("write to marta.kowalczyk84@gmail.com", "marta.kowalczyk84@gmail.com"),
    "phone": ("call her on +1 415-867-2394", "+1 415-867-2394"),
    "payment_card": ("card 4539 1488 0343 6467", "4539 1488 0343 6467"),
    "iban": ("IBAN DE89 3704 0044 0532 0130 00", "DE89 3704 0044 0532 0130 00"),
    "us_ssn": ("SSN 536-22-8741", "536-22-8741"),
    "ip_address": ("server 2a03:2880:f12f:83:face:b00c:0:25de",
                   "2a03:2880:f12f:83:face:b00c:0:25de"),
    "date_of_birth": ("date of birth: 14/03/1986", "14/03/1986"),
    "person": ("patient name: Marta Kowalczyk", "Marta Kowalczyk"),
    "diagnosis": ("the patient was diagnosed with multiple sclerosis", "multiple sclerosis"),
    "street_address": ("lives at 742 Evergreen Terrace, Springfield, IL 62704",
                       "742 Evergreen Terrace"),
    "aws_access_key": ("aws key AKIA4Q7ZJ3WT6M2RXB5N", "AKIA4Q7ZJ3WT6M2RXB5N"),
    "aws_secret_key": ("aws secret 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",
                       "wJ8rTq2Lm9Xv4Nk7Pz3Bc6Hd1Yf5Gs0Ue8Ai2Ko7"),
    "github_token": ("CI token ghp_7bN3kQ9xVt2Lm8Rw4Yc6Hp1Zs5Dj0Ga3Fe7K",
                     "ghp_7bN3kQ9xVt2Lm8Rw4Yc6Hp1Zs5Dj0Ga3Fe7K"),
    "jwt": ("session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI4NDcyOTEiLCJpYXQiOjE3MTYyMzk"
            "wMjJ9.kX9vQ2mT7rL4pN8wZ3yB6cH1dF5gJ0sA2eU7iO4tR9k",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI4NDcyOTEiLCJpYXQiOjE3MTYyMzkwMjJ9"
            ".kX9vQ2mT7rL4pN8wZ3yB6cH1dF5gJ0sA2eU7iO4tR9k"),
    "generic_secret": ("db_password=Xq7#vR2!mK9pL4wZ", "Xq7#vR2!mK9pL4wZ"),
    "url_credentials": ("postgres://app:Hn4xQ8wLz2Vr@db.acme-corp.net/prod", "Hn4xQ8wLz2Vr"),
    "stripe_key": ("stripe sk_live_51HqT8kLm3Nv7Xc2Bz9Rw4Yd6", "sk_live_51HqT8kLm3Nv7Xc2Bz9Rw4Yd6"),
}
