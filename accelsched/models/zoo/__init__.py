"""The workload zoo: every network used by the five papers, with real layer shapes.

Networks register themselves with :func:`register`; :func:`get` builds one by
name. Each entry records the published MAC count it is checked against (when a
public figure exists) and where its shapes come from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from accelsched.models.workload import Workload

__all__ = ["ZooEntry", "entries", "get", "names", "register"]


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


def _load_all() -> None:
    """Import the modules that define networks (each registers on import)."""
    from accelsched.models.zoo import cnn, defines, nas, randwire, set_ref, transformer  # noqa: F401


def entries() -> dict[str, ZooEntry]:
    """All registered networks by name, in registration order."""
    _load_all()
    return dict(_REGISTRY)


def names() -> list[str]:
    """Names of all zoo networks."""
    return list(entries())


def get(name: str, batch: int = 1) -> Workload:
    """Build the zoo network ``name`` at batch size ``batch``.

    Raises
    ------
    KeyError
        If no network has that name.
    """
    table = entries()
    if name not in table:
        raise KeyError(name)
    return table[name].build(batch)
