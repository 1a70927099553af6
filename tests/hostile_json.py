"""Hypothesis strategies for hostile JSON input: arbitrary bytes, huge numbers, deep nesting, foreign
encodings and byte-order marks, invalid UTF-8, non-standard constants. Shared by the parser fuzz
(tests/unit/test_safe_json.py) and the event-handler fuzz (tests/integration/test_hostile_input.py)."""
from __future__ import annotations

import json

from hypothesis import strategies as st

ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "cp1252"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)

huge_numbers = st.one_of(
    st.integers(4290, 6000).map(lambda digits: "1" + "0" * digits),                          # around Python's 4,300-digit limit
    st.integers(300, 100_000).map(lambda exponent: f"1e{exponent}"),                          # overflows to inf
    st.integers(300, 100_000).map(lambda exponent: f"-1.5E-{exponent}"),                      # underflows to 0
    st.sampled_from(["NaN", "Infinity", "-Infinity", "-0", "0.0e0", "1E+2", "01", "1.", ".5", "+1", "0x10"]),
)

deep_nesting = st.tuples(st.integers(1, 3000), st.sampled_from(["[", '{"a":'])).map(
    lambda pair: pair[1] * pair[0] + "1" + ("]" if pair[1] == "[" else "}") * pair[0])


@st.composite
def _templated(draw: st.DrawFn) -> str:
    """A plausible request body with one hostile value spliced in."""
    value = draw(st.one_of(huge_numbers, deep_nesting, json_values.map(json.dumps)))
    field = draw(st.sampled_from(["prompt", "max_tokens", "tools", "request", "tenant", "type", "Records", "system"]))
    return '{"prompt": "hi", "type": "invoke", "tenant": "dev", "%s": %s}' % (field, value)


hostile_texts = st.one_of(
    _templated(),
    huge_numbers,
    deep_nesting,
    json_values.map(json.dumps),
    st.text(max_size=200),
    st.text(alphabet=st.sampled_from(list('[]{}",:0123456789.eE+-tnfrualsNIy\\u ')), max_size=200),
)


@st.composite
def _encoded(draw: st.DrawFn) -> bytes:
    text = draw(hostile_texts)
    encoding = draw(st.sampled_from(ENCODINGS))
    return text.encode(encoding, errors="replace")


@st.composite
def _mutated(draw: st.DrawFn) -> bytes:
    """Valid JSON with a few bytes overwritten (invalid UTF-8 sequences, stray controls)."""
    data = bytearray(json.dumps(draw(json_values), ensure_ascii=draw(st.booleans())).encode())
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(data)))
        data[position:position] = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xef\xbb\xbf", b"\\", b'"', b"\\ud800"]))
    return bytes(data)


hostile_bytes = st.one_of(st.binary(max_size=300), _encoded(), _mutated())
