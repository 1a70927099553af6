"""What-if planning: the break-even analysis for a traffic profile, from catalog defaults (pure).

The self-hosted side is the fleet the deploy actually runs (Batch: warm vCPUs, spot share), not a
fleet from a blog post; the Bedrock side prices the traffic's real mix, cache tokens included.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Mapping

from typing_extensions import TypedDict

from ..defaults import DEFAULT_BEDROCK_MODEL, DEFAULT_BREAKEVEN_INSTANCE, DEFAULT_SELF_HOSTED_MODEL
from .breakeven import (
    FleetShape,
    Ranges,
    SelfHostedOption,
    Traffic,
    bedrock_monthly_cost,
    find_breakeven,
    peak_factor_from_cv,
    self_hosted_monthly_cost,
)
from .catalog import GpuInstance, OpsInputs, PriceCatalog
from .pricing import cost_per_million_tokens, output_equivalent_per_second, overheads_from_catalog
from .recommendation import Assessment, assess

@dataclass(frozen=True)
class FleetConfig:
    """Deploy-time overrides of the catalog's fleet (env GPU_MIN_VCPUS, GPU_SPOT_SHARE, GPU_SAVINGS_PLAN_SHARE) and
    the instance types Batch launches (env GPU_INSTANCE_TYPES, comma-separated; the deploy sets both)."""

    min_vcpus: int | None = None
    spot_share: Decimal | None = None
    savings_plan_share: Decimal | None = None
    instance_types: tuple[str, ...] = ()
    spot_share_basis: str = "configured estimate"  # or "measured over N attempts[ (K of unknown capacity left out)]" (`with_measured_spot`)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "FleetConfig":
        env = os.environ if environ is None else environ

        def read(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        vcpus, spot, plan = read("GPU_MIN_VCPUS"), read("GPU_SPOT_SHARE"), read("GPU_SAVINGS_PLAN_SHARE")
        types = tuple(t.strip() for t in (read("GPU_INSTANCE_TYPES") or "").split(",") if t.strip())
        return cls(int(vcpus) if vcpus else None, Decimal(spot) if spot else None, Decimal(plan) if plan else None, types)


def measured_spot_share(attempts: int, known_seconds: Decimal, spot_seconds: Decimal) -> Decimal | None:
    """The queue's real spot share: spot instance-seconds / the GPU instance-seconds of known capacity (spot or
    on-demand) of the metered attempts; None without attempts or such time (nothing measured: the estimate stands).
    Attempts of unknown capacity are priced on-demand, but counting their time as on-demand here would bias the
    share low (and self-hosting dear), so they are left out."""
    if attempts <= 0 or known_seconds <= 0:
        return None
    return min(Decimal(1), max(Decimal(0), spot_seconds / known_seconds))


def with_measured_spot(config: FleetConfig, catalog: PriceCatalog, attempts: int, known_seconds: Decimal,
                       spot_seconds: Decimal, unknown_attempts: int = 0) -> FleetConfig:
    """`config` with the measured spot share in place of the estimate when attempts of known capacity were metered
    (`attempts` counts them all, `unknown_attempts` those left out); a configured savings-plan share is capped to
    the non-spot rest (measured spot time cannot have run on a plan)."""
    share = measured_spot_share(attempts - unknown_attempts, known_seconds, spot_seconds)
    if share is None:
        return config
    plan = catalog.fleet.savings_plan_share if config.savings_plan_share is None else config.savings_plan_share
    left_out = f" ({unknown_attempts} of unknown capacity left out)" if unknown_attempts else ""
    return replace(config, spot_share=share, savings_plan_share=min(plan, 1 - share),
                   spot_share_basis=f"measured over {attempts} attempt{'s' if attempts != 1 else ''}{left_out}")


def fleet_shape(catalog: PriceCatalog, instance: GpuInstance, config: FleetConfig | None = None) -> FleetShape:
    """The deploy's fleet on `instance`: Batch's warm vCPUs in whole instances, and its spot share."""
    config = config or FleetConfig()
    defaults = catalog.fleet
    min_vcpus = defaults.min_vcpus if config.min_vcpus is None else config.min_vcpus
    spot = defaults.spot_share if config.spot_share is None else config.spot_share
    plan = defaults.savings_plan_share if config.savings_plan_share is None else config.savings_plan_share
    if not (0 <= spot <= 1 and 0 <= plan <= 1 - spot):
        raise ValueError(f"fleet shares out of range: spot {spot}, savings plan {plan}")
    warm = math.ceil(min_vcpus / instance.vcpus) if min_vcpus > 0 and instance.vcpus > 0 else 0
    return FleetShape(min_instances=warm, spot_share=spot, savings_plan_share=plan)


@dataclass(frozen=True)
class Scenario:
    tokens_per_month: Decimal  # every billed token: input, output, cache reads and writes
    output_share: Decimal = Decimal("0.25")
    bedrock_model: str = DEFAULT_BEDROCK_MODEL
    self_hosted_model: str | None = None  # None: the catalog's equivalent-quality pair for the Bedrock model
    instance: str | None = None  # None: the pair's instance
    concurrency: int | None = None
    tokens_per_second: Decimal | None = None  # output-equivalent tokens/s; overrides the catalog's measurement
    daily_cv: Decimal = Decimal("0.2")
    ops_ready: bool = True
    ops_overrides: dict[str, Any] | None = None
    cache_read_share: Decimal = Decimal(0)
    cache_write_share: Decimal = Decimal(0)
    cache_write_1h_share: Decimal = Decimal(0)
    tokens_per_request: Decimal = Decimal(1560)
    fleet: FleetConfig | None = None
    gpu_price_factor: Decimal = Decimal(1)  # sensitivity: every GPU hour costs this many times the catalog's


def _pair(scenario: Scenario, catalog: PriceCatalog) -> tuple[str, str, str, bool | None]:
    """(self-hosted model, instance, why) for the scenario: explicit choices win, else the catalog's pair, on the
    first instance type the deploy launches where that model's throughput is measured (else where it is measured)."""
    pair = catalog.pair_for(scenario.bedrock_model)
    model = scenario.self_hosted_model or (pair.self_hosted if pair else DEFAULT_SELF_HOSTED_MODEL)
    hosted = catalog.self_hosted_models.get(model)
    deployed = [t for t in (scenario.fleet.instance_types if scenario.fleet else ())
                if t in catalog.gpu_instances and catalog.throughput_for(model, t) is not None]
    instance = scenario.instance or (deployed[0] if deployed else hosted.instance if hosted else DEFAULT_BREAKEVEN_INSTANCE)
    if scenario.self_hosted_model:
        return model, instance, "chosen by the caller", None
    if pair:
        return model, instance, pair.reason, pair.equivalent
    return model, instance, f"no equivalent-quality pair in catalog {catalog.version}: default {DEFAULT_SELF_HOSTED_MODEL}", False


def traffic_of(scenario: Scenario) -> Traffic:
    return Traffic(scenario.tokens_per_month, scenario.output_share, peak_factor_from_cv(scenario.daily_cv),
                   scenario.cache_read_share, scenario.cache_write_share, scenario.cache_write_1h_share, scenario.tokens_per_request)


def option_for(scenario: Scenario, catalog: PriceCatalog) -> tuple[SelfHostedOption, str, str, str, bool | None]:
    model, instance_name, why, equivalent = _pair(scenario, catalog)
    instance = catalog.gpu_instances.get(instance_name)
    if instance is None:
        raise ValueError(f"no GPU instance {instance_name!r} in catalog {catalog.version}")
    ops = OpsInputs(**{**catalog.ops.model_dump(), **(scenario.ops_overrides or {})})
    if scenario.tokens_per_second is not None:
        capacity = scenario.tokens_per_second
    else:
        measurement = catalog.throughput_for(model, instance_name, scenario.concurrency)
        if measurement is None or measurement.instance not in catalog.gpu_instances:
            raise ValueError(f"no throughput measured for {model} on {instance_name}; pass tokens_per_second")
        capacity = output_equivalent_per_second(measurement, catalog.gpu_instances[measurement.instance], ops.input_token_weight)
    factor = scenario.gpu_price_factor
    if factor != 1:
        instance = instance.model_copy(update={name: getattr(instance, name) * factor
                                               for name in ("on_demand_per_hour", "spot_per_hour", "savings_plan_per_hour")})
    return SelfHostedOption(instance, capacity, ops, fleet_shape(catalog, instance, scenario.fleet)), model, instance_name, why, equivalent


class ComparedPair(TypedDict):
    bedrock: str
    self_hosted: str
    equivalent_quality: bool | None  # False: a weaker stand-in; None: chosen by the caller
    why: str


class SelfHostedSide(TypedDict):
    model: str
    instance: str
    tokens_per_second: str
    deployed_instance_types: list[str]  # what Batch launches (GPU_INSTANCE_TYPES); empty: not known here
    usd_per_mtok_at_full_use: str
    instances: int
    gpu_hours: str
    min_instances: int
    spot_share: str
    spot_share_basis: str  # "configured estimate" | "measured over N attempts[ (K of unknown capacity left out)]"
    blended_usd_per_hour: str
    gpu_usd: str
    setup_usd: str
    maintenance_usd: str
    incident_usd: str
    overhead_usd: str


class Analysis(TypedDict):
    """One scenario's break-even numbers, JSON-ready (money and volumes as decimal strings)."""

    catalog_version: str
    tokens_per_month: str
    bedrock_model: str
    pair: ComparedPair
    self_hosted: SelfHostedSide
    bedrock_overhead_usd: str
    bedrock_monthly_usd: str
    self_hosted_monthly_usd: str
    breakeven_tokens_per_month: str | None
    breakeven_ranges: Ranges
    self_hosted_cheaper_now: bool
    recommendation: str
    reasons: list[str]
    numbers: dict[str, str]


class SensitivityRow(TypedDict):
    traffic_factor: str
    gpu_price_factor: str
    tokens_per_month: str
    bedrock_monthly_usd: str
    self_hosted_monthly_usd: str
    breakeven_tokens_per_month: str | None
    self_hosted_cheaper: bool
    recommendation: str


def analyse(scenario: Scenario, catalog: PriceCatalog) -> Analysis:
    """The numbers behind the recommendation for one scenario, as JSON-ready strings."""
    if scenario.fleet is None:  # the deployment's own fleet (the deploy sets these variables on every Lambda)
        scenario = replace(scenario, fleet=FleetConfig.from_env())
    price = catalog.token_price(scenario.bedrock_model)
    if price is None:
        raise ValueError(f"no Bedrock price for {scenario.bedrock_model!r} in catalog {catalog.version}")
    option, model, instance_name, why, equivalent = option_for(scenario, catalog)
    overheads = overheads_from_catalog(catalog)
    traffic = traffic_of(scenario)
    bedrock = bedrock_monthly_cost(traffic, price, overheads)
    self_hosted = self_hosted_monthly_cost(traffic, option, overheads)
    found = find_breakeven(traffic, price, option, overheads)
    breakeven = None if found.first is None else Decimal(found.first)
    assessment = assess(scenario.tokens_per_month, bedrock, self_hosted, scenario.daily_cv, scenario.ops_ready,
                        catalog.recommendation, breakeven, found.bedrock_wins_again)
    if equivalent is False and assessment.decision == "switch_to_self_hosted":
        # never recommend switching to a weaker model on cost alone
        assessment = Assessment("evaluate", assessment.reasons + (f"the compared open-weights model is not of equivalent quality: {why}",),
                                assessment.numbers)
    deployed = scenario.fleet.instance_types if scenario.fleet else ()
    if deployed and instance_name not in deployed:
        # priced on hardware the deploy does not launch: a cost estimate, never a reason to switch
        note = (f"self-hosted side priced on {instance_name}, where {model} is measured; the deploy launches "
                f"{', '.join(deployed)}, where it is not: measure it there before acting")
        assessment = Assessment("evaluate" if assessment.decision == "switch_to_self_hosted" else assessment.decision,
                                assessment.reasons + (note,), assessment.numbers)
    return {
        "catalog_version": catalog.version,
        "tokens_per_month": str(scenario.tokens_per_month),
        "bedrock_model": scenario.bedrock_model,
        "pair": {"bedrock": scenario.bedrock_model, "self_hosted": model, "equivalent_quality": equivalent, "why": why},
        "self_hosted": {"model": model, "instance": instance_name, "deployed_instance_types": list(deployed),
                        "tokens_per_second": f"{option.tokens_per_second:.1f}",
                        "usd_per_mtok_at_full_use": f"{cost_per_million_tokens(option.instance.on_demand_per_hour, option.tokens_per_second):.2f}",
                        "instances": self_hosted.instances, "gpu_hours": str(self_hosted.gpu_hours),
                        "min_instances": option.fleet.min_instances, "spot_share": str(option.fleet.spot_share),
                        "spot_share_basis": scenario.fleet.spot_share_basis if scenario.fleet else "configured estimate",
                        "blended_usd_per_hour": f"{self_hosted.blended_usd_per_hour:.3f}",
                        "gpu_usd": f"{self_hosted.gpu_usd:.2f}", "setup_usd": f"{self_hosted.setup_usd:.2f}",
                        "maintenance_usd": f"{self_hosted.maintenance_usd:.2f}", "incident_usd": f"{self_hosted.incident_usd:.2f}",
                        "overhead_usd": f"{self_hosted.overhead_usd:.2f}"},
        "bedrock_overhead_usd": f"{traffic.requests * overheads.bedrock_usd_per_request:.2f}",
        "bedrock_monthly_usd": f"{bedrock:.2f}",
        "self_hosted_monthly_usd": f"{self_hosted.total:.2f}",
        "breakeven_tokens_per_month": f"{breakeven:.0f}" if breakeven is not None else None,
        "breakeven_ranges": found.to_dict(),
        "self_hosted_cheaper_now": found.self_hosted_wins_at(int(scenario.tokens_per_month)),
        "recommendation": assessment.decision,
        "reasons": list(assessment.reasons),
        "numbers": assessment.numbers,
    }


def sensitivity(scenario: Scenario, catalog: PriceCatalog, traffic_factors: tuple[Decimal, ...] = (Decimal("0.5"), Decimal(1), Decimal("1.5")),
                gpu_factors: tuple[Decimal, ...] = (Decimal("0.7"), Decimal(1), Decimal("1.3"))) -> list[SensitivityRow]:
    """The decision under traffic x GPU-price changes (issue: traffic +-50%, GPU price +-30%)."""
    from dataclasses import replace

    grid = []
    for gpu in gpu_factors:
        for volume in traffic_factors:
            result = analyse(replace(scenario, tokens_per_month=scenario.tokens_per_month * volume, gpu_price_factor=gpu), catalog)
            grid.append({"traffic_factor": str(volume), "gpu_price_factor": str(gpu), "tokens_per_month": result["tokens_per_month"],
                         "bedrock_monthly_usd": result["bedrock_monthly_usd"], "self_hosted_monthly_usd": result["self_hosted_monthly_usd"],
                         "breakeven_tokens_per_month": result["breakeven_tokens_per_month"],
                         "self_hosted_cheaper": result["self_hosted_cheaper_now"], "recommendation": result["recommendation"]})
    return grid
