"""Settings read from environment variables, with documented defaults.

Every AWS resource the code touches is named here (and only here), so the deploy
template check can compare this list with what the template defines.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

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


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw not in (None, "") else default


def _env_json_map(name: str) -> dict[str, str]:
    import json

    raw = os.environ.get(name)
    return {str(k): str(v) for k, v in json.loads(raw).items()} if raw else {}


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return float(raw) if raw not in (None, "") else default


@dataclass(frozen=True)
class Settings:
    stage: str
    tenants_table: str
    ledger_table: str
    idempotency_table: str
    policies_table: str
    aggregates_table: str
    budgets_table: str
    decisions_table: str
    meter_shards: int
    data_bucket: str
    jobs_table: str
    events_table: str
    requests_queue: str
    requests_fifo_queue: str
    object_events_queue: str
    meter_spill_queue: str
    incoming_prefix: str
    job_steps_queue: str
    state_machine_arn: str
    state_machine_name: str
    batch_job_queue: str
    batch_job_definition: str
    fallback_chunk_size: int
    presign_ttl_s: int
    max_job_input_bytes: int
    reports_bucket: str
    kms_key_id: str
    report_days: int
    routing_mode: str
    job_routing_mode: str
    self_hosted_endpoint: str
    self_hosted_model: str
    self_hosted_timeout_s: float
    ops_ready: bool
    default_model: str
    price_catalog_path: str
    max_prompt_chars: int
    max_agent_steps: int
    max_request_cost_usd: float
    max_output_tokens: int
    tool_timeout_s: float
    bedrock_max_attempts: int
    bedrock_read_timeout_s: float
    idempotency_ttl_s: int
    tenant_cache_ttl_s: float
    screen_block_threshold: float
    screen_pii_action: str
    screen_guardrail_enabled: bool
    screen_fail_open: bool
    managed_check_timeout_s: float
    pii_language: str
    guardrail_id: str
    guardrail_version: str
    conversations_table: str
    conversation_ttl_s: int
    conversation_window_tokens: int
    model_aliases: dict[str, str]
    # Long jobs on GPU (chalicelib/jobs/timing.py orders these clocks).
    job_heartbeat_s: int = 300
    job_watch_interval_s: int = 60
    job_capacity_timeout_s: int = 1800
    job_gpu_timeout_s: int = 21600
    job_steps_timeout_s: int = 900
    fallback_parallel_calls: int = 8
    job_max_failed_fraction: float = 0.0
    # Registered tools and named agents (chalicelib/registry/).
    registry_table: str = "crossover-registry"
    tool_role_arn: str = ""
    tool_allow_http: bool = False
    tool_network_allowlist: str = ""
    tool_secret_cache_s: float = 300.0


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Read settings once per process (a warm Lambda keeps them)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return Settings(
        stage=os.environ.get("STAGE", "dev"),
        tenants_table=os.environ.get("TENANTS_TABLE", "crossover-tenants"),
        ledger_table=os.environ.get("LEDGER_TABLE", "crossover-ledger"),
        idempotency_table=os.environ.get("IDEMPOTENCY_TABLE", "crossover-idempotency"),
        policies_table=os.environ.get("POLICIES_TABLE", "crossover-policies"),
        aggregates_table=os.environ.get("AGGREGATES_TABLE", "crossover-aggregates"),
        budgets_table=os.environ.get("BUDGETS_TABLE", "crossover-budgets"),
        decisions_table=os.environ.get("DECISIONS_TABLE", "crossover-decisions"),
        meter_shards=_env_int("METER_SHARDS", 8),
        data_bucket=os.environ.get("DATA_BUCKET", "crossover-data"),
        jobs_table=os.environ.get("JOBS_TABLE", "crossover-jobs"),
        events_table=os.environ.get("EVENTS_TABLE", "crossover-events"),
        requests_queue=os.environ.get("REQUESTS_QUEUE", "crossover-requests"),
        requests_fifo_queue=os.environ.get("REQUESTS_FIFO_QUEUE", "crossover-requests.fifo"),
        object_events_queue=os.environ.get("OBJECT_EVENTS_QUEUE", "crossover-object-events"),
        meter_spill_queue=os.environ.get("METER_SPILL_QUEUE", "crossover-meter-spill"),
        incoming_prefix=os.environ.get("INCOMING_PREFIX", "incoming/"),
        job_steps_queue=os.environ.get("JOB_STEPS_QUEUE", "crossover-job-steps"),
        state_machine_arn=os.environ.get("STATE_MACHINE_ARN", ""),
        state_machine_name=os.environ.get("STATE_MACHINE_NAME", "crossover-jobs"),
        batch_job_queue=os.environ.get("BATCH_JOB_QUEUE", "crossover-gpu"),
        batch_job_definition=os.environ.get("BATCH_JOB_DEFINITION", "crossover-worker"),
        fallback_chunk_size=_env_int("FALLBACK_CHUNK_SIZE", 0),  # 0: derived (jobs/timing.py)
        presign_ttl_s=_env_int("PRESIGN_TTL_S", 900),
        max_job_input_bytes=_env_int("MAX_JOB_INPUT_BYTES", 50_000_000),
        reports_bucket=os.environ.get("REPORTS_BUCKET", "crossover-reports"),
        kms_key_id=os.environ.get("KMS_KEY_ID", ""),
        report_days=_env_int("REPORT_DAYS", 30),
        routing_mode=os.environ.get("ROUTING_MODE", "bedrock"),
        # Jobs start on the Batch GPU path (and fall back by themselves) unless a tenant's mode says otherwise.
        job_routing_mode=os.environ.get("JOB_ROUTING_MODE", "self_hosted"),
        self_hosted_endpoint=os.environ.get("SELF_HOSTED_ENDPOINT", ""),
        self_hosted_model=os.environ.get("SELF_HOSTED_MODEL", DEFAULT_SELF_HOSTED_MODEL),
        # Seed 002: fall back to Bedrock when a self-hosted call passes 120 s.
        self_hosted_timeout_s=_env_float("SELF_HOSTED_TIMEOUT_S", 120.0),
        ops_ready=os.environ.get("OPS_READY", "false").lower() == "true",
        default_model=os.environ.get("DEFAULT_MODEL", DEFAULT_BEDROCK_MODEL),
        price_catalog_path=os.environ.get(
            "PRICE_CATALOG_PATH", os.path.join(here, "meter", "catalog", "prices.json")
        ),
        max_prompt_chars=_env_int("MAX_PROMPT_CHARS", 32_000),
        max_agent_steps=_env_int("MAX_AGENT_STEPS", 8),
        max_request_cost_usd=_env_float("MAX_REQUEST_COST_USD", 1.0),
        max_output_tokens=_env_int("MAX_OUTPUT_TOKENS", 4096),
        tool_timeout_s=_env_float("TOOL_TIMEOUT_S", 5.0),
        bedrock_max_attempts=_env_int("BEDROCK_MAX_ATTEMPTS", 4),
        bedrock_read_timeout_s=_env_float("BEDROCK_READ_TIMEOUT_S", 60.0),
        idempotency_ttl_s=_env_int("IDEMPOTENCY_TTL_S", 3600),
        tenant_cache_ttl_s=_env_float("TENANT_CACHE_TTL_S", 60.0),
        screen_block_threshold=_env_float("SCREEN_BLOCK_THRESHOLD", 0.5),
        screen_pii_action=os.environ.get("SCREEN_PII_ACTION", "off"),
        screen_guardrail_enabled=os.environ.get("SCREEN_GUARDRAIL_ENABLED", "false").lower() == "true",
        screen_fail_open=os.environ.get("SCREEN_FAIL_OPEN", "false").lower() == "true",
        managed_check_timeout_s=_env_float("MANAGED_CHECK_TIMEOUT_S", 0.15),
        pii_language=os.environ.get("PII_LANGUAGE", "en"),
        guardrail_id=os.environ.get("GUARDRAIL_ID", ""),
        guardrail_version=os.environ.get("GUARDRAIL_VERSION", "DRAFT"),
        job_heartbeat_s=_env_int("JOB_HEARTBEAT_SECONDS", 300),
        job_watch_interval_s=_env_int("JOB_WATCH_INTERVAL_SECONDS", 60),
        job_capacity_timeout_s=_env_int("JOB_CAPACITY_TIMEOUT_SECONDS", 1800),
        job_gpu_timeout_s=_env_int("JOB_GPU_TIMEOUT_SECONDS", 21600),
        job_steps_timeout_s=_env_int("JOB_STEPS_TIMEOUT_SECONDS", 900),
        fallback_parallel_calls=_env_int("FALLBACK_PARALLEL_CALLS", 8),
        # Above this fraction of failed items a job ends FAILED (0: any failed item fails the job).
        job_max_failed_fraction=_env_float("JOB_MAX_FAILED_FRACTION", 0.0),
        conversations_table=os.environ.get("CONVERSATIONS_TABLE", "crossover-conversations"),
        conversation_ttl_s=_env_int("CONVERSATION_TTL_S", 30 * 86400),
        conversation_window_tokens=_env_int("CONVERSATION_WINDOW_TOKENS", 16_000),
        # JSON object, alias -> Bedrock model id (e.g. {"claude-sonnet": <a Bedrock model id>}).
        model_aliases=_env_json_map("MODEL_ALIASES"),
        registry_table=os.environ.get("REGISTRY_TABLE", "crossover-registry"),
        # Registered tools run as this role, tagged with the tenant (deploy/package.py); empty locally.
        tool_role_arn=os.environ.get("TOOL_ROLE_ARN", ""),
        # Test/local only: plain http and private networks for tool endpoints (the deploy check refuses both).
        tool_allow_http=os.environ.get("TOOL_ALLOW_HTTP", "false").lower() == "true",
        tool_network_allowlist=os.environ.get("TOOL_NETWORK_ALLOWLIST", ""),
        tool_secret_cache_s=_env_float("TOOL_SECRET_CACHE_S", 300.0),
    )
