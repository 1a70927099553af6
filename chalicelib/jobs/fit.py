"""Does a model fit an instance type? The serving plan the Batch job definition follows.

The catalog (gpu_catalog.json) is data: models (weights per precision, KV cache per token,
tensor-parallel options) and instance types (GPUs, GPU memory, vCPU, memory). `fit` is the rule,
one pure function; `serving_plan` applies it to a deployment's instance types and derives the
job definition's GPU count, vLLM's `--tensor-parallel-size` / `--quantization`, shared memory and
the model cache disk. `deploy/package.py` calls `serving_plan` and refuses a pair that cannot fit.
"""
from __future__ import annotations

import json
import math
import os
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Precision = Literal["bf16", "fp8", "awq-int4"]
GIB = 1024 ** 3
CATALOG_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu_catalog.json")


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Checkpoint(_Frozen):
    weights_gib: float = Field(gt=0)
    quantization: str | None  # vLLM --quantization (None: unquantised)
    dtype: str
    source: str


class ModelSpec(_Frozen):
    served_name: str
    params_b: float
    layers: int
    kv_heads: int
    head_dim: int
    kv_bytes_per_token: int  # K and V, all layers, at the KV cache dtype
    min_kv_cache_tokens: int  # the headroom a useful batch needs (concurrency x context)
    max_model_len: int
    tensor_parallel_options: list[int]
    source: str
    checkpoints: dict[Precision, Checkpoint]


class InstanceSpec(_Frozen):
    gpu: str
    gpus: int = Field(ge=1)
    gpu_memory_mib: int
    vcpus: int
    memory_mib: int
    sagemaker: bool = False  # ml.* types: priced and fitted, but Batch cannot launch them


class ServingRules(_Frozen):
    gpu_memory_utilization: float = Field(gt=0, le=1)
    overhead_gib_per_gpu: float
    shared_memory_mib_single_gpu: int
    shared_memory_mib_per_gpu_tensor_parallel: int
    job_memory_fraction: float
    image_gib: int
    cached_model_versions: int
    source: str


class Deployment(_Frozen):
    model: str
    precision: Precision
    instance_types: list[str] = Field(min_length=1)
    why: str = ""


class GpuCatalog(_Frozen):
    version: str
    notes: str
    serving: ServingRules
    models: dict[str, ModelSpec]
    instances: dict[str, InstanceSpec]
    deployment: Deployment


@lru_cache(maxsize=4)
def load_catalog(path: str = CATALOG_PATH) -> GpuCatalog:
    with open(path, encoding="utf-8") as handle:
        return GpuCatalog.model_validate(json.load(handle))


class Fit(_Frozen):
    """One (model, precision, instance) verdict, with the numbers behind it (GiB)."""

    fits: bool
    tensor_parallel: int  # the smallest degree that fits (0 when nothing does)
    needed_gib_per_gpu: float
    usable_gib_per_gpu: float
    reason: str


class FitError(ValueError):
    """The deployment asks for a model that does not fit its instance types."""


def fit(model: ModelSpec, precision: Precision, instance: InstanceSpec, rules: ServingRules) -> Fit:
    """Weights and KV cache split over `tp` GPUs, plus a fixed overhead per GPU, must fit vLLM's
    share of each GPU's memory; the smallest tensor-parallel degree that fits wins (fewer GPUs
    per job: cheaper, and two jobs can share a multi-GPU instance)."""
    usable = round(instance.gpu_memory_mib / 1024 * rules.gpu_memory_utilization, 2)
    checkpoint = model.checkpoints.get(precision)
    if checkpoint is None:
        return Fit(fits=False, tensor_parallel=0, needed_gib_per_gpu=0, usable_gib_per_gpu=usable,
                   reason=f"no {precision} checkpoint in the catalog")
    kv_gib = model.kv_bytes_per_token * model.min_kv_cache_tokens / GIB
    best = math.inf
    for tp in sorted(model.tensor_parallel_options):
        if tp > instance.gpus:
            break
        needed = round((checkpoint.weights_gib + kv_gib) / tp + rules.overhead_gib_per_gpu, 2)
        best = min(best, needed)
        if needed <= usable:
            return Fit(fits=True, tensor_parallel=tp, needed_gib_per_gpu=needed, usable_gib_per_gpu=usable,
                       reason=f"{checkpoint.weights_gib} GiB weights + {kv_gib:.1f} GiB KV cache over {tp} GPU(s) "
                              f"+ {rules.overhead_gib_per_gpu} GiB overhead = {needed} GiB per GPU <= {usable} GiB")
    return Fit(fits=False, tensor_parallel=0, needed_gib_per_gpu=best if best != math.inf else 0, usable_gib_per_gpu=usable,
               reason=f"needs {best} GiB per GPU even at tensor parallel {min(instance.gpus, max(model.tensor_parallel_options))}; "
                      f"{instance.gpus} x {instance.gpu} offer {usable} GiB each")


class ServingPlan(_Frozen):
    """What the Batch job definition and the worker's vLLM command follow from."""

    model: str
    served_name: str
    precision: Precision
    instance_types: list[str]
    gpus: int
    tensor_parallel: int
    quantization: str | None
    dtype: str
    max_model_len: int
    gpu_memory_utilization: float
    vcpus: int
    memory_mib: int
    shared_memory_mib: int
    cache_volume_gib: int
    weights_gib: float


def serving_plan(catalog: GpuCatalog, model_name: str, precision: Precision, instance_types: list[str]) -> ServingPlan:
    """The plan for a deployment, or FitError saying which instance type fails and why.

    One job definition serves every listed type, so they must agree on the tensor-parallel degree;
    the job asks for the smallest type's share of vCPU and memory per GPU used.
    """
    model = catalog.models.get(model_name)
    if model is None:
        raise FitError(f"unknown model {model_name!r}; the catalog has {sorted(catalog.models)}")
    if not instance_types:
        raise FitError("no instance types given")
    rules = catalog.serving
    verdicts: dict[str, Fit] = {}
    for name in instance_types:
        instance = catalog.instances.get(name)
        if instance is None:
            raise FitError(f"unknown instance type {name!r}; add it to {os.path.basename(CATALOG_PATH)}")
        if instance.sagemaker:
            raise FitError(f"{name} is a SageMaker type; AWS Batch launches EC2 types ({name.removeprefix('ml.')})")
        verdicts[name] = fit(model, precision, instance, rules)
    refused = {name: v.reason for name, v in verdicts.items() if not v.fits}
    if refused:
        raise FitError(f"{model_name} {precision} does not fit: " + "; ".join(f"{n}: {r}" for n, r in refused.items()))
    degrees = {v.tensor_parallel for v in verdicts.values()}
    if len(degrees) > 1:
        raise FitError(f"{model_name} {precision} needs different tensor-parallel degrees on "
                       + ", ".join(f"{n} ({v.tensor_parallel})" for n, v in verdicts.items()) + "; list types that agree")
    tp = degrees.pop()
    instances = [catalog.instances[name] for name in instance_types]
    vcpus = min(i.vcpus * tp // i.gpus for i in instances)
    memory_mib = int(min(i.memory_mib * tp // i.gpus for i in instances) * rules.job_memory_fraction)
    shm = rules.shared_memory_mib_single_gpu if tp == 1 else rules.shared_memory_mib_per_gpu_tensor_parallel * tp
    checkpoint = model.checkpoints[precision]
    cache = rules.image_gib + checkpoint.weights_gib * rules.cached_model_versions
    return ServingPlan(
        model=model_name, served_name=model.served_name, precision=precision, instance_types=list(instance_types), gpus=tp,
        tensor_parallel=tp, quantization=checkpoint.quantization, dtype=checkpoint.dtype, max_model_len=model.max_model_len,
        gpu_memory_utilization=rules.gpu_memory_utilization, vcpus=vcpus, memory_mib=memory_mib,
        shared_memory_mib=min(shm, memory_mib // 2), cache_volume_gib=int(math.ceil(cache / 10) * 10),
        weights_gib=checkpoint.weights_gib)
