"""The packaged zips carry unchecked-hash bytecode for the runtime's Python, for every module."""
from __future__ import annotations

import importlib.util
import json
import marshal
import os
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNCHECKED_HASH = 0b01  # PEP 552 flags: hash-based, do not check the source


@pytest.fixture(scope="module")
def packaged(tmp_path_factory):
    out = tmp_path_factory.mktemp("package-bytecode")
    subprocess.run([sys.executable, "deploy/package.py", "--stage", "dev", "--out", str(out)], cwd=ROOT, check=True, capture_output=True)
    return out


def test_functions_run_the_python_the_bytecode_was_compiled_for(packaged):
    template = json.loads((packaged / "sam.json").read_text())
    runtimes = {r["Properties"]["Runtime"] for r in template["Resources"].values() if r["Type"] == "AWS::Serverless::Function"}
    assert runtimes == {f"python{sys.version_info.major}.{sys.version_info.minor}"}


@pytest.mark.parametrize(("artefact", "lambda_root", "must_hold"), [
    ("deployment.zip", "/var/task", ["app.py", "chalicelib/http.py", "chalicelib/safe_json.py", "chalice/app.py"]),
    ("layer-deployment.zip", "/opt", ["python/lib/python3.11/site-packages/boto3/session.py",
                                      "python/lib/python3.11/site-packages/aws_lambda_powertools/__init__.py"]),
])
def test_every_module_in_the_zip_has_unchecked_hash_bytecode(packaged, artefact, lambda_root, must_hold):
    with zipfile.ZipFile(packaged / artefact) as archive:
        names = set(archive.namelist())
        sources = sorted(name for name in names if name.endswith(".py"))
        assert set(must_hold) <= set(sources), set(must_hold) - set(sources)
        missing = [name for name in sources if importlib.util.cache_from_source(name) not in names]
        assert not missing, missing[:10]
        for name in sources:
            pyc = archive.read(importlib.util.cache_from_source(name))
            assert pyc[:4] == importlib.util.MAGIC_NUMBER, name
            assert int.from_bytes(pyc[4:8], "little") == UNCHECKED_HASH, name
            # compiled for the path Lambda extracts it to (import fixes co_filename to the real path anyway)
            assert marshal.loads(pyc[16:]).co_filename == f"{lambda_root}/{name}", name


def test_the_function_zip_ships_the_screening_classifier_intact(packaged):
    """The classifier's artefact is data, not a module: it must travel too, byte for byte (the manifest checks it)."""
    with zipfile.ZipFile(packaged / "deployment.zip") as archive:
        for name in ("chalicelib/screening/model/manifest.json", "chalicelib/screening/model/classifier.json"):
            with open(os.path.join(ROOT, name), "rb") as handle:
                assert archive.read(name) == handle.read(), name
