"""Independent check: our Bedrock prices against the price map LiteLLM ships (vendored, never imported).

tests/data/litellm_bedrock_prices.json is a subset of `model_prices_and_context_window_backup.json` from
the litellm 1.110.2 wheel on PyPI (provenance and sha256 in its `_about`). Every model id in it, with
its profile prefix, is priced through our catalog's resolution; a difference beyond 1% fails unless it
is listed below with the reason we keep our figure.
"""
from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from chalicelib.config import get_settings
from chalicelib.meter.catalog import load_catalog
from chalicelib.meter.pricing import effective_rates

CATALOG = load_catalog(get_settings().price_catalog_path)
SNAPSHOT = json.loads((Path(__file__).parent.parent / "data" / "litellm_bedrock_prices.json").read_text())["models"]
TOLERANCE = Decimal("0.01")
FIELDS = {  # litellm field -> our rate
    "input_cost_per_token": "input", "output_cost_per_token": "output", "cache_read_input_token_cost": "cache_read",
    "cache_creation_input_token_cost": "cache_write", "cache_creation_input_token_cost_above_1hr": "cache_write_1h",
}

_BARE_ID_AT_GLOBAL_RATE = ("LiteLLM prices the bare model id at the global. rate; Bedrock serves this model through profiles and bills "
                           "in-region and us./eu./apac./jp./au. calls +10%, which LiteLLM's own prefixed entries agree with")

# (model id as LiteLLM keys it, our rate or "*" for every rate) -> why our figure stands. Keep each reason checkable.
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {
    **{(model, "*"): _BARE_ID_AT_GLOBAL_RATE for model in (
        "anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-sonnet-4-6", "anthropic.claude-haiku-4-5-20251001-v1:0",
        "anthropic.claude-opus-4-5-20251101-v1:0", "anthropic.claude-opus-4-6-v1", "amazon.nova-2-lite-v1:0")},
    ("qwen.qwen3-coder-480b-a35b-v1:0", "input"): "author's recollection of the AWS page ($0.22/M) against litellm's $0.45/M; "
                                                 "neither verifiable here, entry marked unverified",
}

# Ours, not in the snapshot: why that is fine.
NOT_IN_SNAPSHOT: dict[str, str] = {
    "anthropic.claude-3-sonnet-20240229-v1:0": "retired model, gone from LiteLLM's map; $3/$15 as in seed 004 and Anthropic's list price",
    "anthropic.claude-3-haiku-20240307-v1:0": "LiteLLM 1.110.2 keeps only its GovCloud region entries (bedrock/us-gov-*/..., $0.30/$1.50)",
    "cohere.command-r-plus-v1:0": "no Bedrock entry for Command R+ in LiteLLM 1.110.2 (legacy model)",
    "cohere.command-r-v1:0": "no Bedrock entry for Command R in LiteLLM 1.110.2 (legacy model)",
    "local.smollm2-135m-instruct": "development model, not a Bedrock model",
}


def _differences() -> list[str]:
    found = []
    for key, entry in SNAPSHOT.items():
        price = CATALOG.token_price(key)
        if price is None:
            found.append(f"{key}: in LiteLLM's map, not in our catalog")
            continue
        ours = effective_rates(price)
        for field, rate in FIELDS.items():
            theirs = entry.get(field)
            if theirs is None or (rate != "input" and rate != "output" and getattr(price, f"{rate}_per_mtok", None) is None):
                continue  # LiteLLM or we have no separate price for it: nothing to compare
            theirs_per_m = Decimal(str(theirs)) * 1_000_000
            mine = ours[rate]
            scale = max(abs(theirs_per_m), abs(mine), Decimal("1e-9"))
            if abs(theirs_per_m - mine) / scale > TOLERANCE and (key, rate) not in KNOWN_DIFFERENCES and (key, "*") not in KNOWN_DIFFERENCES:
                found.append(f"{key} {rate}: ours {mine}/M, LiteLLM {theirs_per_m.normalize()}/M")
    return found


def test_catalog_agrees_with_litellm_price_map():
    differences = _differences()
    assert not differences, "prices differ from LiteLLM's map (fix the catalog or list the reason):\n  " + "\n  ".join(differences)


def test_every_priced_bedrock_model_is_checked_or_explained():
    checked = {CATALOG.resolve(key) for key in SNAPSHOT}
    unchecked = sorted(set(CATALOG.bedrock_models) - checked - set(NOT_IN_SNAPSHOT))
    assert not unchecked, f"catalog entries with no independent price: {unchecked}"
    assert not checked & set(NOT_IN_SNAPSHOT), "listed as missing but present in the snapshot: drop from NOT_IN_SNAPSHOT"


def test_known_differences_are_still_differences():
    # a listed difference that no longer differs is stale: drop it
    for (key, rate) in KNOWN_DIFFERENCES:
        if rate == "*":
            assert effective_rates(CATALOG.token_price(key))["input"] != Decimal(str(SNAPSHOT[key]["input_cost_per_token"])) * 1_000_000, key
            continue
        theirs = Decimal(str(SNAPSHOT[key][next(f for f, r in FIELDS.items() if r == rate)])) * 1_000_000
        assert effective_rates(CATALOG.token_price(key))[rate] != theirs, (key, rate)
