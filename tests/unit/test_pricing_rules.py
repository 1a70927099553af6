"""meter/pricing on plain data: every price Crossover computes, checked by hand without the catalog file."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal as D

import pytest

from chalicelib.core import USD_QUANTUM, Usage, usd
from chalicelib.meter.catalog import GpuInstance, OpsInputs, TokenPrice
from chalicelib.meter.pricing import (
    FleetShape, Overheads, blended_hourly_price, instance_month_usd, ops_fixed_exact, ops_monthly_usd, price_gpu_seconds,
    price_usage, traffic_usd, usd_per_token, worst_case_cost,
)

PRICE = TokenPrice(input_per_mtok=D(3), output_per_mtok=D(15), cache_read_per_mtok=D("0.30"), cache_write_per_mtok=D("3.75"),
                   cache_write_1h_per_mtok=D(6), source="test", as_of="2026-01-01")
BARE = TokenPrice(input_per_mtok=D(1), output_per_mtok=D(2), source="test", as_of="2026-01-01")
GPU = GpuInstance(gpus=1, gpu="L40S", vcpus=4, on_demand_per_hour=D("1.861"), spot_per_hour=D("0.7444"),
                  savings_plan_per_hour=D("1.284"), source="test", as_of="2026-01-01")


@dataclass
class Limits:
    max_steps: int
    max_cost_usd: D
    max_tokens: int


@dataclass
class Spent:
    steps: int
    cost_usd: D


@dataclass
class Mix:
    output_share: D
    cache_read_share: D = D(0)
    cache_write_share: D = D(0)
    cache_write_1h_share: D = D(0)

    @property
    def input_share(self) -> D:
        return 1 - self.output_share - self.cache_read_share - self.cache_write_share - self.cache_write_1h_share


def test_every_kind_of_token_is_priced_at_its_own_rate():
    usage = Usage(input_tokens=100, output_tokens=500, cache_read_tokens=20_000, cache_write_tokens=3_000, cache_write_1h_tokens=1_000)
    # 100x3 + 500x15 + 20,000x0.30 + 3,000x3.75 + 1,000x6 = 300 + 7,500 + 6,000 + 11,250 + 6,000 = 31,050 $/M
    assert price_usage(usage, PRICE) == D("0.03105")


def test_cache_tokens_without_a_cache_price_cost_the_input_price_and_1h_writes_cost_5m_writes():
    assert price_usage(Usage(cache_read_tokens=10**6, cache_write_tokens=10**6, cache_write_1h_tokens=10**6), BARE) == D(3)
    no_1h = PRICE.model_copy(update={"cache_write_1h_per_mtok": None})
    assert price_usage(Usage(cache_write_1h_tokens=10**6), no_1h) == D("3.75")


def test_unpriced_is_none_never_zero():
    assert price_usage(Usage(input_tokens=5), None) is None
    assert price_gpu_seconds(D(60), None, "spot") is None


def test_money_has_one_rounding_rule_half_even_at_a_millionth_of_a_cent():
    assert USD_QUANTUM == D("0.00000001")
    assert usd(D("0.000000015")) == D("0.00000002")  # half to even: up
    assert usd(D("0.000000025")) == D("0.00000002")  # half to even: down
    assert price_usage(Usage(input_tokens=1), BARE) == D("0.00000100")
    assert price_usage(Usage(input_tokens=1), BARE.model_copy(update={"input_per_mtok": D("0.035")})) == D("0.00000004")  # not $0


def test_gpu_seconds_are_priced_per_attempt_at_spot_or_on_demand():
    assert price_gpu_seconds(D(3600), GPU, "on_demand") == D("1.861")
    assert price_gpu_seconds(D(3600), GPU, "spot") == D("0.7444")
    assert price_gpu_seconds(D(1800), GPU, None) == D("0.9305")  # capacity unknown: on-demand, never under-reported
    assert price_gpu_seconds(D(1), GPU, "on_demand") == D("0.00051694")  # 1.861 / 3600 = 0.000516944..., rounded once


def test_worst_case_bounds_every_step_left_and_the_cap_plus_one_step():
    limits = Limits(max_steps=4, max_cost_usd=D(1), max_tokens=1000)
    one_step = D("0.0003") + D("0.015")  # 100 input bytes at $3/M + 1,000 output tokens at $15/M
    assert worst_case_cost(100, limits, PRICE) == 4 * one_step
    assert worst_case_cost(100, limits, PRICE, Spent(steps=3, cost_usd=D("0.5"))) == one_step
    assert worst_case_cost(100, Limits(4, D("0.01"), 1000), PRICE) == D("0.01") + one_step  # the loop stops past the cap
    assert worst_case_cost(100, limits, None, Spent(1, D("0.25"))) == D("0.75")  # unpriced: what is left of the cap
    assert worst_case_cost(100, limits, PRICE, Spent(5, D(2))) == D(0)


def test_bedrock_dollars_per_token_follow_the_traffic_mix():
    mix = Mix(output_share=D("0.25"), cache_read_share=D("0.5"))
    assert usd_per_token(mix, PRICE) == (D("0.25") * 3 + D("0.25") * 15 + D("0.5") * D("0.30")) / 10**6
    assert traffic_usd(D(10**9), mix, PRICE) == D(4650)


def test_an_instance_hour_is_blended_across_spot_savings_plan_and_on_demand():
    fleet = FleetShape(min_instances=0, spot_share=D("0.5"), savings_plan_share=D("0.25"))
    assert blended_hourly_price(GPU, fleet) == D("0.5") * D("0.7444") + D("0.25") * D("1.284") + D("0.25") * D("1.861")
    assert instance_month_usd(GPU, fleet) == 730 * blended_hourly_price(GPU, fleet)


def test_fixed_ops_cost_a_month_in_decimal_and_exactly():
    ops = OpsInputs(engineer_usd_per_hour=D(150), setup_hours=D(40), maintenance_hours_per_month=D(10), incident_usd_per_month=D(500),
                    amortisation_months=D(12), headroom=D("0.3"), input_token_weight=D("0.1"), source="test", as_of="2026-01-01")
    monthly = ops_monthly_usd(ops)
    assert (monthly.setup_usd, monthly.maintenance_usd, monthly.incident_usd, monthly.total) == (D(500), D(1500), D(500), D(2500))
    assert ops_fixed_exact(ops) == 2500
    thirds = ops.model_copy(update={"amortisation_months": D(7)})
    assert ops_fixed_exact(thirds) * 7 == 6000 + 7 * 2000  # no Decimal rounding in the break-even's fixed cost


def test_serverless_overheads_are_per_request():
    overheads = Overheads(bedrock_usd_per_request=D("0.0001"), self_hosted_usd_per_request=D("0.0003"))
    assert overheads.bedrock_usd(D(1000)) == D("0.1")
    assert overheads.self_hosted_usd(D(1000)) == D("0.3")


@pytest.mark.parametrize("seconds", [D(0), D("0.5"), D(59), D(86_400)])
def test_gpu_price_is_linear_in_seconds_up_to_rounding(seconds):
    assert abs(price_gpu_seconds(seconds * 2, GPU, "spot") - 2 * price_gpu_seconds(seconds, GPU, "spot")) <= USD_QUANTUM


def test_a_calls_cost_matches_litellms_per_token_formula_on_its_own_price_map():
    """Independent check: LiteLLM's price map (vendored snapshot, tests/data) prices a call as the sum of each token
    kind x its per-token cost. For every bare model id it shares with our catalog at the same rates (differences are
    the catalog test's business), `price_usage` must give the same dollars, cache reads and writes included."""
    import json
    from pathlib import Path

    from chalicelib.config import get_settings
    from chalicelib.meter.catalog import load_catalog
    from chalicelib.meter.pricing import effective_rates

    catalog = load_catalog(get_settings().meter.price_catalog_path)
    snapshot = json.loads((Path(__file__).parent.parent / "data" / "litellm_bedrock_prices.json").read_text())["models"]
    fields = {"input_tokens": "input_cost_per_token", "output_tokens": "output_cost_per_token",
              "cache_read_tokens": "cache_read_input_token_cost", "cache_write_tokens": "cache_creation_input_token_cost"}
    ours_for = {"input_cost_per_token": "input", "output_cost_per_token": "output", "cache_read_input_token_cost": "cache_read",
                "cache_creation_input_token_cost": "cache_write"}
    usage = Usage(input_tokens=100, output_tokens=500, cache_read_tokens=20_000, cache_write_tokens=3_000)  # issue 16's call
    compared = 0
    for key, theirs in snapshot.items():
        price = catalog.token_price(key) if "/" not in key else None
        if price is None or not all(theirs.get(f) is not None for f in fields.values()):
            continue
        rates = effective_rates(price)
        if any(abs(D(str(theirs[f])) * 10**6 - rates[ours_for[f]]) > D("0.005") * rates[ours_for[f]] for f in fields.values()):
            continue  # a rate we price differently on purpose (tests/unit/test_catalog_vs_litellm.py says why)
        litellm_cost = sum(D(str(theirs[f])) * getattr(usage, name) for name, f in fields.items())
        assert abs(price_usage(usage, price) - litellm_cost) <= D("0.000001") + litellm_cost * D("0.000001"), key
        compared += 1
    assert compared >= 50, compared  # the check is not vacuous: it ran over a real share of the map
