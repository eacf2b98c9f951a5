"""The cost report every evaluator returns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["CostReport"]


def _frozen(mapping: Mapping[str, float] | None) -> Mapping[str, float]:
    return MappingProxyType(dict(sorted((mapping or {}).items())))


@dataclass(frozen=True)
class CostReport:
    """Energy, time and traffic of a schedule, as computed by the shared cost model.

    Attributes
    ----------
    energy_pj
        Total energy in pJ; equals the sum of ``energy_breakdown_pj``.
    latency_cycles
        Time from start to end in accelerator clock cycles.
    dram_bytes
        Bytes read from plus written to off-chip memory.
    noc_byte_hops
        Bytes times hops moved over the on-chip network (0 without a mesh).
    peak_memory_bytes
        Largest on-chip footprint at any time, summed over cores.
    utilization
        MACs performed over MAC slots available during ``latency_cycles``, in (0, 1].
    macs
        Multiply-accumulates performed.
    energy_breakdown_pj
        Energy per component: ``mac``, ``dram``, ``noc``, and one entry per
        on-chip memory level named ``mem:<level>``.
    """

    energy_pj: float
    latency_cycles: float
    dram_bytes: float
    noc_byte_hops: float
    peak_memory_bytes: float
    utilization: float
    macs: int
    energy_breakdown_pj: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "energy_breakdown_pj", _frozen(self.energy_breakdown_pj))
        for name in ("energy_pj", "latency_cycles", "dram_bytes", "noc_byte_hops", "peak_memory_bytes"):
            value = getattr(self, name)
            if not value >= 0:  # also rejects NaN
                raise ValueError(f"CostReport: field {name} must be >= 0, got {value!r}")
        if not 0 <= self.utilization <= 1 + 1e-9:
            raise ValueError(f"CostReport: field utilization must be in [0, 1], got {self.utilization!r}")
        total = sum(self.energy_breakdown_pj.values())
        if self.energy_breakdown_pj and abs(total - self.energy_pj) > 1e-6 * max(1.0, self.energy_pj):
            raise ValueError(f"CostReport: energy_pj={self.energy_pj} differs from the sum of its breakdown ({total})")

    @property
    def edp(self) -> float:
        """Energy-delay product in pJ x cycles."""
        return self.energy_pj * self.latency_cycles

    def metric(self, name: str) -> float:
        """Value of a named metric: ``energy``, ``latency``, ``edp``, ``dram``, ``noc``, ``memory``,
        or ``E^n*D^m`` / ``EnDm`` (e.g. ``E2D1`` is energy squared times delay)."""
        simple = {
            "energy": self.energy_pj,
            "latency": self.latency_cycles,
            "edp": self.edp,
            "dram": self.dram_bytes,
            "noc": self.noc_byte_hops,
            "memory": self.peak_memory_bytes,
        }
        if name in simple:
            return simple[name]
        n, m = _parse_energy_delay_exponents(name)
        return float(self.energy_pj) ** n * float(self.latency_cycles) ** m

    @classmethod
    def combine_sequential(cls, reports: Iterable[CostReport], mac_slots_per_cycle: int) -> CostReport:
        """Reports of phases run one after the other: energies, latencies and traffic add up.

        ``peak_memory_bytes`` is the largest phase peak; ``utilization`` is recomputed
        from the total MACs over ``mac_slots_per_cycle`` x total latency.
        """
        reports = list(reports)
        if not reports:
            raise ValueError("combine_sequential needs at least one report")
        breakdown: dict[str, float] = {}
        for r in reports:
            for k, v in r.energy_breakdown_pj.items():
                breakdown[k] = breakdown.get(k, 0.0) + v
        latency = sum(r.latency_cycles for r in reports)
        macs = sum(r.macs for r in reports)
        return cls(
            energy_pj=sum(breakdown.values()) if breakdown else sum(r.energy_pj for r in reports),
            latency_cycles=latency,
            dram_bytes=sum(r.dram_bytes for r in reports),
            noc_byte_hops=sum(r.noc_byte_hops for r in reports),
            peak_memory_bytes=max(r.peak_memory_bytes for r in reports),
            utilization=min(1.0, macs / (mac_slots_per_cycle * latency)) if latency > 0 else 0.0,
            macs=macs,
            energy_breakdown_pj=breakdown,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form with the keys of the CLI's ``cost`` object."""
        return {
            "energy_pj": self.energy_pj,
            "latency_cycles": self.latency_cycles,
            "dram_bytes": self.dram_bytes,
            "noc_byte_hops": self.noc_byte_hops,
            "peak_memory_bytes": self.peak_memory_bytes,
            "utilization": self.utilization,
            "macs": self.macs,
            "edp": self.edp,
            "breakdown": dict(self.energy_breakdown_pj),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CostReport:
        """Inverse of :meth:`to_dict` (the derived ``edp`` key is ignored)."""
        return cls(
            energy_pj=data["energy_pj"],
            latency_cycles=data["latency_cycles"],
            dram_bytes=data["dram_bytes"],
            noc_byte_hops=data["noc_byte_hops"],
            peak_memory_bytes=data["peak_memory_bytes"],
            utilization=data["utilization"],
            macs=data["macs"],
            energy_breakdown_pj=data.get("breakdown", {}),
        )


def _parse_energy_delay_exponents(name: str) -> tuple[float, float]:
    """Parse ``E^2*D``, ``E2D1``, ``ED^2`` ... into the exponents (n, m)."""
    text = name.replace("^", "").replace("*", "").replace(" ", "").upper()
    if not text.startswith("E") or "D" not in text:
        raise ValueError(
            f"unknown metric {name!r}; use energy, latency, edp, dram, noc, memory or E^n*D^m (e.g. E^2*D)"
        )
    e_part, d_part = text[1:].split("D", 1)
    try:
        return float(e_part or 1), float(d_part or 1)
    except ValueError:
        raise ValueError(f"unknown metric {name!r}; write energy-delay metrics as E^n*D^m") from None
