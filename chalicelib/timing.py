"""Time budgets, in one place: the API's deadline, and how the SQS consumers take their records.

AWS limits that decide these numbers (documented, not enforced by moto):
- API Gateway (REST) ends an integration at 29 s and answers 504 itself, whatever the Lambda does next.
- A Lambda event source mapping on SQS: the queue's visibility timeout should be at least six times the
  function's timeout (plus the batching window), or records in flight reappear while being worked on.
- A timed-out batch goes back whole: every record's receive count rises, so a batch may only hold what
  fits the function's timeout with margin, or healthy records reach the dead-letter queue.
The function timeouts themselves are per function in .chalice/config.json; deploy/package.py derives the
queues and event source mappings from them and from CONSUMERS below, and refuses a pair that cannot fit.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

API_GATEWAY_LIMIT_S = 29.0
# Kept back from the deadline to settle the budget, write the ledger and answer (a few DynamoDB writes).
ANSWER_RESERVE_S = 2.0
# The API's p99 latency alarm: below API Gateway's limit, so it can fire before clients see 504s.
API_P99_ALARM_MS = 20_000
VISIBILITY_FACTOR = 6  # AWS: visibility timeout >= 6 x function timeout
MAX_RECEIVE_COUNT = 5  # AWS recommends >= 5, so a throttled or timed-out record gets several tries


@dataclass(frozen=True)
class Deadline:
    """A point on the monotonic clock by which work must stop (and still leave time to answer)."""

    at: float

    @classmethod
    def after(cls, seconds: float) -> "Deadline":
        return cls(time.monotonic() + seconds)

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def expired(self) -> bool:
        return self.remaining() <= 0


def request_deadline(lambda_remaining_s: float | None, behind_api_gateway: bool) -> Deadline | None:
    """The deadline of one request: the Lambda's remaining time (and API Gateway's 29 s in front of
    the API) less the time kept back to answer. None where nothing bounds it (local tools, tests)."""
    limits = [s for s in (lambda_remaining_s, API_GATEWAY_LIMIT_S if behind_api_gateway else None) if s is not None]
    if not limits:
        return None
    return Deadline.after(max(0.0, min(limits) - ANSWER_RESERVE_S))


def lambda_deadline(context: object) -> Deadline | None:
    """The deadline of work inside one queue-triggered invocation: stop (and meter what ran) before the
    Lambda's own timeout would kill it unmetered and return the record for a paid re-run."""
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    return request_deadline(remaining() / 1000, behind_api_gateway=False) if callable(remaining) else None


@dataclass(frozen=True)
class Consumer:
    """How one SQS consumer takes records. `record_s` is the longest one record may run (its own
    deadline comes from the Lambda's remaining time, so a whole-invoke record is the function's timeout)."""

    queue: str  # the queue's logical id in deploy/resources.json
    batch_size: int
    record_s: float | None  # None: one record may use the whole function timeout
    max_concurrency: int  # ScalingConfig.MaximumConcurrency: Lambda's poller never over-receives
    batching_window_s: int = 0


# Records that run a whole agent invoke (Bedrock calls with retries) take one per invocation: a timeout
# then returns that record alone. Spilled ledger entries are single DynamoDB writes.
CONSUMERS: dict[str, Consumer] = {
    "job_steps": Consumer("JobStepsQueue", batch_size=1, record_s=None, max_concurrency=20),
    "requests": Consumer("RequestsQueue", batch_size=1, record_s=None, max_concurrency=50),
    "requests_fifo": Consumer("RequestsFifoQueue", batch_size=1, record_s=None, max_concurrency=20),
    "object_events": Consumer("ObjectEventsQueue", batch_size=1, record_s=None, max_concurrency=20),
    "meter_spill": Consumer("MeterSpillQueue", batch_size=10, record_s=2.0, max_concurrency=5, batching_window_s=5),
}


def visibility_timeout_s(function_timeout_s: int, consumer: Consumer) -> int:
    return VISIBILITY_FACTOR * function_timeout_s + consumer.batching_window_s


def check_consumer(name: str, function_timeout_s: int, consumer: Consumer) -> None:
    """Refuse a batch that cannot finish inside its function's timeout (with the answer reserve)."""
    if consumer.record_s is None:
        if consumer.batch_size != 1:
            raise ValueError(f"{name}: a record that may take the whole timeout needs batch size 1")
    elif consumer.batch_size * consumer.record_s + ANSWER_RESERVE_S > function_timeout_s:
        raise ValueError(f"{name}: {consumer.batch_size} records x {consumer.record_s}s do not fit {function_timeout_s}s")
    if not 2 <= consumer.max_concurrency <= 1000:
        raise ValueError(f"{name}: MaximumConcurrency must be 2..1000")  # the event source mapping's range
