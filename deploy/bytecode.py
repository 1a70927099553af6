"""Compiled bytecode in the Lambda zips.

Lambda's code directories (/var/task, /opt) are read-only, so without .pyc in the zip every cold start
compiles every module it imports and throws the result away (benchmarks/cold_start_zip.py measures
it). We compile each .py in the function and layer zips with the runtime's interpreter, as
unchecked-hash .pyc (PEP 552): the interpreter loads them without stat-ing or hashing the source, which
is right for code that cannot change after deployment. Sources stay in the zip for tracebacks;
`dfile` is where Lambda extracts each file.
"""
from __future__ import annotations

import importlib.util
import os
import py_compile
import sys
import tempfile
import zipfile
from typing import Any

from zips import drop_entries

# Where Lambda puts each artefact `chalice package` writes.
LAMBDA_ROOTS = {"deployment.zip": "/var/task", "layer-deployment.zip": "/opt"}
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # as chalice writes its entries: the zips stay reproducible


def runtime_of(template: dict[str, Any]) -> str:
    """The one Python runtime every function in the template uses (e.g. "python3.11")."""
    runtimes = {props.get("Runtime") for props in (r.get("Properties", {}) for r in template["Resources"].values()
                                                    if r.get("Type") == "AWS::Serverless::Function")}
    if len(runtimes) != 1 or not str(next(iter(runtimes))).startswith("python"):
        raise SystemExit(f"expected one python runtime across the functions, found {sorted(map(str, runtimes))}")
    return str(runtimes.pop())


def require_interpreter_for(runtime: str) -> None:
    """Bytecode is specific to a Python minor version: a .pyc for another one is silently ignored and the
    module is compiled on every cold start again. So build with the runtime's own Python, or not at all."""
    here = f"python{sys.version_info.major}.{sys.version_info.minor}"
    if runtime != here:
        raise SystemExit(f"the functions run {runtime} but this is {here}: package with {runtime} so the .pyc match")


_UNCHECKED_HASH = 0b01  # PEP 552 flags: hash-based, not checked against the source


def drop_checked_bytecode(zip_path: str) -> list[str]:
    """Remove the .pyc a wheel shipped for a .py of the zip that the interpreter would check against its source
    (timestamp-based or checked-hash: e.g. numpy 2.2's numpy/distutils/conv_template), so add_bytecode compiles
    them unchecked like the rest; return the names removed."""
    with zipfile.ZipFile(zip_path) as archive:
        names = set(archive.namelist())
        stale = {pyc for pyc in (importlib.util.cache_from_source(name) for name in names if name.endswith(".py"))
                 if pyc in names and int.from_bytes(archive.read(pyc)[4:8], "little") != _UNCHECKED_HASH}
    return sorted(drop_entries(zip_path, stale.__contains__))


def add_bytecode(zip_path: str, lambda_root: str) -> int:
    """Add an unchecked-hash .pyc for every .py in the zip that has none; return how many were added."""
    drop_checked_bytecode(zip_path)
    with zipfile.ZipFile(zip_path) as archive:
        names = set(archive.namelist())
        sources = sorted(name for name in names if name.endswith(".py") and importlib.util.cache_from_source(name) not in names)
        with tempfile.TemporaryDirectory() as work:
            compiled = []
            for name in sources:
                source = os.path.join(work, name)
                os.makedirs(os.path.dirname(source), exist_ok=True)
                with open(source, "wb") as handle:
                    handle.write(archive.read(name))
                target = os.path.join(work, importlib.util.cache_from_source(name))
                py_compile.compile(source, cfile=target, dfile=f"{lambda_root}/{name}", doraise=True,
                                   invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
                with open(target, "rb") as handle:
                    compiled.append((importlib.util.cache_from_source(name), handle.read()))
    with zipfile.ZipFile(zip_path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        for arcname, data in compiled:
            info = zipfile.ZipInfo(arcname, _FIXED_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return len(compiled)


def compile_artefacts(out: str, template: dict[str, Any]) -> dict[str, int]:
    """Bytecode into every zip `chalice package` wrote to `out`, for the template's runtime."""
    require_interpreter_for(runtime_of(template))
    return {name: add_bytecode(os.path.join(out, name), root) for name, root in LAMBDA_ROOTS.items()
            if os.path.exists(os.path.join(out, name))}
