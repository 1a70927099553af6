"""Write corpus_translated.jsonl: a seeded sample of the corpus's English rows, machine-translated, for training only.

Held out (leave-one-source-out), the only attacks in Galician and Catalan come from one source (vigia), so a model
trained without it has never seen either language (held-out recall 0.00 in both). Translating the *other* sources'
English attacks, and as many benign texts so the language itself teaches nothing, fills that gap.

The translator must ship inside a registry package, and be usable offline: Apertium's rule-based pairs from Debian
(GPL; the output of a program is not covered by the program's licence). Debian has en->gl and en->ca but no pair into
Basque (eu->es and eu->en only), Hindi, Chinese or Russian, and no registry package we found ships neural translation
weights for those (SOURCES.md lists what was checked). CI never runs this (the output is committed); to re-derive it:

    apt-get install apertium apertium-en-gl apertium-eng-cat
    python tests/data/screening/corpus/translate_corpus.py

Each written row names the row it came from (`derived_from`: its source; `original`: a hash of its text), the
translator (Debian package and version) and the target language. train.py trains on a translated row only when its
original is trained on, so holding a source out holds out every translation made from it; the benchmark never
scores a translated row.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from dataset import load_rows  # noqa: E402

OUTPUT = os.path.join(HERE, "corpus_translated.jsonl")
SEED = 13
# Per source and target language, this many attacks / benign rows: fewer sources have English benign rows than
# English attacks (33 and 39 on 2026-12-05), so a larger benign quota keeps the two sides balanced (343 and 327).
QUOTA = {"attack": 9, "benign": 11}
# target language -> (Apertium mode, the Debian package that ships it)
TARGETS = {"gl": ("en-gl", "apertium-en-gl"), "ca": ("eng-cat", "apertium-eng-cat")}
ENGINE = "apertium"
MAX_CHARS = 1200  # train.py reads a training text's first 1,024 characters: translating more is wasted
SEPARATOR = "\n\n@@@@@@@@\n\n"  # Apertium passes it through unchanged: one process translates a whole batch
# Not translated: the system prompts (they train the system role's model alone) and the sources kept for evaluation.
SKIPPED_CATEGORIES = frozenset({"system_prompt"})
SKIPPED_SOURCES = frozenset({"ifeval"})  # train.EVALUATION_ONLY (not imported: train.py loads numpy and scikit-learn)


def text_hash(text: str) -> str:
    """How a translated row names its original (the original's text is in corpus.jsonl or dataset.py already)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def cut(text: str, limit: int = MAX_CHARS) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0]


def candidates(rows: list[dict]) -> list[dict]:
    """The English rows a translation may come from."""
    return [row for row in rows if row["lang"] == "en" and row["category"] not in SKIPPED_CATEGORIES
            and row["source"] not in SKIPPED_SOURCES and len(row["text"].strip()) >= 20]


def sample(rows: list[dict], label: str, quota: int, seed: str) -> list[dict]:
    """Up to `quota` rows of `label` from each source: those whose hash with `seed` ranks first. A fixed quota, not a
    fixed total, so the few large sources do not fill the sample (a translation should carry what many sources share,
    not one collection's style), and a source added to the corpus leaves every other source's choice as it was."""
    by_source: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        if row["label"] == label:
            by_source[row["source"]].append(row)
    rank = lambda row: hashlib.sha256(f"{seed}:{row['text']}".encode("utf-8")).digest()  # noqa: E731
    return [row for source in sorted(by_source) for row in sorted(by_source[source], key=rank)[:quota]]


def package_version(package: str) -> str:
    return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], check=True, capture_output=True, text=True).stdout


def translate(texts: list[str], mode: str) -> list[str]:
    """All `texts` through one Apertium process (`-u`: unknown words as they are, without its '*' marks)."""
    if any(SEPARATOR.strip() in text for text in texts):
        raise ValueError("a text contains the batch separator")
    result = subprocess.run([ENGINE, "-u", "-f", "txt", mode], input=SEPARATOR.join(texts), check=True,
                            capture_output=True, text=True).stdout
    parts = [part.strip() for part in result.split(SEPARATOR.strip())]
    if len(parts) != len(texts):
        raise ValueError(f"{mode}: {len(texts)} texts in, {len(parts)} out")
    return parts


def translated_rows(rows: list[dict], lang: str, mode: str, translator: str) -> list[dict]:
    pool = candidates(rows)
    chosen = [row for label, quota in QUOTA.items() for row in sample(pool, label, quota, f"{SEED}:{lang}:{label}")]
    texts = translate([cut(row["text"]) for row in chosen], mode)
    return [{"derived_from": row["source"], "original": text_hash(row["text"]), "label": row["label"],
             "category": row["category"], "lang": lang, "translator": translator, "text": text}
            for row, text in zip(chosen, texts) if text]


def main() -> None:
    rows = load_rows()
    engine = f"{ENGINE} {package_version(ENGINE)}"
    written = []
    for lang, (mode, package) in TARGETS.items():
        written += translated_rows(rows, lang, mode, f"{engine}, {package} {package_version(package)} (Debian), mode {mode}")
    with open(OUTPUT, "w", encoding="utf-8") as handle:
        for row in written:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(written)} translated rows -> {os.path.relpath(OUTPUT)}")


if __name__ == "__main__":
    main()
