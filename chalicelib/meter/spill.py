"""No metered call is lost: when the ledger refuses a write, the entry is buffered and replayed.

Order of defences after a paid model call:
1. botocore retries throttling itself (standard mode, backoff with jitter);
2. if DynamoDB still refuses, the complete entry goes to the meter-spill SQS queue, whose handler
   replays it into the ledger (SQS redelivers with its visibility timeout, then dead-letters);
3. if SQS refuses too, the entry is logged whole as `meter.record_failed`, and
   `crossover meter replay --log FILE` writes such lines back.

Every path ends in `Ledger.record`, which is idempotent on the request id, so a replay of an entry
that did get written (a timeout after DynamoDB committed) counts nothing twice.
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Literal

from .. import aws
from ..observability import logger, metrics
from .ledger import Ledger, LedgerEntry

Outcome = Literal["written", "duplicate", "spilled", "logged"]


class MeterWriter:
    def __init__(self, ledger: Ledger, spill_queue: str, sqs: Any | None = None) -> None:
        self.ledger = ledger
        self._spill_queue = spill_queue
        self._sqs = sqs
        self._spill_url = ""

    def record(self, entry: LedgerEntry) -> Outcome:
        """Write the entry once; never raises (the call it meters has been paid for)."""
        try:
            return "written" if self.ledger.record(entry) else "duplicate"
        except Exception as ledger_error:
            metrics.add_metric(name="MeterWriteFailures", unit="Count", value=1)
            try:
                self._spill(entry)
            except Exception as spill_error:
                # Last resort: the whole entry in the log (it holds usage and ids, no prompt text).
                logger.error("meter.record_failed", extra={"trace_id": entry.trace_id, "error": ledger_error.__class__.__name__,
                                                           "spill_error": spill_error.__class__.__name__,
                                                           "entry": entry.model_dump(mode="json")})
                metrics.add_metric(name="MeterEntriesLogged", unit="Count", value=1)
                return "logged"
            logger.warning("meter.spilled", extra={"trace_id": entry.trace_id, "request_id": entry.request_id,
                                                   "tenant": entry.tenant, "error": ledger_error.__class__.__name__})
            metrics.add_metric(name="MeterEntriesSpilled", unit="Count", value=1)
            return "spilled"

    def _spill(self, entry: LedgerEntry) -> None:
        sqs = self._sqs or aws.client("sqs")
        if not self._spill_url:
            self._spill_url = sqs.get_queue_url(QueueName=self._spill_queue)["QueueUrl"]
        sqs.send_message(QueueUrl=self._spill_url, MessageBody=entry.model_dump_json(),
                         MessageAttributes={"trace_id": {"DataType": "String", "StringValue": entry.trace_id or "-"}})


def replay(ledger: Ledger, body: str) -> bool:
    """One spilled entry back into the ledger; False when it was already there. Raises while DynamoDB refuses,
    so the message stays on the queue (redelivered, then dead-lettered, where an alarm watches)."""
    written = ledger.record(LedgerEntry.model_validate_json(body))
    metrics.add_metric(name="MeterEntriesReplayed" if written else "MeterReplayDuplicates", unit="Count", value=1)
    return written


def entries_from_log(lines: Iterable[str]) -> Iterable[LedgerEntry]:
    """The entries of `meter.record_failed` lines in a JSON log export (other lines are skipped)."""
    for line in lines:
        start = line.find("{")
        if start < 0 or "meter.record_failed" not in line:
            continue
        try:
            record = json.loads(line[start:])
        except json.JSONDecodeError:
            continue
        if record.get("message") == "meter.record_failed" and isinstance(record.get("entry"), dict):
            yield LedgerEntry.model_validate(record["entry"])
