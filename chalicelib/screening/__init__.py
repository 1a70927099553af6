"""Prompt screening: a pure `screen(text, policy) -> Verdict` core, run before any model call or job.

Layers: normalisation (normalize.py), rule packs as data (rules/*.json) scored by noisy-OR, then
managed checks (managed.py: Comprehend PII, Bedrock Guardrails) behind per-tenant policy.
"""
from __future__ import annotations

from .core import CheckResult, ManagedCheck, Policy, Verdict, load_rules, screen

__all__ = ["CheckResult", "ManagedCheck", "Policy", "Verdict", "load_rules", "screen"]
