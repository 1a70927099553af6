"""Refresh tests/data/litellm_bedrock_prices.json from LiteLLM's full price map.

    pip download --no-deps litellm==<version> -d /tmp/l && unzip -o /tmp/l/litellm-*.whl \
        litellm/model_prices_and_context_window_backup.json -d /tmp/l
    python tests/data/vendor_litellm_prices.py /tmp/l/litellm/model_prices_and_context_window_backup.json <version>

Keeps every Bedrock entry whose base model id the catalog prices (bare ids, profile-prefixed ids and
bedrock/<region>/<id>), price fields only, so the comparison test sees every figure LiteLLM has for our models.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from chalicelib.meter.catalog import base_model_id  # noqa: E402

FIELDS = ("litellm_provider", "mode", "input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost",
          "cache_creation_input_token_cost", "cache_creation_input_token_cost_above_1hr", "source")


def model_id_of(key: str) -> str | None:
    """The Bedrock model id behind a LiteLLM key ("bedrock/<region>/<id>" or a plain, maybe prefixed, id)."""
    if key.startswith("bedrock/"):
        parts = key.split("/")
        return parts[2] if len(parts) == 3 else None
    return key


def subset(full: dict, catalog_models: set[str]) -> dict:
    out = {}
    for key, entry in sorted(full.items()):
        if not str(entry.get("litellm_provider", "")).startswith("bedrock"):
            continue
        model_id = model_id_of(key)
        if model_id and base_model_id(model_id) in catalog_models:
            out[key] = {field: entry[field] for field in FIELDS if field in entry}
    return out


def main(path: str, version: str) -> None:
    raw = Path(path).read_bytes()
    catalog = json.loads((ROOT / "chalicelib/meter/catalog/prices.json").read_text())
    about = {
        "source": f"litellm {version} wheel from PyPI (pip download --no-deps litellm=={version}), file litellm/model_prices_and_context_window_backup.json",
        "sha256_of_full_file": hashlib.sha256(raw).hexdigest(),
        "license": "MIT (BerriAI/litellm)",
        "extracted": datetime.date.today().isoformat(),
        "subset": "every Bedrock entry (litellm_provider bedrock/bedrock_converse) whose base model id is in chalicelib/meter/catalog/prices.json: "
                  "bare ids, profile-prefixed ids (us./eu./apac./jp./au./ca./us-gov./global.) and bedrock/<region>/<id>; price fields only",
        "refresh": "python tests/data/vendor_litellm_prices.py <full json> <litellm version>",
    }
    models = subset(json.loads(raw), set(catalog["bedrock_models"]))
    target = ROOT / "tests/data/litellm_bedrock_prices.json"
    target.write_text(json.dumps({"_about": about, "models": models}, indent=1) + "\n")
    print(f"{len(models)} entries -> {target}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
