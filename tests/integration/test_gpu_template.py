"""The GPU path in the deploy template: the job definition follows the serving plan, clocks are ordered,
a spot reclaim cannot run two jobs for one token, and `make package` refuses a model that cannot fit."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "deploy"))


def merged(plan=None):
    import package  # deploy/package.py

    return package.merge_template("prod", plan)["Resources"]


def container_env(job_definition: dict) -> dict:
    return {e["Name"]: e["Value"] for e in job_definition["Properties"]["ContainerProperties"]["Environment"]}


def test_job_definition_follows_the_default_plan_fp8_on_one_l40s():
    resources = merged()
    job = resources["WorkerJobDefinition"]["Properties"]
    container = job["ContainerProperties"]
    requirements = {r["Type"]: r["Value"] for r in container["ResourceRequirements"]}
    assert requirements["GPU"] == "1" and int(requirements["VCPU"]) <= 4 and int(requirements["MEMORY"]) <= 32768
    env = container_env(resources["WorkerJobDefinition"])
    assert (env["TENSOR_PARALLEL_SIZE"], env["QUANTIZATION"], env["GPU_COUNT"], env["MODEL_CACHE_DIR"]) == ("1", "fp8", "1", "/models")
    assert container["LinuxParameters"]["SharedMemorySize"] >= 1024
    assert container["MountPoints"][0]["ContainerPath"] == "/models"
    assert container["Volumes"][0]["Host"]["SourcePath"] == "/opt/crossover/models"  # the cache outlives the job
    for name in ("GpuSpotEnvironment", "GpuOnDemandEnvironment"):
        compute = resources[name]["Properties"]["ComputeResources"]
        assert compute["InstanceTypes"] == ["g6e.xlarge", "g6e.2xlarge"]
        assert compute["LaunchTemplate"]["LaunchTemplateId"] == {"Ref": "GpuLaunchTemplate"}
    assert resources["GpuOnDemandEnvironment"]["Properties"]["ComputeResources"]["MinvCpus"] == {"Ref": "WarmGpuVcpus"}
    assert resources["GpuSpotEnvironment"]["Properties"]["ComputeResources"]["MinvCpus"] == 0
    # the meter's break-even sees the same warm capacity (GPU_MIN_VCPUS), not a fleet of its own
    functions = [r for r in resources.values() if r.get("Type") == "AWS::Serverless::Function" or "Environment" in r.get("Properties", {})]
    variables = [f["Properties"]["Environment"]["Variables"] for f in functions if "Variables" in f["Properties"].get("Environment", {})]
    assert variables and all(v["GPU_MIN_VCPUS"] == {"Ref": "WarmGpuVcpus"} for v in variables)
    assert all(v["GPU_INSTANCE_TYPES"] == "g6e.xlarge,g6e.2xlarge" for v in variables)
    volume = resources["GpuLaunchTemplate"]["Properties"]["LaunchTemplateData"]["BlockDeviceMappings"][0]["Ebs"]
    assert volume["VolumeSize"] >= 25 + 32.5 and volume["Encrypted"] is True  # the image and the model fit on the disk


def test_bf16_on_four_l40s_uses_tensor_parallelism_and_shared_memory():
    from chalicelib.jobs.fit import load_catalog, serving_plan

    plan = serving_plan(load_catalog(), "qwen3-32b", "bf16", ["g6e.12xlarge"])
    job = merged(plan)["WorkerJobDefinition"]
    requirements = {r["Type"]: r["Value"] for r in job["Properties"]["ContainerProperties"]["ResourceRequirements"]}
    env = container_env(job)
    assert requirements["GPU"] == env["TENSOR_PARALLEL_SIZE"] == env["GPU_COUNT"] == "2"
    assert env["QUANTIZATION"] == "" and env["DTYPE"] == "bfloat16"
    assert job["Properties"]["ContainerProperties"]["LinuxParameters"]["SharedMemorySize"] == 8192


def test_batch_attempt_ends_before_the_workflow_step_and_the_watch_beats_the_heartbeat():
    resources = merged()
    substitutions = resources["JobStateMachine"]["Properties"]["DefinitionSubstitutions"]
    attempt = resources["WorkerJobDefinition"]["Properties"]["Timeout"]["AttemptDurationSeconds"]
    from chalicelib.jobs.timing import GPU_STEP_MARGIN_S
    from stage.chalice import stage_environment

    env = stage_environment("prod")
    capacity = int(env.get("JOB_CAPACITY_TIMEOUT_SECONDS", "1800"))
    assert int(substitutions["GpuTimeoutSeconds"]) >= capacity + attempt + GPU_STEP_MARGIN_S
    assert int(env.get("JOB_WATCH_INTERVAL_SECONDS", "60")) * 2 <= int(substitutions["HeartbeatSeconds"])
    assert capacity >= int(substitutions["HeartbeatSeconds"])


def test_batch_never_retries_a_job_whose_token_is_spent():
    job = merged()["WorkerJobDefinition"]["Properties"]
    assert job["RetryStrategy"] == {"Attempts": 1}  # the workflow's CanResume makes the one new attempt


def test_model_weights_are_readable_only_under_their_prefix():
    policy = merged()["WorkerModelReadPolicy"]
    assert policy["Condition"] == "HasModelBucket"
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert {a for s in statements for a in s["Action"]} == {"s3:GetObject", "s3:ListBucket"}
    assert statements[0]["Resource"] == [{"Fn::Sub": "arn:${AWS::Partition}:s3:::${ModelBucket}/${ModelPrefix}*"}]


def test_package_refuses_a_model_that_cannot_fit(tmp_path):
    result = subprocess.run([sys.executable, "deploy/package.py", "--stage", "dev", "--out", str(tmp_path),
                             "--gpu-precision", "bf16", "--gpu-instance-types", "g6e.xlarge"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode != 0
    assert "package refused: qwen3-32b bf16 does not fit: g6e.xlarge: needs 67.0 GiB per GPU" in result.stderr
    assert not (tmp_path / "sam.json").exists()


def test_fallback_chunks_fit_the_job_steps_function_with_margin():
    """The chunk size derives from the function's timeout and botocore's worst case per Bedrock call."""
    import json as _json

    from chalicelib.jobs.timing import CHUNK_MARGIN_FRACTION, fallback_chunk_size, per_call_worst_s

    with open(os.path.join(ROOT, ".chalice", "config.json"), encoding="utf-8") as handle:
        chalice = _json.load(handle)
    timeout = chalice.get("lambda_functions", {}).get("job_steps", {}).get("lambda_timeout", 900)
    assert timeout == 900  # = JOB_STEPS_TIMEOUT_SECONDS' default, which the chunk size is derived from
    size = fallback_chunk_size(timeout, read_timeout_s=60, attempts=4, parallel_calls=8)
    rounds = size // 8
    assert rounds * per_call_worst_s(60, 4) <= timeout * (1 - CHUNK_MARGIN_FRACTION) and size == 16
    with pytest.raises(ValueError, match="more than"):
        fallback_chunk_size(60, read_timeout_s=60, attempts=4, parallel_calls=8)  # the old 60 s function could not hold one item
