"""Judged outcomes of requests: tenants' feedback and shadow judgements (request_outcomes)."""
