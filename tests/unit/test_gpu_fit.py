"""Model/instance fit: the rule, the refusals, and the catalog checked against data we did not write."""
from __future__ import annotations

import json

import pytest

from chalicelib.jobs.fit import FitError, fit, load_catalog, serving_plan


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_default_deployment_fits_one_l40s_in_fp8(catalog):
    deployment = catalog.deployment
    plan = serving_plan(catalog, deployment.model, deployment.precision, deployment.instance_types)
    assert (plan.model, plan.precision, plan.gpus, plan.tensor_parallel, plan.quantization) == ("qwen3-32b", "fp8", 1, 1, "fp8")
    assert plan.vcpus == 4 and plan.memory_mib <= 32768 * 0.9  # the smallest type (g6e.xlarge) can hold the job
    assert plan.shared_memory_mib == 2048 and plan.cache_volume_gib >= 25 + 2 * 32.5


def test_bf16_qwen3_32b_is_refused_on_one_l40s_and_on_a10g(catalog):
    with pytest.raises(FitError, match=r"g6e.xlarge: needs 67.0 GiB per GPU"):
        serving_plan(catalog, "qwen3-32b", "bf16", ["g6e.xlarge"])
    with pytest.raises(FitError, match="g5.2xlarge"):
        serving_plan(catalog, "qwen3-32b", "fp8", ["g5.2xlarge"])  # 24 GB A10G: even FP8 (32.5 GiB) does not fit


def test_bf16_fits_one_rtx_pro_6000_or_l40s_with_tensor_parallelism(catalog):
    g7e = serving_plan(catalog, "qwen3-32b", "bf16", ["g7e.2xlarge"])
    assert (g7e.gpus, g7e.tensor_parallel, g7e.quantization, g7e.dtype) == (1, 1, None, "bfloat16")
    l40s = serving_plan(catalog, "qwen3-32b", "bf16", ["g6e.12xlarge"])
    assert l40s.tensor_parallel == l40s.gpus == 2  # the smallest degree that fits: (61 + 4) / 2 + 2 GiB <= 40.2 GiB
    assert l40s.vcpus == 24 and l40s.shared_memory_mib == 8192  # half the instance's CPUs; NCCL needs /dev/shm
    four = serving_plan(catalog, "qwen3-32b", "bf16", ["g5.48xlarge"])
    assert four.tensor_parallel == 4  # 8 x A10G: 4-way is the first that fits


def test_awq_fits_a10g_pairs_and_types_that_disagree_are_refused(catalog):
    assert serving_plan(catalog, "qwen3-32b", "awq-int4", ["g5.12xlarge"]).tensor_parallel == 2
    with pytest.raises(FitError, match="different tensor-parallel degrees"):
        serving_plan(catalog, "qwen3-32b", "fp8", ["g6e.xlarge", "g5.12xlarge"])


def test_unknown_names_and_sagemaker_types_are_refused(catalog):
    with pytest.raises(FitError, match="unknown model"):
        serving_plan(catalog, "llama-9000", "fp8", ["g6e.xlarge"])
    with pytest.raises(FitError, match="unknown instance type"):
        serving_plan(catalog, "qwen3-32b", "fp8", ["p9.huge"])
    with pytest.raises(FitError, match="SageMaker"):
        serving_plan(catalog, "qwen3-32b", "fp8", ["ml.g7e.2xlarge"])


def test_fit_reports_its_numbers(catalog):
    verdict = fit(catalog.models["qwen3-32b"], "fp8", catalog.instances["g6e.xlarge"], catalog.serving)
    assert verdict.fits and verdict.needed_gib_per_gpu == 38.5 and verdict.usable_gib_per_gpu == 40.23
    refused = fit(catalog.models["qwen3-32b"], "bf16", catalog.instances["g6e.xlarge"], catalog.serving)
    assert not refused.fits and refused.needed_gib_per_gpu == 67.0


def test_instance_figures_match_aws_describe_instance_types(catalog):
    """Independent check: moto ships AWS's DescribeInstanceTypes data; our hardware figures must agree."""
    import boto3
    from moto import mock_aws

    with mock_aws():
        ec2 = boto3.client("ec2", region_name="us-east-1")
        names = [name for name, spec in catalog.instances.items() if not spec.sagemaker]
        found = {t["InstanceType"]: t for t in ec2.describe_instance_types(InstanceTypes=names)["InstanceTypes"]}
    assert set(found) == set(names)
    for name in names:
        spec, aws = catalog.instances[name], found[name]
        [gpu] = aws["GpuInfo"]["Gpus"]
        assert (spec.gpus, spec.gpu_memory_mib, spec.vcpus, spec.memory_mib) == (
            gpu["Count"], gpu["MemoryInfo"]["SizeInMiB"], aws["VCpuInfo"]["DefaultVCpus"], aws["MemoryInfo"]["SizeInMiB"]), name
    for name, spec in catalog.instances.items():
        if spec.sagemaker:  # the SageMaker type has the hardware of its EC2 twin
            twin = catalog.instances[name.removeprefix("ml.")]
            assert (spec.gpus, spec.gpu_memory_mib) == (twin.gpus, twin.gpu_memory_mib)


def test_kv_cache_per_token_follows_from_the_public_model_config(catalog):
    """Independent check: Qwen3's published config (layers, KV heads, head dim), BF16 KV cache."""
    published = {"qwen3-32b": {"num_hidden_layers": 64, "num_key_value_heads": 8, "head_dim": 128},
                 "qwen3-8b": {"num_hidden_layers": 36, "num_key_value_heads": 8, "head_dim": 128}}
    for name, config in published.items():
        model = catalog.models[name]
        assert (model.layers, model.kv_heads, model.head_dim) == tuple(config.values())
        assert model.kv_bytes_per_token == 2 * config["num_hidden_layers"] * config["num_key_value_heads"] * config["head_dim"] * 2
        bf16 = model.checkpoints["bf16"].weights_gib
        assert abs(bf16 - model.params_b * 2e9 / 2**30) / bf16 < 0.03  # 2 bytes per parameter


def test_sagemaker_prices_and_hardware_agree_on_gpu_counts(catalog):
    from chalicelib.config import get_settings
    from chalicelib.meter.catalog import load_catalog as load_prices

    prices = load_prices(get_settings().meter.price_catalog_path)
    for name, priced in prices.gpu_instances.items():
        if name in catalog.instances:
            assert priced.gpus == catalog.instances[name].gpus, name
    json.dumps(catalog.model_dump())  # the catalog is plain data
