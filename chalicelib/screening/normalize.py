"""Normalisation before matching: what an attacker does to slip past keyword rules, undone.

`views(text)` returns the texts the rules run on: the folded text, a de-spaced/de-leeted view,
and any payloads decoded from base64, hex, URL encoding or rot13, bounded in count, size and depth.
Every function here is pure and total: it never raises on any Unicode input.
"""
from __future__ import annotations

import base64
import binascii
import codecs
import re
import unicodedata
import urllib.parse

# Zero-width, bidi controls, soft hyphen, word joiners, BOM, tag characters: invisible, so removed.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SPACES = re.compile(r"\s+")
# Letters spaced or punctuated apart: "i g n o r e", "i.g.n.o.r.e", "ig-no-re".
_SPACED_LETTERS = re.compile(r"\b(?:[a-z0-9][ \t._*\-/|]){3,}[a-z0-9]\b")
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
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i", "|": "l", "+": "t"})

_BASE64_CANDIDATE = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_CANDIDATE = re.compile(r"\b(?:[0-9a-fA-F]{2}[\s:]?){8,}\b")
_URL_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")

MAX_DECODED_CHARS = 8_000
MAX_PAYLOADS = 8
MAX_DEPTH = 2


def fold(text: str) -> str:
    """NFKC, invisible and control characters removed, homoglyphs and accents folded, lower case, one space."""
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", text)
    text = _CONTROL.sub(" ", text)
    text = text.lower()
    if not text.isascii():  # the common case skips this
        # Homoglyphs to Latin, then accents stripped, so one rule covers "instruções"/"instrucoes".
        text = text.translate(_HOMOGLYPHS).translate(_ACCENTS)
    return _SPACES.sub(" ", text).strip()


def join_spaced_letters(folded: str) -> str:
    """Undo letter spacing and intra-word punctuation: "i g n o r e" and "ig-no-re" become "ignore"."""
    joined = _SPACED_LETTERS.sub(lambda match: re.sub(r"[ \t._*\-/|]", "", match.group(0)), folded)
    return _INTRA_WORD_SEPARATORS.sub("", joined)


_LEET_HINT = re.compile(r"[a-z][0134579@$!|+]|[0134579@$!|+][a-z]")


def unleet(folded: str) -> str:
    """Leetspeak folded to letters, but only inside words that have letters (numbers stay numbers)."""
    if not _LEET_HINT.search(folded):
        return folded
    return re.sub(r"\S*[a-z]\S*", lambda match: match.group(0).translate(_LEET), folded)


def _printable_ratio(text: str) -> float:
    if not text:
        return 0.0
    return sum(1 for ch in text if ch.isprintable() or ch in "\n\t") / len(text)


def _as_text(raw: bytes) -> str | None:
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # Real hidden instructions are mostly letters and spaces; random bytes are not.
    if len(decoded) < 4 or _printable_ratio(decoded) < 0.9 or sum(ch.isalpha() for ch in decoded) < len(decoded) * 0.5:
        return None
    return decoded[:MAX_DECODED_CHARS]


def decoded_payloads(text: str) -> list[str]:
    """Texts hidden in base64, hex or URL encoding inside `text` (one level)."""
    found: list[str] = []
    for candidate in _BASE64_CANDIDATE.findall(text)[:MAX_PAYLOADS]:
        padded = candidate + "=" * (-len(candidate) % 4)
        for decoder in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                decoded = _as_text(decoder(padded))
            except (binascii.Error, ValueError):
                decoded = None
            if decoded:
                found.append(decoded)
                break
    for candidate in _HEX_CANDIDATE.findall(text)[:MAX_PAYLOADS]:
        try:
            decoded = _as_text(bytes.fromhex(re.sub(r"[\s:]", "", candidate)))
        except ValueError:
            decoded = None
        if decoded:
            found.append(decoded)
    if len(_URL_ESCAPE.findall(text)) >= 3:
        unquoted = urllib.parse.unquote_plus(text)
        if unquoted != text:
            found.append(unquoted[:MAX_DECODED_CHARS])
    return found[:MAX_PAYLOADS]


def squash(folded: str) -> str:
    """Letters only: "d r o p all p r i o r" -> "dropallprior". Word boundaries are lost, so only
    the dedicated 'squashed' rules read it, and only when letters were spaced apart."""
    return re.sub(r"[^a-z]", "", folded)


def views(text: str, depth: int = MAX_DEPTH) -> list[tuple[str, str]]:
    """Every normalised reading of `text` as (kind, text): kind "text" for word-preserving readings,
    "squashed" for the letters-only reading of spaced-out text. No duplicates, stable order."""
    folded = fold(text)
    joined = join_spaced_letters(folded)
    readings = [("text", folded), ("text", joined), ("text", unleet(joined)),
                # rot13 before folding: rot13 leaves accented letters alone, folding would not.
                ("text", fold(codecs.encode(text, "rot13")))]
    if _SPACED_LETTERS.search(folded):
        readings.append(("squashed", squash(unleet(folded))))
    if depth > 0:
        for payload in decoded_payloads(text):
            readings.extend(views(payload, depth - 1))
    unique: list[tuple[str, str]] = []
    for reading in readings:
        if reading not in unique:
            unique.append(reading)
    return unique
