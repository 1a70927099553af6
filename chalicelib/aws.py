"""boto3 clients, created once per process.

boto3 reads the standard SDK settings itself (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>,
AWS_REGION / AWS_DEFAULT_REGION, credentials chain), so the same code talks to AWS, to moto's
server locally, and to moto in tests. We never pass endpoint URLs by hand.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from botocore.config import Config

_lock = threading.Lock()
_clients: dict[tuple[str, Any], Any] = {}


def client(service: str, config: "Config | None" = None) -> Any:
    """A cached boto3 client. Pass `config` for per-service retry/timeouts.

    boto3 is imported here, on first use, not at module import: it costs ~150 ms (s3transfer),
    and routes such as /v1/health never need it.
    """
    key = (service, id(config) if config is not None else None)
    found = _clients.get(key)
    if found is not None:
        return found
    with _lock:
        found = _clients.get(key)
        if found is None:
            import boto3

            found = boto3.session.Session().client(service, config=config)
            _clients[key] = found
        return found


def reset_clients() -> None:
    """Forget cached clients (tests switch endpoints and credentials between cases)."""
    with _lock:
        _clients.clear()
