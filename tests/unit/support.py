"""Helpers shared by the unit tests of the agent loop and the request deadline."""
from __future__ import annotations

import time

from pydantic import BaseModel

from chalicelib.agent.tools import ToolRegistry, tool
from chalicelib.core import Usage
from chalicelib.models import ModelTurn


def tool_turn(*uses):
    return ModelTurn([{"toolUse": {"toolUseId": f"id-{name}", "name": name, "input": args}} for name, args in uses], "tool_use",
                     Usage(input_tokens=100, output_tokens=10))


class SleepInput(BaseModel):
    seconds: float


def make_registry():
    registry = ToolRegistry()

    @tool(name="sleep", description="Sleep", registry=registry)
    def sleep(args: SleepInput) -> str:
        time.sleep(args.seconds)
        return "slept"

    return registry


USER_GO = [{"role": "user", "content": [{"text": "go"}]}]


def offer(names):
    registry = make_registry()
    return registry.tool_specs(names), registry.executor(names)
