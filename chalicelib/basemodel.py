"""pydantic's BaseModel, built on first use instead of at import.

pydantic builds each model's validator and serializer when its class is created. A cold start imports
~80 models (every route's request and response bodies, the price catalog's parts, queue events) and the
first invoke uses six of them, so building the rest at import costs tens of milliseconds of every cold
start (issue 18, benchmarks/cold_start_zip.py). With `defer_build` a model is built the first time it
validates, serializes or gives its JSON Schema; behaviour is otherwise the same. Subclasses' own
`model_config` merges with this one.
"""
from __future__ import annotations

import pydantic


class BaseModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(defer_build=True)
