from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.config import get_settings
from chalicelib.meter.catalog import base_model_id, load_catalog
from chalicelib.meter.pricing import Usage, price_usage

CATALOG = load_catalog(get_settings().price_catalog_path)


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
