from gateway.budget.pricing import cost_micro_usd, format_usd
from gateway.types import PricePerMTok, Usage


def test_cost_is_integer_micro_usd_with_cached_tokens_discounted():
    price = PricePerMTok(input_usd=2.5, output_usd=10.0, cached_input_usd=1.25)
    # 1000 prompt (400 cached) + 100 output: 600*2.5 + 400*1.25 + 100*10 = 3000 micro-USD
    assert cost_micro_usd(Usage(1000, 100, 400), price) == 3000
    assert format_usd(3000) == "0.003000"


def test_cached_price_defaults_to_input_and_no_price_costs_nothing():
    assert cost_micro_usd(Usage(1000, 0, 500), PricePerMTok(1.0, 2.0)) == 1000
    assert cost_micro_usd(Usage(1000, 1000), None) == 0


def test_cache_writes_are_priced_at_the_cache_write_price():
    price = PricePerMTok(input_usd=3.0, output_usd=15.0, cached_input_usd=0.3,
                         cache_write_input_usd=3.75)
    # 1000 prompt = 200 fresh + 300 read + 500 written; 10 output:
    # 200*3 + 300*0.3 + 500*3.75 + 10*15 = 600 + 90 + 1875 + 150 = 2715 micro-USD
    usage = Usage(1000, 10, cached_tokens=300, cache_write_tokens=500)
    assert cost_micro_usd(usage, price) == 2715
    # Unpriced writes cost the input price; counts beyond the prompt are capped at it.
    assert cost_micro_usd(Usage(1000, 0, 0, 400), PricePerMTok(1.0, 2.0)) == 1000
    assert cost_micro_usd(Usage(100, 0, 60, 900), price) == round(60 * 0.3 + 40 * 3.75)
