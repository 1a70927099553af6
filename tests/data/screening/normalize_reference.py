"""FROZEN reference: chalicelib/screening/normalize.py as of f5ffc37, before it was made faster.

The classifier was trained on what fold, join_spaced_letters, unleet and decoded_payloads return;
tests/unit/test_screening_normalize.py checks that the current module returns exactly the same on
the whole corpus, the hostile inputs and generated text. Never edit this file (except to retire it
together with a retrained model).
"""
from __future__ import annotations

import base64
import binascii
import re
import unicodedata
import urllib.parse
from itertools import islice

# Zero-width, bidi controls, soft hyphen, word joiners, BOM, tag characters: invisible, so removed.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
# Control characters and whitespace runs become one space, in one pass.
_CONTROL_OR_SPACES = re.compile(r"[\s\x00-\x08\x0e-\x1f\x7f-\x9f]+")
# Letters spaced or punctuated apart: "i g n o r e", "i.g.n.o.r.e" (4 letters or more, not touching
# other letters). Linear: each repetition is one separator then one letter (no choice), an attempt
# that reaches a letter backs off one step at most, and one that fails is shorter than 5 letters.
# (The former `\b(?:[a-z0-9][sep]){3,}[a-z0-9]\b` was quadratic: "a.a.a...._a_a_a...ab".)
_SEPARATOR_CHARS = " \t._*-/|"
_SPACED_LETTERS = re.compile(r"(?<![a-z0-9])[a-z0-9](?:[ \t._*\-/|][a-z0-9]){3,}(?![a-z0-9])")
_DROP_SEPARATORS = str.maketrans("", "", _SEPARATOR_CHARS)
# "ig-no-re": one character of look-behind and look-ahead, constant work per position.
_INTRA_WORD_SEPARATORS = re.compile(r"(?<=[a-z])[._*\-|](?=[a-z])")

_HOMOGLYPHS = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ɡ": "g", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "γ": "y", "ω": "w", "ς": "s", "μ": "u",
    # Latin look-alikes NFKC leaves alone
    "ı": "i", "ł": "l", "ø": "o", "đ": "d", "ß": "ss",
})
def _accent_table() -> dict[int, str]:
    """Latin letters with diacritics (U+00C0-U+024F) to their base letters, precomputed once."""
    table = {}
    for code in range(0xC0, 0x250):
        base = "".join(ch for ch in unicodedata.normalize("NFKD", chr(code)) if not unicodedata.combining(ch))
        if base != chr(code) and base.isascii():
            table[code] = base
    return table


_ACCENTS = _accent_table()
# One table, applied only when the text has a character in it: str.translate pays for every
# character it does not find (an exception each), which is most of a non-Latin text.
_FOLD_TABLE = {**_ACCENTS, **_HOMOGLYPHS}
_FOLDABLE = re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(_FOLD_TABLE)) + "]")
# rot13 on the UTF-8 bytes: the same letters as the codec (ASCII only, every other character's bytes
# are >= 0x80), without str.translate's cost per unmapped character.
_ROT13_BYTES = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                               b"NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i", "|": "l", "+": "t"})

# A failed attempt stops within 16 characters; a successful one is never rescanned.
_BASE64_CANDIDATE = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
# Starts only at a word boundary, and only the attempts that start within the last 8 pairs before
# a boundary-free tail can fail after scanning it: at most ~8 scans of any stretch of text.
_HEX_CANDIDATE = re.compile(r"\b(?:[0-9a-fA-F]{2}[\s:]?){8,}\b")
_URL_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")
_HAS_LETTER = re.compile(r"[a-z]")
# Text carried by invisible characters: tag characters spell ASCII (U+E0020-E007E), and a run of
# variation selectors can carry one byte each (VS1-16: 0-15, VS17-256: 16-255), e.g. after an emoji.
_TAG_RUN = re.compile("[\U000e0020-\U000e007e]{4,}")
_SELECTOR_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{4,}")
_TAG_TO_ASCII = {code: code - 0xE0000 for code in range(0xE0020, 0xE007F)}
_SELECTOR_TO_BYTE = {**{0xFE00 + index: index for index in range(16)}, **{0xE0100 + index: 16 + index for index in range(240)}}

MAX_DECODED_CHARS = 8_000  # one payload
MAX_PAYLOADS = 8  # payloads decoded from one text
MAX_DEPTH = 2  # payloads inside payloads
MAX_READINGS = 32  # readings of one input, all depths together


def fold(text: str) -> str:
    """NFKC, invisible and control characters removed, homoglyphs and accents folded, lower case, one space."""
    text = text.replace("\ufdfa", " ").replace("\ufdfb", " ")  # since 2026-12-05, as normalize.LONG_LIGATURES: bounded growth
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():  # every invisible character is non-ASCII
        text = _INVISIBLE.sub("", text)
    text = text.lower().replace("i\u0307", "i")  # Turkish "İ" lower-cases to "i" + U+0307: read as "i"
    if not text.isascii() and _FOLDABLE.search(text):  # the common case skips this
        # Homoglyphs to Latin, accents stripped, so one rule covers "instruções"/"instrucoes".
        text = text.translate(_FOLD_TABLE)
    return _CONTROL_OR_SPACES.sub(" ", text).strip()


def join_spaced_letters(folded: str) -> str:
    """Undo letter spacing and intra-word punctuation: "i g n o r e" and "ig-no-re" become "ignore"."""
    joined = _SPACED_LETTERS.sub(lambda match: match.group(0).translate(_DROP_SEPARATORS), folded)
    return _INTRA_WORD_SEPARATORS.sub("", joined)


_LEET_HINT = re.compile(r"[a-z][0134579@$!|+]|[0134579@$!|+][a-z]")


def unleet(folded: str) -> str:
    """Leetspeak folded to letters, but only inside words that have letters (numbers stay numbers)."""
    if not _LEET_HINT.search(folded):
        return folded
    return _LEET_WORD.sub(_unleet_word, folded)


# A word with a leetspeak character in it. Linear: it starts only where a word starts, and the lazy
# scan to the first such character stops at the word's end.
_LEET_WORD = re.compile(r"(?<!\S)\S*?[0134579@$!|+]\S*")


def _unleet_word(match: re.Match[str]) -> str:
    word = match.group(0)
    return word.translate(_LEET) if _HAS_LETTER.search(word) else word


def _printable_ratio(text: str) -> float:
    if not text:
        return 0.0
    return (sum(map(str.isprintable, text)) + text.count("\n") + text.count("\t")) / len(text)


def _as_text(raw: bytes) -> str | None:
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # Real hidden instructions are mostly letters and spaces; random bytes are not.
    if len(decoded) < 4 or _printable_ratio(decoded) < 0.9 or sum(map(str.isalpha, decoded)) < len(decoded) * 0.5:
        return None
    return decoded[:MAX_DECODED_CHARS]


def decoded_payloads(text: str) -> list[str]:
    """Texts hidden in invisible characters, base64, hex or URL encoding inside `text` (one level)."""
    found: list[str] = []
    if not text.isascii():
        for match in islice(_TAG_RUN.finditer(text), MAX_PAYLOADS):
            found.append(match.group(0).translate(_TAG_TO_ASCII)[:MAX_DECODED_CHARS])
        for match in islice(_SELECTOR_RUN.finditer(text), MAX_PAYLOADS):
            decoded = _as_text(match.group(0).translate(_SELECTOR_TO_BYTE).encode("latin-1"))
            if decoded:
                found.append(decoded)
    for candidate in islice((match.group(0) for match in _BASE64_CANDIDATE.finditer(text)), MAX_PAYLOADS):
        padded = candidate + "=" * (-len(candidate) % 4)
        for decoder in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                decoded = _as_text(decoder(padded))
            except (binascii.Error, ValueError):
                decoded = None
            if decoded:
                found.append(decoded)
                break
    for candidate in islice((match.group(0) for match in _HEX_CANDIDATE.finditer(text)), MAX_PAYLOADS):
        try:
            decoded = _as_text(bytes.fromhex(re.sub(r"[\s:]", "", candidate)))
        except ValueError:
            decoded = None
        if decoded:
            found.append(decoded)
    if sum(1 for _ in islice(_URL_ESCAPE.finditer(text), 3)) == 3:
        unquoted = urllib.parse.unquote_plus(text)
        if unquoted != text:
            found.append(unquoted[:MAX_DECODED_CHARS])
    return found[:MAX_PAYLOADS]


def rot13(text: str) -> str:
    return text.encode("utf-8", "surrogatepass").translate(_ROT13_BYTES).decode("utf-8", "surrogatepass")


def squash(folded: str) -> str:
    """Letters only: "d r o p all p r i o r" -> "dropallprior". Word boundaries are lost, so only
    the dedicated 'squashed' rules read it, and only when letters were spaced apart."""
    return re.sub(r"[^a-z]", "", folded)


def _readings(text: str) -> list[tuple[str, str]]:
    """The readings of one text (no decoding): folded, de-spaced, de-leeted, rot13, letters only."""
    folded = fold(text)
    joined = join_spaced_letters(folded)
    readings = [("text", folded), ("text", joined), ("text", unleet(joined)),
                # rot13 before folding: rot13 leaves accented letters alone, folding would not.
                # (for ASCII text the two orders agree, and the folded text is at hand)
                ("text", rot13(folded) if text.isascii() else fold(rot13(text)))]
    if _SPACED_LETTERS.search(folded):
        readings.append(("squashed", squash(unleet(folded))))
    return readings


def views(text: str, depth: int = MAX_DEPTH) -> list[tuple[str, str]]:
    """Every normalised reading of `text` as (kind, text): kind "text" for word-preserving readings,
    "squashed" for the letters-only reading of spaced-out text. No duplicates, stable order.

    Payloads are read breadth first, and all of them together (every depth) are at most twice as long
    as `text`: a payload is shorter than its encoding (base64 inside base64 adds up to 1.3x), so this
    only stops inputs built to multiply work (overlapping encodings of the same characters)."""
    unique: dict[tuple[str, str], None] = {}
    budget = 2 * len(text)
    pending = [(text, depth)]
    for current, level in pending:  # the list grows while it is read: breadth first
        for reading in _readings(current):
            if len(unique) >= MAX_READINGS:
                return list(unique)
            unique.setdefault(reading)
        if level <= 0:
            continue
        for payload in decoded_payloads(current):
            payload = payload[:budget]
            if not payload:
                break
            budget -= len(payload)
            pending.append((payload, level - 1))
    return list(unique)
