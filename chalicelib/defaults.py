"""Default model and instance ids: the one place they are spelled (deploy settings override them).

Settings (`config.py`), the cost CLI, the report and the break-even planner read these; tests check
that no other module under chalicelib/ repeats the literals.
"""
from __future__ import annotations

# The Bedrock model a request uses when it names none (env DEFAULT_MODEL), and the model the cost
# report compares when the ledger has no priced Bedrock traffic yet.
DEFAULT_BEDROCK_MODEL = "anthropic.claude-3-sonnet-20240229-v1:0"
# The open-weights model the GPU path serves (env SELF_HOSTED_MODEL), and the break-even's stand-in
# when the catalog pairs no model with the Bedrock one.
DEFAULT_SELF_HOSTED_MODEL = "qwen3-32b"
# The instance the break-even prices the self-hosted side on when the catalog's pair names none
# (seed 003 measured G7E; the Batch launch types are chalicelib/jobs/gpu_catalog.json's deployment).
DEFAULT_BREAKEVEN_INSTANCE = "g7e.2xlarge"
