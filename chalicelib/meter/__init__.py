"""Cost meter: price catalog, pricing, ledger."""
