"""The versioned price catalog (a data file validated by pydantic; no prices live in code)."""
from __future__ import annotations

import json
import os
from decimal import Decimal
from functools import lru_cache

from typing import Any, Literal, Mapping

from pydantic import ConfigDict, Field, model_validator

from ..basemodel import BaseModel  # pydantic's, built on first use (chalicelib/basemodel.py)

# System-defined inference profiles prefix the base model id with their scope (e.g. "us.anthropic...").
INFERENCE_PROFILE_SCOPES = ("us", "eu", "apac", "jp", "au", "ca", "us-gov", "global")
# Which geography a region's in-region calls belong to (for geography-priced models).
_REGION_GEOGRAPHY = {"us": "us", "eu": "eu", "ap": "apac", "ca": "ca", "sa": "us", "me": "eu", "il": "eu", "af": "eu"}


class ScopePrice(BaseModel):
    """A model's price where it differs by inference scope (a `global.` profile, a geography, a region)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: Decimal
    output_per_mtok: Decimal
    cache_read_per_mtok: Decimal | None = None
    cache_write_per_mtok: Decimal | None = None
    cache_write_1h_per_mtok: Decimal | None = None
    source: str
    as_of: str


class TokenPrice(ScopePrice):
    """A Bedrock model's on-demand price: in-region and geographic profiles (us./eu./apac./jp./au.) unless
    `scopes` says otherwise for that scope ("global", "apac", a region name such as "ap-southeast-2")."""

    kind: Literal["text", "embedding", "local"] = "text"
    regions: list[str] = []  # where the catalog has checked on-demand availability (empty: not recorded)
    verified: str = ""  # the independent check that agrees, or why none could be made
    scopes: dict[str, ScopePrice] = {}

    def for_scope(self, *scopes: str) -> "TokenPrice":
        """This price as billed in the first of `scopes` the model prices separately (else in-region)."""
        for scope in scopes:
            special = self.scopes.get(scope)
            if special is not None:
                return self.model_copy(update={**special.model_dump(), "scopes": {}})
        return self


class Sourced(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    as_of: str


class GpuInstance(Sourced):
    gpus: int
    gpu: str
    vcpus: int = 0  # sizes Batch's MinvCpus in whole instances
    on_demand_per_hour: Decimal  # us-east-1 list price, or the catalog's region's when listed below
    spot_per_hour: Decimal
    savings_plan_per_hour: Decimal
    # Other regions' on-demand list prices (EC2 prices differ by region: g5.xlarge is +12% in eu-west-1).
    regional_on_demand_per_hour: dict[str, Decimal] = {}


class Throughput(BaseModel):
    """Measured serving speed at a concurrency: tokens/s, or $/M tokens at the measured instance's price.

    `counts` says which tokens the figure counts. Seed 003 reports $/M "output tokens", but its own
    latencies (1,000 in + 560 out per request, 33.2 s at C=32 on G7e) only reproduce $0.79/M when the
    denominator is every token: 32 x 1,560 / 33.2 s = 1,504 tokens/s, of which 540 are output. So its
    figures are read as total tokens at that request shape.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    instance: str
    concurrency: int
    usd_per_mtok: Decimal | None = None
    tokens_per_second: Decimal | None = None
    counts: Literal["total", "output"] = "total"
    input_tokens_per_request: int = 0
    output_tokens_per_request: int = 0
    notes: str = ""

    @model_validator(mode="after")
    def _shape_known(self) -> "Throughput":
        if self.counts == "total" and self.input_tokens_per_request + self.output_tokens_per_request <= 0:
            raise ValueError(f"{self.model} on {self.instance}: a total-token figure needs the request shape (input/output tokens per request)")
        return self


class SelfHostedModel(Sourced):
    served_as: str
    instance: str


class LambdaPrice(Sourced):
    x86_usd_per_gb_second: Decimal
    arm_usd_per_gb_second: Decimal
    usd_per_million_requests: Decimal


class StepFunctionsPrice(Sourced):
    standard_usd_per_1000_transitions: Decimal


class FleetDefaults(Sourced):
    """The deploy's GPU fleet (Batch): warm vCPUs (MinvCpus) and the share of instance-hours on spot.

    Overridden per deployment by GPU_MIN_VCPUS / GPU_SPOT_SHARE / GPU_SAVINGS_PLAN_SHARE.
    """

    min_vcpus: int
    spot_share: Decimal
    savings_plan_share: Decimal = Decimal(0)
    spot_discount_estimate: Decimal = Decimal("0.6")  # fills an instance's spot price when it has none
    savings_plan_discount_estimate: Decimal = Decimal("0.31")


class OpsInputs(Sourced):
    engineer_usd_per_hour: Decimal
    setup_hours: Decimal
    maintenance_hours_per_month: Decimal
    incident_usd_per_month: Decimal
    amortisation_months: Decimal
    headroom: Decimal
    input_token_weight: Decimal
    cache_read_token_weight: Decimal = Decimal("0.01")  # a prefix-cache hit skips the prefill


class PathOverhead(BaseModel):
    """What one request costs around the model: Lambda invocations and GB-seconds, Step Functions transitions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lambda_invocations: Decimal
    lambda_gb_seconds: Decimal
    state_transitions: Decimal = Decimal(0)


class Overheads(Sourced):
    bedrock: PathOverhead
    self_hosted: PathOverhead


class ModelPair(BaseModel):
    """A Bedrock model and the open-weights model of equivalent quality it is compared with (seed 004)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bedrock: list[str]  # base model ids (profiles and ARNs resolve to these)
    self_hosted: str  # a key of self_hosted_models
    alternatives: list[str] = []
    equivalent: bool  # False: the nearest measured model stands in, and the report says so
    reason: str
    source: str


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
    fleet: FleetDefaults
    overheads: Overheads
    pairs: list[ModelPair] = []
    recommendation: RecommendationSettings
    # Application inference profiles (ARN or id) -> the model or system profile they copy; deployments
    # add theirs with BEDROCK_APPLICATION_PROFILES (JSON object).
    application_profiles: dict[str, str] = {}
    # The deployment's region (AWS_REGION at load): prices in-region calls where a model's price differs by region.
    region: str = ""

    @model_validator(mode="before")
    @classmethod
    def _estimate_missing_discounted_prices(cls, data: Any) -> Any:
        """The deployment region's on-demand GPU prices where listed; spot and savings-plan prices default to
        the fleet's configurable discount estimates of that on-demand price."""
        if not isinstance(data, dict) or not isinstance(data.get("fleet"), dict):
            return data
        spot = Decimal(str(data["fleet"].get("spot_discount_estimate", "0.6")))
        plan = Decimal(str(data["fleet"].get("savings_plan_discount_estimate", "0.31")))
        instances = {}
        for name, raw in (data.get("gpu_instances") or {}).items():
            if isinstance(raw, dict) and "on_demand_per_hour" in raw:
                regional = (raw.get("regional_on_demand_per_hour") or {}).get(data.get("region") or "")
                raw = raw if regional is None else {**raw, "on_demand_per_hour": str(regional)}
                on_demand = Decimal(str(raw["on_demand_per_hour"]))
                raw = {"spot_per_hour": str(on_demand * (1 - spot)), "savings_plan_per_hour": str(on_demand * (1 - plan)), **raw}
            instances[name] = raw
        return {**data, "gpu_instances": instances}

    def resolve(self, model_id: str) -> str:
        """The base model id behind a model id, a system inference profile id, a foundation-model or
        inference-profile ARN, or an application inference profile (configured in `application_profiles`)."""
        return resolve_model(model_id, self.application_profiles)[0]

    def token_price(self, model_id: str, region: str | None = None) -> TokenPrice | None:
        """Price for a Bedrock model id, profile id or ARN as billed in its scope; None when the catalog lacks it.

        `global.` profiles and per-geography or per-region prices come from the entry's `scopes`."""
        base, scope, arn_region = resolve_model(model_id, self.application_profiles)
        price = self.bedrock_models.get(base)
        if price is None:
            return None
        region = region or arn_region or self.region
        scopes = [s for s in (scope, region, _REGION_GEOGRAPHY.get((region or "").split("-")[0])) if s]
        return price.for_scope(*scopes)

    def pair_for(self, model_id: str) -> ModelPair | None:
        """The equivalent-quality open-weights pair of a Bedrock model (profile ids and ARNs resolve)."""
        base = self.resolve(model_id)
        return next((pair for pair in self.pairs if base in pair.bedrock), None)

    def throughput_for(self, model: str, instance: str, concurrency: int | None = None) -> Throughput | None:
        """The measurement for model x hardware (at `concurrency`, else the highest measured).

        A SageMaker measurement (ml.g7e.2xlarge) holds for the same EC2 hardware (g7e.2xlarge)."""
        matches = [t for t in self.throughput if t.model == model and hardware(t.instance) == hardware(instance)
                   and (concurrency is None or t.concurrency == concurrency)]
        return max(matches, key=lambda t: (t.concurrency, t.instance == instance), default=None)


def hardware(instance: str) -> str:
    """The EC2 hardware behind an instance name: SageMaker's "ml.g7e.2xlarge" runs on "g7e.2xlarge"."""
    return instance[3:] if instance.startswith("ml.") else instance


def base_model_id(model_id: str) -> str:
    """Strip a system inference profile's scope prefix ("us.", "global.", ...); other ids unchanged."""
    head, dot, rest = model_id.partition(".")
    return rest if dot and head in INFERENCE_PROFILE_SCOPES and rest else model_id


def resolve_model(model_id: str, application_profiles: Mapping[str, str] | None = None) -> tuple[str, str | None, str | None]:
    """(base model id, profile scope or None, region from an ARN or None).

    arn:aws:bedrock:<region>::foundation-model/<model>, arn:aws:bedrock:<region>:<account>:inference-profile/<scope>.<model>,
    and application inference profiles (arn ...:application-inference-profile/<id>, or the bare id) through
    `application_profiles`, which maps them to the model (or system profile) they were created from.
    """
    profiles = application_profiles or {}
    region = None
    if model_id in profiles:
        target = profiles[model_id]
        base, scope, target_region = resolve_model(target) if target != model_id else (target, None, None)
        arn_region = model_id.split(":")[3] if model_id.startswith("arn:") and model_id.count(":") >= 5 else None
        return base, scope, arn_region or target_region
    if model_id.startswith("arn:"):
        parts = model_id.split(":", 5)
        if len(parts) == 6:
            region = parts[3] or None
            kind, _, name = parts[5].partition("/")
            if kind == "application-inference-profile":
                return model_id, None, region  # not configured: unpriced, never guessed
            model_id = name or model_id
    base = base_model_id(model_id)
    scope = model_id.split(".", 1)[0] if base != model_id else None
    return base, scope, region


@lru_cache(maxsize=4)
def load_catalog(path: str, application_profiles_json: str | None = None) -> PriceCatalog:
    """The catalog file, plus application inference profiles from BEDROCK_APPLICATION_PROFILES (JSON object)."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    raw = os.environ.get("BEDROCK_APPLICATION_PROFILES", "") if application_profiles_json is None else application_profiles_json
    if raw.strip():
        extra = json.loads(raw)
        if not isinstance(extra, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in extra.items()):
            raise ValueError("BEDROCK_APPLICATION_PROFILES must be a JSON object of profile ARN or id -> model id")
        data["application_profiles"] = {**data.get("application_profiles", {}), **extra}
    data.setdefault("region", os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "")
    return PriceCatalog.model_validate(data)
