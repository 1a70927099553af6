"""deploy/encoder_layer.py and package.py: the sentence encoder's cache leaves the function zip every function shares
for a layer of its own, which only the functions that screen carry, each told where the cache is."""
from __future__ import annotations

import os
import sys
import zipfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "deploy"))

import package  # noqa: E402
from encoder_layer import IN_FUNCTION_ZIP, LAMBDA_FOLDER, LAYER, LAYER_MANIFEST, LAYER_ZIP, attach, move_cache  # noqa: E402

from chalicelib.screening.semantic import CACHE_ENV  # noqa: E402

# What each function's handler does with a prompt: the API and the queued invokes and job submissions
# (chalicelib/events.py) screen; the rest never do (a job's items are screened when it is submitted).
SCREENS = ["APIHandler", "Requests", "RequestsFifo", "ObjectEvents"]
NEVER_SCREENS = ["JobSteps", "MeterSpill", "BatchJobFailed", "DailyCostReport"]


def function(code: str = "./deployment.zip") -> dict:
    return {"Type": "AWS::Serverless::Function", "Properties": {
        "Runtime": "python3.11", "Architectures": ["x86_64"], "CodeUri": code, "Layers": [{"Ref": "ManagedLayer"}],
        "Environment": {"Variables": {"STAGE": "dev"}}}}


def chalice_template() -> dict:
    """The shape `chalice package` emits: one function zip and one dependency layer, shared by every function."""
    resources = {name: function() for name in package.FUNCTIONS}
    resources["ManagedLayer"] = {"Type": "AWS::Serverless::LayerVersion", "Properties": {"ContentUri": "./layer-deployment.zip"}}
    return {"Resources": resources}


def test_the_functions_that_screen_are_the_apps_handlers_that_screen():
    from app import app

    handlers = {"api_handler"} | {source.name for source in app.event_sources}
    assert set(package.FUNCTIONS.values()) == handlers  # every function the app defines is decided here
    assert package.screening_functions() == SCREENS
    assert sorted(SCREENS + NEVER_SCREENS) == sorted(package.FUNCTIONS)


def test_only_the_functions_that_screen_carry_the_encoder_layer_and_are_told_where_its_cache_is():
    template = chalice_template()
    attached = attach(template, package.screening_functions(), "crossover-dev-screening-encoder")
    resources = attached["Resources"]
    assert resources[LAYER] == {"Type": "AWS::Serverless::LayerVersion", "Properties": {
        "LayerName": "crossover-dev-screening-encoder", "Description": resources[LAYER]["Properties"]["Description"],
        "ContentUri": f"./{LAYER_ZIP}", "CompatibleRuntimes": ["python3.11"], "CompatibleArchitectures": ["x86_64"]}}
    for name in SCREENS:
        props = resources[name]["Properties"]
        assert props["Layers"] == [{"Ref": "ManagedLayer"}, {"Ref": LAYER}]
        assert props["Environment"]["Variables"] == {"STAGE": "dev", CACHE_ENV: LAMBDA_FOLDER}
        assert props["CodeUri"] == "./deployment.zip"
    for name in NEVER_SCREENS:
        assert resources[name] == template["Resources"][name]
    assert template == chalice_template()  # the template given is left as it was


def test_attaching_to_a_function_the_template_lacks_is_refused():
    with pytest.raises(SystemExit, match="no function of the template"):
        attach(chalice_template(), ["APIHandler", "Screening"], "x")
    with pytest.raises(SystemExit, match="no function of the template"):
        attach(chalice_template(), [], "x")


def write_zip(path, files: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)


def test_the_cache_moves_byte_for_byte_from_the_function_zip_to_the_encoder_layer(tmp_path):
    cache = {IN_FUNCTION_ZIP + "manifest.json": b'{"format": 1}', IN_FUNCTION_ZIP + "backend/table.npy": b"\x93NUMPY" + b"\x01" * 5000}
    code = {"app.py": b"", "chalicelib/screening/model/manifest.json": b"{}", "chalicelib/screening/semantic.py": b""}
    write_zip(tmp_path / "deployment.zip", {**code, **cache})
    assert sorted(move_cache(str(tmp_path))) == sorted(cache)
    with zipfile.ZipFile(tmp_path / "deployment.zip") as function:
        assert sorted(function.namelist()) == sorted(code)  # no encoder file left; the classifier's own model stays
    with zipfile.ZipFile(tmp_path / LAYER_ZIP) as layer:
        assert sorted(layer.namelist()) == sorted([LAYER_MANIFEST, "screening-encoder/backend/table.npy"])
        assert layer.read("screening-encoder/backend/table.npy") == cache[IN_FUNCTION_ZIP + "backend/table.npy"]
    assert LAMBDA_FOLDER == "/opt/screening-encoder"  # Lambda extracts a layer's zip to /opt


def test_packaging_refuses_a_function_zip_without_the_cache(tmp_path):
    write_zip(tmp_path / "deployment.zip", {"app.py": b""})
    with pytest.raises(SystemExit, match="no encoder cache"):
        move_cache(str(tmp_path))
