"""Built-in tools. Importing this module registers them."""
from __future__ import annotations

import ast
import operator
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field

from .tools import tool

_BINARY_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY_OPERATORS: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
# Bounds that keep a hostile expression from burning the Lambda's CPU or memory.
_MAX_EXPRESSION_CHARS = 256
_MAX_EXPONENT = 1000
_MAX_NODES = 100


class CalculatorInput(BaseModel):
    expression: str = Field(description="Arithmetic expression with + - * / // % ** and parentheses, e.g. '(2+3)*4'")


def evaluate_arithmetic(expression: str) -> Decimal:
    """Evaluate arithmetic exactly (Decimal) by walking the AST; names, calls and attributes are refused."""
    if len(expression) > _MAX_EXPRESSION_CHARS:
        raise ValueError(f"expression longer than {_MAX_EXPRESSION_CHARS} characters")
    tree = ast.parse(expression, mode="eval")
    if sum(1 for _ in ast.walk(tree)) > _MAX_NODES:
        raise ValueError("expression too complex")

    def walk(node: ast.AST) -> Decimal:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return Decimal(str(node.value))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY_OPERATORS:
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
                raise ValueError(f"exponent larger than {_MAX_EXPONENT}")
            return _BINARY_OPERATORS[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY_OPERATORS:
            return _UNARY_OPERATORS[type(node.op)](walk(node.operand))
        raise ValueError(f"unsupported element: {type(node).__name__}")

    try:
        return walk(tree)
    except (ZeroDivisionError, InvalidOperation) as exc:
        raise ValueError(f"arithmetic error: {exc.__class__.__name__}") from exc


@tool(name="calculator", description="Evaluate an arithmetic expression exactly and return the result.")
def calculator(args: CalculatorInput) -> dict[str, str]:
    result = evaluate_arithmetic(args.expression)
    return {"expression": args.expression, "result": format(result.normalize(), "f") if result == result.to_integral() else str(result)}


class ClockInput(BaseModel):
    timezone: str = Field(default="UTC", description="IANA time zone name, e.g. 'America/Sao_Paulo'")


@tool(name="clock", description="Current date and time in an IANA time zone.")
def clock(args: ClockInput) -> dict[str, str]:
    try:
        zone = ZoneInfo(args.timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {args.timezone!r}") from exc
    now = datetime.now(zone)
    return {"timezone": args.timezone, "iso": now.isoformat(timespec="seconds"), "weekday": now.strftime("%A")}
