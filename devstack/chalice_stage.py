"""The environment a Chalice stage gives its Lambdas (.chalice/config.json: globals, then the stage's)."""
from __future__ import annotations

import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stage_environment(stage: str) -> dict[str, str]:
    with open(os.path.join(ROOT, ".chalice", "config.json"), encoding="utf-8") as handle:
        config = json.load(handle)
    return {**config.get("environment_variables", {}), **config["stages"][stage].get("environment_variables", {})}
