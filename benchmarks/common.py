"""Helpers shared by the benchmark scripts."""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
from typing import Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def percentile(samples: Sequence[float], pct: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary_ms(samples_s: Sequence[float]) -> str:
    ms = [s * 1000 for s in samples_s]
    return f"p50 {percentile(ms, 50):.3f} ms  p99 {percentile(ms, 99):.3f} ms  mean {statistics.fmean(ms):.3f} ms  n={len(ms)}"


def cold_import_ms(module: str, runs: int = 5) -> tuple[float, str]:
    """Median wall time of importing `module` in a fresh interpreter, and the slowest imports by -X importtime."""
    code = f"import time; t = time.perf_counter(); import {module}; print((time.perf_counter() - t) * 1000)"
    timings = []
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "0"}
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        timings.append(float(out.stdout.strip().splitlines()[-1]))
    trace = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], cwd=ROOT, env=env,
                           capture_output=True, text=True, check=True).stderr
    rows = []
    for line in trace.splitlines():
        if line.startswith("import time:") and "|" in line:
            parts = [p.strip() for p in line[len("import time:"):].split("|")]
            if parts[1].isdigit():
                rows.append((int(parts[1]), parts[2]))
    top = sorted(rows, reverse=True)[:6]
    return statistics.median(timings), ", ".join(f"{name.strip()} {us / 1000:.0f} ms" for us, name in top)


def item_level_moto_transactions() -> None:
    """moto's TransactWriteItems, serialised and with an item-level rollback snapshot (this process only).

    moto deep-copies every table a transaction touches so it can roll back, which makes each metered
    call O(ledger size) (7 calls/s at 2,000 rows), and its transactions are not thread-safe. DynamoDB
    does neither. Same semantics for our two-item transactions; benchmarks say when they use it.
    """
    import threading

    import moto.dynamodb.models as models

    original = models.DynamoDBBackend.transact_write_items
    lock = threading.Lock()

    class _NoTableCopy:
        """Stands in for the `copy` module inside moto's transact_write_items: tables are not copied."""
        @staticmethod
        def deepcopy(value):  # noqa: ANN001, ANN205
            return value

    def transact_write_items(self, transact_items):  # noqa: ANN001, ANN202
        with lock:
            snapshot = []
            for item in transact_items:
                op_type, op = next(iter(item.items()))
                table = self.get_table(op["TableName"])
                attrs = op.get("Item") or op.get("Key")
                key = {name: attrs[name] for name in (table.hash_key_attr, table.range_key_attr) if name}
                current = self.get_item(op["TableName"], key)
                snapshot.append((op["TableName"], key, current.to_json()["Attributes"] if current else None))
            real_copy, models.copy = models.copy, _NoTableCopy
            try:
                return original(self, transact_items)
            except Exception:
                for table_name, key, attributes in snapshot:  # roll back exactly what this transaction touched
                    if attributes is None:
                        self.delete_item(table_name, key)
                    else:
                        self.put_item(table_name, attributes)
                raise
            finally:
                models.copy = real_copy

    models.DynamoDBBackend.transact_write_items = transact_write_items
