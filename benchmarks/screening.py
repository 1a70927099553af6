"""Screening quality and speed on the labelled set (tests/data/screening/).

Prints recall on attacks, false-positive rate on benign prompts, recall per category, and
p50/p95 latency per prompt (prompts padded to up to 4 KB), for the dev and the test split.
Rules are tuned on dev only; test is the honest figure. `--errors dev` lists dev mistakes.
Targets (issue 4, test split): recall >= 0.95, FPR <= 0.02, p95 <= 10 ms on one core.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections import defaultdict

from common import ROOT, percentile

from chalicelib.screening import screen

DATA = os.path.join(ROOT, "tests", "data", "screening")


def load(split: str) -> list[dict]:
    with open(os.path.join(DATA, f"{split}.jsonl"), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def evaluate(rows: list[dict]) -> dict:
    attacks = [row for row in rows if row["label"] == "attack"]
    benign = [row for row in rows if row["label"] == "benign"]
    caught = {id(row): not screen(row["text"]).allowed for row in rows}
    by_category: dict[str, list[bool]] = defaultdict(list)
    for row in attacks:
        by_category[row["category"]].append(caught[id(row)])
    hard = [row for row in benign if row["category"] == "hard_negative"]
    return {
        "attacks": len(attacks), "benign": len(benign),
        "recall": sum(caught[id(r)] for r in attacks) / len(attacks),
        "fpr": sum(caught[id(r)] for r in benign) / len(benign),
        "hard_negative_fpr": sum(caught[id(r)] for r in hard) / max(1, len(hard)),
        "per_category": {cat: sum(v) / len(v) for cat, v in sorted(by_category.items())},
        "errors": [(row["label"], row["category"], row["variant"], row["text"][:160]) for row in rows
                   if caught[id(row)] != (row["label"] == "attack")],
    }


def latency(rows: list[dict], pad_to: int = 4096) -> tuple[float, float]:
    rng = random.Random(7)
    filler = " ".join(row["text"] for row in rows if row["label"] == "benign")
    samples = []
    for row in rows:
        # Pad with benign text to a random length up to 4 KB: real prompts carry documents.
        target = rng.randint(len(row["text"]), max(len(row["text"]), pad_to))
        text = (row["text"] + " " + filler)[:target]
        started = time.perf_counter()
        screen(text)
        samples.append((time.perf_counter() - started) * 1000)
    return percentile(samples, 50), percentile(samples, 95)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--errors", choices=["dev", "test"], help="list the misclassified rows of a split")
    args = parser.parse_args()
    screen("warm up")
    for split in ("dev", "test"):
        rows = load(split)
        result = evaluate(rows)
        p50, p95 = latency(rows)
        print(f"[{split}] {result['attacks']} attacks, {result['benign']} benign: recall {result['recall']:.3f}  "
              f"FPR {result['fpr']:.3f} (hard negatives {result['hard_negative_fpr']:.3f})  latency p50 {p50:.2f} ms p95 {p95:.2f} ms (<=4 KB)")
        print(f"[{split}] recall by category: " + ", ".join(f"{cat} {value:.2f}" for cat, value in result["per_category"].items()))
        if args.errors == split:
            for error in result["errors"]:
                print("   MISS" if error[0] == "attack" else "   FP  ", error)


if __name__ == "__main__":
    main()
