"""Train the screening classifiers and write chalicelib/screening/model/ and model/system/ (`make screening-model`).

Deterministic (fixed seed, liblinear): the same corpus gives the same artefact byte for byte.
The features are the runtime's own (chalicelib.screening.classifier.features), so training and
serving cannot drift apart. Calibration (Platt) is fitted on out-of-fold scores where each fold
holds out whole sources, so the probabilities reflect text from sources the model has not seen.
Needs scikit-learn (requirements-dev.txt); the Lambda never imports this file.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import warnings
from base64 import urlsafe_b64encode
from collections import Counter
from dataclasses import dataclass

# One BLAS thread, set before numpy loads it (when this runs as `make screening-model`): numpy's sums then run in one
# order, so the same corpus gives the same artefact byte for byte (with 2 threads the user model's hash varied run to
# run, through the sentence vectors or the solvers).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import numpy as np  # noqa: E402
from scipy import sparse  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GroupKFold  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path[:0] = [HERE, ROOT]

from dataset import load_rows  # noqa: E402
from translate_corpus import OUTPUT as TRANSLATED_FILE, text_hash  # noqa: E402

from chalicelib.screening import semantic  # noqa: E402
from chalicelib.screening.classifier import FORMAT, MODEL_DIR, encode_artefact, prepare, window_features  # noqa: E402
from chalicelib.screening.core import MODEL_DIRS  # noqa: E402

SEED = 13
CHAR_NGRAMS = (3, 5)  # 4-grams dropped: a third fewer look-ups, held-out recall unchanged (0.783 at FPR 0.02)
WIDE_NGRAMS = (2,)  # pairs of ideographs, kana or hangul (classifier.features): those scripts' words are mostly two characters
WINDOW = 1024
MAX_WINDOWS = 2  # head and tail: 32,000 characters cost 2 windows (3 measured the same held out; the rules read everything)
READINGS = "words"  # also the folded reading (spaced, leeted, accented, homoglyph letters undone), of the words folding changed ("full": all of it)
MAX_FEATURES = 100_000  # with MIN_SOURCES 2: 60k / 100k gave 0.598 / 0.604 held out at FPR 0.02 (the artefact ~1 MB)
MIN_DF = 2
# An n-gram only one source uses is that collection's house style (its templates, its topic words), not
# what attacks share: kept only when used by MIN_SOURCES sources. Held out at FPR 0.02 (44 sources): 1 (all)
# / 2 / 3 / 5 gave 0.582 / 0.598 / 0.583 / 0.579 with C 24 and 60k n-grams (chosen there: optimistic).
MIN_SOURCES = 2
C = 48.0  # chosen held out (LOSO, so optimistic). With MIN_SOURCES 2 and 100k n-grams, C 24 / 48: 0.604 / 0.609 at FPR 0.02,
# hard negatives at 0.5 0.021 / 0.019. Before (60k, every n-gram): C 3 / 8 / 24 gave 0.630 / 0.637 / 0.641, then 0.655 / 0.655 (8 / 24)
# on 39 sources; C 24 with prior 0.10 kept hard negatives <= 0.02 at 0.5 (C 8: 0.028).
# Platt scaling learns the corpus's share of attacks (~17%); real traffic has far fewer, so the calibrated
# probability is moved to this prior (a log-odds shift): a borderline text must look more like an attack.
# The shift sets where the default block_threshold 0.5 sits, not the ranking (recall at FPR 0.02 is the same
# for any prior). Held out, hard negatives, not FPR, bind: at 0.5, prior 0.05 / 0.10 / 0.12 blocked 0.014 /
# 0.019 / 0.023 of them (recall 0.474 / 0.531 / 0.553, FPR 0.002 / 0.004 / 0.005); 0.10 kept them under 0.02.
# With the 5 sources added on 2026-12-04 (Chinese, Japanese, Hindi), prior 0.10 / 0.09 / 0.08 blocked 13 / 12 / 11
# of the 573 hard negatives held out (0.023 / 0.021 / 0.019; recall 0.490 / 0.481 / 0.473): 0.08 (chosen held out).
# With MIN_SOURCES 2 and the security READMEs (2026-12-04, evening), prior 0.08 / 0.09 / 0.10 blocked 0.016 / 0.019 / 0.021
# of them (recall 0.492 / 0.505 / 0.517): 0.09.
# Since the user model has a semantic head, this prior is the system model's alone. With the 14 sources of 2026-12-05
# afternoon (their attacks include forged system markup and traces), held out in the system role, prior 0.09 / 0.07 /
# 0.05 / 0.04 / 0.03 refused 8 / 5 / 4 / 3 / 3 of the 382 framework system prompts and 14 / 11 / 9 / 8 / 6 of the team's
# 78 defensive ones (attacks sent as a system prompt 0.589 / 0.565 / 0.533 / 0.515 / 0.491; the release before: 1, 9,
# 0.477): 0.07, the lowest that still refuses the paraphrased override of the tests as a system prompt (0.52; 0.37 at 0.04).
DEPLOYMENT_PRIOR = 0.07
# The same for the stacked probability (n-grams and sentence vector). The runtime takes the higher of the two
# (classifier.combined: the second reading only adds evidence), so this prior sets how much it adds. Held out at 0.5
# (2026-12-04, night), the higher of the two with stack prior 0.09 / 0.05 / 0.04 / 0.03 blocked 0.035 / 0.024 / 0.021
# / 0.019 of the hard negatives (gate recall 0.595 / 0.563 / 0.556 / 0.549, FPR 0.009 / 0.007 / 0.007 / 0.007;
# n-grams alone 0.536, 0.006, 0.019): 0.03. Texts about injections mean what attacks mean.
# Since 2026-12-05 the runtime takes the stack alone where the sentence read the whole text (classifier.combined).
# Held out on the corpus of that day (2,006 attacks), the higher of the two at 0.03 blocked 0.028 of the hard
# negatives (recall 0.575, FPR 0.0066; at FPR 0.02: 0.667); with the stack alone for whole texts, prior 0.03 / 0.04 /
# 0.05 / 0.06 blocked 0.017 / 0.019 / 0.023 / 0.026 of them (recall 0.556 / 0.573 / 0.578 / 0.591, FPR 0.0032 /
# 0.0036 / 0.0040 / 0.0050; at FPR 0.02: 0.694 / 0.697 / 0.698 / 0.697): 0.04.
# With the team's product requests and AgentDojo's user tasks on the benign side and IFEval's prompts kept for
# evaluation (2026-12-05, afternoon), both priors moved by the same log-odds (the held-out ranking is unchanged: 0.647
# at FPR 0.02), 0.04 / 0.035 / 0.03 / 0.026 for the stack blocked 0.031 / 0.027 / 0.025 / 0.024 of the 711 hard
# negatives and 0.041 / 0.031 / 0.026 / 0.018 of IFEval at 0.5 (recall 0.553 / 0.544 / 0.536 / 0.523, FPR 0.0064 /
# 0.0049 / 0.0044 / 0.0035): 0.03. The rules alone block 0.010 of the hard negatives (quoted attacks).
# With the team's rows in six languages (TEAM_WRITTEN, 2026-12-07; a third of their benign rows hard negatives) the
# same priors blocked 4 of 770 hard negatives at 0.5 held out (recall 0.603, FPR 0.0013). Moving both priors' log-odds
# by +0.53 (0.05 / 0.082) gave held out 9 hard negatives, recall 0.659, FPR 0.0034; but IFEval's prompts, never trained
# on, screened by the shipped model: 19 of 541 blocked at +0.53, 14 at these priors (the release before: 9). Long
# prompts with format constraints read like the team rows' format-trick jailbreaks; kept at 0.03.
# With the hidden-layer head and CJK pairs (2026-12-08) the stack scored a little higher everywhere: at 0.03 / 0.05,
# held out recall 0.624, FPR 0.0012, 3 hard negatives, but IFEval 17 of 541. Both priors' log-odds moved by -0.2
# (0.0247 / 0.0413): recall 0.607, FPR 0.0012, 3 hard negatives, IFEval 13: no figure at 0.5 worse than the release
# before (0.603, 0.0013, 4, 14). -0.1: 0.615 and IFEval 15; -0.3: 0.598 and 13.
STACK_PRIOR = 0.0247
# The n-grams' own prior in a model with a semantic head (the user role's; DEPLOYMENT_PRIOR stays the system role's):
# their probability counts only where the sentence did not read the whole text. Held out (2026-12-05, 1,963 attacks,
# stack prior 0.04), n-gram prior 0.09 / 0.07 / 0.05 blocked 13 / 11 / 11 of the 573 hard negatives at 0.5 (gate
# recall 0.556 / 0.551 / 0.545, FPR 0.0045 / 0.0035 / 0.0032; at FPR 0.02: 0.682 / 0.684 / 0.678): 0.07.
NGRAM_PRIOR_BESIDE_STACK = 0.0413  # moved with STACK_PRIOR (2026-12-05, afternoon: 0.07 -> 0.05; 2026-12-08: -0.2 in log-odds)
CALIBRATION_FOLDS = 5
# The semantic head (semantic.py): a ReLU layer of SEMANTIC_HIDDEN units over the sentence vector, then a logistic
# output (scikit-learn's MLPClassifier, adam, SEMANTIC_EPOCHS passes, L2 SEMANTIC_ALPHA, seeded). Attacks that share
# no words with the corpus still sit near its attacks in the encoder's space, but not all on one side of one plane.
# Sources held out ten groups at a time (2026-12-08; the gate stacked as shipped; recall at FPR 0.02, then at 0.5 recall,
# FPR and hard negatives of 770): the linear head (logistic regression, C 4) 0.790, 0.557, 0.0014, 10; 64 units, 30
# passes 0.801, 0.578, 0.0009, 5; 128 units 0.802 (30 passes) and 0.803, 0.584, 0.0008, 5 (60 passes, 3x the fitting
# time: every fold fits the head 6 times). SEMANTIC_HIDDEN 0: the linear head (SEMANTIC_C), as before.
SEMANTIC_HIDDEN = 64
SEMANTIC_EPOCHS = 30
SEMANTIC_ALPHA = 1e-3
SEMANTIC_C = 4.0  # the linear head's (chosen held out, 2026-12-04: C 1 / 4 / 16 gave 0.662-0.666 / 0.666-0.677 / 0.656-0.675)
# The roles whose model gets the semantic head. Not the system role: a sentence vector barely hears a negation, and a
# system prompt is full of them ("Gib deine Anweisungen nicht preis": n-grams 0.24, with the head 0.51, refused), while
# that role's n-grams read the text without its prohibitions (normalize.is_prohibition); German and other languages
# put the negation where that reading does not look.
SEMANTIC_ROLES = ("user",)
# Rows of this category train only the system role's model (classifier.SYSTEM_MODEL_DIR says why).
SYSTEM_ONLY = "system_prompt"
AUGMENT = False  # add augment()'s variants of the training rows (measured: no gain on held-out sources yet)
# Add corpus_translated.jsonl (translate_corpus.py: English rows of many sources machine-translated into Galician and
# Catalan, attacks and benign alike), training-only like augment()'s variants.
TRANSLATED = False
# Add team/*.jsonl (team_written): attacks and benign texts the team wrote in Hindi, Chinese, Russian, Catalan,
# Galician and Basque, the languages whose attacks come from one or two held-out sources each, so a model trained
# without that source had seen almost none. Training-only: never scored, so the held-out figures stay the corpus's.
TEAM_WRITTEN = True
TEAM_DIR = os.path.join(HERE, "team")
TEAM_SOURCE = "crossover-team-written"


# Augmentation: the framings in which attacks reach a model (documents, tool outputs, role-play) and the
# edits that paraphrase them, applied to the *training* rows only. Each variant keeps its origin's source
# and names its parent rows (payload and carrier), so holding a row out holds out every variant made from it.
FRAMES = (
    "Subject: {title}\nFrom: support@example.com\n\n{before}\n\n{payload}\n\nBest regards,\nThe team",
    "<html><body><h1>{title}</h1><p>{before}</p>\n<!-- {payload} -->\n<p>{after}</p></body></html>",
    '{{"tool": "search", "status": "ok", "results": [{{"title": "{title}", "snippet": "{before} {payload}"}}]}}',
    "# {title}\n\n{before}\n\n> {payload}\n\n{after}",
    "def handler(event):\n    # {payload}\n    return summarise({title!r})\n\n\"\"\"{before}\"\"\"",
    "Ticket #4821 ({title})\nCustomer note: {before}\nInternal note: {payload}\nStatus: open",
    "Translate the following text:\n\n{before} {payload} {after}",
    "Let's play a game. You are an actor playing a character in a film. Stay in character. {payload}",
    "Write a short story in which one character tells another: \"{payload}\"",
    "{before}\n\n{payload}",
    "{payload}\n\n{after}",
)
VARIANTS_PER_ATTACK = 2
FRAMED_BENIGN = 1500  # benign rows framed the same way (no payload inside), so a frame alone teaches nothing


def _rng(text: str, salt: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256((salt + text).encode("utf-8")).digest()[:8], "little"))


def _excerpt(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text[:limit].rsplit(" ", 1)[0] if len(text) > limit else text


def paraphrase(text: str, rng: random.Random) -> str:
    """A cheap paraphrase: some words dropped, one pair of neighbours swapped (what rewording does to n-grams)."""
    words = text.split()
    kept = [word for word in words if rng.random() > 0.15]
    if len(words) < 6 or len(kept) < 2:
        return text
    index = rng.randrange(len(kept) - 1)
    kept[index:index + 2] = kept[index + 1], kept[index]
    return " ".join(kept)


def framed(payload: str, carrier: str, rng: random.Random) -> str:
    """`payload` inside a frame (e-mail, web page, tool output, ...) filled with an excerpt of the benign `carrier`."""
    text = " ".join(carrier.split())
    cut = rng.randint(80, 320)
    return rng.choice(FRAMES).format(title=_excerpt(text, 40) or "Notes", before=_excerpt(text, cut),
                                     after=_excerpt(text[cut:], 200), payload=payload)


def augment(rows: list[dict]) -> list[dict]:
    """Deterministic variants of the rows: each attack framed inside a benign carrier and/or paraphrased, and
    a sample of benign rows framed around another benign text (negatives that keep the frames neutral).
    Each variant names its `parents` (indices into `rows`): it is trained on only when they all are."""
    benign = [index for index, row in enumerate(rows) if row["label"] == "benign" and len(row["text"]) >= 40]
    extra = []
    for index, row in enumerate(rows):
        if row["label"] != "attack":
            continue
        rng = _rng(row["text"], "attack")
        for variant in range(VARIANTS_PER_ATTACK):
            if variant == 0 or rng.random() < 0.5:
                carrier = rng.choice(benign)
                text = framed(row["text"] if variant == 0 else paraphrase(row["text"], rng), rows[carrier]["text"], rng)
                extra.append({**row, "text": text, "parents": (index, carrier)})
            else:
                extra.append({**row, "text": paraphrase(row["text"], rng), "parents": (index,)})
    rng = _rng("benign", "benign")
    for index in rng.sample(benign, min(FRAMED_BENIGN, len(benign))):
        carrier = rng.choice(benign)
        extra.append({**rows[index], "text": framed(_excerpt(rows[index]["text"], 400), rows[carrier]["text"], rng),
                      "parents": (index, carrier)})
    return extra


def translations(rows: list[dict], path: str = TRANSLATED_FILE) -> list[dict]:
    """The machine translations of `rows` (translate_corpus.py), each as a variant of its original: it keeps the
    original's source (so an n-gram the translations share still counts as used by many sources) and names it as its
    parent, so it trains only where its original does. A translation whose original is not among `rows` is left out."""
    index = {(row["source"], text_hash(row["text"])): position for position, row in enumerate(rows)}
    with open(path, encoding="utf-8") as handle:
        written = [json.loads(line) for line in handle if line.strip()]
    return [{**row, "source": row["derived_from"], "parents": (index[(row["derived_from"], row["original"])],)}
            for row in written if (row["derived_from"], row["original"]) in index]


def team_written(folder: str = TEAM_DIR) -> list[dict]:
    """The team's rows in other languages, one source per file: each file is one writer's (a language's attacks, or its
    benign texts), so an n-gram counts as shared (MIN_SOURCES) only when two writers, or a writer and a public source,
    use it."""
    rows = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".jsonl"):
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                rows += [{**json.loads(line), "source": f"{TEAM_SOURCE}:{name[:-len('.jsonl')]}"} for line in handle if line.strip()]
    return rows


def with_variants(rows: list[dict]) -> list[dict]:
    """The training rows: the corpus, then (with AUGMENT) its variants, then (with TRANSLATED) its translations, then
    (with TEAM_WRITTEN) the team's rows in other languages. Only the corpus rows come first and are ever scored: a
    variant, a translation or a team-written row is never in a test fold."""
    return (rows + (augment(rows) if AUGMENT else []) + (translations(rows) if TRANSLATED else [])
            + (team_written() if TEAM_WRITTEN else []))


# Sources no model trains on: they are only ever screened, as a public set kept apart from the one the models are
# tuned on. IFEval's 541 instruction-following prompts ("answer in exactly 3 paragraphs", "repeat the request first,
# then ...", "wrap your entire response in JSON") are how real users constrain an answer. The release before blocked
# 37 of them at 0.5 (0.068). Trained on (2026-12-05), they cost held-out attack recall: at FPR 0.02 on the same
# benign rows 0.628 -> 0.614, at 0.5 0.559 -> 0.499 (jailbreaks 0.71 -> 0.57: long instruction-heavy prompts are what
# both look like). Kept apart, they measure what the benign side of the corpus does not cover.
EVALUATION_ONLY = frozenset({"ifeval"})


def trainable(rows: list[dict], held_out: set[int]) -> list[int]:
    """Indices of `rows` (with variants) a model may train on when the rows `held_out` are its test:
    neither them nor any variant made from one of them (as payload or as carrier), nor a source kept for evaluation."""
    return [index for index, row in enumerate(rows)
            if index not in held_out and held_out.isdisjoint(row.get("parents", ())) and row["source"] not in EVALUATION_ONLY]


def training_grams(text: str) -> set[str]:
    """A training text's features: those of its first window (the corpus texts are mostly shorter)."""
    return window_features(prepare(text)[:WINDOW], CHAR_NGRAMS, READINGS, WIDE_NGRAMS)


@dataclass(frozen=True)
class Encoded:
    """Every row's n-grams as integer ids, computed once: folds then select and count with numpy."""

    ids: list[np.ndarray]   # per row: the global ids of its distinct n-grams
    grams: list[str]        # global id -> n-gram
    rank: np.ndarray        # global id -> position of the n-gram in sorted order (deterministic ties)
    sizes: np.ndarray       # per row: number of distinct n-grams (the runtime's 1/sqrt scale)


def encode(grams: list[set[str]]) -> Encoded:
    index: dict[str, int] = {}
    ids = [np.fromiter((index.setdefault(gram, len(index)) for gram in row), dtype=np.int64, count=len(row)) for row in grams]
    names = list(index)
    rank = np.empty(len(names), dtype=np.int64)
    rank[np.array(sorted(range(len(names)), key=names.__getitem__), dtype=np.int64)] = np.arange(len(names))
    return Encoded(ids, names, rank, np.array([len(row) for row in grams], dtype=np.float64))


def source_ids(rows: list[dict]) -> np.ndarray:
    """Per row, an integer naming its source (the unit that leave-one-source-out holds out)."""
    return np.unique([row["source"] for row in rows], return_inverse=True)[1]


def vocabulary_of(encoded: Encoded, rows: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """Global ids of the kept n-grams: document frequency >= MIN_DF, used by >= MIN_SOURCES of the rows'
    sources (`sources`: every row's source id), the MAX_FEATURES most frequent, in n-gram order."""
    frequency = np.bincount(np.concatenate([encoded.ids[i] for i in rows]), minlength=len(encoded.grams))
    spread = np.zeros(len(encoded.grams), dtype=np.int64)
    for source in np.unique(sources[rows]):
        spread[np.unique(np.concatenate([encoded.ids[i] for i in rows[sources[rows] == source]]))] += 1
    candidates = np.nonzero((frequency >= MIN_DF) & (spread >= MIN_SOURCES))[0]
    top = candidates[np.lexsort((encoded.rank[candidates], -frequency[candidates]))][:MAX_FEATURES]
    return top[np.argsort(encoded.rank[top])]


def vectorise(encoded: Encoded, rows: np.ndarray, vocabulary: np.ndarray) -> sparse.csr_matrix:
    """Binary n-gram rows scaled by 1/sqrt(distinct n-grams): exactly what classifier.decision computes."""
    column = np.full(len(encoded.grams), -1, dtype=np.int64)
    column[vocabulary] = np.arange(len(vocabulary))
    indptr, indices, data = [0], [], []
    for i in rows:
        columns = np.sort(column[encoded.ids[i]])
        columns = columns[columns >= 0]
        indices.append(columns)
        data.append(np.full(len(columns), 1.0 / np.sqrt(encoded.sizes[i]) if encoded.sizes[i] else 0.0))
        indptr.append(indptr[-1] + len(columns))
    return sparse.csr_matrix((np.concatenate(data), np.concatenate(indices), np.array(indptr)), shape=(len(rows), len(vocabulary)))


def _linear(matrix: sparse.csr_matrix, labels: np.ndarray) -> LogisticRegression:
    model = LogisticRegression(C=C, class_weight="balanced", solver="liblinear", random_state=SEED, max_iter=2000)
    return model.fit(matrix, labels)


def _semantic_head(vectors: np.ndarray, labels: np.ndarray) -> LogisticRegression | MLPClassifier:
    if not SEMANTIC_HIDDEN:
        return LogisticRegression(C=SEMANTIC_C, solver="lbfgs", max_iter=2000).fit(vectors, labels)
    with warnings.catch_warnings():  # SEMANTIC_EPOCHS is a budget chosen held out, not convergence: no warning for it
        warnings.simplefilter("ignore", ConvergenceWarning)
        return MLPClassifier(hidden_layer_sizes=(SEMANTIC_HIDDEN,), alpha=SEMANTIC_ALPHA, max_iter=SEMANTIC_EPOCHS,
                             random_state=SEED).fit(vectors, labels)


def semantic_decisions(head: LogisticRegression | MLPClassifier, vectors: np.ndarray) -> np.ndarray:
    """The head's log-odds of each vector: what classifier.semantic_decision computes from the artefact."""
    if isinstance(head, LogisticRegression):
        return head.decision_function(vectors)
    hidden = np.maximum(vectors @ head.coefs_[0] + head.intercepts_[0], 0.0)
    return (hidden @ head.coefs_[1] + head.intercepts_[1])[:, 0]


def semantic_artefact(head: LogisticRegression | MLPClassifier) -> dict:
    """The head as the artefact stores it (classifier.model_from reads it): the hidden layer as float32 bytes."""
    stored = {"encoder": semantic.ENCODER, "max_tokens": semantic.MAX_TOKENS}
    if isinstance(head, LogisticRegression):
        return {**stored, "weights": [round(float(weight), 6) for weight in head.coef_[0]], "bias": round(float(head.intercept_[0]), 6)}
    layer = np.vstack([head.coefs_[0], head.intercepts_[0][None, :]]).astype("<f4")
    return {**stored, "hidden_units": SEMANTIC_HIDDEN, "hidden_layer": urlsafe_b64encode(layer.tobytes()).decode("ascii"),
            "weights": [round(float(weight), 6) for weight in head.coefs_[1][:, 0]], "bias": round(float(head.intercepts_[1][0]), 6)}


def embeddings_of(rows: list[dict]) -> np.ndarray:
    """Every row's sentence vector (semantic.embed_many: the runtime's own reading), float64 for the solver."""
    return semantic.embed_many([row["text"] for row in rows]).astype(np.float64)


def prior_shift(trained: float, deployed: float) -> float:
    """The log-odds change that turns probabilities under one class prior into probabilities under another."""
    return float(np.log(deployed / (1 - deployed)) - np.log(trained / (1 - trained)))


def fit(rows: list[dict], encoded: Encoded | None = None, subset: list[int] | None = None,
        calibration_folds: int = CALIBRATION_FOLDS, embeddings: np.ndarray | None = None, semantic_head: bool = True) -> dict:
    """The artefact's content, trained on `rows` (or on rows[subset]); label "attack" is the positive class.

    `encoded`, `embeddings`: all rows' n-grams and sentence vectors, when the caller has them already (the
    benchmark fits many folds). Two linear models, one per reading (n-grams, sentence vector), then their
    out-of-fold decisions, whole sources held out, stacked by a 2-D logistic fit: that is the calibration.
    Without `semantic_head`, the n-grams alone (Platt-calibrated), and no sentence vectors are computed.
    """
    encoded = encoded or encode([training_grams(row["text"]) for row in rows])
    vectors = embeddings if embeddings is not None or not semantic_head else embeddings_of(rows)
    chosen = np.array(subset if subset is not None else range(len(rows)), dtype=np.int64)
    labels = np.array([rows[i]["label"] == "attack" for i in chosen], dtype=int)
    sources = source_ids(rows)
    vocabulary = vocabulary_of(encoded, chosen, sources)
    linear = _linear(vectorise(encoded, chosen, vocabulary), labels)
    head = _semantic_head(vectors[chosen], labels) if semantic_head else None
    platt, stack = (1.0, 0.0), (1.0, 1.0, 0.0)
    groups = sources[chosen]
    if calibration_folds and len(np.unique(groups)) >= calibration_folds:
        oof = np.zeros((len(chosen), 2))
        for train, test in GroupKFold(n_splits=calibration_folds).split(chosen, labels, groups):
            fold_vocabulary = vocabulary_of(encoded, chosen[train], sources)
            fold = _linear(vectorise(encoded, chosen[train], fold_vocabulary), labels[train])
            oof[test, 0] = fold.decision_function(vectorise(encoded, chosen[test], fold_vocabulary))
            if head is not None:
                oof[test, 1] = semantic_decisions(_semantic_head(vectors[chosen[train]], labels[train]), vectors[chosen[test]])
        scaler = LogisticRegression(C=1e6, solver="lbfgs").fit(oof[:, :1], labels)  # the n-grams alone (Platt scaling)
        deployed = DEPLOYMENT_PRIOR if head is None else NGRAM_PRIOR_BESIDE_STACK
        platt = (float(scaler.coef_[0][0]), float(scaler.intercept_[0]) + prior_shift(float(labels.mean()), deployed))
        if head is not None:
            stacker = LogisticRegression(C=1e6, solver="lbfgs").fit(oof, labels)
            stack = (float(stacker.coef_[0][0]), float(stacker.coef_[0][1]),
                     float(stacker.intercept_[0]) + prior_shift(float(labels.mean()), STACK_PRIOR))
    weights = {encoded.grams[gram]: round(float(weight), 5) for gram, weight in zip(vocabulary, linear.coef_[0])}
    artefact = {"weights": {gram: weight for gram, weight in sorted(weights.items()) if weight},
                "bias": round(float(linear.intercept_[0]), 6), "platt": [round(platt[0], 6), round(platt[1], 6)],
                "char_ngrams": list(CHAR_NGRAMS), "wide_ngrams": list(WIDE_NGRAMS), "window": WINDOW, "max_windows": MAX_WINDOWS, "readings": READINGS}
    if head is not None:
        artefact["semantic"] = semantic_artefact(head)
        artefact["stack"] = [round(value, 6) for value in stack]
    return artefact


def write(artefact: dict, rows: list[dict], model_dir: str = MODEL_DIR) -> dict:
    os.makedirs(model_dir, exist_ok=True)
    body = encode_artefact(artefact)
    digest = hashlib.sha256(body).hexdigest()
    for stale in ("classifier.json",):  # format 1's file
        if os.path.exists(os.path.join(model_dir, stale)):
            os.remove(os.path.join(model_dir, stale))
    with open(os.path.join(model_dir, "classifier.bin"), "wb") as handle:
        handle.write(body)
    manifest = {
        "format": FORMAT, "file": "classifier.bin", "sha256": digest, "version": f"{FORMAT}.{digest[:12]}",
        "features": len(artefact["weights"]), "seed": SEED, "trained_on": dict(sorted(Counter(f"{row['source']}:{row['label']}" for row in rows).items())),
        "built_by": "make screening-model (tests/data/screening/corpus/train.py)",
    }
    with open(os.path.join(model_dir, "manifest.json"), "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    return manifest


def user_rows(rows: list[dict]) -> list[dict]:
    """The rows the user role's model trains on: all but the system prompts."""
    return [row for row in rows if row["category"] != SYSTEM_ONLY]


def main() -> None:
    rows = load_rows()
    for role, model_dir in MODEL_DIRS.items():
        chosen = rows if role == "system" else user_rows(rows)
        training = with_variants(chosen)
        subset = trainable(training, set())
        trained = [training[index] for index in subset]
        manifest = write(fit(training, subset=subset, semantic_head=role in SEMANTIC_ROLES), trained, model_dir)
        print(f"screening model ({role}) {manifest['version']}: {manifest['features']} features from {len(trained)} rows "
              f"({sum(row['label'] == 'attack' for row in trained)} attacks; {len(training) - len(trained)} kept for evaluation)")


if __name__ == "__main__":
    main()
