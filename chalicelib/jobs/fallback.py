"""The Bedrock fallback of a long job: how its items are cut into Lambda-sized chunks, how a chunk
runs (metered per item, checkpointed to S3), and how the chunks merge into the job's result."""
from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from .. import aws, storage
from ..agent.loop import AgentLimits, run_agent, user_text
from ..errors import CrossoverError, Throttled
from ..meter.ledger import LedgerEntry
from ..core import Usage
from ..meter.pricing import price_usage
from ..services import Services
from .inputs import read_prompts
from .models import Job
from .timing import fallback_chunk_size


def chunk_size(settings: Any) -> int:
    """Items per fallback chunk: what fits the job-steps function (timing.fallback_chunk_size);
    FALLBACK_CHUNK_SIZE may only make it smaller."""
    fits = fallback_chunk_size(settings.jobs.steps_timeout_s, settings.models.bedrock_read_timeout_s, settings.models.bedrock_max_attempts,
                               settings.jobs.fallback_parallel_calls)
    return min(fits, settings.jobs.fallback_chunk_size) if settings.jobs.fallback_chunk_size > 0 else fits


def plan_chunks(items: int, size: int) -> list[dict[str, int]]:
    """The whole job, as ranges of item indexes."""
    return [{"index": n, "start": start, "end": min(start + size, items)} for n, start in enumerate(range(0, items, size))]


def plan_item_chunks(items: list[int], size: int) -> list[dict[str, Any]]:
    """Only these items (a GPU run's failed ones), as lists of indexes."""
    return [{"index": n, "items": items[start:start + size]} for n, start in enumerate(range(0, len(items), size))]


class FallbackRunner:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.settings = services.settings

    def read_rows(self, key: str) -> list[dict[str, Any]]:
        try:
            text = storage.get_text(self.settings.storage.data_bucket, key, self.settings.jobs.max_input_bytes * 4)
        except Exception as exc:
            if aws.error_code(exc) in ("NoSuchKey", "404"):
                return []
            raise
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def run_chunk(self, job: Job, chunk: dict[str, Any], trace_id: str) -> dict[str, Any] | None:
        """Run a chunk's items on Bedrock, `FALLBACK_PARALLEL_CALLS` at a time. Each finished item is
        metered at once under its own id and checkpointed, so a chunk cut short (Lambda timeout,
        throttling) is metered for every call it made, and its retry runs only the items left.
        The chunk's totals, or None when Bedrock throttled (the rest wait for the workflow's retry)."""
        index = int(chunk["index"])
        settings = self.settings
        prompts = read_prompts(storage.get_text(settings.storage.data_bucket, job.input_key, settings.jobs.max_input_bytes))
        wanted = [int(i) for i in chunk["items"]] if "items" in chunk else list(range(int(chunk["start"]), int(chunk["end"])))
        key = storage.tenant_key("results", job.tenant, job.job_id, f"fallback-chunk-{index:05d}.jsonl")
        done = {row["index"]: row for row in self.read_rows(key)}
        price = self.services.catalog.token_price(job.model)
        if self._run_items(job, trace_id, key, price, {i: prompts[i] for i in wanted}, done):
            return None
        rows = [done[i] for i in sorted(done)]
        usage = sum((Usage.model_validate(row["usage"]) for row in rows if "usage" in row), Usage())
        cost = price_usage(usage, price)
        return {"index": index, "key": key, "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                "cost_usd": str(cost) if cost is not None else None}

    def _run_items(self, job: Job, trace_id: str, key: str, price: Any, prompts: dict[int, str], done: dict[int, dict[str, Any]]) -> bool:
        """Fill `done` with a row per item (output or error); True if Bedrock throttled."""
        backend = self.services.backends["bedrock"]
        limits = AgentLimits(max_steps=1, max_cost_usd=Decimal(str(self.settings.limits.max_request_cost_usd)),
                             max_tokens=min(job.max_tokens, self.settings.limits.max_output_tokens), tool_timeout_s=1)
        lock, throttled = threading.Lock(), threading.Event()

        def run(item: int) -> None:
            if throttled.is_set():
                return
            try:
                result = run_agent(backend, job.model, [user_text(prompts[item])], job.system or None, [], None, limits,
                                   price=lambda u: price_usage(u, price))
            except Throttled:
                throttled.set()
                return
            except CrossoverError as exc:
                row: dict[str, Any] = {"index": item, "error": {"code": exc.code, "message": exc.message}}
            else:
                row = {"index": item, "output": result.output, "stop_reason": result.stop_reason, "usage": result.usage.model_dump()}
                # One ledger row per item, named after the item: a redelivered or retried chunk that meters
                # it again is deduplicated by the ledger, and the checkpoint below stops it calling again.
                self._meter(job, f"{job.job_id}#fallback#{item}", result.usage, price_usage(result.usage, price), trace_id)
            with lock:
                done[item] = row
                storage.put_text(self.settings.storage.data_bucket, key, storage.jsonl([done[i] for i in sorted(done)]),
                                 self.settings.storage.kms_key_id, job.tenant)

        todo = [item for item in sorted(prompts) if item not in done]
        with ThreadPoolExecutor(max_workers=max(1, self.settings.jobs.fallback_parallel_calls), thread_name_prefix="fallback") as pool:
            list(pool.map(run, todo))
        return throttled.is_set()

    def _meter(self, job: Job, record_id: str, usage: Usage, cost: Decimal | None, trace_id: str) -> None:
        self.services.meter.record(LedgerEntry(
            request_id=record_id, tenant=job.tenant, model=job.model, backend="bedrock", kind="fallback", usage=usage, cost_usd=cost,
            catalog_version=self.services.catalog.version, trace_id=trace_id or job.trace_id, created_at=datetime.now(timezone.utc),
        ))

    def merge(self, job: Job, chunks: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Write the job's result from its chunks (and, for a per-item fallback, the GPU run's rows);
        the job fields to record and its failed items."""
        chunks = sorted(chunks, key=lambda c: int(c["index"]))
        rows = {row["index"]: row for chunk in chunks for row in self.read_rows(chunk["key"])}
        result_key = storage.tenant_key("results", job.tenant, job.job_id, "output.jsonl")
        costs = [Decimal(c["cost_usd"]) for c in chunks if c.get("cost_usd") is not None]
        usage = {"input_tokens": sum(int(c["input_tokens"]) for c in chunks), "output_tokens": sum(int(c["output_tokens"]) for c in chunks)}
        cost = sum(costs) if len(costs) == len(chunks) else None
        backend = "bedrock"
        if job.gpu_result_key:  # a per-item fallback: the Bedrock rows replace the GPU run's failed ones
            rows = {**{row["index"]: row for row in self.read_rows(job.gpu_result_key)}, **rows}
            usage = {name: usage[name] + int((job.gpu_usage or {})[name]) for name in usage}
            cost = cost + Decimal(job.gpu_cost_usd) if cost is not None and job.gpu_cost_usd is not None else None
            backend = "self_hosted"
        ordered = [rows[i] for i in sorted(rows)]
        storage.put_text(self.settings.storage.data_bucket, result_key, storage.jsonl(ordered), self.settings.storage.kms_key_id, job.tenant)
        failed = [row["index"] for row in ordered if "error" in row]
        return ({"backend": backend, "result_key": result_key, "usage": usage, "cost_usd": float(cost) if cost is not None else None},
                {"count": len(failed), "indexes": failed[:1000]})
