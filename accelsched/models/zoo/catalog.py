"""The catalogue of zoo networks: each network module registers its builders here on import."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from accelsched.models.workload import Workload

__all__ = ["ZooEntry", "catalog", "register"]


@dataclass(frozen=True)
class ZooEntry:
    """A zoo network.

    Attributes
    ----------
    name
        Registry name (lower case, as accepted on the command line).
    build
        ``build(batch) -> Workload``.
    description
        One line on the network and the input resolution.
    reference_gmac
        Published multiply-accumulate count in GMAC at batch 1, or None.
    source
        Where the figure and the shapes come from.
    """

    name: str
    build: Callable[[int], Workload]
    description: str
    reference_gmac: float | None = None
    source: str = ""


_REGISTRY: dict[str, ZooEntry] = {}


def register(
    name: str, description: str, reference_gmac: float | None = None, source: str = ""
) -> Callable[[Callable[[int], Workload]], Callable[[int], Workload]]:
    """Decorator registering ``build(batch) -> Workload`` under ``name``."""

    def decorate(build: Callable[[int], Workload]) -> Callable[[int], Workload]:
        if name in _REGISTRY:
            raise ValueError(f"zoo name {name!r} registered twice")
        _REGISTRY[name] = ZooEntry(name, build, description, reference_gmac, source)
        return build

    return decorate


def catalog() -> dict[str, ZooEntry]:
    """The registered networks by name, in registration order."""
    return dict(_REGISTRY)
