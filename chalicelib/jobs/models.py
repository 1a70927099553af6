"""Job shapes at every boundary: HTTP body, job record, workflow step messages, worker report."""
from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from ..api_schemas import MODEL_ID_PATTERN
from ..basemodel import BaseModel  # pydantic's, built on first use (chalicelib/basemodel.py)
from .lifecycle import JobStatus

MAX_INLINE_BYTES = 256 * 1024
_S3_URI = re.compile(r"^s3://(?P<bucket>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])/(?P<key>[^\s]{1,1024})$")


class JobInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompts: list[str] = Field(min_length=1, max_length=10_000)

    @field_validator("prompts")
    @classmethod
    def non_empty(cls, prompts: list[str]) -> list[str]:
        if any(not prompt.strip() for prompt in prompts):
            raise ValueError("every prompt must be non-empty")
        return prompts


class JobRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"example": {"kind": "batch_prompts", "input": {"prompts": ["Summarise: ..."]}}})

    kind: Literal["batch_prompts", "generate"] = "batch_prompts"
    input: JobInput | None = Field(default=None, description="Inline prompts (the whole body must stay under 256 KB).")
    input_uri: str | None = Field(default=None, description="s3://<data bucket>/inputs/<tenant>/...jsonl, one {\"prompt\": ...} per line.")
    model: str | None = Field(default=None, pattern=MODEL_ID_PATTERN, description="Bedrock model for the fallback path.")
    system: str | None = Field(default=None, max_length=16_000)
    max_tokens: int = Field(default=512, ge=1, le=32_768)
    fallback: bool = Field(default=True, description="Fall back to Bedrock if the GPU path fails or times out.")

    @model_validator(mode="after")
    def one_input(self) -> "JobRequest":
        if (self.input is None) == (self.input_uri is None):
            raise ValueError("give exactly one of input or input_uri")
        if self.input_uri is not None and not _S3_URI.match(self.input_uri):
            raise ValueError("input_uri must look like s3://bucket/key")
        if self.kind == "generate" and self.input is not None and len(self.input.prompts) != 1:
            raise ValueError("a generate job takes exactly one prompt")
        return self


def parse_s3_uri(uri: str) -> tuple[str, str]:
    match = _S3_URI.match(uri)
    if not match:
        raise ValueError(f"not an s3:// URI: {uri!r}")
    return match["bucket"], match["key"]


class JobAccepted(BaseModel):
    model_config = ConfigDict(use_enum_values=True)

    job_id: str
    status: JobStatus


class JobView(BaseModel):
    """What GET /v1/jobs/{id} answers."""

    model_config = ConfigDict(use_enum_values=True)

    job_id: str
    status: JobStatus
    kind: str
    route: str = Field(description="Where the router sent the job at submit: self_hosted (the Batch GPU path) or bedrock.")
    backend: str | None = None
    fallback_reason: str | None = Field(default=None, description="Why the job (or some of its items) ran on Bedrock "
                                        "instead of the GPU path, e.g. Batch.NoCapacity; null when it did not.")
    created_at: str
    updated_at: str
    items: int
    usage: dict[str, int] | None = None
    cost_usd: float | None = None
    gpu_seconds: float | None = None
    failed_items: dict[str, Any] | None = None
    result_url: str | None = None
    error: dict[str, str] | None = None
    trace_id: str


class Job(BaseModel):
    """The job record (one jobs-table item). Its status changes only through JobStore.transition,
    which checks chalicelib/jobs/lifecycle.py's table."""

    model_config = ConfigDict(extra="ignore", use_enum_values=False)

    job_id: str
    tenant: str
    status: JobStatus
    kind: str
    items: int
    model: str
    system: str = ""
    max_tokens: int
    fallback: bool = True
    # Where the router sent the job at submit (chalicelib/router.py: route_job): "self_hosted" starts on the GPU,
    # "bedrock" goes straight to the Bedrock path (the ASL's Route choice).
    route: str = "self_hosted"
    input_key: str
    trace_id: str = ""
    source: str = "api"
    created_at: str
    updated_at: str
    execution_arn: str | None = None
    # The GPU path: the Batch job of the current attempt and the task token it answers.
    backend: str | None = None
    batch_job_id: str | None = None
    task_token: str | None = None
    submitted_attempt: int | None = None
    attempts: int = 0
    batch_submitted_at: float | None = None
    watch: int = 0
    batch_failure_reason: str | None = None
    # A GPU run whose failed items go to Bedrock (merged by the merge_fallback step).
    gpu_result_key: str | None = None
    gpu_usage: dict[str, int] | None = None
    gpu_cost_usd: str | None = None
    fallback_reason: str | None = None
    fallback_items: int | None = None
    # The outcome.
    result_key: str | None = None
    usage: dict[str, int] | None = None
    cost_usd: float | None = None
    gpu_seconds: float | None = None
    failed_items: dict[str, Any] | None = None
    model_load: dict[str, Any] | None = None
    error: dict[str, str] | None = None


JOB_FIELDS = frozenset(Job.model_fields)


class StepMessage(BaseModel):
    """A workflow step handed to job_steps through SQS (validated: a poison message fails alone)."""

    model_config = ConfigDict(extra="ignore")

    action: Literal["submit_batch", "watch_batch", "record_result", "plan_fallback", "fallback_chunk", "merge_fallback", "mark_failed"]
    job_id: str = Field(min_length=1, max_length=64)
    trace_id: str = ""
    task_token: str = Field(min_length=1)
    attempt: int = Field(default=0, ge=0)  # resume count: an SQS redelivery of the same attempt must not resubmit
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    chunk: dict[str, Any] | None = None
    chunks: list[dict[str, Any]] | None = None
    items: list[int] | None = None  # plan_fallback: only these items (the GPU run's failed ones)
    batch_job_id: str | None = None  # watch_batch: the Batch job whose queueing it watches
    watch: int = Field(default=0, ge=0)  # watch_batch: its place in the chain (a redelivered watch is dropped)


class WorkerReport(BaseModel):
    """What the Batch worker sends with SendTaskSuccess."""

    model_config = ConfigDict(extra="ignore")

    result_uri: str
    items: int
    input_tokens: int
    output_tokens: int
    wall_seconds: float
    gpu_seconds: float
    instance_type: str
    model: str
    failed_items: FailedItems = Field(default_factory=lambda: FailedItems(count=0, indexes=[]))
    model_load: dict[str, Any] | None = None  # where the weights came from and how long sync and load took


class FailedItems(BaseModel):
    count: int = Field(ge=0)
    indexes: list[int] = Field(default_factory=list)  # the first ones (the result has every item's error)
