"""Break-even maths against hand-computed numbers and the seeds' figures."""
from __future__ import annotations

from decimal import Decimal as D

import pytest
from hypothesis import given, settings, strategies as st

from chalicelib.config import get_settings
from chalicelib.meter.breakeven import (
    SelfHostedOption, Traffic, bedrock_monthly_cost, blended_hourly_price, breakeven_tokens_per_month,
    coefficient_of_variation, cost_per_million_tokens, instances_needed, measured_tokens_per_second,
    self_hosted_monthly_cost, tokens_per_second_from_cost,
)
from chalicelib.meter.catalog import load_catalog
from chalicelib.meter.planning import Scenario, analyse

CATALOG = load_catalog(get_settings().price_catalog_path)
SONNET = CATALOG.token_price("anthropic.claude-3-sonnet-20240229-v1:0")
HAIKU = CATALOG.token_price("anthropic.claude-3-5-haiku-20241022-v1:0")
G7E = CATALOG.gpu_instances["ml.g7e.2xlarge"]
G6E = CATALOG.gpu_instances["ml.g6e.12xlarge"]


def g7e_option(tokens_per_second=None):
    measured = CATALOG.throughput_for("qwen3-32b", "ml.g7e.2xlarge", 32)
    return SelfHostedOption(G7E, tokens_per_second or measured_tokens_per_second(measured, G7E), CATALOG.ops)


@pytest.mark.parametrize(("price", "usd_per_m", "expected"), [
    ("4.20", "0.79", 1477), ("4.20", "21.32", 55), ("13.12", "2.06", 1769), ("13.12", "38.09", 96), ("4.20", "0.41", 2846),
])
def test_seed_003_cost_per_token_implies_throughput(price, usd_per_m, expected):
    assert round(tokens_per_second_from_cost(D(price), D(usd_per_m))) == expected
    assert cost_per_million_tokens(D(price), tokens_per_second_from_cost(D(price), D(usd_per_m))) == pytest.approx(D(usd_per_m))


def test_catalog_measurements_reproduce_seed_003():
    assert round(measured_tokens_per_second(CATALOG.throughput_for("qwen3-32b", "ml.g7e.2xlarge", 32), G7E)) == 1477
    assert round(measured_tokens_per_second(CATALOG.throughput_for("qwen3-32b", "ml.g6e.12xlarge", 32), G6E)) == 1769


def test_lambda_price_comes_from_the_catalog_not_the_seeds_rounding():
    # 10 GB for 5 minutes at the x86 GB-second price is ~$0.050 (seed 004 rounds it to $0.083).
    assert D(10) * 300 * CATALOG.lambda_.x86_usd_per_gb_second == pytest.approx(D("0.05"), abs=D("0.0001"))


def test_bedrock_monthly_cost_by_hand():
    # 1B tokens, 25% output: 750M x $3/M + 250M x $15/M = $2,250 + $3,750
    assert bedrock_monthly_cost(Traffic(D(10**9)), SONNET) == D(6000)


def test_blended_price_follows_the_fleet_mix():
    # 0.7 x 2.90 + 0.2 x 4.20 + 0.1 x 1.68 = 3.078 ... with the catalog's numbers:
    expected = D("0.70") * G7E.savings_plan_per_hour + D("0.20") * G7E.on_demand_per_hour + D("0.10") * G7E.spot_per_hour
    assert blended_hourly_price(G7E, CATALOG.ops.fleet_mix) == expected


def test_instances_cover_the_peak_with_headroom_and_never_drop_below_one():
    option = g7e_option(D(1000))  # 700 tokens/s usable at 30% headroom
    assert instances_needed(Traffic(D(0)), option) == 1
    # 5.256B output-equivalent tokens/month = 2000 tokens/s average, x2 peak = 4000 -> 6 instances
    traffic = Traffic(D(5_256_000_000), output_share=D(1), peak_to_average=D(2))
    assert instances_needed(traffic, option) == 6


def test_self_hosted_cost_by_hand():
    cost = self_hosted_monthly_cost(Traffic(D(10**8)), g7e_option())
    hourly = blended_hourly_price(G7E, CATALOG.ops.fleet_mix)
    assert cost.instances == 1 and cost.gpu_hours == 730
    assert cost.total == 730 * hourly + D(80) * 100 / 12 + D(20) * 100 + 500


def test_breakeven_point_is_where_the_costs_cross():
    traffic = Traffic(D(10**9))
    point = breakeven_tokens_per_month(traffic, SONNET, g7e_option())
    below, above = Traffic(point * D("0.98")), Traffic(point * D("1.02"))
    assert self_hosted_monthly_cost(below, g7e_option()).total > bedrock_monthly_cost(below, SONNET)
    assert self_hosted_monthly_cost(above, g7e_option()).total < bedrock_monthly_cost(above, SONNET)
    # and self-hosting stays cheaper well past it (extra instances included)
    for multiple in (2, 5, 20, 100):
        far = Traffic(point * multiple)
        assert self_hosted_monthly_cost(far, g7e_option()).total < bedrock_monthly_cost(far, SONNET)


def test_breakeven_is_none_when_self_hosting_never_pays():
    slow = g7e_option(D("0.5"))  # half a token per second per GPU
    assert breakeven_tokens_per_month(Traffic(D(10**9)), SONNET, slow) is None


@pytest.mark.parametrize(("tokens", "model", "expected"), [
    (50e6, "anthropic.claude-3-sonnet-20240229-v1:0", "stay_on_bedrock"),     # below 100M: Bedrock almost always wins
    (90e6, "anthropic.claude-3-sonnet-20240229-v1:0", "stay_on_bedrock"),
    (400e6, "anthropic.claude-3-sonnet-20240229-v1:0", "stay_on_bedrock"),    # 100M-1B: the maths says Bedrock here...
    (1e9, "anthropic.claude-3-sonnet-20240229-v1:0", "evaluate"),            # ...and "close, do the maths" at 1B
    (2e9, "anthropic.claude-3-sonnet-20240229-v1:0", "switch_to_self_hosted"),  # above ~1B, stable, ops team: switch
    (5e9, "anthropic.claude-3-sonnet-20240229-v1:0", "switch_to_self_hosted"),
    (1e9, "anthropic.claude-3-5-haiku-20241022-v1:0", "stay_on_bedrock"),    # Haiku-class: ops overhead eats the saving
    (5e9, "anthropic.claude-3-5-haiku-20241022-v1:0", "evaluate"),           # 2-5B "changes the conversation"
])
def test_seed_004_guidance_on_written_scenarios(tokens, model, expected):
    assert analyse(Scenario(D(str(int(tokens))), bedrock_model=model), CATALOG)["recommendation"] == expected


def test_no_switch_without_ops_readiness_or_with_unstable_traffic():
    assert analyse(Scenario(D(5 * 10**9), ops_ready=False), CATALOG)["recommendation"] == "evaluate"
    unstable = analyse(Scenario(D(5 * 10**9), daily_cv=D("0.9")), CATALOG)
    assert unstable["recommendation"] == "evaluate" and any("unstable" in r for r in unstable["reasons"])


def test_recommendation_explains_itself_with_numbers():
    result = analyse(Scenario(D(2 * 10**9)), CATALOG)
    assert result["reasons"] and result["numbers"]["breakeven_tokens_per_month"] == result["breakeven_tokens_per_month"]
    assert {"bedrock_monthly_usd", "self_hosted_monthly_usd", "breakeven_tokens_per_month", "recommendation", "reasons"} <= set(result)


def test_coefficient_of_variation():
    assert coefficient_of_variation([D(100)] * 7) == 0
    assert coefficient_of_variation([D(50), D(150)]) == pytest.approx(D("0.7071"), abs=D("0.001"))


money = st.decimals(min_value=D("0.01"), max_value=D(100), places=2)
volume = st.integers(min_value=0, max_value=10**11)


@settings(max_examples=150, deadline=None)
@given(volume, volume, money, money)
def test_costs_are_monotonic_in_tokens_and_prices(tokens_a, tokens_b, price_a, price_b):
    low_t, high_t = sorted((D(tokens_a), D(tokens_b)))
    low_p, high_p = sorted((price_a, price_b))
    cheap = SONNET.model_copy(update={"input_per_mtok": low_p, "output_per_mtok": low_p})
    dear = SONNET.model_copy(update={"input_per_mtok": high_p, "output_per_mtok": high_p})
    assert bedrock_monthly_cost(Traffic(low_t), cheap) <= bedrock_monthly_cost(Traffic(high_t), cheap)
    assert bedrock_monthly_cost(Traffic(high_t), cheap) <= bedrock_monthly_cost(Traffic(high_t), dear)
    assert self_hosted_monthly_cost(Traffic(low_t), g7e_option()).total <= self_hosted_monthly_cost(Traffic(high_t), g7e_option()).total
