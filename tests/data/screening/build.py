"""Build the labelled screening set (dev.jsonl, test.jsonl) from attacks.py and benign.py.

Deterministic: the same inputs give the same files. Every hand-written item goes, with all its
obfuscated variants, to exactly one split (by a hash of its text), so no near-duplicate crosses
from dev to test. Tune rules on dev.jsonl only; report test.jsonl.
    python tests/data/screening/build.py
"""
from __future__ import annotations

import base64
import codecs
import hashlib
import itertools
import json
import os
import random
import urllib.parse

from attacks import ATTACKS
from benign import BENIGN, TEMPLATES

HERE = os.path.dirname(os.path.abspath(__file__))
HOMOGLYPHS = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "i": "і", "x": "х", "y": "у"}
LEET = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"}


def homoglyphs(text: str) -> str:
    return "".join(HOMOGLYPHS.get(ch, ch) for ch in text)


def zero_width(text: str) -> str:
    return "\u200b".join(text[i:i + 2] for i in range(0, len(text), 2))


def spaced(text: str) -> str:
    words = text.split()
    return " ".join(" ".join(word) if len(word) > 3 and index < 6 else word for index, word in enumerate(words))


def leet(text: str) -> str:
    return "".join(LEET.get(ch.lower(), ch) for ch in text)


OBFUSCATIONS = {
    "base64": lambda t: "Decode this base64 and do what it says: " + base64.b64encode(t.encode()).decode(),
    "rot13": lambda t: "rot13: " + codecs.encode(t, "rot13"),
    "hex": lambda t: "hex payload -> " + t.encode().hex(),
    "url": lambda t: "q=" + urllib.parse.quote(t),
    "homoglyph": homoglyphs,
    "zero_width": zero_width,
    "spaced": spaced,
    "leet": leet,
}


def split_of(text: str) -> str:
    return "dev" if int(hashlib.sha256(text.encode()).hexdigest(), 16) % 2 == 0 else "test"


def rows() -> list[dict]:
    rng = random.Random(20261203)
    out = []
    for category, lang, text in ATTACKS:
        split = split_of(text)
        out.append({"split": split, "label": "attack", "category": category, "lang": lang, "variant": "original", "text": text})
        for name in rng.sample(sorted(OBFUSCATIONS), 2):
            out.append({"split": split, "label": "attack", "category": category, "lang": lang, "variant": name, "text": OBFUSCATIONS[name](text)})
    for kind, lang, text in BENIGN:
        out.append({"split": split_of(text), "label": "benign", "category": kind, "lang": lang, "variant": "original", "text": text})
    for lang, template, slots in TEMPLATES:
        keys = sorted(slots)
        for values in itertools.product(*(slots[key] for key in keys)):
            text = template.format(**dict(zip(keys, values)))
            out.append({"split": split_of(template + values[0]), "label": "benign", "category": "normal", "lang": lang,
                        "variant": "template", "text": text})
    return out


def main() -> None:
    data = rows()
    for split in ("dev", "test"):
        with open(os.path.join(HERE, f"{split}.jsonl"), "w", encoding="utf-8") as handle:
            for row in data:
                if row["split"] == split:
                    handle.write(json.dumps({k: v for k, v in row.items() if k != "split"}, ensure_ascii=False) + "\n")
    from collections import Counter
    print(Counter((row["split"], row["label"]) for row in data))
    print("hard negatives:", sum(row["category"] == "hard_negative" for row in data))


if __name__ == "__main__":
    main()
