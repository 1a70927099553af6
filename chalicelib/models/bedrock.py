"""Amazon Bedrock Runtime Converse adapter.

Retries on throttling use botocore's own retry handler (standard mode: exponential backoff
with jitter, throttling-aware); we only translate the final outcome into our error hierarchy.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .. import aws
from ..errors import CrossoverError, ModelInputRejected, ModelTimeout, ModelUnavailable, Throttled, ValidationFailed
from ..core import Usage
from . import ModelTurn

if TYPE_CHECKING:  # botocore is imported on first use: it costs ~70 ms of cold start
    from botocore.config import Config
    from botocore.exceptions import ClientError

_THROTTLING = {"ThrottlingException", "ServiceQuotaExceededException", "TooManyRequestsException"}
_UNAVAILABLE = {
    "ServiceUnavailableException", "InternalServerException", "ModelNotReadyException",
    "ModelErrorException", "AccessDeniedException",
}
RETRY_AFTER_SECONDS = "2"


def bedrock_config(max_attempts: int, read_timeout_s: float) -> "Config":
    from botocore.config import Config

    return Config(
        retries={"mode": "standard", "total_max_attempts": max_attempts},  # attempts including the first
        read_timeout=read_timeout_s,
        connect_timeout=5,
    )


def translate_client_error(exc: "ClientError", model_id: str) -> CrossoverError:
    """Map a Bedrock error (after botocore's retries) to the API's error."""
    code = aws.error_code(exc)
    message = exc.response.get("Error", {}).get("Message", "")
    if code in _THROTTLING:
        return Throttled(
            "The model service is throttling requests; retry later.",
            {"model": model_id, "upstream_code": code},
            headers={"Retry-After": RETRY_AFTER_SECONDS},
        )
    if code == "ValidationException":
        return ModelInputRejected(f"The model rejected the request: {message}", {"model": model_id})
    if code == "ResourceNotFoundException":
        return ValidationFailed(f"Unknown or unavailable model {model_id!r}.", {"field": "model"})
    if code == "ModelTimeoutException":
        return ModelTimeout("The model took too long to answer.", {"model": model_id})
    if code in _UNAVAILABLE:
        return ModelUnavailable("The model service is unavailable.", {"model": model_id, "upstream_code": code})
    return ModelUnavailable("The model call failed.", {"model": model_id, "upstream_code": code})


def usage_from_converse(raw_usage: dict[str, Any]) -> Usage:
    return Usage(
        input_tokens=raw_usage.get("inputTokens", 0),
        output_tokens=raw_usage.get("outputTokens", 0),
        cache_read_tokens=raw_usage.get("cacheReadInputTokens", 0),
        cache_write_tokens=raw_usage.get("cacheWriteInputTokens", 0),
    )


@lru_cache(maxsize=1)
def _calls() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="converse")


class BedrockBackend:
    name = "bedrock"

    def __init__(self, runtime_client: Any) -> None:
        self._client = runtime_client

    @classmethod
    def from_settings(cls, max_attempts: int, read_timeout_s: float) -> "BedrockBackend":
        return cls(aws.client("bedrock-runtime", bedrock_config(max_attempts, read_timeout_s)))

    def _call(self, request: dict[str, Any], timeout_s: float | None) -> Any:
        """The Converse call, waited for at most `timeout_s` (the caller's time left) when given. The
        client's own read timeout and retries are per attempt, so the wait itself is bounded here; a
        call given up on finishes in the background and is dropped (the caller has already answered)."""
        if timeout_s is None:
            return self._client.converse(**request)
        future = _calls().submit(self._client.converse, **request)
        try:
            return future.result(timeout=max(0.0, timeout_s))
        except FutureTimeout:
            future.cancel()
            raise ModelTimeout("The model did not answer within the request's remaining time.", {"model": request["modelId"]}) from None

    def converse(
        self,
        model_id: str,
        messages: list[dict[str, Any]],
        system: str | None,
        tool_config: dict[str, Any] | None,
        max_tokens: int,
        timeout_s: float | None = None,
        inference: dict[str, Any] | None = None,
    ) -> ModelTurn:
        request: dict[str, Any] = {
            "modelId": model_id,
            "messages": messages,
            "inferenceConfig": {**(inference or {}), "maxTokens": max_tokens},
        }
        if system:
            request["system"] = [{"text": system}]
        if tool_config:
            request["toolConfig"] = tool_config
        from botocore.exceptions import ClientError, ConnectionError as BotoConnectionError, ReadTimeoutError

        started = time.perf_counter()
        try:
            response = self._call(request, timeout_s)
        except ClientError as exc:
            raise translate_client_error(exc, model_id) from exc
        except ReadTimeoutError as exc:
            raise ModelTimeout("The model took too long to answer.", {"model": model_id}) from exc
        except BotoConnectionError as exc:
            raise ModelUnavailable("Could not reach the model service.", {"model": model_id}) from exc
        return ModelTurn(
            content=response["output"]["message"]["content"],
            stop_reason=response["stopReason"],
            usage=usage_from_converse(response.get("usage", {})),
            latency_ms=(time.perf_counter() - started) * 1000,
        )
