"""Break-even maths, Bedrock against self-hosted GPU, as pure functions.

Monthly cost as a function of the monthly token volume T (every billed token: input, output,
cache reads and cache writes):

    Bedrock      = T x blended $/token (the traffic's mix at the model's prices) + requests x overhead
    self-hosted  = fixed ops (setup amortised + maintenance + incidents)
                   + instances(T) x 730 h x blended $/instance-hour (the deploy's spot share)
                   + requests x overhead (Lambda, Step Functions; Batch itself is free)

instances(T) is a step function (whole instances, sized for the peak with headroom, never below the
deploy's warm minimum), so self-hosted can win, lose again when one more instance is needed, and win
again later. `find_breakeven` walks the steps exactly (rational arithmetic) and returns every range
of volumes where self-hosting costs no more than Bedrock.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction

from typing_extensions import TypedDict

from .catalog import GpuInstance, OpsInputs, TokenPrice
from .pricing import (
    HOURS_PER_MONTH,
    NO_OVERHEADS,
    SECONDS_PER_HOUR,
    FleetShape,
    Overheads,
    blended_hourly_price,
    instance_month_usd,
    ops_fixed_exact,
    ops_monthly_usd,
    traffic_usd,
    usd_per_token,
    warm_premium_month_usd,
)

__all__ = ["Traffic", "FleetShape", "Overheads", "NO_OVERHEADS", "SelfHostedOption", "SelfHostedCost", "CostLines", "BreakEven",
           "bedrock_monthly_cost", "cost_lines", "instances_needed", "self_hosted_monthly_cost", "winning_ranges", "find_breakeven",
           "breakeven_tokens_per_month", "coefficient_of_variation", "peak_factor_from_cv", "gpu_weight_per_token"]

DEFAULT_CEILING = 10**13  # 10 trillion tokens a month: far beyond any single deployment


@dataclass(frozen=True)
class Traffic:
    """A month of traffic: every billed token, its mix, how peaky it is, and how big a request is."""

    tokens_per_month: Decimal
    output_share: Decimal = Decimal("0.25")
    peak_to_average: Decimal = Decimal("2")  # sizing peak: busiest hour vs the month's average
    cache_read_share: Decimal = Decimal(0)
    cache_write_share: Decimal = Decimal(0)  # 5-minute cache writes
    cache_write_1h_share: Decimal = Decimal(0)
    tokens_per_request: Decimal = Decimal(1560)  # seed 003's request (1,000 in + 560 out)

    def __post_init__(self) -> None:
        if self.input_share < 0 or min(self.output_share, self.cache_read_share, self.cache_write_share, self.cache_write_1h_share) < 0:
            raise ValueError("traffic shares must be between 0 and 1 and add up to at most 1")

    @property
    def input_share(self) -> Decimal:
        return 1 - self.output_share - self.cache_read_share - self.cache_write_share - self.cache_write_1h_share

    @property
    def input_tokens(self) -> Decimal:
        return self.tokens_per_month * self.input_share

    @property
    def output_tokens(self) -> Decimal:
        return self.tokens_per_month * self.output_share

    @property
    def requests(self) -> Decimal:
        return self.tokens_per_month / self.tokens_per_request if self.tokens_per_request else Decimal(0)

    def at(self, tokens_per_month: Decimal | int) -> "Traffic":
        """The same shape at another volume."""
        return replace(self, tokens_per_month=Decimal(tokens_per_month))


@dataclass(frozen=True)
class SelfHostedOption:
    instance: GpuInstance
    tokens_per_second: Decimal  # output-equivalent tokens/s per instance at the measured concurrency
    ops: OpsInputs
    fleet: FleetShape = field(default_factory=FleetShape)


@dataclass(frozen=True)
class SelfHostedCost:
    instances: int
    gpu_hours: Decimal
    blended_usd_per_hour: Decimal
    gpu_usd: Decimal
    setup_usd: Decimal
    maintenance_usd: Decimal
    incident_usd: Decimal
    overhead_usd: Decimal = Decimal(0)

    @property
    def total(self) -> Decimal:
        return self.gpu_usd + self.setup_usd + self.maintenance_usd + self.incident_usd + self.overhead_usd


def bedrock_monthly_cost(traffic: Traffic, price: TokenPrice, overheads: Overheads = NO_OVERHEADS) -> Decimal:
    """Bedrock's bill for the month: every billed token at the traffic's mix, plus the path around it."""
    return traffic_usd(traffic.tokens_per_month, traffic, price) + overheads.bedrock_usd(traffic.requests)


def gpu_weight_per_token(traffic: Traffic, ops: OpsInputs) -> Decimal:
    """GPU time of an average billed token, in output tokens: prefill is batched (input weight), and a
    prefix-cache hit skips most of it (cache-read weight)."""
    prefill = traffic.input_share + traffic.cache_write_share + traffic.cache_write_1h_share
    return traffic.output_share + prefill * ops.input_token_weight + traffic.cache_read_share * ops.cache_read_token_weight


@dataclass(frozen=True)
class CostLines:
    """Both monthly costs as exact functions of the volume T (rationals, so ties are ties).

    bedrock(T) = bedrock_per_token x T;  self_hosted(T) = fixed + self_hosted_per_token x T + per_instance x n(T),
    n(T) = max(min_instances, ceil(T / tokens_per_instance)); tokens_per_instance None: GPU time is free.
    """

    bedrock_per_token: Fraction
    self_hosted_per_token: Fraction
    fixed: Fraction
    per_instance: Fraction
    tokens_per_instance: Fraction | None
    min_instances: int

    def instances(self, tokens: Fraction | int) -> int:
        if self.tokens_per_instance is None:
            return self.min_instances
        return max(self.min_instances, math.ceil(Fraction(tokens) / self.tokens_per_instance))

    def gap(self, tokens: int) -> Fraction:
        """Self-hosted minus Bedrock at `tokens` a month (<= 0: self-hosting costs no more)."""
        return (self.fixed + self.per_instance * self.instances(tokens)
                - (self.bedrock_per_token - self.self_hosted_per_token) * tokens)


def cost_lines(traffic: Traffic, price: TokenPrice, option: SelfHostedOption, overheads: Overheads = NO_OVERHEADS) -> CostLines:
    ops = option.ops
    per_request = Fraction(1) / Fraction(traffic.tokens_per_request) if traffic.tokens_per_request else Fraction(0)
    weight = Fraction(gpu_weight_per_token(traffic, ops)) * Fraction(traffic.peak_to_average)
    usable = Fraction(option.tokens_per_second) * (1 - Fraction(ops.headroom)) * Fraction(HOURS_PER_MONTH * SECONDS_PER_HOUR)
    return CostLines(
        bedrock_per_token=Fraction(usd_per_token(traffic, price)) + per_request * Fraction(overheads.bedrock_usd_per_request),
        self_hosted_per_token=per_request * Fraction(overheads.self_hosted_usd_per_request),
        fixed=ops_fixed_exact(ops) + Fraction(warm_premium_month_usd(option.instance, option.fleet)),
        per_instance=Fraction(instance_month_usd(option.instance, option.fleet)),
        tokens_per_instance=usable / weight if weight > 0 else None,
        min_instances=option.fleet.min_instances,
    )


def instances_needed(traffic: Traffic, option: SelfHostedOption) -> int:
    """Enough instances for the peak at (1 - headroom) utilisation; never fewer than the warm minimum."""
    dummy = TokenPrice(input_per_mtok=Decimal(0), output_per_mtok=Decimal(0), source="-", as_of="-")
    return cost_lines(traffic, dummy, option).instances(Fraction(traffic.tokens_per_month))


def self_hosted_monthly_cost(traffic: Traffic, option: SelfHostedOption, overheads: Overheads = NO_OVERHEADS) -> SelfHostedCost:
    instances = instances_needed(traffic, option)
    ops = ops_monthly_usd(option.ops)
    return SelfHostedCost(
        instances=instances,
        gpu_hours=HOURS_PER_MONTH * instances,
        blended_usd_per_hour=blended_hourly_price(option.instance, option.fleet),
        gpu_usd=instances * instance_month_usd(option.instance, option.fleet) + warm_premium_month_usd(option.instance, option.fleet),
        setup_usd=ops.setup_usd,
        maintenance_usd=ops.maintenance_usd,
        incident_usd=ops.incident_usd,
        overhead_usd=overheads.self_hosted_usd(traffic.requests),
    )


# BreakEven as JSON (volumes as strings of whole tokens a month); a range is {"from", "to"}, "to" None: and above.
Ranges = TypedDict("Ranges", {
    "first_tokens_per_month": str | None,
    "self_hosted_cheaper": list[dict[str, str | None]],
    "bedrock_cheaper_again": list[dict[str, str | None]],
    "stays_cheaper_from": str | None,
    "searched_up_to": str,
})


@dataclass(frozen=True)
class BreakEven:
    """Where self-hosting costs no more than Bedrock, as half-open volume ranges [start, end) in tokens
    a month; end None means "and every larger volume". Searched up to `searched_up_to` inclusive."""

    self_hosted_wins: tuple[tuple[int, int | None], ...]
    searched_up_to: int

    @property
    def first(self) -> int | None:
        return self.self_hosted_wins[0][0] if self.self_hosted_wins else None

    @property
    def stays_cheaper_from(self) -> int | None:
        """The volume from which self-hosting stays cheaper for good (None: not within the search)."""
        if self.self_hosted_wins and self.self_hosted_wins[-1][1] is None:
            return self.self_hosted_wins[-1][0]
        return None

    @property
    def bedrock_wins_again(self) -> tuple[tuple[int, int], ...]:
        """Ranges past the first crossing where Bedrock is cheaper again (an extra instance's step)."""
        return tuple((end, nxt[0]) for (_, end), nxt in zip(self.self_hosted_wins, self.self_hosted_wins[1:]) if end is not None)

    def self_hosted_wins_at(self, tokens: int) -> bool:
        return any(start <= tokens and (end is None or tokens < end) for start, end in self.self_hosted_wins)

    def to_dict(self) -> Ranges:
        def pair(start: int, end: int | None) -> dict[str, str | None]:
            return {"from": str(start), "to": None if end is None else str(end)}
        return {"first_tokens_per_month": None if self.first is None else str(self.first),
                "self_hosted_cheaper": [pair(*r) for r in self.self_hosted_wins],
                "bedrock_cheaper_again": [pair(*r) for r in self.bedrock_wins_again],
                "stays_cheaper_from": None if self.stays_cheaper_from is None else str(self.stays_cheaper_from),
                "searched_up_to": str(self.searched_up_to)}


_DEGENERATE_STEPS = 10_000  # zero fixed costs with no saving per instance: ties only; scan a bounded number of steps


def _step_bounds(lines: CostLines, instances: int) -> tuple[int, int]:
    """First and last integer volume served by exactly `instances` instances."""
    size = lines.tokens_per_instance
    assert size is not None
    low = 0 if instances == lines.min_instances else math.floor((instances - 1) * size) + 1
    return low, math.floor(instances * size)


def winning_ranges(lines: CostLines, ceiling: int = DEFAULT_CEILING) -> BreakEven:
    """Every integer volume in [0, ceiling] where self-hosted costs no more than Bedrock, as ranges.

    Within one step (n instances) the gap is linear in T, so each step is solved exactly. Steps that
    cannot win are skipped in closed form, and past a computable step every step wins in full, so the
    last range is open-ended. With margin = what a token saves off Bedrock, size = tokens per instance,
    slope = margin x size - per_instance (what a full instance's worth of tokens saves):
      * step j's best point is its end, j x size: it can win only if fixed <= j x slope;
      * at step j's start, (j-1) x size, the gap is fixed + margin x size - j x slope, so every step
        with j >= (fixed + margin x size) / slope wins in full.
    """
    margin = lines.bedrock_per_token - lines.self_hosted_per_token
    size = lines.tokens_per_instance
    lowest = lines.min_instances
    if size is None:  # GPU time free at this mix: one step for every volume
        steps, tail_step = [(lowest, 0, ceiling)], (lowest if margin > 0 else None)
    else:
        slope = margin * size - lines.per_instance
        if slope > 0:
            first = max(lowest, math.floor(lines.fixed / slope) - 1)
            tail_step = max(first, math.ceil((lines.fixed + margin * size) / slope))
            last = tail_step
        elif lines.fixed > 0:
            return BreakEven((), ceiling)  # every step's best point costs at least `fixed` more than Bedrock
        else:
            first, last, tail_step = lowest, lowest + _DEGENERATE_STEPS, None
        steps = []
        instances = first
        while True:  # up to the first non-empty step at or past `last` (a step holds no integer when size < 1)
            low, high = _step_bounds(lines, instances)
            if low > ceiling:
                break
            if low <= high:
                steps.append((instances, low, min(high, ceiling)))
                if instances >= last:
                    break
            instances += 1
    wins: list[list[int]] = []
    for instances, low, high in steps:
        gap_at_zero = lines.fixed + lines.per_instance * instances  # the gap is gap_at_zero - margin x T in this step
        if margin > 0:
            start, end = max(low, math.ceil(gap_at_zero / margin)), high
        elif margin == 0:
            start, end = (low, high) if gap_at_zero <= 0 else (1, 0)
        else:
            start, end = low, min(high, math.floor(gap_at_zero / margin))
        if start > end:
            continue
        if wins and wins[-1][1] + 1 == start:
            wins[-1][1] = end
        else:
            wins.append([start, end])
    ranges: list[tuple[int, int | None]] = [(start, end + 1) for start, end in wins]
    reached_tail = tail_step is not None and bool(steps) and steps[-1][0] >= tail_step and bool(ranges) and wins[-1][1] == steps[-1][2]
    if reached_tail:
        ranges[-1] = (ranges[-1][0], None)
    return BreakEven(tuple(ranges), ceiling)


def find_breakeven(traffic: Traffic, price: TokenPrice, option: SelfHostedOption, overheads: Overheads = NO_OVERHEADS,
                   ceiling: int = DEFAULT_CEILING) -> BreakEven:
    """All volumes (same mix, peakiness and request size) where self-hosting costs no more than Bedrock."""
    return winning_ranges(cost_lines(traffic, price, option, overheads), ceiling)


def breakeven_tokens_per_month(traffic: Traffic, price: TokenPrice, option: SelfHostedOption,
                               overheads: Overheads = NO_OVERHEADS, ceiling: int = DEFAULT_CEILING) -> Decimal | None:
    """Smallest monthly volume at which self-hosting costs no more than Bedrock (None: never below `ceiling`).
    Bedrock may win again past it: see `find_breakeven` for every range."""
    first = find_breakeven(traffic, price, option, overheads, ceiling).first
    return None if first is None else Decimal(first)


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

