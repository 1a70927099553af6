"""Botocore's service data in the layer: only the services the deployed code can create clients for.

botocore ships the models of ~450 AWS services (28 MB). The first client of a cold start lists them
all (`Loader.list_available_services` stats every service folder, once per kind of model), so every
service the code never calls costs start-up time and layer size. We keep a service's folder when:

- the code in either zip names it as the first argument (or `service_name=`) of a call to `client`,
  `_client`, `resource`, `create_client`, `create_nested_client` or `_client_creator`: our code,
  Powertools (its idempotency and parameters utilities), s3transfer, and botocore's own credential and
  token providers (sts, sso, sso-oidc, signin), so that any credential chain Lambda may hand us works;
- and our code (the function zip) never names a service it computes: such a call must take the name
  as a parameter of the function it is in (a forwarder such as `aws.client(service)`), its callers
  naming it. Anything else makes packaging refuse, since no one could tell which service to keep.

`chalicelib/aws.py` turns a trimmed service into an error that says so, and
tests/integration/test_package_bytecode.py checks the result against the template's IAM actions.

What a cold start parses is trimmed too (benchmarks/cold_start_zip.py): `endpoints.json` (1.2 MB, ~30 ms
of `json.load` on the first client) keeps the endpoints of the kept services only, and each kept
service model drops its documentation strings (read only by `help()` and botocore.docs; DynamoDB's
model parses in 1.4 ms instead of 7) and is stored as plain `.json`, which botocore's loader prefers
to `.json.gz`. Neither changes an endpoint or a shape: tests/unit/test_botocore_data.py compares both
with the originals.
"""
from __future__ import annotations

import ast
import gzip
import json
import os
import re
import zipfile
from typing import Any, Iterable

CLIENT_FACTORIES = frozenset({"client", "_client", "resource", "create_client", "create_nested_client", "_client_creator"})
# `python/lib/python3.11/site-packages/botocore/data/<service>/...` in the layer zip.
_SERVICE_FOLDER = re.compile(r"^(?P<prefix>(?:.*/)?botocore/data/)(?P<service>[^/]+)/")
# `.../botocore/data/<service>/<api version>/service-2.json[.gz]`: the model a client parses.
_SERVICE_MODEL = re.compile(r"^(?:.*/)?botocore/data/(?P<service>[^/]+)/[^/]+/service-2\.json(?:\.gz)?$")
_ENDPOINTS = re.compile(r"^(?:.*/)?botocore/data/endpoints\.json$")


class UnknownService(SystemExit):
    """Our code builds a client whose service packaging cannot know."""


def _call_name(node: ast.Call) -> str | None:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _service_argument(node: ast.Call) -> ast.expr | None:
    position = 1 if _call_name(node) == "create_nested_client" else 0  # botocore.utils.create_nested_client(session, service_name)
    if len(node.args) > position:
        return node.args[position]
    return next((keyword.value for keyword in node.keywords if keyword.arg == "service_name"), None)


class _Calls(ast.NodeVisitor):
    """Service names of client factory calls; `dynamic` holds the ones no literal names, outside forwarders."""

    def __init__(self) -> None:
        self.named: set[str] = set()
        self.dynamic: list[tuple[int, str]] = []
        self._parameters: list[set[str]] = []

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        arguments = node.args
        names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
        names += [a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None]
        self._parameters.append(set(names))
        self.generic_visit(node)
        self._parameters.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Call(self, node: ast.Call) -> None:
        if _call_name(node) in CLIENT_FACTORIES:
            argument = _service_argument(node)
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                self.named.add(argument.value)
            elif argument is not None and not (isinstance(argument, ast.Name) and self._parameters and argument.id in self._parameters[-1]):
                self.dynamic.append((node.lineno, ast.unparse(argument)))
        self.generic_visit(node)


def services_in_source(source: str, filename: str = "<source>") -> tuple[set[str], list[tuple[int, str]]]:
    """(services named by client factory calls, (line, expression) of calls whose service is computed)."""
    calls = _Calls()
    calls.visit(ast.parse(source, filename))
    return calls.named, calls.dynamic


def services_in_zip(zip_path: str, strict: bool) -> set[str]:
    """Every service a .py in the zip names. `strict` (our code): refuse a service computed elsewhere than a parameter."""
    named: set[str] = set()
    refused: list[str] = []
    with zipfile.ZipFile(zip_path) as archive:
        for name in archive.namelist():
            if not name.endswith(".py") or _SERVICE_FOLDER.match(name):
                continue
            source = archive.read(name).decode("utf-8", "replace")
            if "client" not in source and "resource" not in source:  # every factory's name holds one of these
                continue
            found, dynamic = services_in_source(source, name)
            named |= found
            refused += [f"{name}:{line}: client({expression})" for line, expression in dynamic]
    if strict and refused:
        raise UnknownService("cannot tell which botocore service these calls need (name it literally, or take it as a parameter "
                             "of the enclosing function): " + "; ".join(refused))
    return named


def services_in_layer(zip_path: str) -> set[str]:
    """The botocore services whose data the layer zip holds."""
    with zipfile.ZipFile(zip_path) as archive:
        return {match["service"] for match in map(_SERVICE_FOLDER.match, archive.namelist()) if match}


def without_documentation(model: Any) -> Any:
    """A botocore service model without its documentation strings. Only a string under the key
    "documentation" goes: a member that happens to be named so is a dict (its shape reference) and stays."""
    if isinstance(model, dict):
        return {key: without_documentation(value) for key, value in model.items() if not (key == "documentation" and isinstance(value, str))}
    if isinstance(model, list):
        return [without_documentation(value) for value in model]
    return model


def endpoints_for(endpoints: dict[str, Any], prefixes: set[str]) -> dict[str, Any]:
    """botocore's endpoints.json with, in every partition, only the services whose endpoint prefix is in `prefixes`
    (botocore resolves a service from its own entry and the partition's defaults, never from another service's)."""
    partitions = [{**partition, "services": {name: data for name, data in partition["services"].items() if name in prefixes}}
                  for partition in endpoints["partitions"]]
    return {**endpoints, "partitions": partitions}


def _model(raw: bytes, name: str) -> Any:
    return json.loads(gzip.decompress(raw) if name.endswith(".gz") else raw)


def _compact(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


def trim(zip_path: str, keep: Iterable[str]) -> list[str]:
    """Rewrite the layer zip without the data of services not in `keep`, with the kept models undocumented
    and endpoints.json cut to them; return the services dropped.
    Refuses when `keep` names a service the layer does not hold (a typo, or a botocore too old)."""
    keep = set(keep)
    shipped = services_in_layer(zip_path)
    if not keep <= shipped:
        raise SystemExit(f"the code calls services this botocore has no data for: {sorted(keep - shipped)}")
    dropped = sorted(shipped - keep)
    partial = zip_path + ".partial"
    with zipfile.ZipFile(zip_path) as source, zipfile.ZipFile(partial, "w") as target:
        models = {info.filename: _model(source.read(info), info.filename) for info in source.infolist()
                  if (match := _SERVICE_MODEL.match(info.filename)) and match["service"] in keep}
        prefixes = keep | {model["metadata"]["endpointPrefix"] for model in models.values()}
        for info in source.infolist():
            match = _SERVICE_FOLDER.match(info.filename)
            if match is not None and match["service"] not in keep:
                continue
            if info.filename in models:  # plain .json: botocore's loader tries it before .json.gz
                plain = zipfile.ZipInfo(info.filename.removesuffix(".gz"), info.date_time)
                plain.external_attr = info.external_attr
                target.writestr(plain, _compact(without_documentation(models[info.filename])), compress_type=zipfile.ZIP_DEFLATED)
            elif _ENDPOINTS.match(info.filename):
                target.writestr(info, _compact(endpoints_for(json.loads(source.read(info)), prefixes)), compress_type=zipfile.ZIP_DEFLATED)
            else:
                target.writestr(info, source.read(info), compress_type=info.compress_type)
    os.replace(partial, zip_path)
    return dropped


def trim_artefacts(out: str) -> tuple[set[str], list[str]]:
    """Botocore data for the services the packaged code can call, in the layer `chalice package` wrote to `out`."""
    function, layer = os.path.join(out, "deployment.zip"), os.path.join(out, "layer-deployment.zip")
    if not os.path.exists(layer):
        return set(), []
    # In the layer's libraries a literal may be no service (a docstring example, a test double): it keeps nothing.
    # In our code it is a mistake, which trim() refuses.
    keep = services_in_zip(function, strict=True) | (services_in_zip(layer, strict=False) & services_in_layer(layer))
    return keep, trim(layer, keep)
