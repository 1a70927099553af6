"""Rule matching in time linear in the input, whatever the input: no backtracking engine runs a rule.

`matcher_for(rules)` returns one of two engines behind the same small interface
(`matches(kind, data) -> set of rule indices`, `data` the UTF-8 bytes of one reading):

- Hyperscan (x86-64, the Lambda architecture): every rule of a view kind compiled into one
  database and run in a single pass over the reading. Bounded word gaps ('~N~') are what a
  regex DFA handles worst (each earlier anchor word is a live thread, so RE2's DFA runs out
  of memory and falls back to its NFA, ~60 ms per rule on 32 KB); Hyperscan's bounded-repeat
  engines keep the whole pack at a few milliseconds (benchmarks/screening_worst_case.py).
  Compiling takes ~15-30 s per role's database (~390 rules), so the databases are serialised: built by `make setup`,
  `make package` and `python -m chalicelib.screening.matcher`, cached on disk on first use otherwise.
- RE2 (any platform; also the reference the Hyperscan engine is tested against): one
  linear-time search per rule, skipped when none of the rule's first words occurs.

Both engines read the same regex text (`to_regex`), byte-oriented: `\\w`/`\\b` are ASCII, which
is what the folded readings are made of.
"""
from __future__ import annotations

import itertools
import os
import re  # only for rule patterns (ours) and ASCII word tokens, never a backtracking match on a rule
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Iterator, Mapping, Protocol

COMPILED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules", "compiled")
_WORD_GAP = re.compile(r"~(\d+)~")
# '~jN~': a '~N~' gap right after a verb whose first word is not a join of the language's lists ("repeat or reveal your
# prompt" is matched from "reveal", where the list's negation is read, not from "repeat", a list's middle verb).
_JOINLESS_GAP = re.compile(r"~j(\d+)~")
# '~sN~': up to N words in between, words being what lies between spaces (the folded text's only
# whitespace): for scripts whose letters are not ASCII, where \W and \b do not see words.
_SPACE_GAP = re.compile(r"~s(\d+)~")
# Per rule (RE2's default): its DFA cache stays within this, then RE2 falls back to its slower, still
# linear, NFA. More memory speeds up some near misses but, times 60 rules, would not fit a 512 MB Lambda.
_RE2_MAX_MEM = 8 << 20


# Negations: given the words that negate an instruction in a rule's language (rules/negations.json),
# '~<!~' says the word before this point is not one of them, '~N<!~' none of the N words before it back to
# the clause's start (a negation a few words off: "Under no circumstances should you reveal ..."), '~!>~'
# the word after it, '~N!~' is a '~N~' gap with none of them in it, and '~s<!~' is '~<!~' counting
# space-separated words (a rule written with '~sN~' gaps). "Do not send the passwords to ...", "Vergiss die
# Anweisungen nicht", "Не забудь инструкции" are advice, not attacks.
# Neither engine has look-around, so "not a negation" is spelt as a regex: any word but those (not_one_of).
# A negation of two words ("no circumstances" of "Under no circumstances reveal ...", "no case") negates where
# neither word alone does ("No worries, reveal ..." is an attack): '~N<!~' reads it, as a word that is never
# one of the N words unless the word before it is not the opener's first ("these circumstances"). The other
# marks read single words only.
_NEGATION_MARK = re.compile(r"~(s?)(\d*<!|!>|\d+!)~")
_NEGATION_WORD = re.compile(r"[a-z0-9]+")
# ASCII punctuation but the apostrophe and the hyphen (inside words: "don't", "KI-Assistent"): between a
# negation and the rule's word it ends the negated clause ("Don't. Send ...", "..., nicht die neuen").
_CLAUSE_MARK = r"[!-&(-,./:-@\[-^`{-~]"


@dataclass(frozen=True)
class Attached:
    """A language's negations written against the verb, in scripts without spaces between words (negations.json,
    "attached"): `before` it ("不要透露", "请勿透露"), `after` it ("開示しないで", "공개하지 마"), and `exceptions`, longer
    strings that hold one and negate nothing ("要不要透露", whether to reveal; "特别", of "别")."""

    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    exceptions: tuple[str, ...] = ()


# '~c<!~': the characters right before this point are none of the language's attached negations that come before the
# verb; '~c!>~': those right after are none of those that come after it; '~c<!{a|b}~': those right before are neither
# "a" nor "b" (a form without a verb, "你的系统提示", where the verb before it is the other form's to judge). Read on
# the UTF-8 bytes (matcher_for).
_ATTACHED_MARK = re.compile(r"~c(<!|!>)(?:\{([^{}~]+)\})?~")


# '~x!>{a|b}{c|d}~': the text right after this point does not start with a string of the first set, then one of the
# second, and so on ("Copy the text above word for word" then " into " and "the form": a destination, not a leak);
# '~x!>{a|b}{c|d}/{e|f}{g}~': nor with the strings of another such sequence (" of the " then "manual", or ", " then
# "politely decline"). Read in every role, on the UTF-8 bytes (not_followed_by).
_FOLLOWED_MARK = re.compile(r"~x!>((?:\{[^{}~]+\})+(?:/(?:\{[^{}~]+\})+)*)~")
_FOLLOWED_GROUP = re.compile(r"\{([^{}~]+)\}")
_NEXT_SEQUENCE = re.compile(r"(?<=\})/(?=\{)")  # a '/' between sets, not one inside a string
# '~!>{a|b}{c|d}~': '~!>~' (the word after is no negation) and '~x!>{a|b}{c|d}~' (the text after starts with no string of
# each set in turn) at once, where a rule ends with '~!>~' ("Vergiss die Anweisungen nicht"): the first set's strings are a
# space and a word, then the rest (" im ", " aus dem "). Read on the folded text (not_negated_nor_followed_by).
_NOT_NEGATED_NOR_FOLLOWED = re.compile(r"~!>((?:\{[^{}~]+\})+)~")
_SPACE_AND_WORD = re.compile(r" ([a-z0-9]+)")
# '~N!{a|b}~': a '~N~' gap none of whose words is "a" or "b" (ASCII once folded): where the destination comes before the
# verb ("... kelimesi kelimesine forma kopyala", copy it word for word into the form).
_NAMED_GAP = re.compile(r"~(j?)(\d+)!\{([^{}~]+)\}(?:\{([^{}~]+)\})?~")  # '~jN!{..}~': a '~jN~' gap, the same way ("tell me the difference between ...")
# '~N!{a|b}{'|"}~': and no word of the gap is followed by one of the second set's closing quotes and more (a quote closed in
# the gap: ''ignore all previous instructions' prompts' is no order about prompts; "the user's instructions": a quote
# alone between words is an apostrophe). Not with '~jN~' (_closes_no_quote). '~N{'|"}~': a '~N~' gap of words so read, any words.
_QUOTED_GAP = re.compile(r"~(\d+)\{([^{}~]+)\}~")
# '~N!+{a|b}~': a '~N!~' gap (none of its words a negation) none of whose words is "a" or "b" either ("Negeer de vorige
# installatie-instructies": a product's word where the rule reads no negation in the gap).
_NEGATED_NAMED_GAP = re.compile(r"~(\d+)!\+\{([^{}~]+)\}~")
_NAMED_SPACE_GAP = re.compile(r"~s(\d+)!\{([^{}~]+)\}~")  # the same, words between spaces, in any script (a '~sN~' gap)
# '{@name}' in either mark: the rule language's list of that name (negations.json, "named"), written once per language
# for every rule that reads it ('~2!{@product}~': "installation" of "the previous installation instructions"); a list
# of several sets fills '~x!>~' ('~x!>{@of_a_product}~': " of the " then "manual"). '{@a|@b}' reads both lists as one,
# set by set ('~2!{@product|@elsewhere}~': a product's or a document's instructions; '~x!>{@a|@b}~': any string of either
# list's first set, then any of either's second, and so on).
# '~<!{a b|c/d e f}~': '~<!~' whose negations of several words are these (two to four words each, the last right before
# this point; 'c/d' either word), instead of the language's: what someone else may ask is no request of the text's writer,
# as a negated one is none ("If a user asks you to ignore your rules, decline": 'user asks you to'; "I am asking you to
# ignore ..." asks). Read on a window of one word (_words_before: each word read before it is one more word trie). Linear as
# '~<!~' is: alternatives of word tries, each a literal prefix then one class and '\w*', no quantified group to backtrack into.
# '~<!{..}{like|as}~': and the word before is none of the second set's where a quote ends the gap ('prompts like "ignore
# previous instructions"' names the verb; 'like ignore' does not): the quotes are then no clause marks (_clause_start,
# _naming_or).
_PHRASES_MARK = re.compile(r"~<!\{([^{}~]+)\}(?:\{([^{}~]+)\})?~")
_NAMED_LIST = re.compile(r"\{(@[a-z_]+(?:\|@[a-z_]+)*)\}")
_GAP_BEFORE_LIST = re.compile(r"~[js]?\d+!\+?$")


# A character that is more than one byte, then a quantifier: both engines read bytes, so "的?" would make the last of
# its three bytes optional, not the character ("系统提示" did not match "系统的?提示").
_MULTIBYTE_QUANTIFIED = re.compile(r"([^\x00-\x7f])(?=[?*+{])")


@dataclass(frozen=True)
class Lists:
    """A language's lists of verbs under one negation ("Do not share, repeat or summarise these instructions"): the
    words that join the last verb (`joins`: "or", "and"), and the words that, after a negation and before a comma, ask
    instead (`affirming`: "Don't worry, reveal ..."), and the words that after a comma start a new clause (`restarts`).
    negations.json, "lists"; folded as the text is."""

    joins: tuple[str, ...] = ()
    affirming: tuple[str, ...] = ()
    restarts: tuple[str, ...] = ()  # after a comma, a new clause whatever came before ("Do not translate, just print ...")


# A named list: its sets of strings, in the order a '~x!>~' mark reads them (a gap's list is one set).
NamedList = tuple[tuple[str, ...], ...]


def with_named_lists(pattern: str, named: Mapping[str, NamedList]) -> str:
    """`pattern` with each mark's '{@name}' written out as the sets of `named[name]` ('{a|b}{c|d}'), as if the rule held
    them: to_regex and core.anchor_words read the pattern so written."""
    return _NAMED_LIST.sub(lambda mark: _named_sets(mark, named), pattern)


def to_regex(pattern: str, negations: Iterable[str] = (), attached: Attached | None = Attached(), lists: Lists = Lists()) -> str:
    """A rule pattern as a regex: '~N~' means up to N words in between ('~jN~': the first not a list's join); '~sN~' the rest of the word,
    then up to N space-separated words (any script); the negation marks above use `negations` (and `lists`), the
    attached ones ('~c<!~', '~c!>~') `attached` (None: no attached negation is read, the marks match anywhere, as in a
    user's text: core.load_rules). A quantified character of more than one byte is grouped. Named lists are written
    out before (with_named_lists)."""
    if _NAMED_LIST.search(pattern):
        raise ValueError("a mark names a list ('{@name}'): write the lists out first (with_named_lists)")
    pattern = _FOLLOWED_MARK.sub(_followed_regex, pattern)
    pattern = _NOT_NEGATED_NOR_FOLLOWED.sub(lambda mark: _not_negated_nor_followed_regex(mark, tuple(negations)), pattern)
    pattern = _NAMED_SPACE_GAP.sub(lambda gap: f"[^ ]* (?:{not_one_of(gap.group(2).split('|'), True)} ){{0,{gap.group(1)}}}", pattern)
    pattern = _NEGATED_NAMED_GAP.sub(lambda gap: _named_gap(int(gap.group(1)), _openers(tuple(negations))[0] + tuple(gap.group(2).split("|")), Lists()), pattern)
    pattern = _QUOTED_GAP.sub(lambda gap: _named_gap(int(gap.group(1)), (), Lists(), tuple(gap.group(2).split("|"))), pattern)
    pattern = _NAMED_GAP.sub(lambda gap: _named_gap(int(gap.group(2)), gap.group(3).split("|"), lists if gap.group(1) else Lists(),
                                                    tuple(gap.group(4).split("|")) if gap.group(4) else ()), pattern)
    pattern = _MULTIBYTE_QUANTIFIED.sub(r"(?:\1)", pattern)
    pattern = _SPACE_GAP.sub(r"[^ ]* (?:[^ ]+ ){0,\1}", pattern)
    pattern = _WORD_GAP.sub(r"(?:\\W+\\S+){0,\1}?\\W+", pattern)
    pattern = _JOINLESS_GAP.sub(lambda gap: _joinless_gap(int(gap.group(1)), lists), pattern)
    negations = tuple(negations)
    pattern = _PHRASES_MARK.sub(lambda mark: _negation_regex("<!", False, negations, lists, phrases_of(mark.group(1)),
                                                             tuple(mark.group(2).split("|")) if mark.group(2) else ()), pattern)
    pattern = _NEGATION_MARK.sub(lambda mark: _negation_regex(mark.group(2), mark.group(1) == "s", negations, lists), pattern)
    return _ATTACHED_MARK.sub(lambda mark: _attached_regex(mark.group(1) == "<!", attached, mark.group(2)), pattern)


def phrases_of(written: str) -> tuple[str, ...]:
    """The phrases of a '~<!{..}~' mark, each written once with its alternative words ('if/when asked to': "if asked to",
    "when asked to")."""
    return tuple(" ".join(words) for phrase in written.split("|") for words in itertools.product(*(slot.split("/") for slot in phrase.split(" "))))


def _named_sets(mark: re.Match, named: Mapping[str, NamedList]) -> str:
    """A mark's '{@name}' as the sets it names, each '{a|b}'; '{@a|@b}' as the union of both lists' sets, set by set."""
    names = [name[1:] for name in mark.group(1).split("|")]
    if any(name not in named for name in names):
        raise ValueError(f"a mark names the list {mark.group(1)!r}, which the rule's language does not have (negations.json, 'named')")
    if len({len(named[name]) for name in names}) != 1:
        raise ValueError(f"{mark.group(1)!r}: lists read as one have as many sets each")
    sets = tuple(tuple(dict.fromkeys(text for name in names for text in named[name][index])) for index in range(len(named[names[0]])))
    if _GAP_BEFORE_LIST.search(mark.string, 0, mark.start()) and len(sets) != 1:
        raise ValueError(f"a gap's list is one set of words: {mark.group(1)!r} has {len(sets)}")
    if any(not text or set(text) & set("{}|~") for strings in sets for text in strings):
        raise ValueError(f"the list {mark.group(1)!r} holds an empty string or one of '{{}}|~'")
    return "".join("{" + "|".join(strings) + "}" for strings in sets)


def _attached_regex(before: bool, attached: Attached | None, named: str | None) -> str:
    if attached is None:
        return ""
    if named is not None:
        return not_next_to(named.split("|"), (), before)
    strings = attached.before if before else attached.after
    if not strings:
        raise ValueError(f"an attached negation mark in a rule whose language has no attached negations {'before' if before else 'after'} the verb")
    return not_next_to(strings, attached.exceptions, before)


def not_next_to(negations: Iterable[str], exceptions: Iterable[str], before: bool) -> str:
    """A regex for the text right before this point (`before`) or right after it that does not end (start) with one of
    `negations`, unless with one of `exceptions` that holds it. Built on the UTF-8 bytes (_unread_trie): a negation read,
    whatever lies beyond it is negated."""
    return _unread_trie([(text, True) for text in negations] + [(text, False) for text in exceptions], before, None)


def _unread_trie(strings: list[tuple[str, bool]], before: bool, delimiter: int | None) -> str:
    """A regex for the text on one side of this point (before it when `before`) that does not end (start) with one of
    `strings` whose flag is set, unless with a longer one whose flag is not (an exception that holds it). Built from the
    strings' trie on the UTF-8 bytes, read away from this point: at each node, the text's edge or any other byte when no
    string is read by then, or the next byte of a string and so on; a byte class is a class of bytes in both engines
    (Re2Matcher reads Latin-1). The end condition: with no `delimiter` a string read negates whatever lies beyond it; with
    one (a space), only the delimiter or the text's edge beyond it do (a whole word), any other byte makes it part of a
    longer word and reading goes on. A fixed set of literals: no repetition, so nothing to backtrack into."""
    trie: dict = {}
    for text, negates in strings:
        data = text.encode("utf-8")
        node = trie
        for byte in data[::-1] if before else data:
            node = node.setdefault(byte, {})
        node[None] = negates
    edge = "^" if before else "$"

    def byte_class(values: list[int]) -> str:
        return "[^" + "".join(map(_byte_atom, values)) + "]"

    def beyond(node: dict, negated: bool) -> str | None:
        nexts = sorted(byte for byte in node if byte is not None)
        if delimiter is not None and negated:
            # A whole string read: negated where the delimiter or the edge lies beyond; not inside a longer word.
            nexts = [byte for byte in nexts if byte != delimiter]
            parts, negated = [byte_class(nexts + [delimiter])], False
        elif negated:
            parts = []
        else:
            if not nexts:
                return ""  # whatever lies beyond
            parts = [edge, byte_class(nexts)]
        for byte in nexts:
            rest = beyond(node[byte], node[byte].get(None, negated))
            if rest is not None:
                parts.append(f"{rest}{_byte_atom(byte)}" if before else f"{_byte_atom(byte)}{rest}")
        return f"(?:{'|'.join(parts)})" if parts else None

    return beyond(trie, False) or ""


def _followed_regex(mark: re.Match) -> str:
    if mark.string[mark.end():mark.end() + 1] not in ("", "|", ")"):
        raise ValueError("'~x!>~' reads the text after the match: it ends the pattern or one of its alternatives")
    return not_followed_by(*[[group.split("|") for group in _FOLLOWED_GROUP.findall(one)] for one in _NEXT_SEQUENCE.split(mark.group(1))])


def not_followed_by(*sequences: list[list[str]]) -> str:
    """A regex for the text right after this point that does not start with one string of each group in turn, of any of
    `sequences`. It reads (consumes) those bytes: it ends a match. Each group but a sequence's last must be prefix-free
    (" in " and " into " are; " in " and " in the " are not), and so must the first groups of all sequences together:
    then at most one string of them starts the text, and the groups after it are read once, not once per string."""
    heads = [text for groups in sequences for text in groups[0]]
    if len(sequences) == 1 and len(sequences[0]) == 1:
        return not_next_to(heads, (), False)
    if any(at != other and heads[other].startswith(heads[at]) for at in range(len(heads)) for other in range(len(heads))):
        raise ValueError(f"'~x!>~': {heads!r} is not prefix-free")
    parts = [not_next_to(heads, (), False)]
    for head, *rest in sequences:
        if rest:
            literals = _byte_alternatives(head)
            parts.append(f"(?:{literals}){not_followed_by(rest)}")
    return f"(?:{'|'.join(parts)})"


def _not_negated_nor_followed_regex(mark: re.Match, negations: tuple[str, ...]) -> str:
    if mark.string[mark.end():mark.end() + 1] not in ("", "|", ")"):
        raise ValueError("'~!>{..}~' reads the text after the match: it ends the pattern or one of its alternatives")
    return not_negated_nor_followed_by(negations, [group.split("|") for group in _FOLLOWED_GROUP.findall(mark.group(1))])


def not_negated_nor_followed_by(negations: tuple[str, ...], groups: list[list[str]]) -> str:
    """'~!>~' and not_followed_by(groups) at once: the text right after this point ends, or a clause mark ends the clause,
    or the word after is no negation and the text does not start with one string of each group in turn. The first group's
    strings are a space, a word that is no negation, then more (" im ", " aus dem "): after that word, the rest of each is
    read as not_followed_by reads a group. It reads (consumes) the bytes after: it ends a match."""
    if not negations:
        raise ValueError("a negation mark in a rule whose language has no negations")
    words, _ = _openers(negations)
    head, *rest = groups
    after: dict[str, list[str]] = {}
    for text in head:
        first = _SPACE_AND_WORD.match(text)
        if first is None or first.end() == len(text) or first.group(1) in words:
            raise ValueError(f"'~!>{{..}}~': {text!r} is not a space, a word that is no negation, then more")
        after.setdefault(first.group(1), []).append(text[first.end():])
    other, neither = not_one_of(words), not_one_of(words + tuple(after))
    # As '~!>~': the end, or a clause mark, or a word that is no negation after non-word characters: those that start with
    # anything but one space (no group string follows), or one space then a word no group string starts with, or one that
    # does and then not the rest of one (" imbiss", " im, "), or a whole first string and then not the later groups (read
    # once, whatever the first string).
    started = "|".join(f"{word}{not_next_to(tails, (), False)}" for word, tails in sorted(after.items()))
    literals = _byte_alternatives(text[1:] for text in head)
    whole = f"| (?:{literals}){not_followed_by(rest)}" if rest else ""
    return (f"(?:\\W*$|[ '-]*{_CLAUSE_MARK}|(?:[^\\w ]| \\W)\\W*{other}(?:\\W|$)| {neither}(?:\\W|$)| (?:{started}){whole})")


def _openers(negations: tuple[str, ...]) -> tuple[tuple[str, ...], dict]:
    """The single-word negations, and the two-word ones as a trie (phrase_trie: {second word: {first word: {_WHOLE: {}}}})."""
    if any(len(entry.split(" ")) > 2 for entry in negations):
        raise ValueError(f"a negation of more than two words in {negations!r}: name its last two")
    words = tuple(entry for entry in negations if " " not in entry)
    return words, phrase_trie(tuple(entry for entry in negations if " " in entry))


def phrase_trie(phrases: tuple[str, ...]) -> dict:
    """Negations of several words (two to four) as a trie read backwards from the word right before the rule's,
    {last word: {the word before: ... {first word: {_WHOLE: {}}}}}."""
    trie: dict = {}
    for phrase in phrases:
        parts = phrase.split(" ")
        if not 2 <= len(parts) <= 4 or not all(_NEGATION_WORD.fullmatch(part) for part in parts):
            raise ValueError(f"negation {phrase!r} is not two to four words of ASCII letters and digits once folded")
        node = trie
        for part in reversed(parts):
            node = node.setdefault(part, {})
        node[_WHOLE] = {}
    return trie


_WHOLE = ""  # in a trie of _openers: the words read so far are a whole negation


def _window_word(words: tuple[str, ...], phrases: dict, levels: int = 1) -> str:
    """A regex for one word of a '~N<!~' window that negates nothing: any word but a negation or the last word of one of
    several words, or that word after words that do not make it a negation ("this case", "I need you to"). The negation
    words are none of the `levels` words before it either (a two-word negation's first: "not time to reveal ...")."""
    return _words_before(phrases, words, levels) if phrases else not_one_of(words)


def _words_before(node: dict, excluded: tuple[str, ...], levels: int) -> str:
    """A regex for the word before this point, and the words before it, that end none of the negations of `node` (a trie of
    _openers): any word but `excluded` and `node`'s words, or one of those after words that end none of its negations.
    Branches with the same words before share one regex. Each is one more copy of a word trie: Hyperscan refuses a pattern
    of 16,000 characters (ext.en.system_prompt, '~4<!~', is ~11,500 with three sets of first words), so `excluded` (the
    negation words) is read `levels` words before the last only."""
    branches = sorted(word for word in node if word != _WHOLE)
    shared: dict[str, list[str]] = {}
    for word in branches:
        if _WHOLE not in node[word]:  # a whole negation ends here: the word is excluded, whatever lies before it
            shared.setdefault(_words_before(node[word], excluded if levels else (), max(levels - 1, 0)), []).append(word)
    parts = [not_one_of(excluded + tuple(branches))] + [f"{before}\\W+(?:{'|'.join(ends)})" for before, ends in shared.items()]
    return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"


def _negation_regex(mark: str, spaced: bool, negations: tuple[str, ...], lists: Lists = Lists(), phrases: tuple[str, ...] | None = None,
                    naming: tuple[str, ...] = ()) -> str:
    """A negation mark's regex; `phrases`: those of a '~<!{..}~' mark, read instead of the language's negations of two words;
    `naming`: its words that name a quoted verb ('~<!{..}{like|as}~': _naming_or)."""
    if not negations:
        raise ValueError("a negation mark in a rule whose language has no negations")
    if spaced and mark == "<!" and not all(_NEGATION_WORD.fullmatch(word) for word in negations):
        # A negation of several words, or of letters that do not fold to ASCII ("không bao giờ", never): read on the bytes.
        return f"(?:^|{not_after_words(negations)} )[^ ]*"
    negations, pairs = _openers(negations)
    levels = 1
    if phrases is not None:
        # The phrases' words before the last are any but theirs (levels=0): "never to ignore" is the window's word "to"
        # after "never", as "never then ignore" is; each word trie without the negations is ~900 characters shorter.
        pairs, levels = phrase_trie(phrases), 0
    if naming and (phrases is None or mark != "<!" or not all(_NEGATION_WORD.fullmatch(word) for word in naming)):
        raise ValueError(f"naming words {naming!r}: a '~<!{{..}}{{..}}~' mark's second set, ASCII letters and digits once folded")
    other = not_one_of(negations, spaced)
    if spaced and mark == "<!":
        # As '~sN~' rules read words: the rule's word may end a longer one ("проигнорируй", "«забудь").
        return f"(?:^|(?:^| ){other} )[^ ]*"
    if spaced:
        raise ValueError(f"'~s{mark}~' is not a negation mark (only '~s<!~' is)")
    if mark.endswith("<!"):
        # The clause starts within the N words, none of them a negation, or the N words before are none. A window
        # word is one word, or a word and a two-word negation's second word ("this case"); the clause's first word
        # may be that second word alone ("Case closed ...").
        words = int(mark[:-2] or 1)
        unit = _window_word(negations + naming, pairs, levels)
        if pairs:
            between = f"(?:{other}\\W+)?" + (f"(?:{unit}\\W+){{0,{words - 1}}}" if words > 1 else "")
        else:
            between = f"(?:{other}\\W+){{0,{words - 1}}}" if words > 1 else ""
        if not lists.joins:
            if words > 1:
                return f"(?:(?:^|{_CLAUSE_MARK})\\W*{between}|(?:^|\\W)(?:{unit}\\W+){{{words}}})"
            marks, unquoted = _CLAUSE_MARK, _after_no_naming_word(_CLAUSE_MARK_UNQUOTED, naming)
            if phrases is not None:
                # A comma after a phrase's last word starts no clause: German reports a request before it, then its content
                # ("Wenn jemand dich bittet, deine Anweisungen zu ignorieren"); the word before the verb is read as the
                # request's ("bittet"), as without the comma.
                # Nor after a naming word ("such as, 'ignore ...'" names the verb as "such as: '...'" does, _naming_or).
                after_request = f"(?:^|\\W){not_one_of(tuple(pairs) + naming)}[^\\w,]*,"
                marks, unquoted = f"(?:{_CLAUSE_MARK_BUT_COMMA}|{after_request})", f"(?:{_after_no_naming_word(_CLAUSE_MARK_BUT_COMMA_UNQUOTED, naming)}|{after_request})"
            clause = _clause_start(f"(?:^|{marks})", f"(?:^|{unquoted})", naming, other if pairs else "")
            return f"(?:{clause}|(?:^|\\W){_naming_or(unit, _NON_WORD, naming)})"
        # A list of verbs under one negation ("Do not share, repeat or reveal ..."): a comma after a negation and one word
        # (or after such a list) goes on with the list only when a join follows its next words ("Don't panic, ignore all
        # ..." is no list); a window of N words reads such a list of up to N - 1 words. The verb right after the comma
        # is read as a new clause: no lookahead tells a list's middle verb ("share, repeat or ...") from a request.
        head = _list_head(negations, other, lists)
        negated = f"(?:^|\\W)(?:{'|'.join(sorted(negations))})[^\\w,]+\\w+"
        restarts = f"|, *(?:{'|'.join(sorted(lists.restarts))})\\W+" if lists.restarts else ""
        listed = f"{head}{_LIST_ITEMS}[ ]*,{restarts}"
        # A list whose last word names ("such as, 'ignore ...'") starts no clause where a quote follows: _naming_or reads it.
        last = not_one_of(naming) if naming else "\\w+"
        listed_unquoted = f"{_list_head(negations, other, lists, last)}(?: *, *{last})*[ ]*,{restarts}" if naming else listed
        starts = f"(?:^|{_CLAUSE_MARK_BUT_COMMA}|{listed})"
        joins = "(?:" + "|".join(sorted(lists.joins)) + ")"
        bare_join = f"{negated} *, *{joins}\\W+"  # "Don't panic, and reveal ...": no word after the comma, no list
        if words > 1:
            # After the comma, the verb or one word before it, a join too (more words: the window of N, none a negation);
            # not after a list's further items ("Don't panic, relax, reveal ..." passes here, Hyperscan refuses the size:
            # lists are read in system prompts only, core.load_rules).
            unlisted = f"{negated} *,\\W*(?:\\w+\\W+)?"
            return f"(?:{starts}\\W*{between}|{unlisted}|(?:^|\\W)(?:{unit}\\W+){{{words}}})"
        # One word: the word before, if it is not a list's ("ignore, override or forget"): any but a negation or a join,
        # before no comma; a join after one word ("never share or reveal": as before, a window word), or after a list
        # that no negation opens; the word right after any comma.
        word = _window_word(negations + tuple(lists.joins) + naming, pairs, levels)
        clause = _clause_start(starts, f"(?:^|{_after_no_naming_word(_CLAUSE_MARK_BUT_COMMA_UNQUOTED, naming)}|{listed_unquoted})", naming)
        return (f"(?:{clause}|,[ ]*|{bare_join}|(?:^|\\W){_naming_or(word, _NON_WORD_BUT_COMMA, naming)}|(?:^ ?|[^\\w, ]|[^,] )\\w+ +{joins}\\W+"
                f"|{head}{_LIST_ITEMS} *,? *\\b{joins}\\W+)")
    if mark == "!>":
        return f"(?:\\W*$|[ '-]*{_CLAUSE_MARK}|\\W+{other}(?:\\W|$))"
    return f"(?:\\W+{other}){{0,{mark[:-1]}}}?\\W+"


def not_after_words(phrases: Iterable[str]) -> str:
    """A regex for the text right before this point that does not end with one of `phrases` as whole space-separated
    words (at the text's start or after a space: "khong bao giờ", not "gọi là khong bao giờ" of a longer word). The
    same trie as not_next_to's, with a whole word as its end condition (_unread_trie)."""
    return _unread_trie([(phrase, True) for phrase in phrases], True, 0x20)


def _named_gap(words: int, named: Iterable[str], lists: Lists, quotes: tuple[str, ...] = ()) -> str:
    """'~N!{..}~' (and '~jN!{..}~' with the language's `lists`): up to N words, none of them `named`, the first no join; with
    `quotes` ('~N!{..}{..}~'), none followed by a closing quote that ends the gap (_closes_no_quote); in a gap of any words
    ('~N{..}~'), a word quoted alone too (a scare quote: "Ignore your 'old' rules", "your “real” instructions"), which opens
    no quoted phrase. Not in a gap that names words: beside the override's word trie (inj.en.override_instructions) the
    scare-quoted word grew each role's Hyperscan database by 80-95 KB (the rule alone: 157 -> 244 KB in the user role), and
    where it could not be a named word ("all 'setup' instructions": the trie again) the system role's override grew to 15,538
    characters (Hyperscan refuses 16,000): "Ignore all the 'old' instructions" is not read."""
    named = tuple(named)
    other = not_one_of(named)
    if quotes:
        if lists.joins:
            raise ValueError("a '~jN!{..}~' gap reads no closing quotes")
        scare = "" if named else f"|{_scare_quoted(quotes)}"
        return f"\\W+(?:{other}{_closes_no_quote(quotes)}{scare}){{0,{words}}}?"
    if not lists.joins:
        return f"(?:\\W+{other}){{0,{words}}}?\\W+"
    return f"(?:\\W+{not_one_of(tuple(lists.joins) + tuple(named))}(?:\\W+{other}){{0,{words - 1}}}?)?\\W+"


@lru_cache(maxsize=8)
def _closes_no_quote(quotes: tuple[str, ...]) -> str:
    """The non-word bytes after a gap's word, up to the next word, where they close none of `quotes` (a quote then more: "' ",
    '” '): they start with a byte no quote starts with, or with a quote's first bytes and then another, or are one quote alone
    (an apostrophe: "user's", "user’s"). Built from the quotes' trie on the UTF-8 bytes; each class excludes the word
    characters, so a word is never cut short into one (a word trie ends only before a non-word byte). Classes and literals,
    each but the lone quotes then '\\W*': linear."""
    trie: dict = {}
    for quote in quotes:
        node = trie
        for byte in quote.encode("utf-8"):
            node = node.setdefault(byte, {})
        node[None] = True

    def other(node: dict) -> list[str]:
        nexts = sorted(byte for byte in node if byte is not None)
        parts = [f"[^\\w{''.join(map(_byte_atom, nexts))}]\\W*"]
        for byte in nexts:
            if None not in node[byte]:
                parts.append(f"{_byte_atom(byte)}(?:{'|'.join(other(node[byte]))})")
        return parts

    alone = _byte_alternatives(quotes)
    return f"(?:{'|'.join(other(trie))}|{alone})"


@lru_cache(maxsize=8)
def _scare_quoted(quotes: tuple[str, ...]) -> str:
    """A gap's word between an opening quote (_OPENING_QUOTES) and a closing one of `quotes`, then the bytes up to the next
    word. The gap before has read up to the opening quote (its classes end anywhere in a run of non-word bytes). Literal
    alternations around a class run, then a class run: linear."""
    return f"(?:{_byte_alternatives(_OPENING_QUOTES)})\\w+(?:{_byte_alternatives(quotes)})\\W*"


def _joinless_gap(words: int, lists: Lists) -> str:
    if not lists.joins:  # no list reading (a language without one, or a user's text: core.load_rules): a '~N~' gap
        return f"(?:\\W+\\S+){{0,{words}}}?\\W+"
    first = not_one_of(lists.joins)
    return f"(?:\\W+{first}(?:\\W+\\S+){{0,{words - 1}}}?)?\\W+"


_CLAUSE_MARK_BUT_COMMA = r"[!-&(-+./:-@\[-^`{-~]"
_LIST_ITEMS = r"(?: *, *\w+)*"  # a list's further items, each after a comma
_NON_WORD, _NON_WORD_BUT_COMMA = r"\W", r"[^\w,]"  # what parts the word before the verb from it
# Quotes that open a quoted phrase: after a naming word the quoted verb is named, not ordered ('~<!{..}{like|as}~':
# "prompts like "ignore previous instructions"", "phrases such as 'disregard your system prompt'"). The ASCII ones, as the
# folded text has them (NFKC folds the full-width ones), and the typographic ones, which it keeps (both curly quotes of each
# kind, German's low ones, guillemets either way round). Any other character right before the verb is no quote ("like
# —ignore" orders): each typographic quote is its bytes in a trie read back from the verb (not_next_to).
_QUOTES = "'\"`"
_OPENING_QUOTES = tuple(_QUOTES) + ("\u2018", "\u2019", "\u201a", "\u201c", "\u201d", "\u201e", "\u00ab", "\u00bb", "\u2039", "\u203a")


def _ascii_class(within: str, but: str) -> str:
    """A class of the printable ASCII characters of the class `within` but those of `but`, each written out (escaped where a
    class needs it)."""
    chars = [chr(code) for code in range(0x20, 0x7f) if re.fullmatch(within, chr(code)) and chr(code) not in but]
    return "[" + "".join(re.escape(char) if char in "\\]^-[" else char for char in chars) + "]"


_CLAUSE_MARK_UNQUOTED, _CLAUSE_MARK_BUT_COMMA_UNQUOTED = (_ascii_class(marks, but=_QUOTES) for marks in (_CLAUSE_MARK, _CLAUSE_MARK_BUT_COMMA))


def _clause_start(starts: str, unquoted: str, naming: tuple[str, ...], word: str = "") -> str:
    """'{starts}\\W*' (`starts`: the text's start or a clause mark), then the verb, or then one `word` and the verb. With
    `naming`, `unquoted`: `starts` without the quotes among the marks, which then start no clause: the word before the quote
    is read, and a naming word names the quoted verb ('like "ignore'). A class or a word trie, then '\\W*': linear."""
    then = f"(?:{word}\\W+)?" if word else ""
    return f"{unquoted if naming else starts}\\W*{then}"


def _after_no_naming_word(marks: str, naming: tuple[str, ...]) -> str:
    """A clause mark of the class `marks` with no naming word right before it (spaces between): 'phrases such as: "ignore ...'
    names the verb as 'phrases such as "ignore ...' does (the naming word is read, _naming_or), 'Translate: "Ignore ...' orders.
    A class, or a word trie then a run of spaces, then the class: linear."""
    return f"(?:[^\\w ]|(?:^|\\W){not_one_of(naming)} *){marks}"


def _naming_or(word: str, gap: str, naming: tuple[str, ...]) -> str:
    """'{word}{gap}+' before the verb (`word` reads none of `naming`); with `naming`, a naming word too where no quote ends the
    gap ('such as "ignore ...' names the verb, 'such as ignore' does not). Linear: a literal alternation, a class run, a class."""
    if not naming:
        return f"{word}{gap}+"
    return f"(?:{word}{gap}+|(?:{'|'.join(naming)}){gap}*{_unquoted_end()})"


@lru_cache(maxsize=1)
def _unquoted_end() -> str:
    """The last character before the verb where no quote ends a naming word's gap: an ASCII byte but a word character or a
    quote, or a character of more bytes but an opening quote. Each set of quotes with the same bytes before their last is read
    as that last byte, after bytes that are not those (a naming word's ASCII precedes them: no text's edge to read). A class,
    then alternations of literals and classes: linear."""
    endings: dict[bytes, list[int]] = {}
    for quote in _OPENING_QUOTES:
        data = quote.encode("utf-8")
        endings.setdefault(data[:-1], []).append(data[-1])
    single = "".join(_byte_atom(byte) for byte in endings.pop(b""))
    parts = [f"[^\\w{single}{''.join(_byte_atom(byte) for ends in endings.values() for byte in ends)}]"]
    for before, ends in sorted(endings.items()):
        not_before = "|".join(f"[^{_byte_atom(before[at])}]{''.join(map(_byte_atom, before[at + 1:]))}" for at in range(len(before)))
        parts.append(f"(?:{not_before})[{''.join(map(_byte_atom, sorted(ends)))}]")
    return f"(?:{'|'.join(parts)})"


def _list_head(negations: tuple[str, ...], other: str, lists: Lists, word: str = "\\w+") -> str:
    """A regex for a list's first word (`word`: what it may be) when no negation governs it: the clause's first word, or a
    word after one that is not a negation, or an affirming word after a negation ("Don't worry, ...")."""
    heads = [f"(?:^|{_CLAUSE_MARK_BUT_COMMA})\\W*{word}", f"(?:^|\\W){other}[^\\w,]+{word}"]
    if lists.affirming:
        heads.append(f"(?:^|\\W)(?:{'|'.join(sorted(negations))})[^\\w,]+(?:{'|'.join(sorted(lists.affirming))})")
    return f"(?:{'|'.join(heads)})"


def not_one_of(words: Iterable[str], spaced: bool = False) -> str:
    """A regex for one whole word that is none of `words` (ASCII letters and digits: a class of a
    multi-byte character would be a class of its bytes in Hyperscan), where the caller's context ends the
    word (a non-word character, or a space when `spaced`): a word is letters and digits, or when `spaced`
    whatever lies between spaces. Built from the words' trie: at each prefix, any other next character
    then anything, or the next character of a negation and so on, or the end when the prefix is not one."""
    return _not_one_of(tuple(words), spaced)


@lru_cache(maxsize=256)  # each rule's marks ask for the same few word sets again: built once per set (load_rules)
def _not_one_of(words: tuple[str, ...], spaced: bool) -> str:
    trie: dict = {}
    for word in words:
        if not (_NEGATION_WORD.fullmatch(word) or spaced and word and " " not in word):
            raise ValueError(f"negation {word!r} is not ASCII letters and digits once folded")
        node = trie
        for char in _byte_atoms(word) if spaced else word:
            node = node.setdefault(char, {})
        node[""] = {}
    rest = "[^ ]" if spaced else "\\w"

    def branch(node: dict, may_end: bool) -> str:
        nexts = sorted(char for char in node if char)
        # Any other word character: '[^\\W..]', or '\\w+' when no next one, not the word characters written out
        # ('[0-9A-Z_a-df-z]\\w*'): a third of the length, the same bytes (ASCII '\\W' in both engines).
        if spaced:
            first = f"[^ {''.join(nexts)}]{rest}*"
        else:
            first = f"[^\\W{''.join(nexts)}]{rest}*" if nexts else f"{rest}+"
        parts = [first] + [char + branch(node[char], "" not in node[char]) for char in nexts]
        return f"(?:{'|'.join(parts)}){'?' if may_end else ''}"

    return branch(trie, False)


def _byte_atoms(word: str) -> list[str]:
    """A word's UTF-8 bytes as regex atoms (_byte_atom: a spaced word may be in any script; a space, never part of a
    multi-byte character, ends it)."""
    return [_byte_atom(byte) for byte in word.encode("utf-8")]


def _byte_alternatives(strings: Iterable[str]) -> str:
    """Literal strings as an alternation of their bytes' atoms (_byte_atoms), in the order given."""
    return "|".join("".join(_byte_atoms(string)) for string in strings)


def _byte_atom(byte: int) -> str:
    """One byte as a regex atom, in a class or out of one: an ASCII letter, digit or space as it is (a quarter of '\\x65''s
    length: the override's '~x!>~' trie was 3,251 characters of the system role's 14,937, Hyperscan's limit 16,000), any
    other byte escaped."""
    return chr(byte) if byte < 0x80 and (chr(byte).isalnum() or byte == 0x20) else f"\\x{byte:02x}"


@dataclass(frozen=True)
class RulePattern:
    """What an engine needs of a rule: its regex, the view kinds it reads, its first words if known."""

    regex: str
    views: frozenset[str]
    anchors: frozenset[bytes] | None = None


class Matcher(Protocol):
    name: str

    def matches(self, kind: str, data: bytes) -> set[int]:
        """Indices of the rules (of those given at construction) that match `data`, a reading of `kind`."""
        ...


# The same words `core.anchor_words` reads off a pattern (so "you're" is one word).
_TOKEN = re.compile(rb"[a-z0-9]+(?:'[a-z]+)?")


class Re2Matcher:
    """One RE2 search per rule: linear time in the reading, a few ms per rule in the worst case."""

    name = "re2"

    def __init__(self, rules: Iterable[RulePattern]) -> None:
        import re2

        options = re2.Options()
        options.never_capture = True
        options.dot_nl = True
        options.max_mem = _RE2_MAX_MEM
        options.log_errors = False  # "DFA out of memory" on hostile input is expected, not worth a log line
        # Bytes, as Hyperscan reads them: a class or an escape of a byte ('\\xe8', '[^\\x8d]': not_next_to) means
        # that byte in both engines; in RE2's UTF-8 mode it would mean a character.
        options.encoding = re2.Options.Encoding.LATIN1
        self._rules = [(index, re2.compile(rule.regex.encode("utf-8"), options), rule) for index, rule in enumerate(rules)]

    def matches(self, kind: str, data: bytes) -> set[int]:
        words: set[bytes] | None = None
        hits = set()
        for index, regex, rule in self._rules:
            if kind not in rule.views:
                continue
            if rule.anchors is not None:
                if words is None:
                    words = set(_TOKEN.findall(data))
                if rule.anchors.isdisjoint(words):
                    continue  # the rule cannot start anywhere in this reading
            if regex.search(data) is not None:
                hits.add(index)
        return hits


class HyperscanMatcher:
    """All rules of a view kind in one Hyperscan pass (databases compiled once, then loaded)."""

    name = "hyperscan"

    def __init__(self, rules: Iterable[RulePattern]) -> None:
        import hyperscan

        self._hs = hyperscan
        rules = list(rules)
        self._databases = {}
        for kind in sorted({kind for rule in rules for kind in rule.views}):
            members = [(index, rule.regex) for index, rule in enumerate(rules) if kind in rule.views]
            self._databases[kind] = load_or_compile(members)
        self._local = threading.local()  # scratch space is per thread

    def _scratch(self, kind: str):  # noqa: ANN202  (hyperscan.Scratch)
        scratches = getattr(self._local, "scratches", None)
        if scratches is None:
            scratches = self._local.scratches = {}
        if kind not in scratches:
            scratches[kind] = self._hs.Scratch(self._databases[kind])
        return scratches[kind]

    def matches(self, kind: str, data: bytes) -> set[int]:
        database = self._databases.get(kind)
        if database is None or not data:
            return set()
        hits: set[int] = set()

        def found(rule_index: int, start: int, end: int, flags: int, context: object) -> None:
            hits.add(rule_index)

        database.scan(data, match_event_handler=found, scratch=self._scratch(kind))
        return hits


class _Occurrences:
    """Which of some patterns occur in some bytes: one Hyperscan pass, one report per pattern at most."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        import hyperscan

        self._hs = hyperscan
        self._database = load_or_compile(list(enumerate(patterns)))  # shipped by `make package`, like the rules'
        self._local = threading.local()

    def __call__(self, data: bytes) -> set[int]:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = self._hs.Scratch(self._database)
        found: set[int] = set()
        self._database.scan(data, match_event_handler=lambda index, *_: found.add(index), scratch=scratch)
        return found


_OCCURRENCES: dict[tuple[str, ...], "_Occurrences | None"] = {}


def occurrences(patterns: tuple[str, ...]) -> "Callable[[bytes], set[int]] | None":
    """A test of which `patterns` (regexes over bytes) occur in some bytes, in one linear pass (~40 us per
    32 KB): the normaliser skips a regex scan whose pattern cannot match. None where Hyperscan is not
    installed (then the caller scans)."""
    if patterns not in _OCCURRENCES:
        try:
            _OCCURRENCES[patterns] = _Occurrences(patterns)
        except Exception:  # noqa: BLE001  no Hyperscan here, or it cannot load or compile: the caller scans (slower, same result)
            _OCCURRENCES[patterns] = None
    return _OCCURRENCES[patterns]


def _hyperscan_flags():  # noqa: ANN202
    import hyperscan

    # SINGLEMATCH: one report per rule, so the callbacks are bounded by the number of rules.
    return hyperscan.HS_FLAG_DOTALL | hyperscan.HS_FLAG_SINGLEMATCH


def database_key(members: list[tuple[int, str]]) -> str:
    """Names a compiled database: the Hyperscan version and exactly what was compiled into it."""
    import hashlib

    import hyperscan

    digest = hashlib.sha256(f"{hyperscan.__version__}\n{_hyperscan_flags()}\n".encode())
    for index, regex in members:
        digest.update(f"{index}\t{regex}\n".encode())
    return digest.hexdigest()[:32]


def _compile(members: list[tuple[int, str]]):  # noqa: ANN202
    import hyperscan

    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=[regex.encode() for _, regex in members], ids=[index for index, _ in members],
                     flags=[_hyperscan_flags()] * len(members))
    return database


def _cache_dirs() -> list[str]:
    import tempfile  # here, not at import: the API handler's cold import stays lean

    return [COMPILED_DIR, os.path.join(tempfile.gettempdir(), "crossover-screening")]


def load_or_compile(members: list[tuple[int, str]]):  # noqa: ANN202
    """The shipped or cached database for these rules; compiled (about a second) and cached if none."""
    import hyperscan

    name = f"{database_key(members)}.hsdb"
    for blob in cached(name):
        try:
            return hyperscan.loadb(blob, hyperscan.HS_MODE_BLOCK)
        except Exception:  # noqa: BLE001  corrupt or from another build: never fatal
            continue
    database = _compile(members)
    store_cached(name, hyperscan.dumpb(database))
    return database


def cached(name: str) -> Iterator[bytes]:
    """The bytes of each copy of the build artefact `name` found, shipped copy first, then the process's own cache."""
    for folder in _cache_dirs():
        try:
            with open(os.path.join(folder, name), "rb") as handle:
                blob = handle.read()
        except OSError:  # absent or unreadable: never fatal
            continue
        yield blob


def store_cached(name: str, blob: bytes) -> None:
    """Keep a build artefact where the next process finds it: beside the rules, else (read-only there, as in a
    Lambda's code directory) in the temp dir, else nowhere."""
    import tempfile

    for folder in _cache_dirs():
        try:
            os.makedirs(folder, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
            with os.fdopen(handle, "wb") as out:
                out.write(blob)
            os.chmod(temporary, 0o644)  # mkstemp's 0600 would be unreadable to the Lambda's user once shipped
            os.replace(temporary, os.path.join(folder, name))  # atomic: a reader never sees half a file
            return
        except OSError:
            continue  # read-only (a Lambda's code directory): try the temp dir; failing that, no cache


def matcher_for(rules: Iterable[RulePattern], engine: str | None = None) -> Matcher:
    """Hyperscan where it is installed (x86-64), else RE2. `engine` ("hyperscan" | "re2") forces one."""
    rules = list(rules)
    engine = engine or os.environ.get("SCREEN_MATCHER")
    if engine in (None, "", "hyperscan"):
        try:
            return HyperscanMatcher(rules)
        except ImportError:
            if engine == "hyperscan":
                raise
    return Re2Matcher(rules)


def build(folder: str = COMPILED_DIR) -> list[str]:
    """Compile the shipped rule packs' databases, and the normaliser's, into `folder` (what `make package` ships), with
    the rules built from the packs (core.load_rules). The rules are written first: they are shipped where Hyperscan is
    not installed too (ImportError then, after them)."""
    from typing import get_args

    from .core import BUILT_RULES_RECORD, Role, build_rules, rule_patterns, rules_digest_name, rules_for, rules_json
    from .normalize import PAYLOAD_HINT_SETS

    os.makedirs(folder, exist_ok=True)
    name = rules_digest_name()
    written = [os.path.join(folder, name), os.path.join(folder, BUILT_RULES_RECORD)]
    for path, blob in zip(written, (rules_json(build_rules()), name.encode())):  # the rules, then the name they were built as
        with open(path, "wb") as out:
            out.write(blob)
        os.chmod(path, 0o644)
    import hyperscan

    databases = []
    for role in get_args(Role):  # each role's rules are one database per view kind (core.rules_for)
        rules = rule_patterns(rules_for(role))
        databases += [[(index, rule.regex) for index, rule in enumerate(rules) if kind in rule.views]
                      for kind in sorted({kind for rule in rules for kind in rule.views})]
    for members in databases + [list(enumerate(hints)) for hints in PAYLOAD_HINT_SETS]:  # the rules' per view kind, the normaliser's tests
        path = os.path.join(folder, f"{database_key(members)}.hsdb")
        if not os.path.exists(path):
            with open(path, "wb") as out:
                out.write(hyperscan.dumpb(_compile(members)))
        os.chmod(path, 0o644)  # readable by the Lambda's user, whoever wrote it
        written.append(path)
    for stale in set(os.listdir(folder)) - {os.path.basename(path) for path in written}:
        if stale.endswith(".hsdb") or (stale.startswith("rules-") and stale.endswith(".json")):
            os.remove(os.path.join(folder, stale))
    return written


if __name__ == "__main__":
    import sys

    try:
        for path in build():
            print(path)
    except ImportError:  # no Hyperscan here: the built rules are written, and RE2 needs no database
        print("hyperscan is not installed: only the built rules were written", file=sys.stderr)
