"""The multicore solution: a core per layer and a start cycle per CN, bus transfer and off-chip access."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = ["ACCESS_KINDS", "MulticoreSolution", "OffChipAccess", "Transfer"]

ACCESS_KINDS = ("input", "weights", "output", "spill", "fetch")
"""Kinds of off-chip access."""


@dataclass(frozen=True)
class Transfer:
    """The output of CN ``cn`` (``layer:part``) sent over the bus to ``core``, starting at cycle ``start``."""

    cn: str
    core: int
    start: int


@dataclass(frozen=True)
class OffChipAccess:
    """An access on the DRAM port: ``kind`` (input, weights, output) for CN ``cn`` on ``core`` at ``start``."""

    kind: str
    cn: str
    core: int
    start: int

    def __post_init__(self) -> None:
        if self.kind not in ACCESS_KINDS:
            raise ValueError(f"off-chip access kind must be one of {', '.join(ACCESS_KINDS)}, got {self.kind!r}")


@dataclass(frozen=True)
class MulticoreSolution:
    """A core per layer and a start cycle per CN, transfer and off-chip access.

    Attributes
    ----------
    allocation
        Core id of every layer.
    starts
        Start cycle of every CN, by CN name (``layer:part``, see :class:`~accelsched.hardware.cost.cn_graph.CN`).
    transfers, offchip
        The bus transfers and the DRAM-port accesses.
    """

    allocation: Mapping[str, int]
    starts: Mapping[str, int]
    transfers: tuple[Transfer, ...] = ()
    offchip: tuple[OffChipAccess, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "allocation", MappingProxyType(dict(self.allocation)))
        object.__setattr__(self, "starts", MappingProxyType(dict(self.starts)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form."""
        return {
            "allocation": dict(self.allocation),
            "cns": dict(self.starts),
            "transfers": [[t.cn, t.core, t.start] for t in self.transfers],
            "offchip": [[a.kind, a.cn, a.core, a.start] for a in self.offchip],
        }

    @classmethod
    def from_dict(cls, data: Any) -> MulticoreSolution:
        """Inverse of :meth:`to_dict`; ``ValueError`` naming the bad field."""
        if not isinstance(data, Mapping) or not {"allocation", "cns"} <= set(data):
            raise ValueError("multicore solution: expected an object with allocation, cns, transfers, offchip")
        try:
            allocation = {str(k): int(v) for k, v in dict(data["allocation"]).items()}
            starts = {str(k): int(v) for k, v in dict(data["cns"]).items()}
            transfers = tuple(Transfer(str(t[0]), int(t[1]), int(t[2])) for t in data.get("transfers", ()))
            offchip = tuple(OffChipAccess(str(a[0]), str(a[1]), int(a[2]), int(a[3])) for a in data.get("offchip", ()))
        except (TypeError, IndexError, KeyError, ValueError) as exc:
            raise ValueError(f"multicore solution: malformed entry ({exc})") from None
        return cls(allocation, starts, transfers, offchip)

