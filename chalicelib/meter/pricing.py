"""Pure pricing of a call from its token usage. Money is Decimal, never float."""
from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict

from .catalog import TokenPrice

_MILLION = Decimal(1_000_000)
# Ledger precision: a millionth of a cent keeps per-token sums exact at any volume we meter.
_QUANTUM = Decimal("0.00000001")


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0  # 5-minute cache writes
    cache_write_1h_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Every billed token: what monthly volume and break-even count."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens + self.cache_write_1h_tokens

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_write_1h_tokens=self.cache_write_1h_tokens + other.cache_write_1h_tokens,
        )


def effective_rates(price: TokenPrice) -> dict[str, Decimal]:
    """$/M for each kind of token, with Bedrock's fallbacks made explicit.

    Cache tokens without a cache price are charged at the input price: that is what Bedrock bills
    for models without prompt caching, and it errs towards over-reporting. A 1-hour cache write
    without its own price costs what a 5-minute write costs.
    """
    cache_write = price.cache_write_per_mtok if price.cache_write_per_mtok is not None else price.input_per_mtok
    return {
        "input": price.input_per_mtok,
        "output": price.output_per_mtok,
        "cache_read": price.cache_read_per_mtok if price.cache_read_per_mtok is not None else price.input_per_mtok,
        "cache_write": cache_write,
        "cache_write_1h": price.cache_write_1h_per_mtok if price.cache_write_1h_per_mtok is not None else cache_write,
    }


def price_usage(usage: Usage, price: TokenPrice | None) -> Decimal | None:
    """Cost of `usage` at `price`; None when unpriced (never silently $0)."""
    if price is None:
        return None
    rates = effective_rates(price)
    total = (
        usage.input_tokens * rates["input"]
        + usage.output_tokens * rates["output"]
        + usage.cache_read_tokens * rates["cache_read"]
        + usage.cache_write_tokens * rates["cache_write"]
        + usage.cache_write_1h_tokens * rates["cache_write_1h"]
    ) / _MILLION
    return total.quantize(_QUANTUM)
