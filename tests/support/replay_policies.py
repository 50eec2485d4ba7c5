"""Policies for replay tests: one fleet (a small and two big self-hosted models, a frontier
API), the rules it was recorded under, and new rules to replay it under."""

from __future__ import annotations

BACKENDS = """\
version: 1
backends:
  - name: small
    provider: vllm
    base_url: http://127.0.0.1:9001/v1
    model: m-small
    zone: self_hosted
    context_window: 8192
    quality_tier: 2
    price_per_mtok_usd: {input: 0.10, output: 0.20}
    latency: {ttft_ms: 100, tpot_ms: 10}
  - name: big-a
    provider: vllm
    base_url: http://127.0.0.1:9002/v1
    model: m-big
    zone: self_hosted
    context_window: 32768
    quality_tier: 3
    price_per_mtok_usd: {input: 0.50, output: 1.00}
    latency: {ttft_ms: 200, tpot_ms: 20}
  - name: big-b
    provider: vllm
    base_url: http://127.0.0.1:9003/v1
    model: m-big
    zone: self_hosted
    context_window: 32768
    quality_tier: 3
    price_per_mtok_usd: {input: 0.50, output: 1.00}
    latency: {ttft_ms: 200, tpot_ms: 20}
  - name: frontier
    provider: openai
    base_url: https://api.example.com/v1
    model: gpt-x
    api_key_env: FRONTIER_KEY
    zone: external
    context_window: 128000
    quality_tier: 4
    price_per_mtok_usd: {input: 2.00, output: 8.00}
    latency: {ttft_ms: 600, tpot_ms: 25}
models:
  auto: {backends: [small, frontier], strategy: priority}
  big: {backends: [big-a, big-b], strategy: round_robin}
"""
# Recorded under this one: easy requests on the small model, hard ones on the frontier,
# personal data (and the tenant's "confidential" category) at home.
OLD = BACKENDS + """\
rules:
  - name: sensitive-stays-home
    when: {sensitivity: [pii, secret, phi, confidential]}
    allow_zones: [self_hosted]
  - name: hard-to-frontier
    when: {complexity: [high]}
    backends: [frontier]
"""
# Hard requests move in-house; the frontier only takes what the small model cannot hold.
IN_HOUSE = BACKENDS + """\
rules:
  - name: sensitive-stays-home
    when: {sensitivity: [pii, secret, phi, confidential]}
    allow_zones: [self_hosted]
  - name: hard-in-house
    when: {complexity: [high]}
    backends: [big-a, big-b]
"""
# Forgets the tenant's own category: confidential data follows hard requests out.
FORGETFUL = BACKENDS + """\
rules:
  - name: sensitive-stays-home
    when: {sensitivity: [pii, secret, phi]}
    allow_zones: [self_hosted]
  - name: hard-to-frontier
    when: {complexity: [high]}
    backends: [frontier]
"""
