from __future__ import annotations

import json
from decimal import Decimal

import pytest

from chalicelib.config import get_settings
from chalicelib.meter.catalog import base_model_id, load_catalog
from chalicelib.core import Usage
from chalicelib.meter.pricing import price_usage

CATALOG = load_catalog(get_settings().meter.price_catalog_path)


def test_sonnet_input_and_output_are_priced_apart():
    price = CATALOG.token_price("anthropic.claude-3-sonnet-20240229-v1:0")
    assert price_usage(Usage(input_tokens=1_000_000), price) == Decimal("3")
    assert price_usage(Usage(output_tokens=1_000_000), price) == Decimal("15")
    assert price_usage(Usage(input_tokens=1234, output_tokens=567), price) == Decimal("0.012207")


def test_cache_tokens_use_cache_prices_where_the_model_has_them():
    price = CATALOG.token_price("anthropic.claude-3-5-haiku-20241022-v1:0")
    assert price_usage(Usage(cache_read_tokens=1_000_000, cache_write_tokens=1_000_000), price) == Decimal("1.08")


def test_cache_tokens_fall_back_to_the_input_price():
    price = CATALOG.token_price("anthropic.claude-3-sonnet-20240229-v1:0")
    assert price_usage(Usage(cache_read_tokens=1_000_000), price) == Decimal("3")


@pytest.mark.parametrize("prefix", ["us.", "eu.", "apac.", "global."])
def test_inference_profiles_map_to_their_base_model(prefix):
    assert base_model_id(prefix + "anthropic.claude-3-sonnet-20240229-v1:0") == "anthropic.claude-3-sonnet-20240229-v1:0"
    assert CATALOG.token_price(prefix + "anthropic.claude-3-sonnet-20240229-v1:0") is not None


def test_unknown_model_is_unpriced_not_free():
    assert price_usage(Usage(input_tokens=10), CATALOG.token_price("vendor.unknown-model")) is None


def test_every_catalog_entry_names_its_source_and_date():
    assert CATALOG.version
    for model_id, price in CATALOG.bedrock_models.items():
        assert price.source and price.as_of, model_id


SONNET_45 = "anthropic.claude-sonnet-4-5-20250929-v1:0"


@pytest.mark.parametrize("prefix", ["us.", "eu.", "apac.", "jp.", "au.", "global.", "us-gov."])
def test_every_profile_prefix_resolves_to_its_base_model(prefix):
    assert base_model_id(prefix + SONNET_45) == SONNET_45
    assert CATALOG.token_price(prefix + SONNET_45) is not None


@pytest.mark.parametrize(("model_id", "expected_input"), [
    ("global." + SONNET_45, "3.00"),            # global profile: the lower price
    ("us." + SONNET_45, "3.30"),                # geographic profiles: +10%
    ("eu." + SONNET_45, "3.30"),
    ("jp." + SONNET_45, "3.30"),
    ("au." + SONNET_45, "3.30"),
    ("global.anthropic.claude-haiku-4-5-20251001-v1:0", "1.00"),
    ("apac.anthropic.claude-haiku-4-5-20251001-v1:0", "1.10"),
    ("apac.amazon.nova-lite-v1:0", "0.063"),    # the example: apac. Nova Lite 0.063/0.252
    ("us.amazon.nova-lite-v1:0", "0.06"),
    ("eu.amazon.nova-pro-v1:0", "1.05"),
])
def test_profile_scopes_have_their_own_prices(model_id, expected_input):
    assert CATALOG.token_price(model_id).input_per_mtok == Decimal(expected_input)


def test_apac_nova_lite_output_and_cache_prices():
    price = CATALOG.token_price("apac.amazon.nova-lite-v1:0")
    assert (price.output_per_mtok, price.cache_read_per_mtok) == (Decimal("0.252"), Decimal("0.01575"))


def test_in_region_calls_take_the_regions_geography_price():
    assert CATALOG.token_price("amazon.nova-lite-v1:0", region="ap-southeast-2").input_per_mtok == Decimal("0.063")
    assert CATALOG.token_price("amazon.nova-lite-v1:0", region="us-east-1").input_per_mtok == Decimal("0.06")


@pytest.mark.parametrize(("arn", "expected_input"), [
    ("arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-pro-v1:0", "0.80"),
    ("arn:aws:bedrock:eu-west-1::foundation-model/amazon.nova-pro-v1:0", "1.05"),
    ("arn:aws:bedrock:us-east-1:123456789012:inference-profile/global." + SONNET_45, "3.00"),
    ("arn:aws:bedrock:ap-southeast-2:123456789012:inference-profile/au." + SONNET_45, "3.30"),
])
def test_foundation_model_and_inference_profile_arns_resolve(arn, expected_input):
    assert CATALOG.token_price(arn).input_per_mtok == Decimal(expected_input)


def test_application_inference_profiles_resolve_through_configuration(monkeypatch):
    arn = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6"
    assert CATALOG.token_price(arn) is None  # unconfigured: unpriced, never guessed
    monkeypatch.setenv("BEDROCK_APPLICATION_PROFILES", json.dumps({arn: "global." + SONNET_45}))
    configured = load_catalog.__wrapped__(get_settings().meter.price_catalog_path)
    assert configured.token_price(arn).input_per_mtok == Decimal("3.00")
    assert configured.resolve(arn) == SONNET_45


def test_bad_application_profile_configuration_is_refused():
    with pytest.raises(ValueError, match="BEDROCK_APPLICATION_PROFILES"):
        load_catalog.__wrapped__(get_settings().meter.price_catalog_path, '["not", "a", "map"]')


def test_every_catalog_entry_names_source_and_date():
    for name, entry in [*CATALOG.bedrock_models.items(), *CATALOG.gpu_instances.items()]:
        assert entry.source.strip() and entry.as_of.strip(), name
    for name, entry in CATALOG.bedrock_models.items():
        for scope, special in entry.scopes.items():
            assert special.source and special.as_of, (name, scope)


def test_ec2_gpu_prices_sit_next_to_sagemaker_ones():
    assert CATALOG.gpu_instances["g5.12xlarge"].on_demand_per_hour == Decimal("5.672")  # not $16.00 (that is ~g5.48xlarge)
    assert CATALOG.gpu_instances["g5.48xlarge"].on_demand_per_hour == Decimal("16.288")
    for family in ("g5", "g6", "g6e"):
        for size in ("xlarge", "2xlarge", "12xlarge", "48xlarge"):
            assert f"{family}.{size}" in CATALOG.gpu_instances
    assert "g7e.2xlarge" in CATALOG.gpu_instances and "ml.g7e.2xlarge" in CATALOG.gpu_instances
    # spot is a configurable estimate: the fleet's discount unless an instance names its own spot price
    g6e = CATALOG.gpu_instances["g6e.xlarge"]
    assert g6e.spot_per_hour == g6e.on_demand_per_hour * (1 - CATALOG.fleet.spot_discount_estimate)


# Instances the GPU fit catalog may choose but this price catalog cannot price from a public source: jobs on them
# would be metered with cost null and listed as unpriced in the report (never $0). None today.
UNPRICED_GPU_INSTANCES: set[str] = set()


def test_the_deploys_gpu_types_are_priced():
    from chalicelib.jobs.fit import load_catalog as load_gpu_catalog

    gpu_catalog = load_gpu_catalog()
    for instance_type in gpu_catalog.deployment.instance_types:  # what Batch launches by default
        assert instance_type in CATALOG.gpu_instances, f"Batch launches {instance_type}: price it"
    unpriced = set(gpu_catalog.instances) - set(CATALOG.gpu_instances)
    assert unpriced == UNPRICED_GPU_INSTANCES, f"price these or list them as unpriced: {sorted(unpriced ^ UNPRICED_GPU_INSTANCES)}"


@pytest.mark.parametrize(("model_id", "region", "expected"), [
    ("meta.llama3-70b-instruct-v1:0", "eu-west-1", ("2.86", "3.78")),   # LiteLLM's bedrock/eu-west-1 entry
    ("meta.llama3-70b-instruct-v1:0", "us-east-1", ("2.65", "3.50")),
    ("qwen.qwen3-next-80b-a3b", "ap-southeast-2", ("0.1545", "1.236")),
    ("arn:aws:bedrock:eu-west-1::foundation-model/meta.llama3-8b-instruct-v1:0", None, ("0.32", "0.65")),
    ("anthropic.claude-haiku-4-5-20251001-v1:0", "us-gov-west-1", ("1.2", "6")),  # GovCloud: +20% over global.
])
def test_in_region_calls_take_the_regions_own_price(model_id, region, expected):
    price = CATALOG.token_price(model_id, region=region)
    assert (price.input_per_mtok, price.output_per_mtok) == tuple(Decimal(x) for x in expected)


@pytest.mark.parametrize(("region", "g5_xlarge"), [("us-east-1", "1.006"), ("eu-west-1", "1.123"), ("ap-southeast-2", "1.308")])
def test_gpu_prices_follow_the_deployments_region(monkeypatch, region, g5_xlarge):
    monkeypatch.setenv("AWS_REGION", region)
    catalog = load_catalog.__wrapped__(get_settings().meter.price_catalog_path, "")
    g5 = catalog.gpu_instances["g5.xlarge"]
    assert g5.on_demand_per_hour == Decimal(g5_xlarge)
    assert g5.spot_per_hour == Decimal(g5_xlarge) * (1 - catalog.fleet.spot_discount_estimate)  # the estimate follows
    # an instance with no list price in that region keeps its us-east-1 price (Batch cannot launch it there anyway)
    assert catalog.gpu_instances["g7e.2xlarge"].on_demand_per_hour == Decimal("3.36312")
