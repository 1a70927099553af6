"""GET /v1/health and GET /v1/openapi.json: public, no key."""
from __future__ import annotations

from .. import api
from ..operation import Operation, blueprint

OPERATIONS = (
    Operation("health", "GET", "/v1/health", api.health, 200, "HealthResponse", "Service is up", role=None),
    Operation("openapi", "GET", "/v1/openapi.json", api.openapi, 200, "OpenApiDocument", "This document", role=None),
)
routes = blueprint(__name__, OPERATIONS)
