"""How long each part of a long job may take, derived in one place from the work it does.

    capacity phase (SUBMITTED..STARTING)  <= capacity_timeout   (job_steps heartbeats for it)
    Batch attempt (RUNNING)               <= batch_attempt      (Batch's own timeout: SIGTERM, checkpoint)
    workflow GPU step                      = capacity + attempt + margin   (so Batch always ends first)

and a Bedrock fallback chunk: items x worst-case time per item, run `parallel` at a time, must fit
the job-steps function's timeout less a margin. `deploy/package.py` and `devstack/bootstrap.py`
both read these numbers; tests/integration/test_deploy.py checks them on the packaged template.
"""
from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict

# After Batch's attempt timeout: SIGTERM, the worker's checkpoint (Batch waits 30 s before
# SIGKILL), the FAILED event through EventBridge, and a job-steps round trip.
GPU_STEP_MARGIN_S = 600
# botocore's standard retry mode sleeps at most 20 s between attempts.
MAX_RETRY_BACKOFF_S = 20.0
CHUNK_MARGIN_FRACTION = 0.2  # of the function timeout: S3 reads/writes, metering, cold start
# chalicelib/models/bedrock.py: bedrock_config connects within 5 s.


class GpuTimeouts(BaseModel):
    model_config = ConfigDict(frozen=True)

    heartbeat_s: int  # the worker (and, before it runs, job_steps) must heartbeat at least this often
    watch_interval_s: int  # job_steps looks at a queued Batch job this often (and heartbeats)
    capacity_timeout_s: int  # queued/starting longer than this: terminate, fall back (Batch.NoCapacity)
    batch_attempt_s: int  # the job definition's attempt timeout
    gpu_step_s: int  # the workflow's RunOnGpu TimeoutSeconds


def gpu_timeouts(heartbeat_s: int, watch_interval_s: int, capacity_timeout_s: int, batch_attempt_s: int) -> GpuTimeouts:
    """Order the GPU path's clocks; refuse settings under which a clock would fire out of order."""
    if not 0 < watch_interval_s * 2 <= heartbeat_s:
        raise ValueError(f"the capacity watch ({watch_interval_s} s) must run at least twice per heartbeat window ({heartbeat_s} s)")
    if watch_interval_s > 900:
        raise ValueError("the capacity watch is an SQS delay: at most 900 s")
    if capacity_timeout_s < heartbeat_s:
        raise ValueError("the capacity timeout must be longer than one heartbeat window")
    return GpuTimeouts(heartbeat_s=heartbeat_s, watch_interval_s=watch_interval_s, capacity_timeout_s=capacity_timeout_s,
                       batch_attempt_s=batch_attempt_s, gpu_step_s=capacity_timeout_s + batch_attempt_s + GPU_STEP_MARGIN_S)


def runtime_gpu_timeouts(settings: Any) -> GpuTimeouts:
    """The clocks for running code: settings that `make package` would refuse are clipped into order
    (tests and the local stack shorten the heartbeat to seconds)."""
    heartbeat = settings.jobs.heartbeat_s
    return gpu_timeouts(heartbeat, max(1, min(settings.jobs.watch_interval_s, heartbeat // 2)),
                        max(settings.jobs.capacity_timeout_s, heartbeat), settings.jobs.gpu_timeout_s)


def per_call_worst_s(read_timeout_s: float, attempts: int, connect_timeout_s: float = 5.0) -> float:
    """The longest one Bedrock call can take through botocore's retries (every attempt timing out)."""
    return attempts * (connect_timeout_s + read_timeout_s) + (attempts - 1) * MAX_RETRY_BACKOFF_S


def fallback_chunk_size(function_timeout_s: float, read_timeout_s: float, attempts: int, parallel_calls: int,
                        calls_per_item: int = 1, connect_timeout_s: float = 5.0) -> int:
    """Items per fallback chunk so that the chunk finishes inside its Lambda even if every call is
    as slow as botocore allows: rounds of `parallel_calls` items, each round the worst-case item."""
    usable = function_timeout_s * (1 - CHUNK_MARGIN_FRACTION)
    per_item = per_call_worst_s(read_timeout_s, attempts, connect_timeout_s) * calls_per_item
    rounds = math.floor(usable / per_item)
    if rounds < 1:
        raise ValueError(f"one fallback item can take {per_item:.0f} s, more than {usable:.0f} s of a {function_timeout_s:.0f} s function")
    return rounds * parallel_calls
