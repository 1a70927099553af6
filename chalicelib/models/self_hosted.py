"""Self-hosted model adapter: an OpenAI-compatible server (vLLM in production, llama.cpp locally)."""
from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from typing import Any

from ..errors import ModelInputRejected, ModelTimeout, ModelUnavailable, Throttled
from ..core import Usage
from . import ModelTurn
from .openai_compat import to_converse_response, to_openai_request


class SelfHostedBackend:
    name = "self_hosted"

    def __init__(self, endpoint: str, timeout_s: float, served_model: str) -> None:
        self._endpoint = endpoint.rstrip("/")
        self._timeout = timeout_s
        self.served_model = served_model

    def converse(self, model_id: str, messages: list[dict[str, Any]], system: str | None,
                 tool_config: dict[str, Any] | None, max_tokens: int, timeout_s: float | None = None,
                 inference: dict[str, Any] | None = None) -> ModelTurn:
        body: dict[str, Any] = {"messages": messages, "inferenceConfig": {**(inference or {}), "maxTokens": max_tokens}}
        if system:
            body["system"] = [{"text": system}]
        if tool_config:
            body["toolConfig"] = tool_config
        request = urllib.request.Request(f"{self._endpoint}/v1/chat/completions", data=json.dumps(to_openai_request(model_id, body)).encode(),
                                         headers={"Content-Type": "application/json"})
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=self._timeout if timeout_s is None else max(0.1, min(self._timeout, timeout_s))) as reply:
                completion = json.load(reply)
        except urllib.error.HTTPError as exc:
            if exc.code == 429:
                raise Throttled("The self-hosted model is overloaded; retry later.", {"backend": self.name}, headers={"Retry-After": "2"}) from exc
            if exc.code in (400, 413, 422):
                raise ModelInputRejected(f"The self-hosted model rejected the request (HTTP {exc.code}).", {"backend": self.name}) from exc
            raise ModelUnavailable(f"The self-hosted model failed (HTTP {exc.code}).", {"backend": self.name}) from exc
        except (TimeoutError, socket.timeout) as exc:
            raise ModelTimeout("The self-hosted model took too long to answer.", {"backend": self.name}) from exc
        except (urllib.error.URLError, ConnectionError, ValueError) as exc:
            if isinstance(getattr(exc, "reason", None), (TimeoutError, socket.timeout)):
                raise ModelTimeout("The self-hosted model took too long to answer.", {"backend": self.name}) from exc
            raise ModelUnavailable("Could not reach the self-hosted model.", {"backend": self.name}) from exc
        latency_ms = (time.perf_counter() - started) * 1000
        converse = to_converse_response(completion, int(latency_ms))
        usage = converse["usage"]
        return ModelTurn(converse["output"]["message"]["content"], converse["stopReason"],
                         Usage(input_tokens=usage["inputTokens"], output_tokens=usage["outputTokens"]), latency_ms)
