from gateway.budget.pricing import cost_micro_usd, format_usd
from gateway.classify.tokens import estimate_prompt_tokens
from gateway.types import Endpoint, PricePerMTok, Usage


def test_cost_is_integer_micro_usd_with_cached_tokens_discounted():
    price = PricePerMTok(input_usd=2.5, output_usd=10.0, cached_input_usd=1.25)
    # 1000 prompt (400 cached) + 100 output: 600*2.5 + 400*1.25 + 100*10 = 3000 micro-USD
    assert cost_micro_usd(Usage(1000, 100, 400), price) == 3000
    assert format_usd(3000) == "0.003000"


def test_cached_price_defaults_to_input_and_no_price_costs_nothing():
    assert cost_micro_usd(Usage(1000, 0, 500), PricePerMTok(1.0, 2.0)) == 1000
    assert cost_micro_usd(Usage(1000, 1000), None) == 0


def test_token_estimate_grows_with_text_and_counts_messages_and_tools():
    short = estimate_prompt_tokens(Endpoint.CHAT, {"messages": [{"role": "user", "content": "hi"}]})
    long = estimate_prompt_tokens(
        Endpoint.CHAT, {"messages": [{"role": "user", "content": "word " * 400}]})
    assert 1 <= short < 15
    assert 450 <= long <= 560
    tools = estimate_prompt_tokens(Endpoint.CHAT, {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "description": "x" * 400}}]})
    assert tools >= short + 100


def test_completion_and_embedding_prompts():
    assert estimate_prompt_tokens(Endpoint.COMPLETIONS, {"prompt": [1, 2, 3]}) == 3
    assert estimate_prompt_tokens(Endpoint.EMBEDDINGS, {"input": ["abcd", "abcdefgh"]}) == 3
