"""DynamoDB item <-> Python dict, in one place (boto3's type (de)serialisers, with the number rules we need)."""
from __future__ import annotations

from decimal import Clamped, Context, Decimal, Inexact, Overflow, Rounded, Underflow
from typing import Any

# DynamoDB's number range (38 significant digits, exponents -130..126), as boto3's DYNAMODB_CONTEXT:
# a value it cannot hold exactly raises instead of being rounded (the default context would round at 28).
_CONTEXT = Context(Emin=-128, Emax=126, prec=38, traps=[Clamped, Overflow, Inexact, Rounded, Underflow])


def _to_decimal(value: Any) -> Any:
    """DynamoDB takes Decimal, not float."""
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, dict):
        return {k: _to_decimal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_decimal(v) for v in value]
    return value


def _to_plain(value: Any) -> Any:
    """Decimals back to int or float, for records that leave through the API."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_plain(v) for v in value]
    return value


def number(value: Decimal | int) -> str:
    """A DynamoDB number in plain notation with no trailing zeros ("0", never "0E-8" or "0.00000000",
    whose sums moto renders in exponent form and then refuses; str(Decimal) gives exponents below 1e-6)."""
    return format(value.normalize(_CONTEXT), "f") if isinstance(value, Decimal) else str(value)


def _plain_numbers(typed: dict[str, Any]) -> dict[str, Any]:
    """boto3's serialised value with every number written by `number`."""
    (kind, inner), = typed.items()
    if kind == "N":
        return {"N": number(Decimal(inner))}
    if kind == "NS":
        return {"NS": [number(Decimal(v)) for v in inner]}
    if kind == "M":
        return {"M": {k: _plain_numbers(v) for k, v in inner.items()}}
    if kind == "L":
        return {"L": [_plain_numbers(v) for v in inner]}
    return typed


def to_item(values: dict[str, Any]) -> dict[str, Any]:
    """A plain dict as a DynamoDB item; None values are left out."""
    return {k: to_value(v) for k, v in values.items() if v is not None}


def plain(value: Any) -> Any:
    """Decimals back to int or float (recursively), for records that leave through the API."""
    return _to_plain(value)


_serializer: Any = None
_deserializer: Any = None


def _scalar(value: Any) -> dict[str, Any] | None:
    """The common scalars typed directly (stores write several per request; boto3's general serialiser
    costs ~10 us a value); None for anything else, which boto3 types and validates."""
    kind = type(value)
    if kind is str:
        return {"S": value}
    if kind is bool:
        return {"BOOL": value}
    if kind is int and -10**38 < value < 10**38:
        return {"N": str(value)}
    if kind is Decimal and value.is_finite():
        return {"N": number(value)}  # raises decimal.Inexact past 38 digits, as boto3 does
    return None


def from_item(item: dict[str, Any], plain: bool = True) -> dict[str, Any]:
    """A DynamoDB item as a dict; numbers stay Decimal when plain=False (money sums)."""
    values = {k: _from_value(v) for k, v in item.items()}
    return _to_plain(values) if plain else values


def _from_value(typed: dict[str, Any]) -> Any:
    if "S" in typed:
        return typed["S"]
    if "N" in typed:
        return Decimal(typed["N"])
    if "BOOL" in typed:
        return typed["BOOL"]
    global _deserializer
    if _deserializer is None:
        from boto3.dynamodb.types import TypeDeserializer

        _deserializer = TypeDeserializer()
    return _deserializer.deserialize(typed)


def to_value(value: Any) -> dict[str, Any]:
    """One attribute value (for update expressions)."""
    fast = _scalar(value)
    if fast is not None:
        return fast
    global _serializer
    if _serializer is None:
        from boto3.dynamodb.types import TypeSerializer

        _serializer = TypeSerializer()
    return _plain_numbers(_serializer.serialize(_to_decimal(value)))
