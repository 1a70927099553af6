"""Screening core: local rule layer (first version; later layers plug in behind the same Verdict)."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

_FIRST_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("injection.ignore_previous", re.compile(r"\b(ignore|disregard|forget)\b.{0,40}\b(previous|prior|above|earlier)\b.{0,20}\b(instructions?|rules?|prompts?)\b", re.I | re.S)),
    ("extraction.system_prompt", re.compile(r"\b(reveal|print|show|repeat|output)\b.{0,40}\bsystem\s+prompt\b", re.I | re.S)),
    ("jailbreak.dan", re.compile(r"\b(DAN|do anything now)\b.{0,80}\b(no|without)\s+(restrictions|rules|limits)\b", re.I | re.S)),
)


@dataclass(frozen=True)
class Policy:
    block_threshold: float = 0.5


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    score: float
    reasons: tuple[str, ...] = field(default_factory=tuple)
    layer: str = "rules"
    ms: float = 0.0


def screen(text: str, policy: Policy = Policy()) -> Verdict:
    started = time.perf_counter()
    reasons = tuple(rule_id for rule_id, pattern in _FIRST_RULES if pattern.search(text))
    score = 1.0 if reasons else 0.0
    return Verdict(score < policy.block_threshold, score, reasons, "rules", (time.perf_counter() - started) * 1000)
