"""The versioned price catalog (a data file validated by pydantic; no prices live in code)."""
from __future__ import annotations

import json
from decimal import Decimal
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

# Cross-region inference profiles prefix the base model id (e.g. "us.anthropic...").
_INFERENCE_PROFILE_PREFIXES = ("us.", "eu.", "apac.", "us-gov.", "global.")


class TokenPrice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: Decimal
    output_per_mtok: Decimal
    cache_read_per_mtok: Decimal | None = None
    cache_write_per_mtok: Decimal | None = None
    source: str
    as_of: str


class PriceCatalog(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str
    currency: str
    notes: str = ""
    bedrock_models: dict[str, TokenPrice]

    def token_price(self, model_id: str) -> TokenPrice | None:
        """Price for a Bedrock model id or inference profile id; None when the catalog lacks it."""
        return self.bedrock_models.get(base_model_id(model_id))


def base_model_id(model_id: str) -> str:
    for prefix in _INFERENCE_PROFILE_PREFIXES:
        if model_id.startswith(prefix):
            return model_id[len(prefix):]
    return model_id


@lru_cache(maxsize=4)
def load_catalog(path: str) -> PriceCatalog:
    with open(path, encoding="utf-8") as handle:
        return PriceCatalog.model_validate(json.load(handle))
