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
