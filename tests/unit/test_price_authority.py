"""The meter is the one price authority (issue 14): prices are computed in meter/pricing only, money is
rounded by one rule (core.usd), Usage lives in the core module, the meter's modules import no cycle,
and default model/instance ids are spelled in one place.

These read the source (AST), so a new module that prices on its own fails here, not in production.
"""
from __future__ import annotations

import ast
import re
import typing
from decimal import Decimal
from pathlib import Path

import pytest

from chalicelib.meter import catalog as catalog_module

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "chalicelib"
PRICING = PACKAGE / "meter" / "pricing.py"
SOURCES = sorted(p for p in PACKAGE.rglob("*.py"))
# Everything that runs in production: the Lambda package, the app, the GPU worker, the local stack and deploy tooling.
RUNTIME = sorted([*SOURCES, ROOT / "app.py", *(p for d in ("worker", "devstack", "deploy") for p in (ROOT / d).rglob("*.py"))])


def _money_fields() -> set[str]:
    """Every Decimal field of the catalog's models that holds dollars (derived, so a new price field is covered)."""
    fields = set()
    for obj in vars(catalog_module).values():
        if isinstance(obj, type) and obj.__module__ == catalog_module.__name__ and hasattr(obj, "model_fields"):
            for name, info in obj.model_fields.items():
                if Decimal in (info.annotation, *typing.get_args(info.annotation)) and re.search(r"usd|per_mtok|per_hour", name):
                    fields.add(name)
    return fields


MONEY_FIELDS = _money_fields()
# The catalog's money fields are matched by name (MONEY_FIELDS); these catch prices held in other names.
_PRICE_WORD = re.compile(r"(^|_)(price|prices|rate|rates|hourly)($|_)|usd_per|_per_mtok")
_QUANTITY_WORD = re.compile(r"tokens|seconds|(^|_)hours($|_)")


def _identifiers(node: ast.AST) -> list[str]:
    names = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.append(sub.id)
        elif isinstance(sub, ast.Attribute):
            names.append(sub.attr)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            names.append(sub.value)  # raw["on_demand_per_hour"], rates["input"] via the name `rates`
    return names


def _is_price(node: ast.AST) -> bool:
    return any(name in MONEY_FIELDS or _PRICE_WORD.search(name.lower()) for name in _identifiers(node))


def _is_quantity(node: ast.AST) -> bool:
    return not _is_price(node) and any(_QUANTITY_WORD.search(name.lower()) for name in _identifiers(node))


def price_products(source: str) -> list[tuple[int, str]]:
    """(line, expression) of every `quantity x price` product: tokens, seconds or hours times a price."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            left, right = node.left, node.right
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Mult):
            left, right = node.target, node.value
        else:
            continue
        if (_is_price(left) and _is_quantity(right)) or (_is_quantity(left) and _is_price(right)):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_detector_sees_the_ways_a_price_gets_computed():
    assert price_products("cost = usage.input_tokens * rates['input'] / MILLION")
    assert price_products("cost = seconds * instance.spot_per_hour / 3600")
    assert price_products("gpu_usd = gpu_hours * hourly")
    assert price_products("x = traffic.tokens_per_month * usd_per_token(traffic, price)")
    assert price_products("x = Fraction(tokens) * Fraction(price.output_per_mtok)")
    assert price_products("total *= price.input_per_mtok") == []  # no quantity on either side
    assert price_products("x = instances * per_instance") == []  # the break-even's line algebra over priced coefficients
    assert price_products("x = tokens * 2") == []


def test_no_module_outside_meter_pricing_multiplies_tokens_or_seconds_by_a_price():
    offenders = {str(path.relative_to(ROOT)): hits for path in RUNTIME if path != PRICING
                 for hits in [price_products(path.read_text(encoding="utf-8"))] if hits}
    assert offenders == {}, "price these in chalicelib/meter/pricing.py"


def test_pricing_itself_is_where_the_products_are():
    assert len(price_products(PRICING.read_text(encoding="utf-8"))) >= 5  # the detector is not blind to it


def test_money_is_rounded_in_one_place_with_one_quantum():
    quantizers = [str(p.relative_to(ROOT)) for p in RUNTIME if ".quantize(" in p.read_text(encoding="utf-8")]
    assert quantizers == ["chalicelib/core.py"]


def _imports(path: Path) -> list[str]:
    """Absolute dotted names a module imports (relative imports resolved)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    package = ".".join(parts[:-1])  # a module's package; an __init__'s own package
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.append(target)
            names += [f"{target}.{alias.name}" for alias in node.names]
    return names


@pytest.mark.parametrize("layer", ["models", "agent", "jobs", "conversations"])
def test_layers_take_usage_from_the_core_module_not_from_meter_internals(layer):
    for path in (PACKAGE / layer).rglob("*.py"):
        bad = [name for name in _imports(path) if name.endswith(".Usage") and not name.startswith("chalicelib.core")]
        assert bad == [], path


def test_models_and_agent_do_not_import_the_meter_at_all():
    for layer in ("models", "agent"):
        for path in (PACKAGE / layer).rglob("*.py"):
            assert not [n for n in _imports(path) if n.startswith("chalicelib.meter")], path


def test_the_meter_modules_import_no_cycle():
    meter = {p.stem: p for p in (PACKAGE / "meter").glob("*.py") if p.stem != "__init__"}
    graph = {name: {n.split(".")[2] for n in _imports(path) if n.startswith("chalicelib.meter.") and n.split(".")[2] in meter} - {name}
             for name, path in meter.items()}
    # catalog is the data; pricing prices it; breakeven and everything else build on pricing
    assert graph["catalog"] == set()
    assert graph["pricing"] == {"catalog"}
    visiting: list[str] = []

    def visit(node: str, done: set[str]) -> None:
        assert node not in visiting, f"import cycle: {' -> '.join(visiting + [node])}"
        if node in done:
            return
        visiting.append(node)
        for nxt in graph[node]:
            visit(nxt, done)
        visiting.pop()
        done.add(node)

    done: set[str] = set()
    for name in graph:
        visit(name, done)


@pytest.mark.parametrize("literal", ["anthropic.claude-3-sonnet-20240229-v1:0", "qwen3-32b", "g7e.2xlarge"])
def test_default_model_and_instance_ids_have_one_home(literal):
    """Code names a default through chalicelib/defaults.py; data files (catalogs) and docstrings may quote ids."""
    spelled = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and node.body
                      and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        if any(isinstance(n, ast.Constant) and n.value == literal and id(n) not in docstrings for n in ast.walk(tree)):
            spelled.append(str(path.relative_to(ROOT)))
    assert spelled == ["chalicelib/defaults.py"]
