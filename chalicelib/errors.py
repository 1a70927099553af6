"""One exception hierarchy; `chalicelib.http.error_response` maps it to the stable JSON error."""
from __future__ import annotations

from typing import Any

from . import aws


class CrossoverError(Exception):
    """Base error. `status` is the HTTP status, `code` the stable machine-readable code."""

    status: int = 500
    code: str = "internal_error"

    def __init__(self, message: str, details: Any = None, *, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.message = message
        self.details = details
        self.headers = headers or {}

    def to_body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class ValidationFailed(CrossoverError):
    status, code = 400, "validation_error"


class PromptTooLarge(CrossoverError):
    status, code = 400, "prompt_too_large"


class ModelInputRejected(CrossoverError):
    """The model service refused the request (e.g. context window exceeded)."""

    status, code = 400, "model_input_rejected"


class Unauthenticated(CrossoverError):
    status, code = 401, "unauthenticated"


class Forbidden(CrossoverError):
    status, code = 403, "forbidden"


class PromptRejected(CrossoverError):
    status, code = 403, "prompt_rejected"


class BudgetExceeded(CrossoverError):
    status, code = 402, "budget_exceeded"


class NotFound(CrossoverError):
    status, code = 404, "not_found"


class MethodNotAllowed(CrossoverError):
    status, code = 405, "method_not_allowed"


class IdempotencyConflict(CrossoverError):
    """Same Idempotency-Key, different request body."""

    status, code = 422, "idempotency_key_reused"


class IdempotencyInProgress(CrossoverError):
    status, code = 409, "idempotency_in_progress"


class Throttled(CrossoverError):
    status, code = 429, "throttled"


class ModelUnavailable(CrossoverError):
    status, code = 502, "model_unavailable"


class ModelTimeout(CrossoverError):
    status, code = 504, "model_timeout"


class DeadlineExceeded(CrossoverError):
    """The request's own deadline (API Gateway's 29 s, the Lambda's remaining time) passed: we answer
    504 ourselves, with the steps that ran metered, instead of leaving API Gateway to cut the call."""

    status, code = 504, "deadline_exceeded"


class ServiceUnavailable(CrossoverError):
    """An AWS dependency (DynamoDB, S3, SQS, Step Functions) failed after the SDK's own retries."""

    status, code = 503, "service_unavailable"


def from_aws_failure(exc: BaseException) -> CrossoverError | None:
    """A botocore failure that is the service's fault (5xx, throttling, connection) as a retryable 503;
    None for anything else (a 4xx from AWS is our bug, not the caller's, and stays a 500)."""
    from botocore.exceptions import ClientError, ConnectionError as AwsConnectionError, HTTPClientError

    if isinstance(exc, ClientError):
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        code = aws.error_code(exc)
        if status < 500 and "Throttl" not in code and code not in ("ProvisionedThroughputExceededException", "RequestLimitExceeded", "SlowDown"):
            return None
        service = exc.operation_name
    elif isinstance(exc, (AwsConnectionError, HTTPClientError)):  # not every BotoCoreError: a bad parameter is our bug
        service, code = exc.__class__.__name__, "connection"
    else:
        return None
    return ServiceUnavailable("A backing service is unavailable; retry later with the same Idempotency-Key.",
                              {"operation": service, "reason": code}, headers={"Retry-After": "2"})
