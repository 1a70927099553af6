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
_session: Any = None


def session() -> Any:
    """The process's one boto3 Session. Every client comes from it: a new Session re-reads botocore's
    endpoint and service data (tens of ms each on a cold start), and one credential chain is resolved once."""
    global _session
    if _session is None:
        with _lock:
            if _session is None:
                import boto3

                _session = boto3.session.Session()
    return _session


def client(service: str, config: "Config | None" = None) -> Any:
    """A cached boto3 client from the shared session. Pass `config` for per-service retry/timeouts.

    boto3 is imported here, on first use, not at module import: it costs ~150 ms (s3transfer),
    and routes such as /v1/health never need it.
    """
    key = (service, id(config) if config is not None else None)
    found = _clients.get(key)
    if found is not None:
        return found
    shared = session()
    from botocore.exceptions import UnknownServiceError  # loaded with boto3 already

    with _lock:  # creating clients from one Session is not thread-safe
        found = _clients.get(key)
        if found is None:
            try:
                found = shared.client(service, config=config)
            except UnknownServiceError as exc:
                raise ServiceNotPackaged(service) from exc
            _clients[key] = found
        return found


class ServiceNotPackaged(RuntimeError):
    """The layer ships botocore data only for the services the code names (deploy/botocore_data.py)."""

    def __init__(self, service: str) -> None:
        super().__init__(f"botocore has no data for {service!r}: not a service name, or not in this deployment's layer, which "
                         "keeps only the services the code names in a client(...) call (deploy/botocore_data.py): name it literally and repackage")


def error_code(exc: BaseException | None) -> str:
    """The AWS error code of a botocore ClientError ("ConditionalCheckFailedException", "NoSuchKey", ...);
    "" for anything else, so callers can test it without first checking the exception's type."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return ""
    return str(response.get("Error", {}).get("Code") or "")


def reset_clients() -> None:
    """Forget cached clients and the session (tests switch endpoints and credentials between cases)."""
    global _session
    with _lock:
        _clients.clear()
        _session = None
