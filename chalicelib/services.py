"""The process-wide service objects, built on first use (not at import: keeps cold starts short)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .agent import builtin_tools  # noqa: F401  (registers the built-in tools)
from .agent.tools import REGISTRY, ToolRegistry
from .auth import TenantStore
from .config import Settings, get_settings
from .conversations.store import ConversationStore, DynamoConversationStore
from .meter.catalog import PriceCatalog, load_catalog
from .meter.alerts import AlertsConfig, BudgetAlerts
from .meter.budgets import Budgets
from .meter.decisions import DecisionStore
from .meter.ledger import Ledger
from .meter.spill import MeterWriter
from .models import ModelBackend
from .models.bedrock import BedrockBackend
from .registry.store import DynamoRegistryStore, RegistryStore
from .registry.toolbox import ToolClients
from .router import RecommendationCache, Router
from .screening import Policy
from .screening.service import PolicyStore, ScreeningService
from .tenant_settings import TenantSettingsStore


@dataclass
class Services:
    settings: Settings
    tenants: TenantStore
    ledger: Ledger
    meter: MeterWriter
    budgets: Budgets
    decisions: DecisionStore
    catalog: PriceCatalog
    backends: dict[str, ModelBackend]
    tools: ToolRegistry
    screening: ScreeningService
    router: Router
    conversations: ConversationStore
    registry: RegistryStore
    tool_clients: ToolClients


@lru_cache(maxsize=1)
def get_services() -> Services:
    settings = get_settings()
    ledger = Ledger(settings.meter.ledger_table, settings.meter.aggregates_table, settings.meter.shards)
    decisions = DecisionStore(settings.meter.decisions_table)
    backends = build_backends(settings)
    return Services(
        settings=settings,
        tenants=TenantStore(settings.tenants.table, settings.tenants.cache_ttl_s),
        ledger=ledger,
        meter=MeterWriter(ledger, settings.meter.spill_queue),
        budgets=Budgets(settings.meter.budgets_table, alerts=BudgetAlerts(settings.meter.budgets_table, AlertsConfig.from_env())),
        decisions=decisions,
        catalog=load_catalog(settings.meter.price_catalog_path),
        backends=backends,
        tools=REGISTRY,
        screening=build_screening(settings),
        router=build_router(settings, decisions, "self_hosted" in backends),
        conversations=DynamoConversationStore(settings.conversations.table),
        registry=DynamoRegistryStore(settings.registry.table),
        tool_clients=ToolClients(settings.registry.tool_role_arn, settings.registry.tool_secret_cache_s),
    )


def build_backends(settings: Settings) -> dict[str, ModelBackend]:
    backends: dict[str, ModelBackend] = {"bedrock": BedrockBackend.from_settings(settings.models.bedrock_max_attempts, settings.models.bedrock_read_timeout_s)}
    if settings.models.self_hosted_endpoint:
        from .models.self_hosted import SelfHostedBackend

        backends["self_hosted"] = SelfHostedBackend(settings.models.self_hosted_endpoint, settings.models.self_hosted_timeout_s, settings.models.self_hosted_model)
    return backends


def build_router(settings: Settings, decisions: DecisionStore, self_hosted_endpoint: bool) -> Router:
    return Router(TenantSettingsStore(settings.tenants.table, settings.tenants.cache_ttl_s),
                  RecommendationCache(lambda: decisions.latest().current),
                  default_mode=settings.models.routing_mode, job_default_mode=settings.models.job_routing_mode,
                  self_hosted_endpoint=self_hosted_endpoint)


def build_screening(settings: Settings) -> ScreeningService:
    """Local layers always; Comprehend PII and Bedrock Guardrails only when configured."""
    from . import aws
    from .screening.managed import ComprehendPiiCheck, GuardrailCheck, managed_client_config

    base = Policy(
        block_threshold=settings.screening.block_threshold,
        pii_action=settings.screening.pii_action,  # type: ignore[arg-type]
        guardrail_enabled=settings.screening.guardrail_enabled,
        fail_open=settings.screening.fail_open,
        max_chars=settings.limits.max_prompt_chars,
    )
    checks = []
    config = managed_client_config(settings.screening.managed_check_timeout_s)
    if settings.screening.pii_action != "off":
        checks.append(ComprehendPiiCheck(aws.client("comprehend", config), settings.screening.pii_language))
    if settings.screening.guardrail_id:
        checks.append(GuardrailCheck(aws.client("bedrock-runtime", config), settings.screening.guardrail_id, settings.screening.guardrail_version))
    return ScreeningService(PolicyStore(settings.screening.policies_table, base, settings.tenants.cache_ttl_s), checks)


def reset_services() -> None:
    """Forget built services and settings (tests change the environment between cases)."""
    from . import aws
    from .idempotency import _idempotent_runner
    from .meter.catalog import load_catalog as _load

    get_services.cache_clear()
    _idempotent_runner.cache_clear()  # its persistence layer holds a client of the session reset below
    get_settings.cache_clear()
    _load.cache_clear()
    aws.reset_clients()
