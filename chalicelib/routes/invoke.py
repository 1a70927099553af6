"""Running agents: POST /v1/invoke, a named agent's invoke, and the OpenAI-compatible chat completions and models."""
from __future__ import annotations

from .. import api
from ..operation import IDEMPOTENCY_KEY, INVOKE_ERRORS, AUTHENTICATED, Operation, blueprint, handler, path_parameter
from ..registry import NAME_PATTERN

OPERATIONS = (
    Operation("invoke", "POST", "/v1/invoke", api.invoke, 200, "InvokeResponse", "The agent's answer", INVOKE_ERRORS,
              body="InvokeRequest", parameters=(IDEMPOTENCY_KEY,)),
    Operation("invokeAgent", "POST", "/v1/agents/{name}/invoke", handler("chalicelib.registry.api", "invoke_agent"), 200, "InvokeResponse",
              "The agent's answer (an /v1/invoke body; system, model and tools come from the agent)", INVOKE_ERRORS,
              body="InvokeRequest", parameters=(path_parameter("name", NAME_PATTERN), IDEMPOTENCY_KEY)),
    # OpenAI-compatible: errors in OpenAI's shape, so its SDKs raise their usual exceptions.
    Operation("createChatCompletion", "POST", "/v1/chat/completions", api.chat_completions, 200, "ChatCompletion",
              "OpenAI-compatible completion (text/event-stream chunks when stream is true)",
              (400, *AUTHENTICATED, 402, 409, 422, 429, 502, 504), body="ChatCompletionRequest", parameters=(IDEMPOTENCY_KEY,),
              openai=True, streams=True),
    Operation("listModels", "GET", "/v1/models", api.list_models, 200, "ModelList", "Models and aliases (OpenAI-compatible)",
              AUTHENTICATED, openai=True),
)
routes = blueprint(__name__, OPERATIONS)
