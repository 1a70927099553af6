"""Payloads written in formats beyond base64, hex and URL escapes: Morse code (typed or typeset), binary octets and
septets, decimal byte values, A1Z26, the NATO phonetic alphabet, HTML numeric entities, `\\x`/`\\u`/`\\u{...}`/`0x` escapes,
base32, base85/ascii85, uuencode.

`encoded_payloads(text, runs)` returns the texts hidden in `text` in these formats, for normalize.decoded_payloads
(which decodes base64, hex, URL escapes and invisible characters itself and appends these after its own). Like its
payloads, each passes `as_text` (printable, mostly letters), is at most MAX_DECODED_CHARS long, and is never longer
than the run it was decoded from; at most MAX_PAYLOADS of them.

Cost on ordinary text: a `bytes.translate` of the text into character classes and two `in` tests on it, a backslash
test, two for NATO's hint words, one search for "U+" or "u+" and one pass for long tokens say which formats may be present
(`_kinds`); only then does a format's regex run. Each regex that starts with a class has its look-behind after its first character, so the engine
skips to that class instead of trying a look-behind at every position (as normalize's do). Hyperscan hints (normalize.PAYLOAD_HINTS) were
measured and refused: one small pattern per format adds 6-9 KB to a hint database ("[.\\-] [.\\-]" 8 KB, "[01]{8}"
9 KB, the NATO words 7 KB; all of them ~70 KB), the Lambda has a few KB to spare. Every regex here is linear: each says
why. Hostile inputs: tests/data/screening/hostile.py ("encodings.*").
"""
from __future__ import annotations

import base64
import binascii
import html
import re
from itertools import islice, repeat
from typing import Callable, Iterator

MAX_DECODED_CHARS = 8_000  # one payload (normalize reads its own from here)
MAX_PAYLOADS = 8  # payloads decoded from one text, all formats together
MIN_DISTINCT_LETTERS = 4  # a letter-by-letter format ("- - - - - - - -" is "tttttttt") must spell something


def as_text(raw: bytes) -> str | None:
    """`raw` as UTF-8 text if it reads like hidden text (printable, at least half letters, 4 characters or more),
    truncated to MAX_DECODED_CHARS; None for random bytes, binary data or invalid UTF-8."""
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return decoded[:MAX_DECODED_CHARS] if reads_as_text(decoded) else None


def reads_as_text(decoded: str) -> bool:
    """Real hidden instructions are mostly letters and spaces; random bytes are not."""
    return len(decoded) >= 4 and _printable_ratio(decoded) >= 0.9 and sum(map(str.isalpha, decoded)) >= len(decoded) * 0.5


def _printable_ratio(text: str) -> float:
    if not text:
        return 0.0
    return (sum(map(str.isprintable, text)) + text.count("\n") + text.count("\t")) / len(text)


# --- Which formats may be present: translations of the UTF-8 bytes, then substring tests ---------------------------
# First, digits and every format's symbols (". - & # x", typeset Morse) are one class ("0"), spaces stay, commas and
# semicolons are dropped, letters are lower-cased, anything else is "a": every run of Morse, numbers, 0x bytes or entities holds two
# symbols in a row or a space apart ("00", "0 0"), and ordinary prose (letters, spaces, a full stop then a space) holds
# neither; NATO's hint words are read in the same bytes. Then, only where a symbol test passes, each format's own test:
# Morse's symbols a space apart, ". ." (a message of 8 letters has a word of two or more: Morse written only in
# one-letter words is not decoded); binary, 7 digits in a row, then 8 binary digits in a row (octets) or 2 groups of 7
# a gap apart (septets); numbers, the shape of a run (_NUMBER_SHAPE);
# entities and 0x bytes, their opening characters as written. Escapes: 4 backslashes. Long tokens (base85, ascii85,
# uuencode): 20 marks in a row (marked_runs). Prose with numbers (dates, versions, "[1, 2]") passes the symbol test:
# there the binary test was 8 digits in a row (a date, an order number) and the numbers test "0 0" or "0.0" (any
# "1.2"), so both regexes ran on nearly every text of the padded corpus (~0.11 and ~0.13 ms per 32 KB); these tests let
# 12 and 10 of its 16,556 texts through (8 and 8 hold a run), for ~0.03-0.04 ms each. On 32 KB here: ~20 us per translation,
# ~10-25 us per test; a regex per format costs 0.1-4 ms on 32 KB of prose.
# Morse as typeset: a dot may be "·" (middle dot), "•" (bullet), "∙" (bullet operator), "⋅" (dot operator) or "‧"
# (hyphenation point), a dash "−" (minus sign), "–", "—" or "_". In the translations, the last byte of each is a symbol
# and its other bytes (C2, E2 80, E2 88, E2 8B) are dropped, so "· −" reads "0 0" and ". ." as ". -" does; another
# character that shares those bytes (Cyrillic "з" ends in B7 and "х" in 85, "’" is E2 80 99 as "∙" is E2 88 99, every
# character of U+2000-U+203F opens with E2 80) only lets its text through to the next test: the last three dots let
# the Morse regex run on 104 -> 107 of the corpus's 13,021 benign texts.
_MORSE_DOTS, _MORSE_DASHES = ".\u00b7\u2022\u2219\u22c5\u2027", "-\u2212\u2013\u2014_"
_MORSE_TYPESET = (_MORSE_DOTS + _MORSE_DASHES).replace(".", "").replace("-", "")
_MORSE_LAST_BYTES = bytes(char.encode()[-1] for char in _MORSE_TYPESET)
_MORSE_LEADING_BYTES = bytes(sorted({byte for char in _MORSE_TYPESET for byte in char.encode()[:-1]}))
_SYMBOL_OF = {**{byte: byte + 32 for byte in b"ABCDEFGHIJKLMNOPQRSTUVWYZ"}, **{byte: byte for byte in b"abcdefghijklmnopqrstuvwyz "},
              **dict.fromkeys(b"0123456789.-&#xX" + _MORSE_LAST_BYTES, ord("0"))}
_SYMBOL_CLASSES = bytes(_SYMBOL_OF.get(byte, ord("a")) for byte in range(256))
_MORSE_CLASSES = bytes(ord(".") if byte in b".-" + _MORSE_LAST_BYTES else byte if byte == ord(" ") else ord("a") for byte in range(256))
_BINARY_DIGITS = bytes(ord("1") if byte in b"01" else byte if byte in b" ," else ord("a") for byte in range(256))
_OCTET, _SEVEN_DIGITS = b"1" * 8, b"0" * 7
_MORSE, _BINARY, _SEPTETS, _NUMBERS, _ESCAPES, _ENTITIES, _HEX_LIST, _CODE_POINTS, _NATO, _TOKENS = range(10)
_DROPPED = b",;" + _MORSE_LEADING_BYTES
# Literals, searched with re: the engine skips to a literal's first byte in a tight loop, ~9-15 us per 32 KB here
# against ~20-27 us for bytes' `in` ("0x" or "0X": 53 us, one pattern 10). Linear: fixed strings, no repetition.
# The NATO words for e and o (a message of 8 letters with neither is not decoded) in the symbol bytes; Morse's symbols
# a space apart in _MORSE_CLASSES's bytes; the openings of an entity and of a 0x byte as written.
_ECHO, _OSCAR, _MORSE_HINT = re.compile(rb"echo"), re.compile(rb"oscar"), re.compile(rb"\. \.")
_ENTITY_HINT, _HEX_HINT = re.compile(rb"&#"), re.compile(rb"0[xX]")
# Code points ("U+0049", "u+0049") are looked for before the symbol test: "U+FFFD U+4E2D" has no symbols in a row. The
# "+" first, then a look-behind for the letter: the engine skips to the literal (~9 us per 32 KB; "[Uu]\+" stops at
# every "u" of prose, ~170 us).
_CODE_POINT_HINT = re.compile(rb"\+(?<=[Uu]\+)")
# Two groups of 7 binary digits (_BINARY_DIGITS' "1") a gap of _SEPTET_RUN's apart. Linear: a literal the engine skips
# to, then a fixed width (at most 16 bytes read per attempt). Written out: the engine skips to a literal, not to "1{7}"
# (~10 us per 32 KB of prose against ~220).
_SEPTETS_HINT = re.compile(rb"1111111[ ,]{1,2}1{7}")


def _kinds(data: bytes, marks: bytes) -> set[int]:
    """The formats that may occur in `data` (a text's UTF-8 bytes; `marks`: its _TOKEN_MARKS): a superset of
    those whose regex finds a run."""
    kinds = {_ESCAPES} if data.count(b"\\") >= _MIN_ESCAPES else set()  # a one-byte count: ~9 us per 32 KB
    if _TOKEN in marks:
        kinds.add(_TOKENS)
    if _CODE_POINT_HINT.search(data):
        kinds.add(_CODE_POINTS)
    symbols = data.translate(_SYMBOL_CLASSES, _DROPPED)
    if _ECHO.search(symbols) or _OSCAR.search(symbols):
        kinds.add(_NATO)
    if b"00" not in symbols and b"0 0" not in symbols:
        return kinds
    # Written out, not as loops over a table: a generator per test cost ~1 us each on a 1 KB text, most of the time.
    if _MORSE_HINT.search(data.translate(_MORSE_CLASSES, _DROPPED)):
        kinds.add(_MORSE)
    numbers = data.translate(_NUMBER_CLASSES)
    if _SEVEN_DIGITS in numbers:  # 7 digits in a row: a group of 7 binary digits, or of 8
        binary = data.translate(_BINARY_DIGITS)
        if _OCTET in binary:
            kinds.add(_BINARY)
        if _SEPTETS_HINT.search(binary):
            kinds.add(_SEPTETS)
    if _NUMBER_SHAPE.search(numbers):
        kinds.add(_NUMBERS)
    if _ENTITY_HINT.search(data):
        kinds.add(_ENTITIES)
    if _HEX_HINT.search(data):
        kinds.add(_HEX_LIST)
    return kinds


# --- Morse code (ITU-R M.1677-1): letters a space apart, words " / " or 3 spaces apart -----------------------------
_MORSE_TABLE = {
    ".-": "a", "-...": "b", "-.-.": "c", "-..": "d", ".": "e", "..-.": "f", "--.": "g", "....": "h", "..": "i",
    ".---": "j", "-.-": "k", ".-..": "l", "--": "m", "-.": "n", "---": "o", ".--.": "p", "--.-": "q", ".-.": "r",
    "...": "s", "-": "t", "..-": "u", "...-": "v", ".--": "w", "-..-": "x", "-.--": "y", "--..": "z",
    "-----": "0", ".----": "1", "..---": "2", "...--": "3", "....-": "4", ".....": "5", "-....": "6", "--...": "7",
    "---..": "8", "----.": "9", ".-.-.-": ".", "--..--": ",", "..--..": "?", ".----.": "'", "-.-.--": "!", "-..-.": "/",
    "-.--.": "(", "-.--.-": ")", ".-...": "&", "---...": ":", "-.-.-.": ";", "-...-": "=", ".-.-.": "+", "-....-": "-",
    ".-..-.": '"', ".--.-.": "@",
}
# 8 codes or more, each 1-6 symbols (dots and dashes, typed or typeset), apart by 1-5 spaces or slashes. Linear: symbols
# and separators are disjoint classes with bounded runs, so each repetition reads one code and one gap with no choice;
# the look-arounds keep an attempt from starting or ending inside a longer run of symbols (an ellipsis, "____" of a
# form, "__init__"), and a failed attempt is shorter than 8 codes.
_SYMBOLS = re.escape(_MORSE_DOTS + _MORSE_DASHES)
_MORSE_RUN = re.compile(rf"[{_SYMBOLS}](?<![\w{_SYMBOLS}][{_SYMBOLS}])[{_SYMBOLS}]{{0,5}}(?:[ /]{{1,5}}[{_SYMBOLS}]{{1,6}}){{7,}}(?![\w{_SYMBOLS}])")
_GAP = re.compile(r"[ /]+")
_TYPED = str.maketrans(_MORSE_DOTS + _MORSE_DASHES, "." * len(_MORSE_DOTS) + "-" * len(_MORSE_DASHES))


def _morse(run: str) -> str | None:
    codes = _GAP.split(run.translate(_TYPED))
    gaps = _GAP.findall(run)
    letters = [_MORSE_TABLE.get(code) for code in codes]
    if letters.count(None) * 10 > len(letters):  # more than one code in ten is no Morse: dashes and dots in prose
        return None
    words = [(gap, letter or "") for gap, letter in zip([""] + gaps, letters)]
    return _spelled(words, lambda gap: "/" in gap or len(gap) > 1)


def _spelled(letters: list[tuple[str, str]], is_word_gap: Callable[[str], bool]) -> str | None:
    """Letters each with the gap before it, as text: words a space apart where the format marks words; where it does
    not ("ignoreallprevious..."), each letter a space apart ("i g n o r e a l l ..."), which normalize reads as spaced
    letters and squashes, so the 'squashed' rules (rules/obfuscation.json) read it; the letters run together would be
    one long word that no rule reads. None if it spells too few different letters to be a message."""
    if len({letter for _, letter in letters if letter.isalpha()}) < MIN_DISTINCT_LETTERS:
        return None
    if any(is_word_gap(gap) for gap, _ in letters[1:]):
        text = "".join((" " if is_word_gap(gap) else "") + letter for gap, letter in letters).strip()
        return text[:MAX_DECODED_CHARS] if reads_as_text(text) else None
    if not reads_as_text("".join(letter for _, letter in letters)):  # the spaces added are no letters
        return None
    return " ".join(letter for _, letter in letters)[:MAX_DECODED_CHARS]


# --- NATO / ICAO phonetic alphabet: code words a space apart, words " / " apart or not at all -------------------------
_NATO_WORDS = ("alfa", "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
               "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
               "uniform", "victor", "whiskey", "whisky", "x-ray", "xray", "yankee", "zulu")
_NATO_WORD = "(?:" + "|".join(_NATO_WORDS) + r")\b"
# 8 code words or more, apart by 1-5 spaces, commas, dots, slashes or bars. Linear: at most one code word followed by a
# word boundary starts at any position (none is another followed by a letter: "juliet" fails on "juliett"'s "t"), the
# separators are a bounded class of non-letters, so each repetition has one way to match; a failed attempt reads fewer
# than 8 words.
_NATO_RUN = re.compile(rf"\b{_NATO_WORD}(?:[ ,./|]{{1,5}}{_NATO_WORD}){{7,}}", re.IGNORECASE)
_NATO_GAP = re.compile(r"[ ,./|]+")


_NATO_HINT = re.compile("echo|oscar")  # _NATO_TESTS in the lower-cased text; its first characters are a class of two
_NATO_REACH = 8 * 13  # characters: 8 code words and their gaps, at most


def _nato_runs(text: str, lowered: str) -> Iterator[str]:
    """The runs of _NATO_RUN in `text` (`lowered`: text.lower(), the same length for the ASCII words read), found near
    each "echo" or "oscar": the regex tries 30 words at every letter (~4 ms per 32 KB of prose), so it reads a window
    around each hint, each part of the text at most once, and a run found there from its start to its end."""
    done = 0
    for hint in _NATO_HINT.finditer(lowered):
        if hint.start() < done:
            continue
        start = max(done, hint.start() - _NATO_REACH)
        near = _NATO_RUN.search(text, start, hint.end() + _NATO_REACH)
        done = hint.end() + _NATO_REACH
        if near:
            run = _NATO_RUN.match(text, near.start())
            done = max(done, run.end())
            yield run.group(0)


def _nato(run: str) -> str | None:
    words = _NATO_GAP.split(run)
    gaps = _NATO_GAP.findall(run)
    return _spelled([(gap, word[0].lower()) for gap, word in zip([""] + gaps, words)], lambda gap: "/" in gap or "|" in gap)


# --- Numbers: binary octets, decimal byte values, A1Z26 (a=1 ... z=26) ---------------------------------------------
# 4 octets or more, unspaced or apart by up to 2 spaces or commas. Linear: each repetition is exactly 8 digits after an
# optional gap of another class, so an unspaced run splits one way; the look-behind starts attempts only at a run's start.
_BINARY_RUN = re.compile(r"[01](?<![01][01])[01]{7}(?:[ ,]{0,2}[01]{8}){3,}")
# 7-bit ASCII ("1001001 1100111"): 4 groups of 7 binary digits or more, apart by 1-2 spaces or commas (unspaced, a
# run _BINARY_RUN finds and reads as septets where its octets are no text). Linear: as _BINARY_RUN, each repetition is a
# gap then exactly 7 digits, and the look-ahead gives back at most the last group. No group is an octet's: _BINARY_RUN
# needs 8 digits before its first gap, this exactly 7.
_SEPTET_RUN = re.compile(r"[01](?<![01][01])[01]{6}(?:[ ,]{1,2}[01]{7}){3,}(?![01])")
_SEPTET = re.compile(r"[01]{7}")
# 8 numbers or more of 1-3 digits, apart by spaces, commas, semicolons, dashes or slashes: decimal bytes ("73 103",
# "73,103", "[73, 103]") and A1Z26 ("9-7-14-15-18-5 1-12-12"), one pass for both (each pass costs ~140 us per 32 KB
# here, whatever it finds). Linear: digits and gaps are disjoint bounded classes; the look-arounds (no number, word or
# decimal point around it) make an attempt start at a number's first digit and give back at most one number at its end.
_NUMBER_SEPARATORS = " ,;-/"
_NUMBER_RUN = re.compile(rf"[0-9](?<![\w.\-][0-9])[0-9]{{0,2}}(?:[{re.escape(_NUMBER_SEPARATORS)}]{{1,3}}[0-9]{{1,3}}){{7,}}(?![\w.])")
# The UTF-8 bytes with digits "0", _NUMBER_RUN's separators " ", anything else "a" (a byte of a non-ASCII character too),
# and the shape of its runs in them: 8 numbers of 1-3 digits, 1-3 separators apart, without the look-arounds (a
# superset, for _kinds). Linear: an attempt starts only at the first digit of a run of digits (a literal, which the
# engine skips to, then the look-behind), digits and separators are disjoint bounded classes, so a failed attempt gives
# back O(1) per number and reads at most 8 numbers (48 bytes): each byte is read by at most 8 attempts.
_NUMBER_CLASSES = bytes(ord("0") if byte in b"0123456789" else ord(" ") if byte in _NUMBER_SEPARATORS.encode() else ord("a")
                        for byte in range(256))
_NUMBER_SHAPE = re.compile(rb"0(?<!00)0{0,2}(?: {1,3}0{1,3}){7}")
_NUMBER = re.compile(r"[0-9]+")
_NUMBER_GAP = re.compile(r"[^0-9]+")


def _binary(run: str) -> str | None:
    """Octets, or where they are no text and the run has no gaps, septets (the last, incomplete one dropped: a run of
    7-bit characters is found as whole octets, so up to 7 digits of its end are not in it)."""
    digits = run.replace(" ", "").replace(",", "")
    octets = as_text(int(digits, 2).to_bytes(len(digits) // 8, "big"))
    return octets if octets or len(digits) != len(run) else _septets(_SEPTET.findall(digits))


def _septets(groups: list[str]) -> str | None:
    """7-bit characters, one per group of 7 binary digits, read as octets with a 0 before each (in C: a call per group
    cost ~1 ms per 32 KB)."""
    return as_text(int("0" + "0".join(groups), 2).to_bytes(len(groups), "big"))


def _septets_run(run: str) -> str | None:
    return _septets(_SEPTET.findall(run))


def _numbers(run: str) -> str | None:
    """A run of numbers as A1Z26 (every number 1-26, dashes, spaces and slashes between: "1,2,3,4,5,6,7,8,9,10" of a man
    page is a list) or as decimal bytes (commas, semicolons and spaces between)."""
    values = [int(number) for number in _NUMBER.findall(run)]
    if all(1 <= value <= 26 for value in values):  # as bytes, control characters: never text
        return None if "," in run or ";" in run else _a1z26(run, values)
    return as_text(bytes(values)) if max(values) < 256 and "-" not in run and "/" not in run else None


def _a1z26(run: str, values: list[int]) -> str | None:
    gaps = _NUMBER_GAP.findall(run)
    letters = [(gap, chr(96 + value)) for gap, value in zip([""] + gaps, values)]
    if "-" in run:  # dashes join a word's letters, anything else parts words
        return _spelled(letters, lambda gap: "-" not in gap)
    return _spelled(letters, lambda gap: "/" in gap or len(gap) > 1)


# --- Escapes: "\x49\x67", "\u0049", "\u{49}", "\U00000049", "0x49 0x67", "U+0049", "&#73;", "&#x49;" ----------------
# A run of \x, of \u, of braced \u{...} (JavaScript, Rust, Swift, PHP: 1-6 hex digits, a code point) or of \U escapes.
# Linear: each repetition is a unit of bounded width that opens with a backslash and matches one way (a braced unit
# ends at its "}"); the alternatives differ at their second character, but for \u and \u{, which differ at their third:
# an attempt at a backslash reads at most one unit before the alternative that can go on is known.
_ESCAPE_RUN = re.compile(r"(?:\\x[0-9a-fA-F]{2})+|(?:\\u[0-9a-fA-F]{4})+|(?:\\u\{[0-9a-fA-F]{1,6}\})+|(?:\\U[0-9a-fA-F]{8})+")
# What a run's hex digits spell, by its escape's letter: UTF-8 bytes, UTF-16 code units (a surrogate pair is one
# character), code points (UTF-32: a surrogate or a value past U+10FFFF does not decode); a braced run, code points of
# any width, as "U+0049" ones are read (_spelled_code_points).
_ESCAPE_CODECS = {"x": "utf-8", "u": "utf-16-be", "U": "utf-32-be"}
_MIN_ESCAPES = 4  # in a text: one "\x1b" in a shell snippet is no payload
# 4 bytes or more written 0x49, apart by up to 2 spaces, commas or semicolons. Linear: fixed-width units that open with
# "0x", gaps of another class; the look-arounds give back at most the last unit.
_HEX_LIST_RUN = re.compile(r"0(?<!\w0)[xX][0-9a-fA-F]{2}(?:[ ,;]{1,2}0[xX][0-9a-fA-F]{2}){3,}(?![0-9a-fA-F])")
# 4 code points or more written "U+0049" or "u+0049" (4-6 hex digits), apart by up to 2 spaces, commas or semicolons,
# or by none. Linear: an attempt starts only at "U+" or "u+" (run only where _CODE_POINT_HINT found one), and neither
# letter is a hex digit, so a unit's digits end where the next unit or gap opens ({4,6} gives back 2 digits at most,
# only before a 7th); the look-ahead gives back at most the last unit, and a failed attempt reads at most 3 units.
_CODE_POINT_RUN = re.compile(r"[Uu]\+[0-9a-fA-F]{4,6}(?:[ ,;]{0,2}[Uu]\+[0-9a-fA-F]{4,6}){3,}(?![0-9a-fA-F])")
_HEX_NUMBER = re.compile(r"[0-9a-fA-F]+")  # a plain class ("U", "u", "+" and braces are none): linear
# One HTML numeric entity. Linear: a fixed opening, then digits or x and hex digits (different first characters).
_ENTITY = re.compile(r"&#(?:[0-9]{1,7}|[xX][0-9a-fA-F]{1,6})")


def _escapes(text: str) -> str | None:
    """`text` with each run of \\x, \\u or \\U escapes that spells printable text written out (a run of binary data, or
    invalid UTF-8, stays as written); None where no run was written out. Partly escaped words ("\\x69gnore all ...")
    are read in their sentence."""
    if text.count("\\x") + text.count("\\u") + text.count("\\U") < _MIN_ESCAPES:
        return None
    spelled = _ESCAPE_RUN.sub(_spell_escapes, text)
    return spelled[:MAX_DECODED_CHARS] if spelled != text else None


def _spell_escapes(match: re.Match[str]) -> str:
    run = match.group(0)
    try:
        if run.startswith("\\u{"):
            spelled = _spelled_code_points(run)
        else:
            spelled = bytes.fromhex(run.replace(run[:2], "")).decode(_ESCAPE_CODECS[run[1]])
    except (ValueError, UnicodeDecodeError):
        return run
    return spelled if spelled.isprintable() else run  # a lone surrogate ("\u{d800}") is not printable


def _entities(text: str) -> str | None:
    """`text` with its HTML entities written out, where it has 4 numeric ones or more (a page's "&#169;" or "&amp;"
    alone is no payload)."""
    if sum(1 for _ in islice(_ENTITY.finditer(text), _MIN_ESCAPES)) < _MIN_ESCAPES:
        return None
    unescaped = html.unescape(text)
    return unescaped[:MAX_DECODED_CHARS] if unescaped != text else None


_NOT_HEX_DIGITS = re.compile(r"0[xX]|[ ,;]")  # what _HEX_LIST_RUN has between the hex digits


def _hex_list(run: str) -> str | None:
    return as_text(bytes.fromhex(_NOT_HEX_DIGITS.sub("", run)))


def _spelled_code_points(run: str) -> str:
    """The characters whose code points are the hex numbers of `run` ("U+0049 u+0067", "\\u{49}\\u{67}"), one map over
    them in C; ValueError past U+10FFFF."""
    return "".join(map(chr, map(int, _HEX_NUMBER.findall(run), repeat(16))))


def _code_points(run: str) -> str | None:
    """A run of "U+0049" code points as text; None past U+10FFFF or not text."""
    try:
        spelled = _spelled_code_points(run)
    except ValueError:
        return None
    return spelled[:MAX_DECODED_CHARS] if reads_as_text(spelled) else None


# --- Long tokens: base32, base85 / ascii85, uuencode ---------------------------------------------------------------
_BASE32 = re.compile(r"[A-Z2-7]+=*")  # fullmatch on a base64 run: one pass, no choice
_MIN_TOKEN = 20  # characters: a uuencoded line of 12 bytes, 16 bytes of base85
_MAX_TOKEN = MAX_DECODED_CHARS * 5 // 4  # what decodes to MAX_DECODED_CHARS bytes
_TOKEN_MARKS = bytes(ord("a") if 0x21 <= byte <= 0x7E else ord(" ") for byte in range(256))
_TOKEN = b"a" * _MIN_TOKEN


def marked_runs(marks: bytes, length: int) -> Iterator[tuple[int, int]]:
    """The span of each run of `length` "a" marks or more in `marks` (a text's bytes translated to "a" where a character
    of the run's kind is, " " elsewhere), in order. Found with bytes.find: a regex tries every position of every shorter
    word. Long tokens here (_TOKEN_MARKS on the UTF-8 bytes: 20 printable ASCII characters without whitespace; every byte
    of another character is >= 0x80, so it ends a run), base64 runs in normalize.base64_candidates."""
    run = b"a" * length
    start = marks.find(run)
    while start >= 0:
        end = marks.find(b" ", start)
        end = len(marks) if end < 0 else end
        yield start, end
        start = marks.find(run, end)


def base32_text(run: str) -> str | None:
    """A base64 run (normalize.base64_candidates) read as base32 (RFC 4648: upper case and 2-7, "=" padding)."""
    if not _BASE32.fullmatch(run):
        return None
    stripped = run.rstrip("=")
    try:
        return as_text(base64.b32decode(stripped + "=" * (-len(stripped) % 8)))
    except (binascii.Error, ValueError):
        return None


# A character outside each alphabet (one search each, a class: linear): a token with both, a URL or a path with "/" and
# "w", is neither, and is not handed to the decoders (pure Python, ~5-20 us a call here).
_NOT_BASE85 = re.compile(r"[\"',./:\[\\\]]")
_NOT_ASCII85 = re.compile(r"[v-z{|}]")


def _base85(token: str) -> str | None:
    """A token read as ascii85 (Adobe's "<~ ~>" or bare) or as base85 (RFC 1924, Git's and Python's b85encode)."""
    if token.startswith("<~") and token.endswith("~>"):
        decoders: tuple[Callable[[bytes], bytes], ...] = (lambda data: base64.a85decode(data, adobe=True),)
    elif _NOT_BASE85.search(token):
        decoders = () if _NOT_ASCII85.search(token) else (base64.a85decode,)
    else:
        decoders = (base64.b85decode,) if _NOT_ASCII85.search(token) else (base64.b85decode, base64.a85decode)
    data = token[:_MAX_TOKEN].encode("ascii")
    for decode in decoders:
        try:
            decoded = as_text(decode(data))
        except (ValueError, binascii.Error):
            continue
        if decoded:
            return decoded
    return None


_UU_LINE = re.compile(rb"[!-M][ -`]+")  # fullmatch on a line: one pass, no choice (a space is a group of 6 zero bits)


def _uu_line(line: bytes) -> bytes | None:
    """One uuencoded line: its length character says how many bytes, and its body has exactly the characters for them
    (4 per 3 bytes; b2a_uu writes no whitespace unless a group of 6 bits is 0, which text rarely has)."""
    expected = 4 * -(-(line[0] - 32) // 3) if line else 0  # characters after the length character
    if not _UU_LINE.fullmatch(line) or not expected - 3 <= len(line) - 1 <= expected:  # trailing spaces may be cut
        return None
    try:
        return binascii.a2b_uu(line.ljust(expected + 1))
    except binascii.Error:
        return None


def _uuencoded(data: bytes, spans: list[tuple[int, int]]) -> list[str]:
    """The texts of uuencoded blocks in `data`: one opens with a long token that is a uuencoded line (a full line is 61
    characters), and goes on with each next line that is one (the last is shorter). Each line is read once."""
    found, done = [], 0
    for start, end in spans:
        line = _uu_line(data[start:end]) if start >= done else None
        if line is None:
            continue
        block = [line]
        while data.startswith(b"\n", end) and line:
            following = data.find(b"\n", end + 1)
            following = len(data) if following < 0 else following
            line = _uu_line(data[end + 1:following].rstrip(b"\r"))
            if line:
                block.append(line)
                end = following
        done = end
        text = as_text(b"".join(block))
        if text:
            found.append(text)
    return found


# --- All formats ---------------------------------------------------------------------------------------------------
_RUNS: tuple[tuple[int, re.Pattern[str], Callable[[str], str | None]], ...] = (
    (_MORSE, _MORSE_RUN, _morse), (_BINARY, _BINARY_RUN, _binary), (_SEPTETS, _SEPTET_RUN, _septets_run),
    (_NUMBERS, _NUMBER_RUN, _numbers), (_HEX_LIST, _HEX_LIST_RUN, _hex_list), (_CODE_POINTS, _CODE_POINT_RUN, _code_points))
_WHOLE: tuple[tuple[int, Callable[[str], str | None]], ...] = ((_ESCAPES, _escapes), (_ENTITIES, _entities))


def encoded_payloads(text: str, data: bytes, base64_runs: list[str]) -> list[str]:
    """The texts hidden in `text` (`data`: its UTF-8 bytes) in this module's formats, at most MAX_PAYLOADS.
    `base64_runs`: the text's base64 candidates (normalize.base64_candidates), which base32 is read from."""
    marks = data.translate(_TOKEN_MARKS)
    kinds = _kinds(data, marks)
    if not kinds and not base64_runs:  # ordinary prose
        return []
    found = [decoded for decoded in map(base32_text, base64_runs) if decoded]
    for kind, decode in _WHOLE:
        if kind in kinds:
            found += filter(None, [decode(text)])
    for kind, pattern, decode in _RUNS:
        if kind in kinds:
            found += filter(None, (decode(match.group(0)) for match in islice(pattern.finditer(text), MAX_PAYLOADS)))
    if _NATO in kinds:
        lowered = text.lower()
        if len(lowered) == len(text):  # "İ" lower-cases to 2 characters: the offsets would not be the text's
            found += filter(None, map(_nato, islice(_nato_runs(text, lowered), MAX_PAYLOADS)))
    if _TOKENS in kinds:
        spans = list(islice(marked_runs(marks, _MIN_TOKEN), MAX_PAYLOADS))
        found += _uuencoded(data, spans)
        found += filter(None, (_base85(data[start:end].decode("ascii")) for start, end in spans))
    return found[:MAX_PAYLOADS]
