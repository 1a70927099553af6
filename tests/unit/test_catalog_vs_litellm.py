"""Independent checks of the price catalog against public price maps (vendored, never imported).

- tests/data/litellm_bedrock_prices.json: every Bedrock entry of LiteLLM's price map (litellm wheel on PyPI,
  provenance and sha256 in its `_about`; refresh with tests/data/vendor_litellm_prices.py) whose base model id
  the catalog prices: bare ids, profile-prefixed ids and bedrock/<region>/<id>. Each is priced through our
  catalog's own resolution (profile scope, region) and all five rates are compared both ways: a rate LiteLLM
  has and we lack, or we have and LiteLLM lacks, is a difference too. Every difference fails unless it is in
  KNOWN_DIFFERENCES with the reason we keep our figure, so a new divergence (or a refreshed snapshot that
  moved) fails the test, and an exception that no longer differs fails as stale.
- tests/data/ec2_gpu_prices.json: EC2 on-demand prices from instances.vantage.sh data for g5/g6/g6e/g7e.
"""
from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from chalicelib.config import get_settings
from chalicelib.meter.catalog import load_catalog
from chalicelib.meter.pricing import effective_rates

CATALOG = load_catalog(get_settings().meter.price_catalog_path)
DATA = Path(__file__).parent.parent / "data"
SNAPSHOT = json.loads((DATA / "litellm_bedrock_prices.json").read_text())["models"]
EC2 = json.loads((DATA / "ec2_gpu_prices.json").read_text())["instances"]
TOLERANCE = Decimal("0.005")  # half a percent: LiteLLM stores floats per token
DEFAULT_REGION = "us-east-1"  # where a key without a region is billed
FIELDS = {  # litellm field -> our rate
    "input_cost_per_token": "input", "output_cost_per_token": "output", "cache_read_input_token_cost": "cache_read",
    "cache_creation_input_token_cost": "cache_write", "cache_creation_input_token_cost_above_1hr": "cache_write_1h",
}
_EXPLICIT = {"cache_read": "cache_read_per_mtok", "cache_write": "cache_write_per_mtok", "cache_write_1h": "cache_write_1h_per_mtok"}

_BARE_ID_AT_GLOBAL_RATE = ("LiteLLM prices the bare model id at the global. rate; Bedrock bills in-region calls like the "
                           "us./eu./apac./jp./au. profiles (+10% over global.), which LiteLLM's own prefixed entries agree with")
_NO_1H_PRICE_IN_LITELLM = ("LiteLLM has no 1-hour cache-write price for this model; ours is Anthropic's published 2x input "
                           "(without it a 1h write would be billed at the 5-minute 1.25x rate, under the bill)")
# (LiteLLM key, our rate or "*" for every rate) -> why our figure stands. Keep each reason checkable.
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {
    **{(model, "*"): _BARE_ID_AT_GLOBAL_RATE for model in (
        "anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-sonnet-4-6", "anthropic.claude-haiku-4-5-20251001-v1:0",
        "anthropic.claude-opus-4-5-20251101-v1:0", "anthropic.claude-opus-4-6-v1", "amazon.nova-2-lite-v1:0",
        "anthropic.claude-opus-4-7", "anthropic.claude-opus-4-8", "anthropic.claude-opus-5", "anthropic.claude-opus-5-5",
        "anthropic.claude-sonnet-5", "anthropic.claude-sonnet-5-5", "anthropic.claude-haiku-5-5", "anthropic.claude-fable-5",
        "anthropic.claude-fable-5-1", "anthropic.claude-mythos-5-1")},
    ("amazon.nova-2-pro-preview-20251202-v1:0", "*"): "LiteLLM's bare id carries the AWS price list's base rate (1.25/10); it has no global. "
                                                      "entry, and in-region calls go through the us./eu./apac. profiles at 1.375/11, which we bill",
    **{(key, "cache_write_1h"): _NO_1H_PRICE_IN_LITELLM for key in (
        "anthropic.claude-opus-4-20250514-v1:0", "us.anthropic.claude-opus-4-20250514-v1:0", "eu.anthropic.claude-opus-4-20250514-v1:0",
        "anthropic.claude-opus-4-1-20250805-v1:0", "us.anthropic.claude-opus-4-1-20250805-v1:0", "eu.anthropic.claude-opus-4-1-20250805-v1:0",
        "anthropic.claude-sonnet-4-20250514-v1:0", "us.anthropic.claude-sonnet-4-20250514-v1:0", "eu.anthropic.claude-sonnet-4-20250514-v1:0",
        "apac.anthropic.claude-sonnet-4-20250514-v1:0", "global.anthropic.claude-sonnet-4-20250514-v1:0")},
    ("apac.anthropic.claude-haiku-4-5-20251001-v1:0", "cache_write_1h"): _NO_1H_PRICE_IN_LITELLM + "; LiteLLM's us./eu./global. entries have it (2.20/2.00)",
    ("bedrock/us-gov-east-1/meta.llama3-8b-instruct-v1:0", "output"): "LiteLLM's $2.65/M output is Llama 3 70B's input price (a typo): "
                                                                      "us-gov-west-1 has $0.60, as every other Llama 3 8B region scales from",
    ("bedrock/us-gov-west-1/amazon.titan-embed-text-v2:0", "input"): "LiteLLM's $0.11/M is 5.5x the commercial and 3.7x its own us-gov-east-1 "
                                                                     "figure ($0.03); implausible, so GovCloud West is billed at the in-region $0.02",
}

# Ours, not in the snapshot: why that is fine.
NOT_IN_SNAPSHOT: dict[str, str] = {
    "anthropic.claude-3-sonnet-20240229-v1:0": "retired model, gone from LiteLLM's map; $3/$15 as in seed 004 and Anthropic's list price",
    "cohere.command-r-plus-v1:0": "no Bedrock entry for Command R+ in LiteLLM 1.110.2 (legacy model); no other public source reachable here",
    "cohere.command-r-v1:0": "no Bedrock entry for Command R in LiteLLM 1.110.2 (legacy model); no other public source reachable here",
    "local.smollm2-135m-instruct": "development model, not a Bedrock model",
}


def _priced(key: str):
    """Our price for a LiteLLM key: its model id (maybe profile-prefixed) in its region (bedrock/<region>/<id>)."""
    region, model_id = DEFAULT_REGION, key
    if key.startswith("bedrock/"):
        _, region, model_id = key.split("/", 2)
    return CATALOG.token_price(model_id, region=region)


def _differences() -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    for key, entry in SNAPSHOT.items():
        price = _priced(key)
        if price is None:
            found[(key, "*")] = f"{key}: in LiteLLM's map, not in our catalog"
            continue
        ours = effective_rates(price)
        for field, rate in FIELDS.items():
            theirs = entry.get(field)
            explicit = rate in ("input", "output") or getattr(price, _EXPLICIT[rate]) is not None
            if theirs is None and not explicit:
                continue
            if theirs is None:
                found[(key, rate)] = f"{key} {rate}: ours {ours[rate]}/M, LiteLLM has none"
                continue
            theirs_per_m = Decimal(str(theirs)) * 1_000_000
            scale = max(abs(theirs_per_m), abs(ours[rate]), Decimal("1e-9"))
            if not explicit or abs(theirs_per_m - ours[rate]) / scale > TOLERANCE:
                mine = f"{ours[rate]}/M" if explicit else f"none (billed {ours[rate]}/M)"
                found[(key, rate)] = f"{key} {rate}: ours {mine}, LiteLLM {theirs_per_m.normalize()}/M"
    return found


DIFFERENCES = _differences()


def _excused(key: str, rate: str) -> bool:
    return (key, rate) in KNOWN_DIFFERENCES or (key, "*") in KNOWN_DIFFERENCES


def test_catalog_agrees_with_litellm_price_map():
    unexplained = sorted(text for (key, rate), text in DIFFERENCES.items() if not _excused(key, rate))
    assert not unexplained, "prices differ from LiteLLM's map (fix the catalog or list the reason):\n  " + "\n  ".join(unexplained)


def test_every_known_difference_is_still_a_difference():
    # an exception that no longer differs (we fixed ours, or LiteLLM moved) is stale: drop it
    stale = [key for key in KNOWN_DIFFERENCES
             if key not in DIFFERENCES and not (key[1] == "*" and any(k == key[0] for k, _ in DIFFERENCES))]
    assert not stale, stale
    assert all(reason.strip() for reason in KNOWN_DIFFERENCES.values())


def test_the_comparison_sees_every_scope_we_price():
    # the snapshot must exercise regional, global. and geography prices, not just bare ids
    assert len(SNAPSHOT) > 250
    assert any(k.startswith("global.") for k in SNAPSHOT) and any(k.startswith("bedrock/eu-west-1/") for k in SNAPSHOT)
    assert any(k.startswith("jp.") for k in SNAPSHOT) and any(k.startswith("au.") for k in SNAPSHOT)


def test_every_priced_bedrock_model_is_checked_or_explained():
    checked = {CATALOG.resolve(key.split("/")[-1]) for key in SNAPSHOT}
    unchecked = sorted(set(CATALOG.bedrock_models) - checked - set(NOT_IN_SNAPSHOT))
    assert not unchecked, f"catalog entries with no independent price: {unchecked}"
    assert not checked & set(NOT_IN_SNAPSHOT), "listed as missing but present in the snapshot: drop from NOT_IN_SNAPSHOT"


def test_a_new_divergence_fails(monkeypatch):
    # the check can fail: a catalog price off by 10% shows up as an unexplained difference
    key = "amazon.nova-micro-v1:0"
    entry = dict(SNAPSHOT[key], input_cost_per_token=SNAPSHOT[key]["input_cost_per_token"] * 1.1)
    monkeypatch.setitem(SNAPSHOT, key, entry)
    assert (key, "input") in _differences() and not _excused(key, "input")


@pytest.mark.parametrize("name", sorted(EC2))
def test_ec2_gpu_prices_match_the_public_price_list(name):
    ours = CATALOG.gpu_instances.get(name)
    assert ours is not None, f"{name} is an EC2 GPU type Batch may launch: price it"
    public = EC2[name]
    assert ours.on_demand_per_hour == Decimal(str(public["on_demand_per_hour"]["us-east-1"])), name
    assert (ours.gpus, ours.vcpus) == (public["gpus"], public["vcpus"]), name
    regional = {region: Decimal(str(price)) for region, price in public["on_demand_per_hour"].items() if region != "us-east-1"}
    assert ours.regional_on_demand_per_hour == regional, name


def test_every_bedrock_entry_says_how_it_was_checked():
    unstated = [name for name, price in CATALOG.bedrock_models.items() if price.kind != "local" and not price.verified.strip()]
    assert not unstated, unstated
    # an entry no public map has must say so in its own record, not only here
    assert all(CATALOG.bedrock_models[name].verified.startswith("none")
               for name in NOT_IN_SNAPSHOT if CATALOG.bedrock_models[name].kind != "local")
