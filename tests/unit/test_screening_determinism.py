"""Screening reads a text the same way in every process: nothing in the normaliser or the rules may depend on the order
Python's hash seed gives sets and dicts of strings (PYTHONHASHSEED is random per process, so per Lambda instance). A
cipher tie once did (ciphers.likeliest_cipher): two instances read one text two ways."""
from __future__ import annotations

import os
import subprocess
import sys

_PROBE = """
import hashlib, json, itertools
from chalicelib.screening.core import match_rules, rules_for
from chalicelib.screening.normalize import views
from tests.data.screening.hostile import hostile_inputs
with open("tests/data/screening/corpus/corpus.jsonl", encoding="utf-8") as lines:
    corpus = [json.loads(line)["text"] for line in itertools.islice(lines, 0, None, 8)]
texts = [text for _, text in hostile_inputs(1_000)] + corpus
rules, digest = rules_for("user"), hashlib.sha256()
for text in texts:
    digest.update(json.dumps(views(text), ensure_ascii=False).encode("utf-8", "surrogatepass"))
    digest.update(",".join(sorted(rule.id for rule in match_rules(text, rules))).encode())
print(len(texts), digest.hexdigest())
"""


def test_the_hostile_corpus_and_the_corpus_read_alike_under_every_hash_seed():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    answers = set()
    for seed in ("0", "1", "2"):
        done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=600, cwd=root,
                              env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": root})
        assert done.returncode == 0, done.stderr[-2000:]
        answers.add(done.stdout)
    assert len(answers) == 1, answers
    assert int(answers.pop().split()[0]) > 2_000  # every hostile family and an eighth of the corpus were read
