"""The one price authority: every dollar figure Crossover computes comes from a function here.

What it prices, all as pure functions over the catalog's plain data (no I/O):
  * a model call's tokens, cache reads and writes included ........ `price_usage`
  * one GPU attempt's instance-seconds (spot or on-demand) ........ `price_gpu_seconds`
  * the worst case a request may cost, reserved against a budget .. `worst_case_cost`
  * a self-hosted model's per-token price ......................... `self_hosted_price`
  * the break-even's inputs: $/token at a traffic mix (`usd_per_token`), an instance-hour at the fleet's
    spot/savings-plan/on-demand split (`blended_hourly_price`, `instance_month_usd`), the fixed ops cost
    a month (`ops_monthly_usd`) and the serverless path around each backend (`path_cost`, `Overheads`).

Money is Decimal; amounts the meter records are rounded once, with `chalicelib.core.usd` (one quantum).
The break-even search itself (volumes where self-hosting wins) is `meter.breakeven.find_breakeven`.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Callable, Literal, Protocol, TypeVar

from ..core import Usage, usd
from .catalog import GpuInstance, OpsInputs, PathOverhead, PriceCatalog, Throughput, TokenPrice

__all__ = [
    "Usage", "Capacity", "FleetShape", "Overheads", "NO_OVERHEADS", "HOURS_PER_MONTH", "SECONDS_PER_HOUR", "MILLION",
    "effective_rates", "price_usage", "price_gpu_seconds", "worst_case_cost", "self_hosted_price", "usd_per_token",
    "blended_hourly_price", "instance_month_usd", "ops_monthly_usd", "ops_fixed_exact", "OpsMonthly", "traffic_usd", "path_cost", "overheads_from_catalog",
    "cost_per_million_tokens", "tokens_per_second_from_cost", "measured_tokens_per_second", "output_equivalent_per_second",
]

HOURS_PER_MONTH = Decimal(730)  # AWS's billing convention
SECONDS_PER_HOUR = Decimal(3600)
MILLION = Decimal(1_000_000)

Capacity = Literal["spot", "on_demand"]


# ---------- tokens ----------

def effective_rates(price: TokenPrice) -> dict[str, Decimal]:
    """$/M for each kind of token, with Bedrock's fallbacks made explicit.

    Cache tokens without a cache price are charged at the input price: that is what Bedrock bills
    for models without prompt caching, and it errs towards over-reporting. A 1-hour cache write
    without its own price costs what a 5-minute write costs.
    """
    cache_write = price.cache_write_per_mtok if price.cache_write_per_mtok is not None else price.input_per_mtok
    return {
        "input": price.input_per_mtok,
        "output": price.output_per_mtok,
        "cache_read": price.cache_read_per_mtok if price.cache_read_per_mtok is not None else price.input_per_mtok,
        "cache_write": cache_write,
        "cache_write_1h": price.cache_write_1h_per_mtok if price.cache_write_1h_per_mtok is not None else cache_write,
    }


def price_usage(usage: Usage, price: TokenPrice | None) -> Decimal | None:
    """Cost of `usage` at `price`; None when unpriced (never silently $0)."""
    if price is None:
        return None
    rates = effective_rates(price)
    total = (
        usage.input_tokens * rates["input"]
        + usage.output_tokens * rates["output"]
        + usage.cache_read_tokens * rates["cache_read"]
        + usage.cache_write_tokens * rates["cache_write"]
        + usage.cache_write_1h_tokens * rates["cache_write_1h"]
    ) / MILLION
    return usd(total)


class TokenMix(Protocol):
    """Shares of each kind of billed token (breakeven.Traffic is one). Read-only, so frozen dataclasses fit."""

    @property
    def input_share(self) -> Decimal: ...
    @property
    def output_share(self) -> Decimal: ...
    @property
    def cache_read_share(self) -> Decimal: ...
    @property
    def cache_write_share(self) -> Decimal: ...
    @property
    def cache_write_1h_share(self) -> Decimal: ...


def traffic_usd(tokens: Decimal, mix: TokenMix, price: TokenPrice) -> Decimal:
    """Bedrock's bill for `tokens` billed tokens at `mix` (unrounded: a projection, not a ledger entry)."""
    return tokens * usd_per_token(mix, price)


def usd_per_token(mix: TokenMix, price: TokenPrice) -> Decimal:
    """$ per billed token at this mix (cache reads and writes at their own prices)."""
    rates = effective_rates(price)
    return (mix.input_share * rates["input"] + mix.output_share * rates["output"]
            + mix.cache_read_share * rates["cache_read"] + mix.cache_write_share * rates["cache_write"]
            + mix.cache_write_1h_share * rates["cache_write_1h"]) / MILLION


# ---------- budget reservations ----------

class StepLimits(Protocol):
    """The per-exchange caps a reservation bounds (agent.loop.AgentLimits is one)."""

    @property
    def max_steps(self) -> int: ...
    @property
    def max_cost_usd(self) -> Decimal: ...
    @property
    def max_tokens(self) -> int: ...


class SpentSoFar(Protocol):
    """What earlier requests of the same exchange used (agent.loop.Spent is one)."""

    @property
    def steps(self) -> int: ...
    @property
    def cost_usd(self) -> Decimal: ...


def worst_case_cost(input_bytes: int, limits: StepLimits, price: TokenPrice | None, spent: SpentSoFar | None = None) -> Decimal:
    """An upper bound of what the request can cost, reserved against the tenant's budget.

    A token is at least one byte of UTF-8, so bytes bound the input tokens of one step; the loop
    stops once the exchange passes `max_cost_usd`, so it can overshoot by at most one step.
    Unpriced models reserve what is left of the per-exchange cap.
    """
    spent_usd, spent_steps = (spent.cost_usd, spent.steps) if spent is not None else (Decimal(0), 0)
    remaining = max(limits.max_cost_usd - spent_usd, Decimal(0))
    steps_left = max(limits.max_steps - spent_steps, 0)
    if price is None:
        return remaining
    one_step = price_usage(Usage(input_tokens=input_bytes, output_tokens=limits.max_tokens), price) or Decimal(0)
    return min(one_step * steps_left, remaining + one_step)


# ---------- GPU time ----------

def price_gpu_seconds(seconds: Decimal, instance: GpuInstance | None, capacity: Capacity | None) -> Decimal | None:
    """What `seconds` of one attempt on `instance` cost: the spot price for spot capacity, else on-demand
    (unknown capacity is priced on-demand: never under-reported); None when the instance is unpriced."""
    if instance is None:
        return None
    hourly = instance.spot_per_hour if capacity == "spot" else instance.on_demand_per_hour
    return usd(seconds * hourly / SECONDS_PER_HOUR)


class FleetShares(Protocol):
    """How a fleet's instance-hours split (FleetShape is one; the rest is on-demand)."""

    @property
    def spot_share(self) -> Decimal: ...
    @property
    def savings_plan_share(self) -> Decimal: ...


@dataclass(frozen=True)
class FleetShape:
    """The GPU fleet as deployed: warm minimum (Batch MinvCpus) and the share of hours on spot."""

    min_instances: int = 1
    spot_share: Decimal = Decimal(0)
    savings_plan_share: Decimal = Decimal(0)  # hours covered by a Compute Savings Plan, if the team bought one

    @property
    def on_demand_share(self) -> Decimal:
        return 1 - self.spot_share - self.savings_plan_share


def blended_hourly_price(instance: GpuInstance, fleet: FleetShares) -> Decimal:
    """One instance-hour at the fleet's spot / savings-plan / on-demand split."""
    on_demand = 1 - fleet.spot_share - fleet.savings_plan_share
    return (fleet.spot_share * instance.spot_per_hour + fleet.savings_plan_share * instance.savings_plan_per_hour
            + on_demand * instance.on_demand_per_hour)


def instance_month_usd(instance: GpuInstance, fleet: FleetShares) -> Decimal:
    """One instance kept up for a month (730 h) at the fleet's blended hourly price."""
    return HOURS_PER_MONTH * blended_hourly_price(instance, fleet)


def warm_hourly_price(instance: GpuInstance, fleet: FleetShares) -> Decimal:
    """One warm instance-hour: the deploy keeps warm capacity (Batch MinvCpus) in its on-demand compute
    environment, never on spot, so it gets the fleet's non-spot mix (savings plan, else on-demand)."""
    non_spot = 1 - fleet.spot_share
    if non_spot <= 0:
        return instance.on_demand_per_hour
    return (fleet.savings_plan_share * instance.savings_plan_per_hour
            + (non_spot - fleet.savings_plan_share) * instance.on_demand_per_hour) / non_spot


def warm_premium_month_usd(instance: GpuInstance, fleet: FleetShape) -> Decimal:
    """What the warm instances cost a month above the blended price every instance is counted at
    (a fixed cost: the warm minimum is always running)."""
    return fleet.min_instances * HOURS_PER_MONTH * (warm_hourly_price(instance, fleet) - blended_hourly_price(instance, fleet))


def cost_per_million_tokens(usd_per_hour: Decimal, tokens_per_second: Decimal) -> Decimal:
    """$/M tokens of an instance kept fully busy."""
    return usd_per_hour / (tokens_per_second * SECONDS_PER_HOUR) * MILLION


def tokens_per_second_from_cost(usd_per_hour: Decimal, usd_per_million_tokens: Decimal) -> Decimal:
    """Aggregate tokens/s implied by a $/M figure at full use (the inverse of the above):
    $4.20/h at $0.79/M -> ~1,477 tokens/s."""
    return usd_per_hour / SECONDS_PER_HOUR / (usd_per_million_tokens / MILLION)


def measured_tokens_per_second(measurement: Throughput, measured_on: GpuInstance) -> Decimal:
    """Tokens/s as the measurement counts them (total or output tokens, see `Throughput.counts`).

    `measured_on` is the instance the measurement was taken on: a $/M figure is only meaningful
    at that instance's hourly price (seed 003 used SageMaker prices).
    """
    if measurement.tokens_per_second is not None:
        return measurement.tokens_per_second
    if measurement.usd_per_mtok is None:
        raise ValueError(f"throughput for {measurement.model} on {measurement.instance} has neither tokens/s nor $/M")
    return tokens_per_second_from_cost(measured_on.on_demand_per_hour, measurement.usd_per_mtok)


def output_equivalent_per_second(measurement: Throughput, measured_on: GpuInstance, input_token_weight: Decimal) -> Decimal:
    """Capacity of one instance in output-equivalent tokens/s (an input token costs `input_token_weight`
    of an output token of GPU time). Seed 003: 1,477 total tokens/s at 1,000 in + 560 out per request
    -> 1,477 x (560 + 100) / 1,560 ~ 625 output-equivalent tokens/s."""
    tokens = measured_tokens_per_second(measurement, measured_on)
    if measurement.counts == "output":
        return tokens
    inputs, outputs = Decimal(measurement.input_tokens_per_request), Decimal(measurement.output_tokens_per_request)
    return tokens * (outputs + inputs * input_token_weight) / (inputs + outputs)


def self_hosted_price(catalog: PriceCatalog, served_as: str) -> TokenPrice | None:
    """Per-token price of a self-hosted model: its instance's on-demand $/h at the measured capacity
    (the marginal cost of a busy GPU; idle capacity and ops are in the break-even report)."""
    for name, model in catalog.self_hosted_models.items():
        if model.served_as != served_as:
            continue
        instance = catalog.gpu_instances.get(model.instance)
        measurement = catalog.throughput_for(name, model.instance)
        if instance is None or measurement is None or measurement.instance not in catalog.gpu_instances:
            return None
        capacity = output_equivalent_per_second(measurement, catalog.gpu_instances[measurement.instance], catalog.ops.input_token_weight)
        output = cost_per_million_tokens(instance.on_demand_per_hour, capacity)
        return TokenPrice(input_per_mtok=output * catalog.ops.input_token_weight, output_per_mtok=output,
                          cache_read_per_mtok=output * catalog.ops.cache_read_token_weight,
                          source=f"derived: {model.instance} on-demand price at measured throughput", as_of=model.as_of)
    return None


# ---------- fixed and per-request costs (break-even inputs) ----------

@dataclass(frozen=True)
class OpsMonthly:
    """The team's cost of running GPUs itself, per month, whatever the volume."""

    setup_usd: Decimal  # setup hours, amortised
    maintenance_usd: Decimal
    incident_usd: Decimal

    @property
    def total(self) -> Decimal:
        return self.setup_usd + self.maintenance_usd + self.incident_usd


_N = TypeVar("_N", Decimal, Fraction)


def _ops_parts(ops: OpsInputs, num: Callable[[Decimal], _N]) -> tuple[_N, _N, _N]:
    """(setup amortised, maintenance, incidents) a month, in Decimal or in exact rationals."""
    rate = num(ops.engineer_usd_per_hour)
    return (num(ops.setup_hours) * rate / num(ops.amortisation_months), num(ops.maintenance_hours_per_month) * rate,
            num(ops.incident_usd_per_month))


def ops_monthly_usd(ops: OpsInputs) -> OpsMonthly:
    return OpsMonthly(*_ops_parts(ops, Decimal))


def ops_fixed_exact(ops: OpsInputs) -> Fraction:
    """The month's fixed ops cost as an exact rational (the break-even search compares costs exactly)."""
    setup, maintenance, incidents = _ops_parts(ops, Fraction)
    return setup + maintenance + incidents


def path_cost(catalog: PriceCatalog, path: PathOverhead) -> Decimal:
    """$ per request of the serverless path: Lambda requests and GB-seconds, Step Functions transitions."""
    return (path.lambda_invocations * catalog.lambda_.usd_per_million_requests / MILLION
            + path.lambda_gb_seconds * catalog.lambda_.x86_usd_per_gb_second
            + path.state_transitions * catalog.step_functions.standard_usd_per_1000_transitions / Decimal(1000))


@dataclass(frozen=True)
class Overheads:
    """Per-request cost of the serverless path around each backend (priced from the catalog)."""

    bedrock_usd_per_request: Decimal = Decimal(0)
    self_hosted_usd_per_request: Decimal = Decimal(0)

    def bedrock_usd(self, requests: Decimal) -> Decimal:
        return requests * self.bedrock_usd_per_request

    def self_hosted_usd(self, requests: Decimal) -> Decimal:
        return requests * self.self_hosted_usd_per_request


NO_OVERHEADS = Overheads()


def overheads_from_catalog(catalog: PriceCatalog) -> Overheads:
    return Overheads(path_cost(catalog, catalog.overheads.bedrock), path_cost(catalog, catalog.overheads.self_hosted))
