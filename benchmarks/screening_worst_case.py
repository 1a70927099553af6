"""Screening's worst case: the rules layer (normaliser + matcher) and the whole local screen() on hostile inputs.

Inputs: the hostile corpus (tests/data/screening/hostile.py: the inputs that hung the old matcher,
rule-word floods, per-rule near misses, spaced/leet letters, nested encodings, Braille, variation
selectors, zero-width text, alternating accents and look-alikes, punctuation runs, noise) plus random
rule-word mixtures and printable noise, each cut or repeated to each size; then (unless --no-padded)
every text of the labelled corpus padded with benign text to 0-32,000 characters, as benchmarks/screening.py does.
Each hostile input's time is the median of 3 runs, on one core, for three functions interleaved
input by input (so the load hits them alike): the rules layer as shipped, the rules layer with the
normaliser as it was before it was made faster (tests/data/screening/normalize_reference.py, frozen),
and the whole local screen() (rules + classifier, no managed checks). Prints p50/p99/max per size and
overall, the slowest inputs, and the first screen of a fresh process (engine load).
Targets (issue 13): p99 <= 10 ms, worst case <= 50 ms, up to 32,000 characters.

Times are CPU time of the screening thread (what one core spends), with the wall-clock maximum
beside them: on a shared machine the wall clock also counts the time other processes held the core.

    python benchmarks/screening_worst_case.py [--engine hyperscan|re2] [--sizes 1000,32000] [--no-padded]
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


def time_ms(function, text: str, runs: int = 3) -> tuple[float, float]:
    """(CPU ms, wall ms), each the median of `runs`."""
    cpu, wall = [], []
    for _ in range(runs):
        started_cpu, started = time.thread_time(), time.perf_counter()
        function(text)
        cpu.append((time.thread_time() - started_cpu) * 1000)
        wall.append((time.perf_counter() - started) * 1000)
    return statistics.median(cpu), statistics.median(wall)


def line(label: str, values: list[float], worst: str = "") -> str:
    return (f"{label:<34} n={len(values):4d}  CPU p50 {percentile(values, 50):6.2f} ms  p99 {percentile(values, 99):6.2f} ms  "
            f"max {max(values):6.2f} ms{worst}")


def padded_texts(limit: int = 32_000) -> list[str]:
    """The labelled corpus, each text padded with benign text to a random length up to `limit` (as benchmarks/screening.py)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "data", "screening", "corpus"))
    from dataset import load_rows

    rows = load_rows()
    rng = random.Random(7)
    filler = " ".join(row["text"] for row in rows if row["label"] == "benign")
    texts = [(row["text"] + " " + filler)[:rng.randint(len(row["text"]), max(len(row["text"]), limit))] for row in rows]
    return texts + [filler[:limit]] * 20


def first_screen_ms(engine: str | None) -> float:
    code = ("import time; t = time.perf_counter(); from chalicelib.screening import screen; "
            "screen('Hello there, could you tell me about your opening hours?'); "
            "print((time.perf_counter() - t) * 1000)")
    env = {**os.environ, **({"SCREEN_MATCHER": engine} if engine else {})}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", choices=["hyperscan", "re2"], default=None)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--no-padded", action="store_true", help="skip the padded labelled corpus")
    args = parser.parse_args()
    if args.engine:
        os.environ["SCREEN_MATCHER"] = args.engine
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})  # one core, as the target says

    from chalicelib.screening import screen
    from chalicelib.screening.core import match_rules, rules_for, rules_matcher
    from tests.data.screening import normalize_reference

    rules = rules_for("user")
    functions = {"rules layer": lambda text: match_rules(text, rules),
                 "rules layer, normaliser before": lambda text: match_rules(text, rules, normalize_reference.views),
                 "screen() (rules + classifier)": screen}
    engine = rules_matcher(rules).name
    print(f"engine: {engine}; first screen in a fresh process (imports + engine load): {first_screen_ms(args.engine):.0f} ms; "
          f"load average at start {os.getloadavg()[0]:.1f}")
    for function in functions.values():
        function("Warm up: a sentence long enough for the classifier to read it.")  # loads the model and the encoder
    everything: dict[str, list[tuple[float, str, int, float]]] = {name: [] for name in functions}
    for size in (int(value) for value in args.sizes.split(",")):
        corpus = [(name, fit(text, size)) for name, text in hostile_inputs(size)] + random_inputs(size)
        for input_name, text in corpus:
            for name, function in functions.items():
                cpu, wall = time_ms(function, text)
                everything[name].append((cpu, input_name, size, wall))
        for name in functions:
            timings = [row for row in everything[name] if row[2] == size]
            worst = max(timings)
            print(line(f"{size:>6} chars  {name}", [cpu for cpu, *_ in timings],
                       f" ({worst[1]})  wall max {max(wall for *_, wall in timings):6.2f} ms"))
    print()
    for name, timings in everything.items():
        worst = max(timings)
        print(line(f"all sizes  {name}", [cpu for cpu, *_ in timings], f": {worst[1]} at {worst[2]} chars (wall {worst[3]:.2f} ms)"))
    for name in ("rules layer", "screen() (rules + classifier)"):
        print(f"slowest five, {name} (CPU): " + "; ".join(f"{input_name}@{size} {cpu:.1f} ms"
                                                        for cpu, input_name, size, _ in sorted(everything[name], reverse=True)[:5]))
    if not args.no_padded:
        texts = padded_texts()
        samples: dict[str, list[float]] = {name: [] for name in functions if name.startswith("rules")}
        for text in texts:
            for name in samples:
                samples[name].append(time_ms(functions[name], text, runs=1)[0])
        print()
        for name, values in samples.items():
            print(line(f"padded corpus 0-32k  {name}", values))
    print(f"load average at the end {os.getloadavg()[0]:.1f} (2 shared cores: CPU times rise with it)")


if __name__ == "__main__":
    main()
