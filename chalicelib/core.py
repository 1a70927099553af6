"""Value types every layer shares: what a model call used (`Usage`) and money (`usd`).

models/, agent/, jobs/ and the meter import these from here, so nothing outside the meter reaches into
its internals; every *price* is computed in `chalicelib.meter.pricing` and rounded with `usd` below.

Money is `Decimal`, never float: binary floats cannot hold $0.000003 exactly, and sums of millions of
per-call costs must reconcile with the bill to the cent.
"""
from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

from pydantic import BaseModel, ConfigDict

# The one rounding rule for money the meter records (ledger entries, budget reservations, GPU attempts).
# Why 1e-8 dollars (a millionth of a cent): rounding one call costs at most half a quantum, $0.000000005,
# less than one token at the cheapest catalog rate ($0.00875/M, Nova Micro cache reads, ~$0.0000000088
# a token), so no call of a real model rounds to $0; even 10^8 calls a month are off by at most $0.50
# in the worst case. Half-even (banker's) rounding is unbiased, so the per-call errors cancel
# rather than drift one way; it is set explicitly, not taken from the thread's decimal context.
USD_QUANTUM = Decimal("0.00000001")


def usd(amount: Decimal) -> Decimal:
    """`amount` dollars at ledger precision (USD_QUANTUM, half-even)."""
    return amount.quantize(USD_QUANTUM, rounding=ROUND_HALF_EVEN)


class Usage(BaseModel):
    """Tokens one model call (or a sum of calls) was billed for."""

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
