"""Prompt screening: a pure `screen(text, policy) -> Verdict` core, run before any model call or job."""
from __future__ import annotations

from .core import Policy, Verdict, screen

__all__ = ["Policy", "Verdict", "screen"]
