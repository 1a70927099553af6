"""A tenant's own setting over the account-wide default, stored under the tenant `*`.

Two stores read this way: screening policies (`screening.service.PolicyStore`) and tenant settings
(`tenant_settings.TenantSettingsStore`). Each keeps its table, key and cache; what they share is here:
the keys to read and in which order, how a stored item becomes an overlay, and how overlays fold.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from .observability import logger

DEFAULT_TENANT = "*"

Base = TypeVar("Base")
Stored = TypeVar("Stored", bound=BaseModel)


class Overlay(Protocol[Base]):
    """What one level stores: `over` returns `base` with the values this level sets laid over it."""

    def over(self, base: Base, /) -> Base: ...


def lookup_order(tenant: str) -> tuple[str, str]:
    """The keys to read, weakest first: the account-wide default, then the tenant's own."""
    return (DEFAULT_TENANT, tenant)


def fold(base: Base, overlays: Iterable[Overlay[Base] | None]) -> Base:
    """`base` with each overlay laid over it in turn, later ones winning; None (nothing stored) is skipped (pure)."""
    for overlay in overlays:
        if overlay is not None:
            base = overlay.over(base)
    return base


def parse_stored(model: type[Stored], item: Mapping[str, Any] | None, tenant: str, event: str) -> Stored | None:
    """`item` as `model`; None when nothing is stored or the item is broken. A broken item must not decide
    anything (open a gate, pick a backend): the level below decides, and the error log `event` says why."""
    if not item:
        return None
    try:
        return model.model_validate(item)
    except ValidationError:
        logger.error(event, extra={"tenant": tenant})
        return None
