"""Untrusted JSON in (HTTP bodies, SQS message bodies, S3 objects): one parser whose only failure is
ValidationFailed, whatever the bytes were.

The standard library's json raises more than JSONDecodeError on hostile input: ValueError for an
integer past Python's 4,300-digit limit, RecursionError for deep nesting; and it accepts what RFC 8259
does not (NaN, Infinity, numbers that overflow to inf, lone surrogates that later break every UTF-8
encoder). Every such case is the sender's mistake, so it is a 400 / a rejected message, never a 500.
"""
from __future__ import annotations

import json
import math
from typing import Any

from .errors import ValidationFailed

MAX_DEPTH = 32
_BOM = "\ufeff"


def loads(data: bytes | str, what: str = "Body", max_depth: int = MAX_DEPTH) -> Any:
    """Parse strict JSON (UTF-8, an optional BOM ignored as RFC 8259 §8.1 allows); raise ValidationFailed
    saying what to fix for anything else. `what` names the input in the message ("Body", "Message")."""
    if isinstance(data, (bytes, bytearray)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValidationFailed(f"{what} is not valid UTF-8 (send JSON as UTF-8).", {"position": exc.start}) from exc
    else:
        text = data
    text = text[1:] if text.startswith(_BOM) else text
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise ValidationFailed(f"{what} is not valid JSON: {exc.msg}.", {"line": exc.lineno, "column": exc.colno}) from exc
    except RecursionError as exc:
        raise ValidationFailed(f"{what}: JSON nested deeper than {max_depth} levels.", {"max_depth": max_depth}) from exc
    except ValueError as exc:  # integer past the digit limit, NaN/Infinity, a float overflowing to inf
        raise ValidationFailed(f"{what} is not valid JSON: {_number_problem(exc)}.", None) from exc
    problem = _structure_problem(value, max_depth)
    if problem:
        raise ValidationFailed(f"{what}: {problem[0]}.", problem[1])
    return value


def loads_object(data: bytes | str, what: str = "Body", max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """`loads`, requiring a JSON object at the top."""
    value = loads(data, what, max_depth)
    if not isinstance(value, dict):
        raise ValidationFailed(f"{what} must be a JSON object.", None)
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(literal: str) -> float:
    number = float(literal)
    if math.isinf(number):
        raise ValueError("number out of range")
    return number


def _number_problem(exc: ValueError) -> str:
    text = str(exc)
    if "digits" in text:  # Python's int max-str-digits limit
        return "a number has too many digits"
    if "not a JSON number" in text or "out of range" in text:
        return text
    return "a number cannot be read"


def _structure_problem(value: Any, max_depth: int) -> tuple[str, dict[str, Any] | None] | None:
    """Depth (exact: brackets inside strings do not count) and lone surrogates, in one iterative walk."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > max_depth:
                return f"JSON nested deeper than {max_depth} levels", {"max_depth": max_depth}
            stack.extend((key, depth) for key in item)
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            if depth > max_depth:
                return f"JSON nested deeper than {max_depth} levels", {"max_depth": max_depth}
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, str) and not _encodable(item):
            return "a string holds a lone UTF-16 surrogate (\\ud800-\\udfff escape without its pair)", None
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
