"""The battery written apart from the screening rules and models (tests/data/screening/battery/): how many of its
attacks each role blocks, and how many of its benign sentences and ordinary requests, with the blocked texts listed.

    python benchmarks/screening_battery.py
"""
from __future__ import annotations

import os
import sys

from common import ROOT

from chalicelib.screening import screen

BATTERY = os.path.join(ROOT, "tests", "data", "screening", "battery")
SETS = (("attacks.tsv", "attacks blocked"), ("benign.tsv", "benign sentences blocked"), ("requests.tsv", "ordinary requests blocked"))


def read(name: str) -> list[tuple[str, str]]:
    with open(os.path.join(BATTERY, name), encoding="utf-8") as handle:
        return [tuple(line.rstrip("\n").split("\t", 1)) for line in handle if line.strip()]


def main() -> None:
    for name, label in SETS:
        rows = read(name)
        for role in ("user", "system"):
            verdicts = [(lang, text, screen(text, role=role)) for lang, text in rows]
            print(f"{name:13s} {role:6s} {label}: {sum(not verdict.allowed for _, _, verdict in verdicts)} of {len(rows)}")
            wrong = [entry for entry in verdicts if entry[2].allowed == (name == "attacks.tsv")]  # attacks let through, others blocked
            for lang, text, verdict in wrong:
                print(f"    {'allowed' if verdict.allowed else 'blocked'} {verdict.score:.2f} {lang} {text[:70]} {','.join(verdict.reasons)}")


if __name__ == "__main__":
    sys.exit(main())
