"""One exception hierarchy; `chalicelib.http.error_response` maps it to the stable JSON error."""
from __future__ import annotations

from typing import Any


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
