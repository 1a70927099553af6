"""Switch recommendation (pure): which backend the numbers favour, with reasons, and hysteresis.

Seed 004's guidance, as rules over measured traffic: below ~100M tokens/month stay on Bedrock;
in between, evaluate; switch to self-hosted only when it saves more than a margin, traffic is
stable and the team is ops-ready, and only after that holds for several consecutive days.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any, Literal

from .breakeven import SelfHostedCost
from .catalog import RecommendationSettings

Decision = Literal["stay_on_bedrock", "evaluate", "switch_to_self_hosted"]


@dataclass(frozen=True)
class Assessment:
    """Today's raw verdict on the numbers, before hysteresis."""

    decision: Decision
    reasons: tuple[str, ...]
    numbers: dict[str, str]


def assess(tokens_per_month: Decimal, bedrock_usd: Decimal, self_hosted: SelfHostedCost, daily_cv: Decimal,
           ops_ready: bool, settings: RecommendationSettings, breakeven_tokens: Decimal | None,
           bedrock_wins_again: tuple[tuple[int, int], ...] = ()) -> Assessment:
    saving = bedrock_usd - self_hosted.total
    saving_ratio = saving / bedrock_usd if bedrock_usd > 0 else Decimal(-1)
    numbers = {
        "tokens_per_month": f"{tokens_per_month:.0f}", "bedrock_monthly_usd": f"{bedrock_usd:.2f}",
        "self_hosted_monthly_usd": f"{self_hosted.total:.2f}", "saving_usd": f"{saving:.2f}",
        "saving_ratio": f"{saving_ratio:.3f}", "daily_cv": f"{daily_cv:.3f}", "instances": str(self_hosted.instances),
        "breakeven_tokens_per_month": f"{breakeven_tokens:.0f}" if breakeven_tokens is not None else "never",
    }
    if bedrock_wins_again:
        numbers["bedrock_cheaper_again"] = ", ".join(f"{start / 1e9:.2f}B-{end / 1e9:.2f}B" for start, end in bedrock_wins_again[:5])
    reasons: list[str] = []
    if tokens_per_month < settings.evaluate_below_tokens:
        reasons.append(f"volume {tokens_per_month / 1_000_000:.0f}M tokens/month is below {settings.evaluate_below_tokens / 1_000_000:.0f}M: Bedrock almost always wins with ops included")
        return Assessment("stay_on_bedrock", tuple(reasons), numbers)
    if saving_ratio <= -settings.switch_margin:
        reasons.append(f"self-hosted would cost {-saving_ratio:.0%} more than Bedrock (${self_hosted.total:,.0f} vs ${bedrock_usd:,.0f} a month)")
        return Assessment("stay_on_bedrock", tuple(reasons), numbers)
    if saving_ratio < settings.switch_margin:
        reasons.append(f"costs are within {settings.switch_margin:.0%} of each other (saving {saving_ratio:.0%}): do the maths with real numbers")
        return Assessment("evaluate", tuple(reasons), numbers)
    reasons.append(f"self-hosted saves {saving_ratio:.0%} (${saving:,.0f} a month)")
    blockers = []
    if daily_cv > settings.max_daily_cv:
        blockers.append(f"traffic is unstable (daily CV {daily_cv:.2f} > {settings.max_daily_cv})")
    if not ops_ready:
        blockers.append("the team is not marked ops-ready for GPU operations (ops_ready=false)")
    if blockers:
        return Assessment("evaluate", tuple(reasons + blockers), numbers)
    reasons.append("traffic is stable and the team is ops-ready")
    return Assessment("switch_to_self_hosted", tuple(reasons), numbers)


@dataclass(frozen=True)
class DecisionState:
    """What is currently recommended, and a pending change with how many days it has held."""

    current: Decision = "stay_on_bedrock"
    pending: Decision | None = None
    pending_days: int = 0
    history: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def next_state(state: DecisionState, today: Assessment, days_to_confirm: int) -> DecisionState:
    """Hysteresis: a new decision replaces the current one only after `days_to_confirm` days in a row.

    "evaluate" never undoes a switch to self-hosted: it only means the numbers are close, which is
    exactly when flip-flopping would hurt; going back takes days of a clear "stay_on_bedrock".
    """
    if today.decision == state.current:
        return DecisionState(state.current, None, 0, state.history)
    if today.decision == "evaluate" and state.current == "switch_to_self_hosted":
        return DecisionState(state.current, None, 0, state.history)
    days = state.pending_days + 1 if today.decision == state.pending else 1
    if days >= days_to_confirm:
        return DecisionState(today.decision, None, 0, (state.history + (f"{state.current}->{today.decision}",))[-20:])
    return DecisionState(state.current, today.decision, days, state.history)
