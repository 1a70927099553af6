"""The task-token protocol between the workflow, job_steps and the Batch worker.

Standard library only: the worker image (worker/Dockerfile) ships this file beside worker/ and
imports nothing else from chalicelib. The error names here are the ones the state machine catches
(statemachines/long_job.asl.json); tests check the two agree.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

# Errors the worker answers with SendTaskFailure (the workflow resumes on the first two, else falls back).
WORKER_INTERRUPTED = "Worker.Interrupted"      # SIGTERM (spot reclaim, terminate): finished items checkpointed
WORKER_TRANSIENT = "Worker.Transient"          # an AWS call failed after retries: run again from the checkpoint
WORKER_MODEL_UNAVAILABLE = "Worker.ModelUnavailable"  # no weights, or the model server never came up
# Errors job_steps answers on the worker's behalf.
WORKER_BAD_REPORT = "Worker.BadReport"         # the worker's SendTaskSuccess output did not validate
WORKER_ITEMS_FAILED = "Worker.ItemsFailed"     # the GPU run had failed items: those go to Bedrock
BATCH_HOST_TERMINATED = "Batch.HostTerminated"  # the instance went away: resume, as for an interruption
BATCH_JOB_FAILED = "Batch.JobFailed"
BATCH_NO_CAPACITY = "Batch.NoCapacity"
JOB_CANCELLED = "Job.Cancelled"
JOB_MISSING = "Job.Missing"
JOB_SUPERSEDED = "Job.Superseded"               # the job changed under a step (the step's write was refused)
JOB_ITEMS_FAILED = "Job.ItemsFailed"
MODEL_THROTTLED = "Model.Throttled"
# Not a failure: the router sent the job straight to Bedrock (the workflow's RoutedToBedrock state sets it).
ROUTED_TO_BEDROCK = "Routing.Bedrock"

# What Step Functions answers for a token nobody waits on any more (timed out, cancelled, answered).
STALE_TOKEN_ERRORS = frozenset({"TaskTimedOut", "InvalidToken", "TaskDoesNotExist"})

# Step Functions' limits on SendTaskFailure.
MAX_ERROR_CHARS = 256
MAX_CAUSE_CHARS = 32768


def _error_code(exc: BaseException) -> str | None:
    """A ClientError's code. chalicelib.aws.error_code does this for the Lambdas; the worker image
    carries this module only (stdlib), so it keeps its own four lines."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return None
    code = (response.get("Error") or {}).get("Code")
    return str(code) if code is not None else None


def stale_token_code(exc: BaseException) -> str | None:
    """The error code when `exc` says the workflow no longer waits on the token, else None."""
    code = _error_code(exc)
    return code if code in STALE_TOKEN_ERRORS else None


def failure(error: str, cause: str) -> dict[str, str]:
    """SendTaskFailure's arguments, cut to Step Functions' limits."""
    return {"error": error[:MAX_ERROR_CHARS], "cause": cause[:MAX_CAUSE_CHARS]}


@dataclass(frozen=True)
class WorkerJob:
    """What job_steps hands the worker through the Batch job's environment (one name per field)."""

    job_id: str
    tenant: str
    task_token: str
    trace_id: str
    bucket: str
    input_key: str
    result_key: str
    checkpoint_key: str
    max_tokens: int
    system_prompt: str
    kms_key_id: str


ENV_NAMES: dict[str, str] = {
    "job_id": "JOB_ID", "tenant": "TENANT", "task_token": "TASK_TOKEN", "trace_id": "TRACE_ID", "bucket": "DATA_BUCKET",
    "input_key": "INPUT_KEY", "result_key": "RESULT_KEY", "checkpoint_key": "CHECKPOINT_KEY", "max_tokens": "MAX_TOKENS",
    "system_prompt": "SYSTEM_PROMPT", "kms_key_id": "KMS_KEY_ID",
}
_OPTIONAL = {"trace_id": "", "max_tokens": "512", "system_prompt": "", "kms_key_id": ""}


def to_env(job: WorkerJob) -> dict[str, str]:
    return {ENV_NAMES[field.name]: str(getattr(job, field.name)) for field in fields(WorkerJob)}


def from_env(env: Mapping[str, str]) -> WorkerJob:
    """KeyError names the missing variable when a required one is absent."""
    values: dict[str, Any] = {}
    for field in fields(WorkerJob):
        name = ENV_NAMES[field.name]
        values[field.name] = env[name] if field.name not in _OPTIONAL else env.get(name, _OPTIONAL[field.name])
    values["max_tokens"] = int(values["max_tokens"])
    return WorkerJob(**values)


# Typed reads of the worker's tuning variables (and the service's settings): an empty value means the default.
def env_str(name: str, default: str, env: Mapping[str, str] | None = None) -> str:
    raw = (os.environ if env is None else env).get(name)
    return raw if raw not in (None, "") else default


def env_int(name: str, default: int, env: Mapping[str, str] | None = None) -> int:
    return int(env_str(name, str(default), env))


def env_float(name: str, default: float, env: Mapping[str, str] | None = None) -> float:
    return float(env_str(name, repr(default), env))
