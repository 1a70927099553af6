"""The labelled screening corpus as plain rows: {"source", "label", "category", "lang", "text"}.

Three parts, each its own source for leave-one-source-out evaluation:
- corpus.jsonl: texts from public registry packages (build_corpus.py; SOURCES.json says what, from where, licence);
- "crossover-hard-negatives": hard_negatives.py, benign texts with trigger words, ordinary requests in the frames attacks
  use ("from now on ...", "when you summarise this ...", "forward this ..."), and system prompts with the line that
  forbids revealing them, written by the team;
- "crossover-team": the team's rule-tuning set (../dev.jsonl, ../test.jsonl), kept but a minority.
The team's rows in Hindi, Chinese, Russian, Catalan, Galician and Basque (team/) are not here: they train only
(train.team_written), and this module gives the rows that are scored.
"""
from __future__ import annotations

import json
import os

from hard_negatives import DEFENSIVE_SYSTEM_PROMPTS, HARD_NEGATIVES, PRODUCT_REQUESTS

HERE = os.path.dirname(os.path.abspath(__file__))
TEAM_SPLITS = (os.path.join(HERE, "..", "dev.jsonl"), os.path.join(HERE, "..", "test.jsonl"))
TEAM_CATEGORIES = {"normal": "request", "tool_abuse": "smuggling"}


def _jsonl(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_rows() -> list[dict]:
    rows = _jsonl(os.path.join(HERE, "corpus.jsonl"))
    rows += [{"source": "crossover-hard-negatives", "label": "benign", "category": "hard_negative", "lang": lang, "text": text}
             for written in (HARD_NEGATIVES, PRODUCT_REQUESTS) for lang, texts in written.items() for text in texts]
    rows += [{"source": "crossover-hard-negatives", "label": "benign", "category": "system_prompt", "lang": lang, "text": text}
             for lang, texts in DEFENSIVE_SYSTEM_PROMPTS.items() for text in texts]
    for path in TEAM_SPLITS:
        rows += [{"source": "crossover-team", "label": item["label"], "lang": item["lang"], "text": item["text"],
                  "category": TEAM_CATEGORIES.get(item["category"], item["category"])} for item in _jsonl(path)]
    return rows
