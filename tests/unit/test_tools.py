from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import BaseModel, ValidationError

from chalicelib.agent.builtin_tools import evaluate_arithmetic
from chalicelib.agent.tools import REGISTRY, ToolRegistry, tool


@pytest.mark.parametrize(("expression", "expected"), [
    ("1+2*3", Decimal(7)), ("(2+3)*4", Decimal(20)), ("7/2", Decimal("3.5")), ("-3**2", Decimal(-9)),
    ("0.1+0.2", Decimal("0.3")), ("17*23", Decimal(391)), ("10//3", Decimal(3)), ("10%4", Decimal(2)),
])
def test_calculator_is_exact(expression, expected):
    assert evaluate_arithmetic(expression) == expected


@pytest.mark.parametrize("expression", [
    "__import__('os').system('id')", "open('/etc/passwd')", "a+1", "[1,2]", "2**100000", "1/0", "x" * 300, "True+1", "'a'*3",
])
def test_calculator_refuses_anything_but_arithmetic(expression):
    with pytest.raises((ValueError, SyntaxError)):
        evaluate_arithmetic(expression)


def test_builtin_tools_produce_converse_tool_specs():
    specs = {entry["toolSpec"]["name"]: entry["toolSpec"] for entry in REGISTRY.tool_specs(["calculator", "clock"])}
    assert specs["calculator"]["inputSchema"]["json"]["required"] == ["expression"]
    assert specs["clock"]["inputSchema"]["json"]["properties"]["timezone"]["default"] == "UTC"


def test_clock_answers_in_the_requested_zone():
    result = REGISTRY.get("clock").run({"timezone": "America/Sao_Paulo"})
    assert result["iso"].endswith("-03:00")


def test_tool_arguments_are_validated_by_the_input_model():
    with pytest.raises(ValidationError):
        REGISTRY.get("calculator").run({"expr": "1+1"})


class EchoInput(BaseModel):
    text: str


def test_registering_a_tool_needs_a_pydantic_argument():
    registry = ToolRegistry()

    @tool(name="echo", description="Echo", registry=registry)
    def echo(args: EchoInput) -> str:
        return args.text

    assert registry.get("echo").run({"text": "hi"}) == "hi"
    with pytest.raises(TypeError):
        @tool(name="bad", description="Bad", registry=registry)
        def bad(text: str) -> str:
            return text
    with pytest.raises(ValueError):
        tool(name="echo", description="again", registry=registry)(echo)
