"""Tool registry. A tool is a typed function plus a pydantic input model.

Adding a tool:

    class WeatherInput(BaseModel):
        city: str = Field(description="City name")

    @tool(name="weather", description="Current weather for a city")
    def weather(args: WeatherInput) -> dict:
        return {"city": args.city, "temp_c": 21}

The registry turns the input model into the Converse `toolSpec` JSON schema and validates
the model's arguments with the same model before the function runs.
"""
from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from typing import Any, Callable, get_type_hints

from pydantic import BaseModel


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_model: type[BaseModel]
    function: Callable[[Any], Any]

    def tool_spec(self) -> dict[str, Any]:
        schema = self.input_model.model_json_schema()
        schema.pop("title", None)
        return {"toolSpec": {"name": self.name, "description": self.description, "inputSchema": {"json": schema}}}

    def run(self, raw_input: Any) -> Any:
        """Validate the model's arguments and run. Raises pydantic.ValidationError on bad input."""
        return self.function(self.input_model.model_validate(raw_input))


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def register(self, tool_: Tool) -> Tool:
        if tool_.name in self._tools:
            raise ValueError(f"tool {tool_.name!r} is already registered")
        self._tools[tool_.name] = tool_
        return tool_

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def tool_specs(self, names: list[str]) -> list[dict[str, Any]]:
        """Converse `toolSpec` entries for the named tools (callers validate names first)."""
        return [self._tools[name].tool_spec() for name in names]

    def executor(self, names: list[str]) -> Callable[[str, Any], Any]:
        """The agent loop's executor for the named tools: any other name is refused, not run."""
        from .loop import ToolNotAvailable

        allowed = set(names)

        def execute(name: str, raw_input: Any) -> Any:
            tool_ = self._tools.get(name) if name in allowed else None
            if tool_ is None:
                raise ToolNotAvailable(f"tool {name!r} is not available to this request")
            return tool_.run(raw_input)

        return execute


REGISTRY = ToolRegistry()


def tool(name: str, description: str, registry: ToolRegistry = REGISTRY) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Register `function(args: InputModel)` as a tool; the input model comes from the type hint."""

    def decorate(function: Callable[[Any], Any]) -> Callable[[Any], Any]:
        params = list(inspect.signature(function).parameters)
        if len(params) != 1:
            raise TypeError(f"tool {name!r} must take exactly one argument (its input model)")
        try:
            input_model = get_type_hints(function).get(params[0])
        except NameError as exc:  # an input model defined inside a function can't be resolved
            raise TypeError(f"tool {name!r}: define its input model at module level ({exc})") from exc
        if not (isinstance(input_model, type) and issubclass(input_model, BaseModel)):
            raise TypeError(f"tool {name!r}: annotate its argument with a pydantic model")
        registry.register(Tool(name=name, description=description, input_model=input_model, function=function))
        return function

    return decorate


def tool_spec_text(spec: dict[str, Any]) -> str:
    """What the model reads of a Converse tool spec: its description, and its input schema (property
    descriptions, enums). What screening reads of a declared or registered tool."""
    tool = spec["toolSpec"]
    return tool.get("description", "") + "\n" + json.dumps(tool.get("inputSchema", {}), ensure_ascii=False)
