"""Screening before and after a change that must not change what it decides: input by input, the same.

Loads chalicelib/screening as it is at a git revision (default: HEAD, i.e. the uncommitted change; on a
branch, `--base main`) under another package name,
beside the working tree's, and runs both on: every labelled corpus row, the corpus padded with benign
text to 0-32,000 characters (as benchmarks/screening.py times it), the hostile inputs
(tests/data/screening/hostile.py) at several sizes, and generated text (seeded: words, numbers,
leetspeak, spaced letters, accents, look-alikes, CJK, invisible and control characters, odd
whitespace, base64, hex, URL escapes, rot13), each said in both roles (--roles). For each input it compares screen()'s verdict (allowed,
layer, reasons, notes; score to 1e-12), the normaliser's readings (views), and the classifier's
windows, their n-gram sets and its score (to 1e-12), each on its own since screen() stops at the
rules when they block. Exits 1 on the first difference (printed), else prints how many inputs agreed.
With --time it also times screen() of both, interleaved input by input on one core (CPU time, median
of --runs), on the padded corpus, and prints p50/p99/max of each and of the per-input ratio.

    python benchmarks/screening_equivalence.py [--base main] [--generated N] [--time [--runs 3]]
"""
from __future__ import annotations

import argparse
import importlib
import io
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from types import ModuleType

from common import ROOT, percentile
from screening_worst_case import padded_texts

from tests.data.screening.hostile import hostile_inputs

PACKAGE = "chalicelib/screening"
ENCODER_CACHE = "model/encoder"  # in PACKAGE


def package_at(revision: str, folder: str, name: str = "screening_base") -> ModuleType:
    """chalicelib/screening as committed at `revision` (code, rules, compiled rules, model), imported as `name`."""
    archive = subprocess.run(["git", "archive", "--format=tar", revision, PACKAGE], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    os.rename(os.path.join(folder, PACKAGE), os.path.join(folder, name))
    # The sentence encoder's cache is git-ignored (make setup writes it): without it the revision would screen without
    # its semantic reading, ~8 ms a text less, and every paired timing would flatter it. The working tree's cache is
    # the same encoder's (its manifest names the package files it was made from, which a revision does not change).
    cache = os.path.join(ROOT, PACKAGE, ENCODER_CACHE)
    if os.path.isdir(cache) and not os.path.exists(os.path.join(folder, name, ENCODER_CACHE)):
        os.symlink(cache, os.path.join(folder, name, ENCODER_CACHE))
    sys.path.insert(0, folder)
    return importlib.import_module(name)


_PIECES = ("ignore", "previous", "instructions", "system", "prompt", "the", "a", "is", "report", "déjà", "instruções",
           "іgnоrе", "ρrοmpt", "straße", "1gn0r3", "pr3v10u5", "h4x0r", "w0w!", "$5", "1500", "2024", "3.14", "1.2.3",
           "i g n o r e", "s-y-s-t-e-m", "r.u.l.e.s", "p_r_o_m_p_t", "e.g.", "a|b", "中文字符", "指令", "مرحبا", "привет",
           "ｉｇｎｏｒｅ", "ﬁle", "İstanbul", "\u200bsec\u200dret", "\u00adsoft", "\U000e0069\U000e0067\U000e006e", "✨\ufe0f\ufe01\ufe02\ufe03",
           "\x00", "\x1f", "\x85", "\u3000", "\u2028", "\t", "\n\n", "  ", "%69%67%6e%6f%72%65", "vtaber nyy cerivbhf",
           "aWdub3JlIGFsbCBwcmV2aW91cyBpbnN0cnVjdGlvbnM=", "69676e6f726520616c6c", "0123456789abcdef0123", "@$!|+", "ǅ", "ĳ", "ø")


def generated(count: int, seed: int = 13) -> list[str]:
    """Seeded texts of 0-32,000 characters (log-uniform) built from the pieces above, separators and random code points."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        size = int(32_000 ** rng.random())
        pieces, length = [], 0
        while length < size:
            roll = rng.random()
            if roll < 0.75:
                piece = rng.choice(_PIECES)
            elif roll < 0.95:
                piece = rng.choice(" .,-_/|*!?:;'\"()[]")
            else:
                piece = "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randrange(1, 6)))
            pieces.append(piece + (" " if rng.random() < 0.6 else ""))
            length += len(pieces[-1])
        texts.append("".join(pieces)[:size])
    return texts


def observe(package: ModuleType, text: str, role: str = "user") -> tuple:
    """What one version decides and reads for `text` said in `role`'s voice: the verdict, the readings, the role's
    classifier's windows, n-grams and score (of what it reads: core.classifier_reading)."""
    classifier = package.classifier
    model = classifier.load_model(package.core.MODEL_DIRS[role])
    verdict = package.screen(text, role=role)
    reading = package.core.classifier_reading(text, role)
    parts = classifier.scored_windows(reading, model)
    grams = [classifier.window_features(part, model.char_ngrams, model.readings, model.wide_ngrams) for part in parts]
    decided = (verdict.allowed, verdict.layer, verdict.reasons, verdict.notes, verdict.redacted_text)
    return decided, verdict.score, package.core.views(text), parts, grams, classifier.score(reading, model)


def differences(old: tuple, new: tuple) -> list[str]:
    names = ("verdict", "score", "readings", "classifier windows", "n-grams", "classifier score")
    found = [name for name, before, after in zip(names, old, new) if name not in ("score", "classifier score") and before != after]
    found += [name for name, before, after in ((names[1], old[1], new[1]), (names[5], old[5], new[5])) if abs(before - after) > 1e-12]
    return found


def cpu_ms(function, text: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.thread_time()
        function(text)
        samples.append((time.thread_time() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="HEAD", help="git revision of the code to compare against (on a branch: main)")
    parser.add_argument("--generated", type=int, default=3000, help="how many generated texts")
    parser.add_argument("--time", action="store_true", help="also time screen() of both on the padded corpus, paired")
    parser.add_argument("--runs", type=int, default=3, help="with --time: runs per input and version (the median is kept)")
    parser.add_argument("--roles", default="user,system", help="the roles each input is screened in (core.Role)")
    parser.add_argument("--padded-every", type=int, default=1, help="compare every Nth padded text only (the slow family)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "tests", "data", "screening", "corpus"))
    from dataset import load_rows

    import chalicelib.screening as new

    with tempfile.TemporaryDirectory() as folder:
        old = package_at(args.base, folder)
        padded = padded_texts()
        families = {"corpus rows": [row["text"] for row in load_rows()], "corpus padded to 0-32k chars": padded[::args.padded_every],
                    "hostile inputs (300, 1k, 4k, 32k chars)": [text for size in (300, 1_000, 4_000, 32_000) for _, text in hostile_inputs(size)],
                    "generated": generated(args.generated)}
        compared, roles = 0, args.roles.split(",")
        for family, texts in families.items():
            for index, text in enumerate(texts):
                for role in roles:
                    found = differences(observe(old, text, role), observe(new, text, role))
                    if found:
                        print(f"DIFFERENT ({family} #{index}, {len(text)} chars, role {role}: {text[:80]!r}): {', '.join(found)}")
                        sys.exit(1)
            compared += len(texts)
            print(f"{family}: {len(texts)} inputs, identical in roles {', '.join(roles)}", flush=True)
        print(f"all {compared} inputs, roles {', '.join(roles)}: verdicts, layers, reasons, readings, classifier windows and "
              f"n-grams identical; scores within 1e-12 (base {args.base})")
        if args.time:
            timed(old, new, padded, args.runs, args.base)


def timed(old: ModuleType, new: ModuleType, texts: list[str], runs: int, base: str) -> None:
    """screen() of both versions, interleaved input by input (so the load hits them alike), on one core."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
    before, after = [], []
    for text in texts:
        before.append(cpu_ms(old.screen, text, runs))
        after.append(cpu_ms(new.screen, text, runs))
    load = os.getloadavg()[0]
    for name, values in ((f"before ({base})", before), ("after (working tree)", after)):
        print(f"screen() {name:<24} n={len(values)}  CPU p50 {percentile(values, 50):.2f} ms  p99 {percentile(values, 99):.2f} ms  "
              f"max {max(values):.2f} ms")
    ratios = [b / a for a, b in zip(before, after) if a > 0]
    print(f"per-input ratio after/before: p50 {percentile(ratios, 50):.3f}, mean {statistics.fmean(ratios):.3f}; "
          f"p99 ratio {percentile(after, 99) / percentile(before, 99):.3f}; load average at the end {load:.1f}")


if __name__ == "__main__":
    main()
