"""Named agents: a stored system prompt, model, tools, limits and screening, run through the same
invoke path as /v1/invoke (screened, budgeted, metered, traced, routed).

An agent can only make the service stricter: its limits are capped by the service's settings, and
its screening overrides apply only where they tighten the tenant's policy (a lower block threshold,
a stricter PII action, the guardrail on, a smaller size limit).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ..api_schemas import InvokeRequest
from ..errors import ValidationFailed
from ..screening import Policy
from ..screening.service import ScreeningService
from ..services import Services
from .schemas import AgentDefinition, AgentScreeningBody

_PII_STRICTNESS = {"off": 0, "redact": 1, "block": 2}
# What the agent fixes; an invoke body for an agent may not set them.
AGENT_OWNED_FIELDS = ("system", "model", "tools")


def tightened(policy: Policy, override: AgentScreeningBody) -> Policy:
    """The tenant's policy with the agent's overrides applied where they are stricter (pure)."""
    changes: dict[str, Any] = {}
    if override.block_threshold is not None and override.block_threshold < policy.block_threshold:
        changes["block_threshold"] = override.block_threshold
    if override.pii_action is not None and _PII_STRICTNESS[override.pii_action] > _PII_STRICTNESS[policy.pii_action]:
        changes["pii_action"] = override.pii_action
    if override.guardrail_enabled:
        changes["guardrail_enabled"] = True
    if override.max_chars is not None and override.max_chars < policy.max_chars:
        changes["max_chars"] = override.max_chars
    return dataclasses.replace(policy, **changes) if changes else policy


class _AgentPolicies:
    """The tenant's policy store seen through one agent's overrides."""

    def __init__(self, inner: Any, override: AgentScreeningBody) -> None:
        self._inner = inner
        self._override = override

    def policy_for(self, tenant: str) -> Policy:
        return tightened(self._inner.policy_for(tenant), self._override)


def agent_screening(services: Services, agent: AgentDefinition) -> ScreeningService:
    """The screening one agent's texts pass: the tenant's policy tightened by the agent's overrides."""
    return ScreeningService(_AgentPolicies(services.screening.policies, agent.screening), services.screening.checks)  # type: ignore[arg-type]


def agent_services(services: Services, agent: AgentDefinition) -> Services:
    """The services one agent's request runs with: lowered limits, its model as the default, its screening."""
    settings = services.settings
    limits = agent.limits
    ceiling = settings.limits
    lowered = dataclasses.replace(
        settings,
        models=dataclasses.replace(settings.models, default_model=agent.model or settings.models.default_model),
        limits=dataclasses.replace(
            ceiling,
            max_agent_steps=min(limits.max_steps or ceiling.max_agent_steps, ceiling.max_agent_steps),
            max_request_cost_usd=min(limits.max_cost_usd or ceiling.max_request_cost_usd, ceiling.max_request_cost_usd),
            max_output_tokens=min(limits.max_tokens or ceiling.max_output_tokens, ceiling.max_output_tokens),
        ),
    )
    return dataclasses.replace(services, settings=lowered, screening=agent_screening(services, agent))


def agent_request(body: InvokeRequest, agent: AgentDefinition) -> InvokeRequest:
    """The invoke request an agent call amounts to: the caller's turn, the agent's system, model and tools."""
    clashing = sorted(name for name in AGENT_OWNED_FIELDS if name in body.model_fields_set)
    if clashing:
        raise ValidationFailed("These fields are fixed by the agent; change the agent instead.", {"fields": clashing})
    return body.model_copy(update={"system": agent.system, "model": agent.model, "tools": list(agent.tools)})
