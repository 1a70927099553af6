"""The versioned price catalog (a data file validated by pydantic; no prices live in code)."""
from __future__ import annotations

import json
from decimal import Decimal
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

# Cross-region inference profiles prefix the base model id (e.g. "us.anthropic...").
_INFERENCE_PROFILE_PREFIXES = ("us.", "eu.", "apac.", "us-gov.", "global.")


class TokenPrice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: Decimal
    output_per_mtok: Decimal
    cache_read_per_mtok: Decimal | None = None
    cache_write_per_mtok: Decimal | None = None
    source: str
    as_of: str


class Sourced(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    as_of: str


class GpuInstance(Sourced):
    gpus: int
    gpu: str
    on_demand_per_hour: Decimal
    spot_per_hour: Decimal
    savings_plan_per_hour: Decimal


class Throughput(BaseModel):
    """Measured serving speed: tokens/s, or $/M output tokens at a concurrency (as seed 003 reports it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    instance: str
    concurrency: int
    usd_per_mtok_output: Decimal | None = None
    tokens_per_second: Decimal | None = None
    notes: str = ""


class SelfHostedModel(Sourced):
    served_as: str
    instance: str


class LambdaPrice(Sourced):
    x86_usd_per_gb_second: Decimal
    arm_usd_per_gb_second: Decimal
    usd_per_million_requests: Decimal


class StepFunctionsPrice(Sourced):
    standard_usd_per_1000_transitions: Decimal


class FleetMix(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    savings_plan: Decimal
    on_demand: Decimal
    spot: Decimal


class OpsInputs(Sourced):
    engineer_usd_per_hour: Decimal
    setup_hours: Decimal
    maintenance_hours_per_month: Decimal
    incident_usd_per_month: Decimal
    amortisation_months: Decimal
    headroom: Decimal
    min_instances: int
    input_token_weight: Decimal
    fleet_mix: FleetMix


class RecommendationSettings(Sourced):
    evaluate_below_tokens: int
    switch_margin: Decimal
    max_daily_cv: Decimal
    days_to_confirm: int


class PriceCatalog(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str
    currency: str
    notes: str = ""
    bedrock_models: dict[str, TokenPrice]
    gpu_instances: dict[str, GpuInstance]
    throughput: list[Throughput]
    self_hosted_models: dict[str, SelfHostedModel]
    # `lambda` is a Python keyword: the field is read from the file's "lambda" key.
    lambda_: LambdaPrice = Field(alias="lambda")
    step_functions: StepFunctionsPrice
    ops: OpsInputs
    recommendation: RecommendationSettings

    def token_price(self, model_id: str) -> TokenPrice | None:
        """Price for a Bedrock model id or inference profile id; None when the catalog lacks it."""
        return self.bedrock_models.get(base_model_id(model_id))

    def self_hosted_price(self, served_as: str) -> TokenPrice | None:
        """Per-token price of a self-hosted model: its instance's on-demand $/h at the measured throughput
        (the marginal cost of a busy GPU; idle capacity and ops are in the break-even report)."""
        from .breakeven import cost_per_million_tokens, measured_tokens_per_second

        for name, model in self.self_hosted_models.items():
            if model.served_as != served_as:
                continue
            instance = self.gpu_instances.get(model.instance)
            measurement = self.throughput_for(name, model.instance)
            if instance is None or measurement is None:
                return None
            output = cost_per_million_tokens(instance.on_demand_per_hour, measured_tokens_per_second(measurement, instance))
            return TokenPrice(input_per_mtok=output * self.ops.input_token_weight, output_per_mtok=output,
                              source=f"derived: {model.instance} on-demand price at measured throughput", as_of=model.as_of)
        return None

    def throughput_for(self, model: str, instance: str, concurrency: int | None = None) -> Throughput | None:
        """The measurement for model x instance (at `concurrency`, else the highest measured)."""
        matches = [t for t in self.throughput if t.model == model and t.instance == instance
                   and (concurrency is None or t.concurrency == concurrency)]
        return max(matches, key=lambda t: t.concurrency, default=None)


def base_model_id(model_id: str) -> str:
    for prefix in _INFERENCE_PROFILE_PREFIXES:
        if model_id.startswith(prefix):
            return model_id[len(prefix):]
    return model_id


@lru_cache(maxsize=4)
def load_catalog(path: str) -> PriceCatalog:
    with open(path, encoding="utf-8") as handle:
        return PriceCatalog.model_validate(json.load(handle))
