"""Idempotency keys on mutating entry points, on Powertools Idempotency (DynamoDB persistence).

The key is scoped by tenant, so two tenants can use the same Idempotency-Key safely; the request
body's hash is the validated payload, so reusing a key with another body is refused.
"""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any, Callable

from .errors import IdempotencyConflict, IdempotencyInProgress, ValidationFailed

IDEMPOTENCY_HEADER = "idempotency-key"
_MAX_KEY_CHARS = 255
_lambda_context: Any = None


def use_lambda_context(context: Any) -> None:
    """The current invocation's Lambda context. With it, an in-progress key expires when the function
    would have timed out; without it, an invocation that dies mid-request would hold its key "in
    progress" (409 to every retry) until the record's TTL."""
    global _lambda_context
    _lambda_context = context if callable(getattr(context, "get_remaining_time_in_millis", None)) else None


def lambda_remaining_s() -> float | None:
    """Seconds the current invocation has left (None outside a Lambda context)."""
    return _lambda_context.get_remaining_time_in_millis() / 1000 if _lambda_context is not None else None


def body_digest(body: Any) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


@lru_cache(maxsize=4)
def _idempotent_runner(table_name: str, ttl_s: int) -> tuple[Callable[..., dict[str, Any]], Any]:
    # Built on first use, not at import: the persistence layer imports boto3.
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer, IdempotencyConfig, idempotent_function

    from . import aws

    # Our client (the shared session's), not one Powertools would build from a session of its own.
    persistence = DynamoDBPersistenceLayer(table_name=table_name, boto3_client=aws.client("dynamodb"))
    config = IdempotencyConfig(
        event_key_jmespath="key",
        payload_validation_jmespath="payload",
        raise_on_no_idempotency_key=True,
        expires_after_seconds=ttl_s,
    )

    @idempotent_function(data_keyword_argument="data", persistence_store=persistence, config=config)
    def run(data: dict[str, Any], work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        return work()

    return run, config


def run_once(
    table_name: str,
    ttl_s: int,
    scope: str,
    key: str | None,
    payload: Any,
    work: Callable[[], dict[str, Any]],
) -> dict[str, Any]:
    """Run `work` once per (scope, key); a replay returns the stored result. Without a key, just run."""
    if not key:
        return work()
    if len(key) > _MAX_KEY_CHARS:
        raise ValidationFailed(f"Idempotency-Key longer than {_MAX_KEY_CHARS} characters.", {"field": "Idempotency-Key"})
    from aws_lambda_powertools.utilities.idempotency.exceptions import (
        IdempotencyAlreadyInProgressError,
        IdempotencyValidationError,
    )

    data = {"key": f"{scope}#{key}", "payload": body_digest(payload)}
    run, config = _idempotent_runner(table_name, ttl_s)
    if _lambda_context is not None:
        config.register_lambda_context(_lambda_context)
    try:
        return run(data=data, work=work)
    except IdempotencyValidationError as exc:
        raise IdempotencyConflict(
            "This Idempotency-Key was already used with a different request body.", {"idempotency_key": key}
        ) from exc
    except IdempotencyAlreadyInProgressError as exc:
        raise IdempotencyInProgress(
            "A request with this Idempotency-Key is still in progress; retry shortly.", {"idempotency_key": key},
            headers={"Retry-After": "1"},
        ) from exc


def stable_request_id(scope: str, key: str) -> str:
    """Request id derived from the idempotency key, so even a replay past the TTL meters once."""
    return "req-" + hashlib.sha256(f"{scope}#{key}".encode()).hexdigest()[:32]
