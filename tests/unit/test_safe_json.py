"""The untrusted-JSON parser: whatever the bytes, the only exception is our 400 ValidationFailed."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from chalicelib import safe_json
from chalicelib.api_schemas import InvokeRequest
from chalicelib.errors import CrossoverError, ValidationFailed
from chalicelib.http import ApiRequest, parse_body
from tests.hostile_json import deep_nesting, hostile_bytes, hostile_texts, huge_numbers, json_values

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def strict_depth(value, depth=1):
    if isinstance(value, dict):
        return max([depth, *(strict_depth(v, depth + 1) for v in value.values())])
    if isinstance(value, list):
        return max([depth, *(strict_depth(v, depth + 1) for v in value)])
    return 0


def parsed_or_rejected(data):
    """Parse; a rejection must be our 4xx with a message. Any other exception fails the test by escaping."""
    try:
        value = safe_json.loads(data)
    except ValidationFailed as exc:
        assert exc.status == 400 and exc.code == "validation_error" and exc.message
        return None
    # What gets through is strict JSON: re-encodable as UTF-8, finite, within the depth limit.
    json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    assert strict_depth(value) <= safe_json.MAX_DEPTH
    return value


@FUZZ
@given(hostile_bytes)
def test_no_exception_but_validation_failed_escapes_the_parser_for_any_bytes(data):
    parsed_or_rejected(data)


@FUZZ
@given(hostile_texts)
def test_no_exception_but_validation_failed_escapes_the_parser_for_any_text(text):
    parsed_or_rejected(text)


@settings(max_examples=200, deadline=None)
@given(st.one_of(huge_numbers, deep_nesting))
def test_huge_numbers_and_deep_nesting_are_refused_or_bounded(text):
    parsed_or_rejected(text.encode())


@FUZZ
@given(hostile_bytes, st.sampled_from(["application/json", "application/json; charset=utf-8", "text/plain", ""]))
def test_parse_body_raises_only_crossover_4xx(body, content_type):
    request = ApiRequest({"content-type": content_type}, body, "trace")
    try:
        parse_body(request, InvokeRequest)
    except CrossoverError as exc:
        assert 400 <= exc.status < 500


@settings(max_examples=300, deadline=None)
@given(json_values.filter(lambda v: strict_depth(v) <= safe_json.MAX_DEPTH), st.booleans())
def test_strict_json_round_trips_unchanged(value, ascii_only):
    """Not over-strict: anything json.dumps writes (finite numbers, any valid text) parses back equal."""
    assert safe_json.loads(json.dumps(value, ensure_ascii=ascii_only).encode()) == value


@pytest.mark.parametrize(("data", "fragment"), [
    (b'{"n": 1' + b"0" * 5000 + b"}", "too many digits"),
    (b'{"n": NaN}', "NaN"),
    (b'{"n": Infinity}', "Infinity"),
    (b'{"n": 1e400}', "out of range"),
    ('{"a": 1}'.encode("utf-16"), "UTF-8"),
    (b"[" * 50_000 + b"]" * 50_000, "nested deeper"),
    (b'{"a": ' + b"[" * 33 + b"]" * 33 + b"}", "nested deeper"),
    (b'{"a": "\\udc00"}', "surrogate"),
])
def test_each_hostile_case_says_what_to_fix(data, fragment):
    with pytest.raises(ValidationFailed, match=fragment):
        safe_json.loads(data)


def test_brackets_inside_strings_do_not_count_as_nesting_and_a_utf8_bom_is_ignored():
    text = "[" * 100
    assert safe_json.loads(("\ufeff" + json.dumps({"prompt": text})).encode()) == {"prompt": text}
