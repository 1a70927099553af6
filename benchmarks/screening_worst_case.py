"""Screening's worst case: local layers (normaliser + rules) on hostile and random inputs, 1k..32k characters.

Inputs: the hostile corpus (tests/data/screening/hostile.py: the inputs that hung the old matcher,
rule-word floods, per-rule near misses, spaced/leet letters, nested encodings, Braille, variation
selectors, zero-width text, punctuation runs, noise) plus random rule-word mixtures and printable
noise, each cut or repeated to each size. Each input's time is the median of 3 runs, on one core;
prints p50/p99/max per size and overall, the slowest input, and the first screen of a fresh
process (engine load). Targets (issue 13): p99 <= 10 ms, worst case <= 50 ms, up to 32,000 characters.

Times are CPU time of the screening thread (what one core spends), with the wall-clock maximum
beside them: on a shared machine the wall clock also counts the time other processes held the core.

    python benchmarks/screening_worst_case.py [--engine hyperscan|re2] [--sizes 1000,32000]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time

from common import ROOT, percentile

from tests.data.screening.hostile import SEPARATORS, hostile_inputs, rule_words

SIZES = (1_000, 2_000, 4_000, 8_000, 16_000, 32_000)


def random_inputs(size: int, count: int = 12) -> list[tuple[str, str]]:
    rng = random.Random(size * 7 + 1)
    words = rule_words()
    out = []
    for index in range(count):
        pieces, length = [], 0
        while length < size:
            piece = rng.choice(SEPARATORS) + rng.choice(words)
            pieces.append(piece)
            length += len(piece)
        out.append((f"random.rule_words.{index}", "".join(pieces)[:size]))
    for index in range(count // 2):
        out.append((f"random.printable.{index}", "".join(chr(rng.randrange(32, 127)) for _ in range(size))))
    return out


def fit(text: str, size: int) -> str:
    return (text * (size // max(1, len(text)) + 1))[:size]


def time_ms(screen, text: str, runs: int = 3) -> tuple[float, float]:
    """(CPU ms, wall ms), each the median of `runs`."""
    cpu, wall = [], []
    for _ in range(runs):
        started_cpu, started = time.thread_time(), time.perf_counter()
        screen(text)
        cpu.append((time.thread_time() - started_cpu) * 1000)
        wall.append((time.perf_counter() - started) * 1000)
    return statistics.median(cpu), statistics.median(wall)


def first_screen_ms(engine: str | None) -> float:
    code = ("import time; t = time.perf_counter(); from chalicelib.screening import screen; screen('hello'); "
            "print((time.perf_counter() - t) * 1000)")
    env = {**os.environ, **({"SCREEN_MATCHER": engine} if engine else {})}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", choices=["hyperscan", "re2"], default=None)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = parser.parse_args()
    if args.engine:
        os.environ["SCREEN_MATCHER"] = args.engine
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})  # one core, as the target says

    from chalicelib.screening import load_rules, screen
    from chalicelib.screening.core import rules_matcher

    engine = rules_matcher(load_rules()).name
    print(f"engine: {engine}; first screen in a fresh process (imports + engine load): {first_screen_ms(args.engine):.0f} ms")
    screen("warm up")
    everything: list[tuple[float, str, int, float]] = []
    for size in (int(value) for value in args.sizes.split(",")):
        corpus = [(name, fit(text, size)) for name, text in hostile_inputs(size)] + random_inputs(size)
        timings = [(*time_ms(screen, text), name, size) for name, text in corpus]
        timings = [(cpu, name, size, wall) for cpu, wall, name, size in timings]
        everything += timings
        values = [cpu for cpu, _, _, _ in timings]
        worst = max(timings)
        print(f"{size:>6} chars  n={len(values):3d}  CPU p50 {percentile(values, 50):6.2f} ms  p99 {percentile(values, 99):6.2f} ms  "
              f"max {worst[0]:6.2f} ms ({worst[1]})  wall max {max(wall for *_, wall in timings):6.2f} ms")
    values = [cpu for cpu, _, _, _ in everything]
    worst = max(everything)
    print(f"all sizes    n={len(values)}  CPU p50 {percentile(values, 50):.2f} ms  p99 {percentile(values, 99):.2f} ms  "
          f"max {worst[0]:.2f} ms: {worst[1]} at {worst[2]} chars (wall {worst[3]:.2f} ms)")
    print("slowest five (CPU): " + "; ".join(f"{name}@{size} {cpu:.1f} ms" for cpu, name, size, _ in sorted(everything, reverse=True)[:5]))


if __name__ == "__main__":
    main()
