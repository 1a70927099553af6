"""The process-wide service objects, built on first use (not at import: keeps cold starts short)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .agent import builtin_tools  # noqa: F401  (registers the built-in tools)
from .agent.tools import REGISTRY, ToolRegistry
from .auth import TenantStore
from .config import Settings, get_settings
from .meter.catalog import PriceCatalog, load_catalog
from .meter.ledger import Ledger
from .models import ModelBackend
from .models.bedrock import BedrockBackend


@dataclass
class Services:
    settings: Settings
    tenants: TenantStore
    ledger: Ledger
    catalog: PriceCatalog
    backends: dict[str, ModelBackend]
    tools: ToolRegistry


@lru_cache(maxsize=1)
def get_services() -> Services:
    settings = get_settings()
    return Services(
        settings=settings,
        tenants=TenantStore(settings.tenants_table, settings.tenant_cache_ttl_s),
        ledger=Ledger(settings.ledger_table),
        catalog=load_catalog(settings.price_catalog_path),
        backends={"bedrock": BedrockBackend.from_settings(settings.bedrock_max_attempts, settings.bedrock_read_timeout_s)},
        tools=REGISTRY,
    )


def reset_services() -> None:
    """Forget built services and settings (tests change the environment between cases)."""
    from . import aws
    from .meter.catalog import load_catalog as _load

    get_services.cache_clear()
    get_settings.cache_clear()
    _load.cache_clear()
    aws.reset_clients()
