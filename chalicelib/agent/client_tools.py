"""Client tools (function calling): tools the caller declares with a JSON Schema and runs itself.

The declared schema is checked when the request arrives (400 if it is not a valid JSON Schema), and
every call the model makes is validated against it before it reaches the caller; an invalid call
goes back to the model as an error result instead (the loop in chalicelib/agent/loop.py).
"""
from __future__ import annotations

from typing import Any, Callable

from ..errors import ValidationFailed

_MAX_REASON_CHARS = 300


def compile_client_tools(tools: list[dict[str, Any]], reserved: set[str]) -> tuple[list[dict[str, Any]], dict[str, Callable[[str, Any], str | None]]]:
    """Declared client tools ({name, description, parameters}) -> Converse tool specs and input checks."""
    if not tools:  # most invokes declare none: jsonschema's import (~60 ms) stays off their cold start
        return [], {}
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    specs: list[dict[str, Any]] = []
    checks: dict[str, Callable[[str, Any], str | None]] = {}
    for index, declared in enumerate(tools):
        name, schema = declared["name"], declared.get("parameters") or {"type": "object", "properties": {}}
        if name in reserved or name in checks:
            raise ValidationFailed(f"Tool name {name!r} is declared twice or taken by a built-in tool.", {"field": f"tools.{index}.name"})
        if schema.get("type", "object") != "object":
            raise ValidationFailed("A tool's parameters must be a JSON Schema of type object.", {"field": f"tools.{index}.parameters"})
        validator_class = validator_for(schema, default=Draft202012Validator)  # no $schema, or an unknown one: the latest draft
        try:
            validator_class.check_schema(schema)
        except SchemaError as exc:
            raise ValidationFailed(f"Tool {name!r}: parameters is not a valid JSON Schema: {exc.message[:_MAX_REASON_CHARS]}",
                                   {"field": f"tools.{index}.parameters"}) from exc
        checks[name] = _input_check(validator_class(schema))
        specs.append({"toolSpec": {"name": name, "description": declared.get("description") or name,
                                   "inputSchema": {"json": {"type": "object", **schema}}}})
    return specs, checks


def _input_check(validator: Any) -> Callable[[str, Any], str | None]:
    def check(_name: str, value: Any) -> str | None:
        try:
            errors = sorted(validator.iter_errors(value if value is not None else {}), key=lambda e: list(e.absolute_path))
        except Exception as exc:  # e.g. a $ref that resolves nowhere (remote references are never fetched)
            return f"the tool's schema could not be evaluated ({exc.__class__.__name__})"
        if not errors:
            return None
        first = errors[0]
        where = "/".join(str(part) for part in first.absolute_path) or "(root)"
        return f"{where}: {first.message}"[:_MAX_REASON_CHARS] + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")

    return check
