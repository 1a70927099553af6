"""What-if planning: the break-even analysis for a traffic profile, from catalog defaults (pure)."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .breakeven import (
    SelfHostedOption,
    Traffic,
    bedrock_monthly_cost,
    breakeven_tokens_per_month,
    cost_per_million_tokens,
    measured_tokens_per_second,
    peak_factor_from_cv,
    self_hosted_monthly_cost,
)
from .catalog import OpsInputs, PriceCatalog
from .recommendation import assess

DEFAULT_BEDROCK_MODEL = "anthropic.claude-3-sonnet-20240229-v1:0"
DEFAULT_SELF_HOSTED_MODEL = "qwen3-32b"
DEFAULT_INSTANCE = "ml.g7e.2xlarge"


@dataclass(frozen=True)
class Scenario:
    tokens_per_month: Decimal
    output_share: Decimal = Decimal("0.25")
    bedrock_model: str = DEFAULT_BEDROCK_MODEL
    self_hosted_model: str = DEFAULT_SELF_HOSTED_MODEL
    instance: str = DEFAULT_INSTANCE
    concurrency: int | None = None
    tokens_per_second: Decimal | None = None  # overrides the catalog's measurement
    daily_cv: Decimal = Decimal("0.2")
    ops_ready: bool = True
    ops_overrides: dict[str, Any] | None = None


def analyse(scenario: Scenario, catalog: PriceCatalog) -> dict[str, Any]:
    """The numbers behind the recommendation for one scenario, as JSON-ready strings."""
    price = catalog.token_price(scenario.bedrock_model)
    if price is None:
        raise ValueError(f"no Bedrock price for {scenario.bedrock_model!r} in catalog {catalog.version}")
    instance = catalog.gpu_instances.get(scenario.instance)
    if instance is None:
        raise ValueError(f"no GPU instance {scenario.instance!r} in catalog {catalog.version}")
    if scenario.tokens_per_second is not None:
        tokens_per_second = scenario.tokens_per_second
    else:
        measurement = catalog.throughput_for(scenario.self_hosted_model, scenario.instance, scenario.concurrency)
        if measurement is None:
            raise ValueError(f"no throughput measured for {scenario.self_hosted_model} on {scenario.instance}; pass tokens_per_second")
        tokens_per_second = measured_tokens_per_second(measurement, instance)
    ops = OpsInputs(**{**catalog.ops.model_dump(), **(scenario.ops_overrides or {})})
    option = SelfHostedOption(instance, tokens_per_second, ops)
    traffic = Traffic(scenario.tokens_per_month, scenario.output_share, peak_factor_from_cv(scenario.daily_cv))
    bedrock = bedrock_monthly_cost(traffic, price)
    self_hosted = self_hosted_monthly_cost(traffic, option)
    breakeven = breakeven_tokens_per_month(traffic, price, option)
    assessment = assess(scenario.tokens_per_month, bedrock, self_hosted, scenario.daily_cv, scenario.ops_ready,
                        catalog.recommendation, breakeven)
    return {
        "catalog_version": catalog.version,
        "tokens_per_month": str(scenario.tokens_per_month),
        "bedrock_model": scenario.bedrock_model,
        "self_hosted": {"model": scenario.self_hosted_model, "instance": scenario.instance,
                        "tokens_per_second": f"{tokens_per_second:.1f}",
                        "usd_per_mtok_at_full_use": f"{cost_per_million_tokens(instance.on_demand_per_hour, tokens_per_second):.2f}",
                        "instances": self_hosted.instances, "gpu_hours": str(self_hosted.gpu_hours),
                        "blended_usd_per_hour": f"{self_hosted.blended_usd_per_hour:.3f}",
                        "gpu_usd": f"{self_hosted.gpu_usd:.2f}", "setup_usd": f"{self_hosted.setup_usd:.2f}",
                        "maintenance_usd": f"{self_hosted.maintenance_usd:.2f}", "incident_usd": f"{self_hosted.incident_usd:.2f}"},
        "bedrock_monthly_usd": f"{bedrock:.2f}",
        "self_hosted_monthly_usd": f"{self_hosted.total:.2f}",
        "breakeven_tokens_per_month": f"{breakeven:.0f}" if breakeven is not None else None,
        "recommendation": assessment.decision,
        "reasons": list(assessment.reasons),
        "numbers": assessment.numbers,
    }
