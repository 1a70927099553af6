"""Readings of text written in simple ciphers, for the rules (normalize.views): the text reversed (whole, and each word),
turned upside down, Caesar-shifted or atbash, in Pig Latin, split into quoted fragments to concatenate, or spelled by the
first letters of its words or lines (an acrostic).

Each reading is guarded by a cheap test, so ordinary prose pays a few C-level passes (the words of its head and tail
split and looked up as a set, their first letters taken, a quote searched: ~0.2 ms for 32,000 characters of prose on
the development host, ~15 us for a text of 300); the readings are at most as long as the folded text (an acrostic is
shorter), and `cipher_readings` gives at most 8 of them. Every function is pure and total. The classifier does not
read these. Limits: the tests read a long text's head and tail (`sample`), so a cipher in the middle of a long text
padded with prose is not read; a Caesar or atbash text is read only where the text holds few common words.
"""
from __future__ import annotations

import math
import operator
import re
from itertools import islice
from typing import Callable

# Words English prose holds: a plain reading with MAX_PLAIN_WORDS + 1 of them (or of OTHER_WORDS, so that French,
# Spanish, Portuguese, Italian and German prose is not read as a cipher either) is no cipher text; the words of two
# letters or more, enciphered, find a Caesar shift or atbash (_ENCIPHERED).
COMMON_WORDS = (
    "a", "i", "the", "and", "you", "your", "all", "of", "to", "this", "that", "with", "for", "any", "without", "from",
    "have", "will", "what", "are", "is", "not", "now", "be", "in", "it", "an", "on", "or", "as", "at", "by", "we", "can",
    "do", "if", "my", "me", "but", "please", "tell", "give", "must",
)
OTHER_WORDS = (
    "de", "la", "que", "el", "en", "los", "las", "le", "les", "des", "et", "est", "une", "un", "du", "il", "per", "che",
    "non", "di", "um", "uma", "os", "da", "der", "die", "und", "das", "ist", "nicht", "ein", "eine",
)
_PLAIN = frozenset(COMMON_WORDS + OTHER_WORDS)
# Function words written backwards that are no word forward in those languages ("eht", "dna"; not "on"/"no", "era",
# "ton", "ni", "ti"): English, and French/Spanish/Portuguese "que", "pour", "vous", "para", "les". Two of them make a
# text worth reading reversed.
REVERSED_WORDS = ("eht", "dna", "uoy", "ruoy", "lla", "fo", "ot", "siht", "taht", "htiw", "rof", "yna", "tuohtiw",
                  "morf", "evah", "lliw", "tahw", "eb", "euq", "ruop", "suov", "arap", "sel")
_REVERSED = frozenset(REVERSED_WORDS)
_QUOTES = "\"'\u2018\u2019\u201c\u201d"

MIN_REVERSED_WORDS = 2
MAX_PLAIN_WORDS = 2  # common words in a text that may still be a Caesar or atbash cipher (a wrapper sentence's "the")
MIN_DECODED_WORDS = 3
MIN_FREQUENCY_LETTERS = 40  # characters, for letter frequencies to say anything
MAX_SHORT = 4_096  # characters: a longer text without one common word is no instruction in a cipher
MIN_FREQUENCY_SHARE = 0.8  # of the characters that are not spaces, letters: prose, not code
MIN_GAIN = 0.3  # log-likelihood per letter: English letters read ~1.9 at the right shift, ~1.2 at a wrong one
MIN_FRAGMENTS = 3
MIN_ACROSTIC = 6  # letters: fewer spell nothing the rules know
MIN_PIG_LATIN_WORDS = 4  # "okay, today" is all Pig Latin's endings
MAX_SAMPLE = 4_096

# The upside-down alphabet: turned letters (fold reads them as their letters) and ASCII letters that stand for others.
_TURNED = "\u0250\u0254\u01dd\u025f\u0183\u0265\u1d09\u027e\u029e\ua781\u026f\u0279\u0287\u028c\u028d\u028e\u2200\u214e\u2141"
_TURNED_LETTERS = re.compile(f"[{_TURNED}]")  # a plain character class: one linear scan
_UNTURN = str.maketrans("bdnpqu", "qpudbn")
MIN_TURNED = 3

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_ATBASH = str.maketrans(_LOWER, _LOWER[::-1])
_SHIFTS = tuple(str.maketrans(_LOWER, _LOWER[shift:] + _LOWER[:shift]) for shift in range(26))
# English letter frequencies (per cent), as logarithms: a shift's score is the log-likelihood of the letters it gives.
_ENGLISH = (8.2, 1.5, 2.8, 4.3, 12.7, 2.2, 2.0, 6.1, 7.0, 0.15, 0.77, 4.0, 2.4, 6.7, 7.5, 1.9, 0.095, 6.0, 6.3, 9.1,
            2.8, 0.98, 2.4, 0.15, 2.0, 0.074)
_LOG_ENGLISH = tuple(math.log(frequency) for frequency in _ENGLISH)
_NOT_LETTERS = bytes(set(range(256)) - set(_LOWER.encode()))
MIN_LETTER_SHARE = 0.6  # of the characters that are not spaces: code and numbers are no Caesar text

# Quote, spaces, a comma or plus, spaces, quote (not quotes side by side: code's "```", "''" and '""' are no joints).
# Linear: the possessive runs never give back (an attempt reads the spaces after one quote once and fails at the first
# other character), and an attempt starts only at a quote.
_FRAGMENT_JOINT = re.compile(f"[{_QUOTES}]\\s*+[,+]\\s*+[{_QUOTES}]")
# A line's first letter, after its bullets, numbers and spaces (read on "\n" + the text). Linear: an attempt starts at a
# newline only (a literal, which the engine skips to), its possessive run never gives back and never crosses the next
# newline, so each character is read by one attempt (a run allowed to cross newlines read "\n" * n in n^2 steps).
_LINE_INITIAL = re.compile(r"\n(?:[\d_]|[^\w\n])*+([^\W\d_])")


def common_words(words: set[str]) -> tuple[set[str], set[str]]:
    """Which COMMON_WORDS or OTHER_WORDS and which REVERSED_WORDS are among `words` (a text's words split at its
    spaces: one next to punctuation is missed, which these short words seldom are)."""
    return words & _PLAIN, words & _REVERSED


def reversed_text(folded: str) -> str:
    """The text read from its end: ".tpmorp metsys" -> "system prompt."."""
    return folded[::-1]


def reversed_words(folded: str) -> str:
    """Each word read from its end, in place: "erongi lla" -> "ignore all" (`folded` has single spaces)."""
    return " ".join(reversed(folded[::-1].split(" ")))


def upside_down(folded: str) -> str:
    """Upside-down text turned back: read from its end, with the ASCII letters that are turned others swapped
    ("ʇdɯoɹd", folded "tdmord", reads "prompt"). Its turned letters are folded already (normalize._HOMOGLYPHS)."""
    return folded[::-1].translate(_UNTURN)


def atbash(folded: str) -> str:
    """a<->z, b<->y, ...: its own inverse."""
    return folded.translate(_ATBASH)


def caesar(folded: str, shift: int) -> str:
    """Each letter `shift` places further in the alphabet (a negative shift undoes a positive one)."""
    return folded.translate(_SHIFTS[shift % 26])


Cipher = int | str  # a Caesar shift (1-25 but 13, which rot13's reading has), or "atbash"


def _enciphered() -> dict[str, tuple[Cipher, ...]]:
    """Each COMMON_WORDS word of two letters or more, enciphered by each cipher -> those ciphers."""
    table: dict[str, tuple[Cipher, ...]] = {}
    for cipher in (*(shift for shift in range(1, 26) if shift != 13), "atbash"):
        for word in COMMON_WORDS:
            if len(word) > 1:
                written = atbash(word) if cipher == "atbash" else caesar(word, cipher)
                table[written] = table.get(written, ()) + (cipher,)
    return table


_ENCIPHERED = _enciphered()


def likeliest_cipher(words: set[str]) -> tuple[Cipher | None, int]:
    """The cipher under which the most COMMON_WORDS are among `words` (a text's words), and how many: "uif" and "boe"
    are "the" and "and" one letter on. One set intersection, then a count over the few words found (a wrapper sentence
    in plain English finds nothing here: letter frequencies ranked the right shift of a Caesar-3 sentence after it
    fifth). (None, 0) when none is."""
    found: dict[Cipher, int] = {}
    for written in words & _ENCIPHERED.keys():
        for cipher in _ENCIPHERED[written]:
            found[cipher] = found.get(cipher, 0) + 1
    if not found:
        return None, 0
    # Ties broken by the cipher's name, not by the order `found` was filled in: that follows a set's order, which
    # PYTHONHASHSEED sets per process, so two Lambda instances read one text two ways.
    cipher = max(found, key=lambda name: (found[name], str(name)))  # a shift (int) or "atbash"
    return cipher, found[cipher]


def deciphered(folded: str, cipher: Cipher) -> str:
    """`folded` read back from `cipher` (likeliest_cipher's answer)."""
    return atbash(folded) if cipher == "atbash" else caesar(folded, -int(cipher))


def likeliest_shift(folded: str) -> tuple[int, float]:
    """The Caesar shift English letter frequencies say undoes `folded` (caesar(folded, -shift) is the plain text; 0 for
    a text that reads best as written), and how much likelier per letter (log) its reading is than the text as written.
    The letters counted in one pass, then 26 x 26 products. For an instruction without common words (likeliest_cipher
    has nothing to go on)."""
    data = folded.encode("ascii", "ignore")
    counts = [data.count(letter) for letter in _LOWER.encode()]
    # map(operator.mul, ...) keeps the 26 x 26 products in C (a generator of them cost ~0.3 ms a text here)
    scores = [sum(map(operator.mul, counts[shift:] + counts[:shift], _LOG_ENGLISH)) for shift in range(26)]
    shift = max(range(26), key=scores.__getitem__)
    return shift, (scores[shift] - scores[0]) / max(1, sum(counts))


def joined_fragments(folded: str) -> str | None:
    """Quoted fragments joined ("'ign', 'ore all'" -> "'ignore all'", '"igno" + "re"' -> '"ignore"'), when there are at
    least MIN_FRAGMENTS of them; None otherwise. The joints are counted before any is removed: prose with one (a list
    in a code sample, as every long text of the padded corpus has) paid a search to it and a whole subn, ~0.12 ms per
    32 KB here; counting to the second joint reads the text once (~0.1 ms)."""
    joints = MIN_FRAGMENTS - 1
    if sum(1 for _ in islice(_FRAGMENT_JOINT.finditer(folded), joints)) < joints:
        return None
    return _FRAGMENT_JOINT.sub("", folded)


def word_initials(words: list[str]) -> str:
    """The first letter of each word (letters only, as the 'squashed' rules read): "ignore good news" -> "ign"."""
    return letters_only("".join(map(_FIRST, words)))  # a C call per word (a generator cost 8x more: ~1.4 ms per 32 KB)


_FIRST = operator.itemgetter(slice(0, 1))


def letters_only(text: str) -> str:
    """The letters a-z of `text`, in order."""
    return text.encode("ascii", "ignore").translate(None, _NOT_LETTERS).decode("ascii")


def line_initials(cased: str) -> str:
    """The first letter of each line, after its bullets and numbers, as written (fold them before reading)."""
    return "".join(_LINE_INITIAL.findall("\n" + cased))


# Pig Latin: a word's opening consonants moved to its end and "ay" added ("prompt": "omptpray"), "way" or "yay" added to
# one that opens with a vowel ("ignoreway", "ignoreyay"), or either with a hyphen ("ompt-pray", "ignore-way"). A text is read so where half its
# words or more end in "ay": none of the corpus's 13,044 benign rows (in any language: Turkish "ayrintili" and "hayir"
# reach a quarter), 1,460 of 1,500 of its English attacks written so. Linear: an attempt starts at a word's start only
# (a letter after \b), its letter runs go to the word's end and give back to its start at most, so a word is read twice
# at most (a hyphenated one's second part is also a word).
_PIG_LATIN_WORD = re.compile(r"\b([a-z]+)(?:-([a-z]*))?ay\b")
_PIG_LATIN_END = re.compile(r"ay\b")  # a literal, then a boundary: linear
_VOWELS = frozenset("aeiou")
# What comes before "ay" after a word that opens with a vowel: "ignoreway", "ignoreyay". A stem that opens with a vowel
# and ends in one of them is read as that word ("ouryay" is "your", a COMMON_WORDS word, first): "aterway" reads "ater",
# not "water", and "ellowyay" "ellow", not "yellow"; an order's words open with a vowel more often ("ignore", "all",
# "instructions", "and", "above", "any", "output").
_VOWEL_SUFFIXES = frozenset("wy")
_SYLLABIC = _VOWELS | {"y"}  # what the rest of a word holds ("my": "ymay")
# Consonants that open English words together; "qu" moves as one. Unhyphenated, which of a stem's last consonants were
# its word's opening is not written ("eviouspray": "previous", not "spreviou" or "reviousp"): the reading is a COMMON_WORDS
# word where one is ("omfray": "from"), else the word whose remaining letters end in the likeliest last letter of an
# English word (_FINAL_LETTERS, from the corpus's benign English rows). On 1,500 of its English attacks written so, 92% of
# the words read back as written and the rules block 443 (539 plain, 30 as written); what is left needs a dictionary
# ("ipskay": "skip" or "kips", "owhay": "how" or "who"), and preferring shorter openings moved it by one (444).
_ONSETS = frozenset("bl br ch cl cr dr fl fr gl gr kn ph pl pr qu sc sh sk sl sm sn sp st sw th tr tw wh wr "
                    "chr phr sch scr shr spl spr squ str thr".split())
_FINAL_LETTERS = "estndrygloahfmikpuwcxbvqzj"  # most frequent first
_FINAL_RANK = {letter: rank for rank, letter in enumerate(_FINAL_LETTERS)}


def pig_latin(folded: str) -> str:
    """The words of `folded` that end in "ay" read back from Pig Latin (the others as written)."""
    return _PIG_LATIN_WORD.sub(_unpigged, folded)


def _unpigged(match: re.Match[str]) -> str:
    stem, onset = match.groups()
    if onset is None:
        return _unpigged_word(stem)
    if (onset == "" or onset in _VOWEL_SUFFIXES) and stem[0] in _VOWELS:  # "ignore-way", "ignore-yay", "in-ay"
        return onset + stem if onset + stem in _PLAIN else stem  # "ou-yay": "you"
    return onset + stem


def _unpigged_word(stem: str) -> str:
    """A word without its "ay", its opening consonants put back: see _ONSETS."""
    readings = [stem[-length:] + stem[:-length] for length in (1, 2, 3)
                if length < len(stem) and (stem[-length:] in _ONSETS or length == 1 and stem[-1] not in _VOWELS)
                and not _SYLLABIC.isdisjoint(stem[:-length])]
    common = [reading for reading in readings if reading in _PLAIN]
    if common:
        return common[0]
    if stem[-1] in _VOWEL_SUFFIXES and stem[0] in _VOWELS:  # "ignoreway", "ignoreyay"
        return stem[:-1]
    return min(readings, key=lambda reading: _FINAL_RANK[reading[-1]], default=stem)


def sample(text: str) -> str:
    """What the tests read of a long text: its head and its tail, MAX_SAMPLE characters each (the readings they call
    for cover the whole text). Splitting 32,000 characters of prose into a set of words and taking their first letters
    cost ~0.5 ms here, a sample ~0.15 ms; the classifier reads two windows of 1,024 characters (classifier.py)."""
    return text if len(text) <= 2 * MAX_SAMPLE else text[:MAX_SAMPLE] + " " + text[-MAX_SAMPLE:]


def _letter_share(folded: str) -> float:
    letters = len(folded.encode("ascii", "ignore").translate(None, _NOT_LETTERS))
    return letters / max(1, len(folded) - folded.count(" "))


def cipher_readings(cased: str, folded: str, fold_letters: Callable[[str], str], foldable: str | None = None) -> list[tuple[str, str]]:
    """The cipher readings of one text as (kind, text), each only where its test says the text may be so written:
    `cased` is the text after NFKC and lower case (its lines kept), `folded` its folded reading (normalize.fold),
    `fold_letters` the folding of letters (normalize._fold_letters) for the line initials, `foldable` a text that holds
    every character of `cased` that folding changes (normalize._translate_runs: its runs of them; by default `cased`),
    which the turned letters are among."""
    readings: list[tuple[str, str]] = []
    sampled = sample(folded)
    words = sampled.split(" ")
    vocabulary = set(words)
    forward, backward = common_words(vocabulary)
    if len(backward) >= MIN_REVERSED_WORDS:  # two backward function words: almost never in prose as written
        readings += [("text", reversed_text(folded)), ("text", reversed_words(folded))]
    turned = cased if foldable is None else foldable
    if not cased.isascii() and sum(1 for _ in islice(_TURNED_LETTERS.finditer(turned), MIN_TURNED)) == MIN_TURNED:
        readings.append(("text", upside_down(folded)))
    if len(forward) <= MAX_PLAIN_WORDS and _letter_share(folded) >= MIN_LETTER_SHARE:
        readings += _deciphered_readings(folded, vocabulary, len(forward))
    # Half the words or more end in "ay": first "ay" anywhere (a count in C: a call per text cost ~1 us a row), then at ends.
    if sampled.count("ay") * 2 >= len(words) >= MIN_PIG_LATIN_WORDS and len(_PIG_LATIN_END.findall(sampled)) * 2 >= len(words):
        readings.append(("text", pig_latin(folded)))
    joined = joined_fragments(folded)
    if joined is not None:
        readings.append(("text", joined))
    acrostics = [word_initials(words)]
    if cased.count("\n") >= MIN_ACROSTIC - 1:
        acrostics.append(letters_only(fold_letters(line_initials(sample(cased)))))
    readings += [("squashed", initials) for initials in dict.fromkeys(acrostics) if len(initials) >= MIN_ACROSTIC]
    return readings


def _deciphered_readings(folded: str, words: set[str], plain_words: int) -> list[tuple[str, str]]:
    """A Caesar or atbash text read back: by the common words it enciphers (MIN_DECODED_WORDS of them, and more than
    its plain reading holds), else, with no common word at all and letters enough, by letter frequencies (its reading
    MIN_GAIN likelier per letter than the text as written)."""
    cipher, found = likeliest_cipher(words)
    if cipher is not None and found >= max(MIN_DECODED_WORDS, plain_words + 1):
        return [("text", deciphered(folded, cipher))]
    if plain_words or found or not MIN_FREQUENCY_LETTERS <= len(folded) <= MAX_SHORT or _letter_share(folded) < MIN_FREQUENCY_SHARE:
        return []
    shift, gain = likeliest_shift(folded)
    return [("text", caesar(folded, -shift))] if shift not in (0, 13) and gain >= MIN_GAIN else []
