"""What a cold start imports (issue 18: import + first invoke <= 500 ms, benchmarks/cold_start_zip.py).

Each check runs in a fresh interpreter, since this test process has imported everything already.
Heavy modules that the common path does not need stay out of it; the paths that need them still work.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fresh(code: str) -> dict:
    """Run `code` in a new interpreter (this tree first on sys.path); it prints one JSON line."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_an_invoke_without_client_tools_does_not_import_jsonschema():
    found = fresh("import json, sys\n"
                  "from chalicelib.agent.client_tools import compile_client_tools\n"
                  "result = compile_client_tools([], set())\n"
                  "print(json.dumps({'result': result, 'jsonschema': 'jsonschema' in sys.modules}))")
    assert found == {"result": [[], {}], "jsonschema": False}


def test_declared_client_tools_are_still_checked_against_json_schema():
    found = fresh("import json, sys\n"
                  "from chalicelib.agent.client_tools import compile_client_tools\n"
                  "from chalicelib.errors import ValidationFailed\n"
                  "specs, checks = compile_client_tools([{'name': 'f', 'parameters': {'type': 'object', 'properties': {'n': {'type': 'integer'}}}}], set())\n"
                  "try:\n"
                  "    compile_client_tools([{'name': 'g', 'parameters': {'type': 'object', 'properties': {'n': {'type': 12}}}}], set())\n"
                  "    refused = False\n"
                  "except ValidationFailed:\n"
                  "    refused = True\n"
                  "print(json.dumps({'specs': len(specs), 'refused': refused, 'bad_call': checks['f']('f', {'n': 'x'}) is not None}))")
    assert found == {"specs": 1, "refused": True, "bad_call": True}


def test_import_app_defers_building_the_models_the_first_invoke_does_not_use():
    found = fresh("import json, app, pydantic\n"
                  "from chalicelib.api_schemas import InvokeRequest\n"
                  "from chalicelib.chat_completions import ChatCompletionRequest\n"
                  "def walk(c):\n"
                  "    for s in c.__subclasses__():\n"
                  "        yield s\n"
                  "        yield from walk(s)\n"
                  "ours = [m for m in walk(pydantic.BaseModel) if m.__module__.startswith('chalicelib')]\n"
                  "built = sorted(m.__qualname__ for m in ours if m.__pydantic_complete__)\n"
                  "InvokeRequest.model_validate({'prompt': 'hi'})\n"
                  "ChatCompletionRequest.model_validate({'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}]})\n"
                  "print(json.dumps({'models': len(ours), 'built': built, 'invoke_built': InvokeRequest.__pydantic_complete__}))")
    assert found["models"] > 50
    assert len(found["built"]) < 10, found["built"]  # the few outside chalicelib/basemodel.py
    assert found["invoke_built"] is True  # built on first use, and validates


# What the first POST /v1/invoke never needs (benchmarks/cold_start_zip.py runs it from the zips): the other
# capabilities' handlers and models, OpenAPI, reports, break-even and recommendation, registered tools' targets,
# the self-hosted backend. Each loads when its route or event is first asked for (chalicelib/operation.handler,
# imports inside functions), so no Lambda's cold start pays for them.
NOT_FOR_THE_FIRST_INVOKE = (
    "chalicelib.chat_completions", "chalicelib.openapi", "chalicelib.uploads", "chalicelib.storage", "chalicelib.events",
    "chalicelib.jobs", "chalicelib.jobs.service", "chalicelib.jobs.models", "chalicelib.conversations.view",
    "chalicelib.registry.api", "chalicelib.registry.agents", "chalicelib.registry.schemas", "chalicelib.registry.targets",
    "chalicelib.netguard", "chalicelib.meter.recommendation", "chalicelib.meter.breakeven", "chalicelib.meter.report",
    "chalicelib.meter.service", "chalicelib.meter.render", "chalicelib.meter.planning", "chalicelib.models.self_hosted",
    "chalicelib.models.openai_compat", "chalicelib.screening.managed", "chalicelib.cli", "jsonschema", "mcp",
)


def test_import_app_loads_nothing_the_first_invoke_does_not_need():
    found = fresh("import json, sys\n"
                  "import app\n"
                  f"print(json.dumps(sorted(m for m in {NOT_FOR_THE_FIRST_INVOKE!r} if m in sys.modules)))")
    assert found == []


def test_the_lazily_named_handlers_still_answer_their_routes():
    """The routes whose handlers load on first call: each resolves to a function of the module it names."""
    found = fresh("import json, importlib\n"
                  "import app\n"
                  "from chalicelib.routes import all_operations\n"
                  "lazy = [op for op in all_operations() if op.handler.__qualname__.startswith('chalicelib.')]\n"
                  "resolved = [callable(getattr(importlib.import_module(op.handler.__qualname__.rsplit('.', 1)[0]),\n"
                  "                             op.handler.__qualname__.rsplit('.', 1)[1])) for op in lazy]\n"
                  "print(json.dumps({'lazy': len(lazy), 'resolved': all(resolved)}))")
    assert found == {"lazy": 9, "resolved": True}
