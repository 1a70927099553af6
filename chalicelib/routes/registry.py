"""/v1/tools and /v1/agents: the tenant's registered tools and named agents (another tenant's item is a 404
like a missing one). The same four operations for each kind."""
from __future__ import annotations

from ..operation import AUTHENTICATED, IDEMPOTENCY_KEY, Operation, blueprint, handler, path_parameter
from ..registry import NAME_PATTERN

NAME = path_parameter("name", NAME_PATTERN)


def kind_operations(kind: str, model: str) -> tuple[Operation, ...]:
    title, items, item = kind.capitalize(), f"/v1/{kind}s", f"/v1/{kind}s/{{name}}"
    return (
        Operation(f"list{title}s", "GET", items, handler("chalicelib.registry.api", "list_items", kind), 200, f"{model}List", f"The tenant's {kind}s",
                  AUTHENTICATED),
        Operation(f"put{title}", "PUT", item, handler("chalicelib.registry.api", "put_item", kind), 200, f"{model}View",
                  f"The {kind} as stored (created or replaced)", (400, *AUTHENTICATED, 409, 422), body=f"{model}Definition",
                  parameters=(NAME, IDEMPOTENCY_KEY)),
        Operation(f"get{title}", "GET", item, handler("chalicelib.registry.api", "get_item", kind), 200, f"{model}View", f"The {kind}",
                  (400, *AUTHENTICATED, 404), parameters=(NAME,)),
        Operation(f"delete{title}", "DELETE", item, handler("chalicelib.registry.api", "delete_item", kind), 200, "Deleted", f"The {kind} was deleted",
                  (400, *AUTHENTICATED, 404, 409, 422), parameters=(NAME, IDEMPOTENCY_KEY)),
    )


OPERATIONS = (*kind_operations("tool", "Tool"), *kind_operations("agent", "Agent"))
routes = blueprint(__name__, OPERATIONS)
