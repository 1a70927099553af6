"""Break-even maths, Bedrock against self-hosted GPU, as pure functions over Decimal.

Self-hosted monthly cost = GPU hours x blended hourly price (instances sized from measured
throughput, traffic peaks and 30% headroom; at least one warm instance, paid even when idle)
+ setup hours x rate / amortisation months + maintenance hours x rate + incidents   (seed 004).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

from .catalog import FleetMix, GpuInstance, OpsInputs, Throughput, TokenPrice

HOURS_PER_MONTH = Decimal(730)  # AWS's billing convention
SECONDS_PER_HOUR = Decimal(3600)
MILLION = Decimal(1_000_000)


def tokens_per_second_from_cost(usd_per_hour: Decimal, usd_per_million_tokens: Decimal) -> Decimal:
    """Aggregate tokens/s implied by a $/M figure at full use: $4.20/h at $0.79/M -> ~1,477 tokens/s."""
    return usd_per_hour / SECONDS_PER_HOUR / (usd_per_million_tokens / MILLION)


def cost_per_million_tokens(usd_per_hour: Decimal, tokens_per_second: Decimal) -> Decimal:
    """$/M tokens of an instance kept fully busy: the inverse of the above."""
    return usd_per_hour / (tokens_per_second * SECONDS_PER_HOUR) * MILLION


def measured_tokens_per_second(measurement: Throughput, instance: GpuInstance) -> Decimal:
    if measurement.tokens_per_second is not None:
        return measurement.tokens_per_second
    if measurement.usd_per_mtok_output is None:
        raise ValueError(f"throughput for {measurement.model} on {measurement.instance} has neither tokens/s nor $/M")
    return tokens_per_second_from_cost(instance.on_demand_per_hour, measurement.usd_per_mtok_output)


@dataclass(frozen=True)
class Traffic:
    """A month of traffic: tokens, the output share, and how peaky the days are."""

    tokens_per_month: Decimal
    output_share: Decimal = Decimal("0.25")
    peak_to_average: Decimal = Decimal("2")  # sizing peak: busiest hour vs the month's average

    @property
    def input_tokens(self) -> Decimal:
        return self.tokens_per_month * (1 - self.output_share)

    @property
    def output_tokens(self) -> Decimal:
        return self.tokens_per_month * self.output_share


@dataclass(frozen=True)
class SelfHostedOption:
    instance: GpuInstance
    tokens_per_second: Decimal  # output tokens/s per instance at the measured concurrency
    ops: OpsInputs


@dataclass(frozen=True)
class SelfHostedCost:
    instances: int
    gpu_hours: Decimal
    blended_usd_per_hour: Decimal
    gpu_usd: Decimal
    setup_usd: Decimal
    maintenance_usd: Decimal
    incident_usd: Decimal

    @property
    def total(self) -> Decimal:
        return self.gpu_usd + self.setup_usd + self.maintenance_usd + self.incident_usd


def bedrock_monthly_cost(traffic: Traffic, price: TokenPrice) -> Decimal:
    return (traffic.input_tokens * price.input_per_mtok + traffic.output_tokens * price.output_per_mtok) / MILLION


def blended_hourly_price(instance: GpuInstance, mix: FleetMix) -> Decimal:
    """Fleet mix (seed 001: 70% savings plan, 20% on-demand, 10% spot) priced per instance-hour."""
    share = mix.savings_plan + mix.on_demand + mix.spot
    return (mix.savings_plan * instance.savings_plan_per_hour + mix.on_demand * instance.on_demand_per_hour
            + mix.spot * instance.spot_per_hour) / share


def instances_needed(traffic: Traffic, option: SelfHostedOption) -> int:
    """Enough instances for the peak at (1 - headroom) utilisation; never fewer than the warm minimum."""
    weighted_tokens = traffic.output_tokens + traffic.input_tokens * option.ops.input_token_weight
    average_rate = weighted_tokens / (HOURS_PER_MONTH * SECONDS_PER_HOUR)
    peak_rate = average_rate * traffic.peak_to_average
    usable_rate = option.tokens_per_second * (1 - option.ops.headroom)
    needed = (peak_rate / usable_rate).to_integral_value(rounding=ROUND_CEILING)
    return max(option.ops.min_instances, int(needed))


def self_hosted_monthly_cost(traffic: Traffic, option: SelfHostedOption) -> SelfHostedCost:
    ops = option.ops
    instances = instances_needed(traffic, option)
    gpu_hours = HOURS_PER_MONTH * instances
    hourly = blended_hourly_price(option.instance, ops.fleet_mix)
    return SelfHostedCost(
        instances=instances,
        gpu_hours=gpu_hours,
        blended_usd_per_hour=hourly,
        gpu_usd=gpu_hours * hourly,
        setup_usd=ops.setup_hours * ops.engineer_usd_per_hour / ops.amortisation_months,
        maintenance_usd=ops.maintenance_hours_per_month * ops.engineer_usd_per_hour,
        incident_usd=ops.incident_usd_per_month,
    )


def breakeven_tokens_per_month(traffic: Traffic, price: TokenPrice, option: SelfHostedOption,
                               ceiling: Decimal = Decimal(10) ** 13) -> Decimal | None:
    """Smallest monthly volume (same mix and peakiness) at which self-hosting costs no more than Bedrock.

    None when it never does below `ceiling` (self-hosted marginal cost at or above Bedrock's).
    Self-hosted cost is a step function (whole instances), so search rather than solve.
    """
    def cheaper(tokens: Decimal) -> bool:
        at = Traffic(tokens, traffic.output_share, traffic.peak_to_average)
        return self_hosted_monthly_cost(at, option).total <= bedrock_monthly_cost(at, price)

    if not cheaper(ceiling):
        return None
    low, high = Decimal(0), ceiling
    while high - low > max(Decimal(1000), high * Decimal("0.0001")):
        middle = (low + high) / 2
        if cheaper(middle):
            high = middle
        else:
            low = middle
    # The first crossing. Past it each extra instance adds far less than the Bedrock bill grows over
    # the volume that instance serves, so self-hosting stays cheaper (checked in the tests).
    return high.to_integral_value(rounding=ROUND_CEILING)


def coefficient_of_variation(daily_tokens: list[Decimal]) -> Decimal:
    """Stability of daily traffic: standard deviation / mean (0 for perfectly flat)."""
    if len(daily_tokens) < 2:
        return Decimal(0)
    mean = sum(daily_tokens) / len(daily_tokens)
    if mean == 0:
        return Decimal(0)
    variance = sum((day - mean) ** 2 for day in daily_tokens) / (len(daily_tokens) - 1)
    return Decimal(math.sqrt(variance)) / mean


def peak_factor_from_cv(cv: Decimal) -> Decimal:
    """Sizing peak from daily variability: flat traffic still peaks within the day (x1.5), more with spread."""
    return Decimal("1.5") + 2 * cv
