"""Each HTTP operation is declared once: the declarations, the routes Chalice serves and the OpenAPI paths agree."""
from __future__ import annotations

from collections import Counter

from chalicelib.operation import HTTP_METHODS, Operation
from chalicelib.openapi import describe_paths, openapi_document
from chalicelib.routes import all_operations


def declared() -> dict[tuple[str, str], Operation]:
    operations = all_operations()
    keys = Counter((operation.path, operation.method) for operation in operations)
    assert [key for key, count in keys.items() if count > 1] == []
    assert len({operation.operation_id for operation in operations}) == len(operations)
    return {(operation.path, operation.method): operation for operation in operations}


def test_every_served_route_is_a_declared_operation_and_every_declaration_is_served():
    from app import app

    served = {(path, method): entry.view_name for path, entries in app.routes.items() for method, entry in entries.items()
              if entry.view_name != "method_not_allowed"}
    assert served == {key: operation.operation_id for key, operation in declared().items()}


def test_every_other_method_on_a_known_path_is_answered_by_the_405_handler():
    from app import app

    for path, entries in app.routes.items():
        assert set(entries) == set(HTTP_METHODS), path
        own = {method for method, entry in entries.items() if entry.view_name != "method_not_allowed"}
        assert own == {operation.method for operation in all_operations() if operation.path == path}, path


def test_the_openapi_paths_are_the_declarations_and_every_model_they_name_is_a_component():
    document = openapi_document()
    assert document["paths"] == describe_paths(all_operations())
    assert {(path, method.upper()) for path, methods in document["paths"].items() for method in methods} == set(declared())
    components = document["components"]["schemas"]
    named = {operation.ok_model for operation in all_operations()} | {operation.body for operation in all_operations() if operation.body}
    assert named - set(components) == set()


def test_public_operations_have_no_security_and_the_openai_ones_accept_a_bearer_key():
    paths = openapi_document()["paths"]
    for (path, method), operation in declared().items():
        described = paths[path][method.lower()]
        if operation.role is None:
            assert described["security"] == [] and not any(status in described["responses"] for status in ("401", "403")), path
        else:
            assert {"ApiKey": []} in described["security"] and "401" in described["responses"], path
        assert ({"Bearer": []} in described["security"]) == (operation.openai and operation.role is not None), path
