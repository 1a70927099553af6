"""The held-out figures again, with today's rules, from a run's saved held-out scores (no refits).

`benchmarks/screening.py --held-out-scores FILE` writes each held-out row's rule and model scores. The model
scores depend on the corpus and the training code only; the rules' scores are cheap to recompute. So after a
rule change the leave-one-source-out figures are this script's minute instead of the benchmark's forty:
    python benchmarks/screening_rescore.py FILE
It refuses a file whose rows are no longer the corpus's (a source added or removed means a new run).
"""
from __future__ import annotations

import argparse
import json

from screening import TARGET_FPR, grouped, public_figures, report, threshold_at_fpr, THRESHOLD

from chalicelib.screening.core import combine, match_rules, rules_for
from dataset import load_rows
from train import user_rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("scores", help="the JSON lines written by screening.py --held-out-scores")
    args = parser.parse_args()
    with open(args.scores, encoding="utf-8") as lines:
        saved = [json.loads(line) for line in lines]
    corpus = {(row["source"], row["text"]) for row in user_rows(load_rows())}
    stale = [row for row in saved if (row["source"], row["text"]) not in corpus]
    if stale:
        raise SystemExit(f"{len(stale)} saved rows are not in today's corpus (first: {stale[0]['source']}): run the benchmark again")
    rules = rules_for("user")
    rule_scores = [combine(rule.weight for rule in match_rules(row["text"], rules)) for row in saved]
    changed = sum(abs(new - row["rule"]) > 1e-9 for new, row in zip(rule_scores, saved))
    print(f"{len(saved)} held-out rows; rule score changed on {changed} since the run")
    combined = report("LEAVE-ONE-SOURCE-OUT, today's rules", saved, rule_scores, [row["model"] for row in saved])
    blocked = [score >= THRESHOLD for score in combined]
    print("  recall by category: " + grouped(saved, blocked, "category", "attack"))
    if not any(row["label"] == "benign" for row in saved):
        return  # no benign rows held out (a --sources run of attack sources): no threshold to set by FPR
    threshold, recall, fpr = threshold_at_fpr(saved, combined, TARGET_FPR)
    print(f"  at FPR <= {TARGET_FPR}: block_threshold {threshold:.3f}, recall there {recall:.3f} (FPR {fpr:.3f})")
    public_figures(saved, combined)


if __name__ == "__main__":
    main()
