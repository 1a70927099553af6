"""Settings read from environment variables, with documented defaults, grouped per capability
(`settings.jobs.table`, `settings.meter.ledger_table`), each group a small frozen object as Powertools
gives each utility its own config.

Every AWS resource the code touches is named here (and only here), so the deploy
template check can compare this list with what the template defines. Each setting is declared once:
its environment variable and its default, in the `env(...)` beside its name.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any, TypeVar

from .defaults import DEFAULT_BEDROCK_MODEL, DEFAULT_SELF_HOSTED_MODEL

# Environment variable -> the logical id of the resource in deploy/resources.json.
# The local bootstrap and the deploy template check both read this mapping.
RESOURCE_ENV_VARS: dict[str, str] = {
    "TENANTS_TABLE": "TenantsTable",
    "LEDGER_TABLE": "LedgerTable",
    "IDEMPOTENCY_TABLE": "IdempotencyTable",
    "POLICIES_TABLE": "PoliciesTable",
    "AGGREGATES_TABLE": "AggregatesTable",
    "BUDGETS_TABLE": "BudgetsTable",
    "DECISIONS_TABLE": "DecisionsTable",
    "DATA_BUCKET": "DataBucket",
    "JOBS_TABLE": "JobsTable",
    "JOB_STEPS_QUEUE": "JobStepsQueue",
    "EVENTS_TABLE": "EventsTable",
    "REQUESTS_QUEUE": "RequestsQueue",
    "REQUESTS_FIFO_QUEUE": "RequestsFifoQueue",
    "OBJECT_EVENTS_QUEUE": "ObjectEventsQueue",
    "REPORTS_BUCKET": "ReportsBucket",
    "METER_SPILL_QUEUE": "MeterSpillQueue",
    "CONVERSATIONS_TABLE": "ConversationsTable",
    "REGISTRY_TABLE": "RegistryTable",
}
_HERE = os.path.dirname(os.path.abspath(__file__))
T = TypeVar("T")


def env(name: str, default: T) -> T:
    """A setting read from environment variable `name`, `default` when it is unset (see `_parse`)."""
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata={"env": name})  # type: ignore[return-value]
    return field(default=default, metadata={"env": name})  # type: ignore[no-any-return]


def _parse(kind: str, raw: str | None, default: Any) -> Any:
    """Text as given (even empty); numbers and maps fall back to the default when empty; flags are "true" or not."""
    if raw is None:
        return default
    if kind == "str":
        return raw
    if kind == "bool":
        return raw.lower() == "true"
    if raw == "":
        return default
    if kind == "int":
        return int(raw)
    if kind == "float":
        return float(raw)
    return {str(k): str(v) for k, v in json.loads(raw).items()}  # dict[str, str]


G = TypeVar("G")


def from_env(group: type[G], environ: Any = None) -> G:
    """One settings group, every field from its environment variable or its default."""
    environ = os.environ if environ is None else environ
    values = {}
    for spec in fields(group):  # type: ignore[arg-type]
        default = spec.default_factory() if callable(spec.default_factory) else spec.default  # type: ignore[misc]
        values[spec.name] = _parse(str(spec.type), environ.get(spec.metadata["env"]), default)
    return group(**values)


def env_default(name: str) -> Any:
    """The default of the setting read from environment variable `name` (the local bootstrap's fallback)."""
    for group in GROUPS.values():
        for spec in fields(group):
            if spec.metadata["env"] == name:
                return spec.default_factory() if callable(spec.default_factory) else spec.default  # type: ignore[misc]
    raise KeyError(name)


@dataclass(frozen=True)
class TenantsConfig:
    table: str = env("TENANTS_TABLE", "crossover-tenants")
    cache_ttl_s: float = env("TENANT_CACHE_TTL_S", 60.0)


@dataclass(frozen=True)
class IdempotencyConfig:
    table: str = env("IDEMPOTENCY_TABLE", "crossover-idempotency")
    ttl_s: int = env("IDEMPOTENCY_TTL_S", 3600)


@dataclass(frozen=True)
class StorageConfig:
    data_bucket: str = env("DATA_BUCKET", "crossover-data")
    incoming_prefix: str = env("INCOMING_PREFIX", "incoming/")
    kms_key_id: str = env("KMS_KEY_ID", "")
    presign_ttl_s: int = env("PRESIGN_TTL_S", 900)


@dataclass(frozen=True)
class ModelsConfig:
    default_model: str = env("DEFAULT_MODEL", DEFAULT_BEDROCK_MODEL)
    # JSON object, alias -> Bedrock model id (e.g. {"claude-sonnet": <a Bedrock model id>}).
    aliases: dict[str, str] = env("MODEL_ALIASES", {})
    routing_mode: str = env("ROUTING_MODE", "bedrock")
    # Jobs start on the Batch GPU path (and fall back by themselves) unless a tenant's mode says otherwise.
    job_routing_mode: str = env("JOB_ROUTING_MODE", "self_hosted")
    self_hosted_endpoint: str = env("SELF_HOSTED_ENDPOINT", "")
    self_hosted_model: str = env("SELF_HOSTED_MODEL", DEFAULT_SELF_HOSTED_MODEL)
    # Seed 002: fall back to Bedrock when a self-hosted call passes 120 s.
    self_hosted_timeout_s: float = env("SELF_HOSTED_TIMEOUT_S", 120.0)
    bedrock_max_attempts: int = env("BEDROCK_MAX_ATTEMPTS", 4)
    bedrock_read_timeout_s: float = env("BEDROCK_READ_TIMEOUT_S", 60.0)


@dataclass(frozen=True)
class LimitsConfig:
    """Per-request limits of an agent run (a named agent may lower them, chalicelib/registry/agents.py)."""

    max_prompt_chars: int = env("MAX_PROMPT_CHARS", 32_000)
    max_agent_steps: int = env("MAX_AGENT_STEPS", 8)
    max_request_cost_usd: float = env("MAX_REQUEST_COST_USD", 1.0)
    max_output_tokens: int = env("MAX_OUTPUT_TOKENS", 4096)
    tool_timeout_s: float = env("TOOL_TIMEOUT_S", 5.0)


@dataclass(frozen=True)
class ScreeningConfig:
    policies_table: str = env("POLICIES_TABLE", "crossover-policies")
    block_threshold: float = env("SCREEN_BLOCK_THRESHOLD", 0.5)
    pii_action: str = env("SCREEN_PII_ACTION", "off")
    guardrail_enabled: bool = env("SCREEN_GUARDRAIL_ENABLED", False)
    fail_open: bool = env("SCREEN_FAIL_OPEN", False)
    managed_check_timeout_s: float = env("MANAGED_CHECK_TIMEOUT_S", 0.15)
    pii_language: str = env("PII_LANGUAGE", "en")
    guardrail_id: str = env("GUARDRAIL_ID", "")
    guardrail_version: str = env("GUARDRAIL_VERSION", "DRAFT")


@dataclass(frozen=True)
class MeterConfig:
    ledger_table: str = env("LEDGER_TABLE", "crossover-ledger")
    aggregates_table: str = env("AGGREGATES_TABLE", "crossover-aggregates")
    budgets_table: str = env("BUDGETS_TABLE", "crossover-budgets")
    decisions_table: str = env("DECISIONS_TABLE", "crossover-decisions")
    shards: int = env("METER_SHARDS", 8)
    spill_queue: str = env("METER_SPILL_QUEUE", "crossover-meter-spill")
    reports_bucket: str = env("REPORTS_BUCKET", "crossover-reports")
    report_days: int = env("REPORT_DAYS", 30)
    ops_ready: bool = env("OPS_READY", False)
    price_catalog_path: str = env("PRICE_CATALOG_PATH", os.path.join(_HERE, "meter", "catalog", "prices.json"))


@dataclass(frozen=True)
class JobsConfig:
    """Long jobs on GPU (chalicelib/jobs/timing.py orders these clocks)."""

    table: str = env("JOBS_TABLE", "crossover-jobs")
    steps_queue: str = env("JOB_STEPS_QUEUE", "crossover-job-steps")
    state_machine_arn: str = env("STATE_MACHINE_ARN", "")
    state_machine_name: str = env("STATE_MACHINE_NAME", "crossover-jobs")
    batch_job_queue: str = env("BATCH_JOB_QUEUE", "crossover-gpu")
    batch_job_definition: str = env("BATCH_JOB_DEFINITION", "crossover-worker")
    fallback_chunk_size: int = env("FALLBACK_CHUNK_SIZE", 0)  # 0: derived (jobs/timing.py)
    fallback_parallel_calls: int = env("FALLBACK_PARALLEL_CALLS", 8)
    max_input_bytes: int = env("MAX_JOB_INPUT_BYTES", 50_000_000)
    heartbeat_s: int = env("JOB_HEARTBEAT_SECONDS", 300)
    watch_interval_s: int = env("JOB_WATCH_INTERVAL_SECONDS", 60)
    capacity_timeout_s: int = env("JOB_CAPACITY_TIMEOUT_SECONDS", 1800)
    gpu_timeout_s: int = env("JOB_GPU_TIMEOUT_SECONDS", 21600)
    steps_timeout_s: int = env("JOB_STEPS_TIMEOUT_SECONDS", 900)
    # Above this fraction of failed items a job ends FAILED (0: any failed item fails the job).
    max_failed_fraction: float = env("JOB_MAX_FAILED_FRACTION", 0.0)


@dataclass(frozen=True)
class EventsConfig:
    """Work that arrives by queue or upload (chalicelib/events.py)."""

    table: str = env("EVENTS_TABLE", "crossover-events")
    requests_queue: str = env("REQUESTS_QUEUE", "crossover-requests")
    requests_fifo_queue: str = env("REQUESTS_FIFO_QUEUE", "crossover-requests.fifo")
    object_events_queue: str = env("OBJECT_EVENTS_QUEUE", "crossover-object-events")


@dataclass(frozen=True)
class ConversationsConfig:
    table: str = env("CONVERSATIONS_TABLE", "crossover-conversations")
    ttl_s: int = env("CONVERSATION_TTL_S", 30 * 86400)
    window_tokens: int = env("CONVERSATION_WINDOW_TOKENS", 16_000)


@dataclass(frozen=True)
class RegistryConfig:
    """Registered tools and named agents (chalicelib/registry/)."""

    table: str = env("REGISTRY_TABLE", "crossover-registry")
    # Registered tools run as this role, tagged with the tenant (deploy/package.py); empty locally.
    tool_role_arn: str = env("TOOL_ROLE_ARN", "")
    # Test/local only: plain http and private networks for tool endpoints (the deploy check refuses both).
    tool_allow_http: bool = env("TOOL_ALLOW_HTTP", False)
    tool_network_allowlist: str = env("TOOL_NETWORK_ALLOWLIST", "")
    tool_secret_cache_s: float = env("TOOL_SECRET_CACHE_S", 300.0)


GROUPS: dict[str, type] = {"tenants": TenantsConfig, "idempotency": IdempotencyConfig, "storage": StorageConfig,
                           "models": ModelsConfig, "limits": LimitsConfig, "screening": ScreeningConfig, "meter": MeterConfig,
                           "jobs": JobsConfig, "events": EventsConfig, "conversations": ConversationsConfig,
                           "registry": RegistryConfig}


@dataclass(frozen=True)
class Settings:
    stage: str
    tenants: TenantsConfig
    idempotency: IdempotencyConfig
    storage: StorageConfig
    models: ModelsConfig
    limits: LimitsConfig
    screening: ScreeningConfig
    meter: MeterConfig
    jobs: JobsConfig
    events: EventsConfig
    conversations: ConversationsConfig
    registry: RegistryConfig


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Read settings once per process (a warm Lambda keeps them)."""
    return Settings(stage=os.environ.get("STAGE", "dev"), **{name: from_env(group) for name, group in GROUPS.items()})
