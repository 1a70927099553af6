"""What a Chalice stage gives its Lambdas (.chalice/config.json), resolved as Chalice resolves it."""
from __future__ import annotations

import json
import os
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHALICE_DEFAULTS = {"lambda_timeout": 60, "lambda_memory_size": 128}


def _config() -> dict[str, Any]:
    with open(os.path.join(ROOT, ".chalice", "config.json"), encoding="utf-8") as handle:
        return json.load(handle)  # type: ignore[no-any-return]


def stage_environment(stage: str) -> dict[str, str]:
    config = _config()
    return {**config.get("environment_variables", {}), **config["stages"][stage].get("environment_variables", {})}


def function_settings(stage: str) -> dict[str, dict[str, int]]:
    """Each function's timeout and memory: the stage's lambda_functions, the stage, the top-level
    lambda_functions, the top level, Chalice's default (chalice.config.Config._chain_lookup's order)."""
    config = _config()
    stage_config = config["stages"][stage]
    names = set(config.get("lambda_functions", {})) | set(stage_config.get("lambda_functions", {}))

    def lookup(name: str, key: str) -> int:
        for layer in (stage_config.get("lambda_functions", {}).get(name, {}), stage_config,
                      config.get("lambda_functions", {}).get(name, {}), config, CHALICE_DEFAULTS):
            if layer.get(key) is not None:
                return int(layer[key])
        raise KeyError(key)

    return {name: {"timeout": lookup(name, "lambda_timeout"), "memory": lookup(name, "lambda_memory_size")} for name in names}


def queue_settings(stage: str) -> dict[str, dict[str, int]]:
    """Each consumed queue's visibility timeout and receive count, derived from its consumer's timeout
    (chalicelib/timing.py); refuses a batch that cannot fit its function. Used by the deploy template
    and the local bootstrap alike."""
    from chalicelib.timing import CONSUMERS, MAX_RECEIVE_COUNT, check_consumer, visibility_timeout_s

    functions = function_settings(stage)
    settings = {}
    for name, consumer in CONSUMERS.items():
        timeout = functions[name]["timeout"]
        check_consumer(name, timeout, consumer)
        settings[consumer.queue] = {"VisibilityTimeout": visibility_timeout_s(timeout, consumer), "maxReceiveCount": MAX_RECEIVE_COUNT}
    return settings
