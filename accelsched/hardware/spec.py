"""Accelerator specifications: cores, memory hierarchies, interconnect, off-chip memory.

All specs are frozen dataclasses validated at construction. Units follow the
project contract: energy in pJ, time in cycles, sizes in bytes, bandwidth in
bytes per cycle.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

from accelsched.models.layer import LOOP_DIMS, OpKind

__all__ = [
    "OPERANDS",
    "Accelerator",
    "Bus",
    "Core",
    "Crossbar",
    "Interconnect",
    "MemoryLevel",
    "Mesh",
    "OffChip",
]

OPERANDS: tuple[str, ...] = ("I", "W", "O")
"""Operands of a layer: input activations, weights, outputs (partial sums)."""

SPATIAL_DIMS: tuple[str, ...] = LOOP_DIMS


def _positive(owner: str, name: str, value: object, *, integer: bool = False, allow_zero: bool = False) -> None:
    ok_type = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok_type:
        kind = "an integer" if integer else "a number"
        raise ValueError(f"{owner}: field {name} must be {kind}, got {value!r}")
    assert isinstance(value, int | float)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{owner}: field {name} must be {bound}, got {value!r}")


@dataclass(frozen=True)
class MemoryLevel:
    """One on-chip memory (register file, local buffer, global buffer).

    Parameters
    ----------
    name
        Unique within its core.
    capacity_bytes
        Capacity of one instance.
    read_energy_pj_per_byte, write_energy_pj_per_byte
        Access energy per byte.
    read_bandwidth_bytes_per_cycle, write_bandwidth_bytes_per_cycle
        Port bandwidth of one instance.
    instances
        Number of identical copies (e.g. one register file per PE). Data of an
        operand is spread over the copies that the spatial unrolling of its
        relevant loops addresses.
    """

    name: str
    capacity_bytes: int
    read_energy_pj_per_byte: float
    write_energy_pj_per_byte: float
    read_bandwidth_bytes_per_cycle: float
    write_bandwidth_bytes_per_cycle: float
    instances: int = 1

    def __post_init__(self) -> None:
        owner = f"memory {self.name!r}"
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"memory name must be a non-empty string, got {self.name!r}")
        _positive(owner, "capacity_bytes", self.capacity_bytes, integer=True)
        _positive(owner, "instances", self.instances, integer=True)
        for name in ("read_energy_pj_per_byte", "write_energy_pj_per_byte"):
            _positive(owner, name, getattr(self, name), allow_zero=True)
        for name in ("read_bandwidth_bytes_per_cycle", "write_bandwidth_bytes_per_cycle"):
            _positive(owner, name, getattr(self, name))

    @property
    def total_capacity_bytes(self) -> int:
        """Capacity over all instances."""
        return self.capacity_bytes * self.instances


@dataclass(frozen=True)
class Core:
    """A compute core: a spatial MAC array with its memory hierarchy.

    Parameters
    ----------
    id
        Index of the core in its accelerator (0-based, dense).
    name
        Name of the core (its type name in the preset).
    spatial
        Spatial unrolling as ``(loop dimension, factor)`` pairs, e.g.
        ``(("K", 32), ("C", 32))`` for a 32x32 array. The MAC count is the product.
    memories
        The on-chip memory levels of the core.
    hierarchy
        For each operand ``I``, ``W``, ``O``: names of the levels holding it, from
        the innermost (next to the MACs) to the outermost (next to DRAM).
    mac_energy_pj
        Energy of one multiply-accumulate.
    supported
        Operator kinds the core can execute.
    """

    id: int
    name: str
    spatial: tuple[tuple[str, int], ...]
    memories: tuple[MemoryLevel, ...]
    hierarchy: Mapping[str, tuple[str, ...]] = field(hash=False)
    mac_energy_pj: float
    supported: frozenset[OpKind] = field(default_factory=lambda: frozenset(OpKind))

    def __post_init__(self) -> None:
        owner = f"core {self.id} ({self.name!r})"
        _positive(owner, "id", self.id, integer=True, allow_zero=True)
        _positive(owner, "mac_energy_pj", self.mac_energy_pj, allow_zero=True)
        object.__setattr__(self, "spatial", tuple((str(d), f) for d, f in self.spatial))
        object.__setattr__(self, "memories", tuple(self.memories))
        object.__setattr__(self, "supported", frozenset(self.supported))
        hierarchy = {op: tuple(levels) for op, levels in dict(self.hierarchy).items()}
        object.__setattr__(self, "hierarchy", hierarchy)
        if not self.spatial:
            raise ValueError(f"{owner}: field spatial is empty; give at least one (dimension, factor) pair")
        seen: set[str] = set()
        for dim, factor in self.spatial:
            if dim not in SPATIAL_DIMS:
                raise ValueError(f"{owner}: spatial dimension {dim!r} is not one of {', '.join(SPATIAL_DIMS)}")
            if dim in seen:
                raise ValueError(f"{owner}: spatial dimension {dim!r} is unrolled twice")
            seen.add(dim)
            _positive(owner, f"spatial.{dim}", factor, integer=True)
        names = [m.name for m in self.memories]
        if len(set(names)) != len(names):
            raise ValueError(f"{owner}: memory names must be unique, got {names}")
        unknown_ops = sorted(set(hierarchy) - set(OPERANDS))
        if unknown_ops:
            raise ValueError(f"{owner}: hierarchy has unknown operand(s) {unknown_ops}; operands are I, W, O")
        for op in OPERANDS:
            levels = hierarchy.get(op)
            if not levels:
                raise ValueError(f"{owner}: hierarchy.{op} is missing; list the levels holding {op}, innermost first")
            for lvl in levels:
                if lvl not in names:
                    raise ValueError(
                        f"{owner}: hierarchy.{op} refers to missing memory level {lvl!r}; levels are {names}"
                    )
            if len(set(levels)) != len(levels):
                raise ValueError(f"{owner}: hierarchy.{op} lists a level twice: {list(levels)}")
        unused = [n for n in names if not any(n in levels for levels in hierarchy.values())]
        if unused:
            raise ValueError(f"{owner}: memory level(s) {unused} hold no operand; add them to hierarchy or remove them")
        if not self.supported:
            raise ValueError(f"{owner}: field supported is empty")

    @cached_property
    def n_macs(self) -> int:
        """MAC units in the array."""
        return math.prod(f for _, f in self.spatial)

    @cached_property
    def spatial_factors(self) -> dict[str, int]:
        """Spatial unrolling factor per loop dimension (absent dimensions: 1)."""
        return dict(self.spatial)

    def memory(self, name: str) -> MemoryLevel:
        """The memory level called ``name``."""
        for m in self.memories:
            if m.name == name:
                return m
        raise KeyError(f"core {self.id} has no memory level {name!r}")

    def levels(self, operand: str) -> tuple[MemoryLevel, ...]:
        """Levels holding ``operand``, innermost first."""
        return tuple(self.memory(n) for n in self.hierarchy[operand])

    def operands_of(self, level: str) -> tuple[str, ...]:
        """Operands a level holds."""
        return tuple(op for op in OPERANDS if level in self.hierarchy[op])

    @cached_property
    def on_chip_bytes(self) -> int:
        """Total on-chip memory of the core."""
        return sum(m.total_capacity_bytes for m in self.memories)

    @cached_property
    def top_capacity_bytes(self) -> int:
        """Capacity of the core's outermost on-chip levels (next to DRAM for some operand), each counted once: the
        buffer that a tile or an engine fills from off-chip memory."""
        tops = {levels[-1] for levels in self.hierarchy.values() if levels}
        return sum(self.memory(name).total_capacity_bytes for name in tops)

    def top_level(self, operand: str) -> MemoryLevel:
        """The outermost on-chip level of ``operand`` (the one DRAM feeds)."""
        return self.memory(self.hierarchy[operand][-1])

    def cost_key(self) -> tuple[Any, ...]:
        """Everything the cost of a layer on this core depends on (not the id)."""
        return (
            self.spatial,
            self.memories,
            tuple(sorted(self.hierarchy.items())),
            self.mac_energy_pj,
        )

    def supports(self, kind: OpKind) -> bool:
        """Whether the core executes layers of ``kind``."""
        return kind in self.supported


@dataclass(frozen=True)
class OffChip:
    """Off-chip memory (DRAM / HBM).

    Parameters
    ----------
    bandwidth_bytes_per_cycle
        Peak bandwidth shared by all cores.
    read_energy_pj_per_byte, write_energy_pj_per_byte
        Access energy per byte (interface included).
    """

    bandwidth_bytes_per_cycle: float
    read_energy_pj_per_byte: float
    write_energy_pj_per_byte: float

    def __post_init__(self) -> None:
        _positive("offchip", "bandwidth_bytes_per_cycle", self.bandwidth_bytes_per_cycle)
        _positive("offchip", "read_energy_pj_per_byte", self.read_energy_pj_per_byte, allow_zero=True)
        _positive("offchip", "write_energy_pj_per_byte", self.write_energy_pj_per_byte, allow_zero=True)


@dataclass(frozen=True)
class Mesh:
    """A 2D mesh network-on-chip with XY routing; core ``i`` sits at ``(i // cols, i % cols)``.

    Parameters
    ----------
    rows, cols
        Mesh size; there must be exactly ``rows * cols`` cores.
    hop_energy_pj_per_byte
        Energy to move one byte over one link (router included).
    link_bandwidth_bytes_per_cycle
        Bandwidth of one link in one direction.
    dram_nodes
        Mesh positions ``(row, col)`` where off-chip memory attaches; a transfer
        to or from DRAM uses the nearest one.
    """

    rows: int
    cols: int
    hop_energy_pj_per_byte: float
    link_bandwidth_bytes_per_cycle: float
    dram_nodes: tuple[tuple[int, int], ...] = ()
    kind: Literal["mesh"] = "mesh"

    def __post_init__(self) -> None:
        _positive("interconnect", "rows", self.rows, integer=True)
        _positive("interconnect", "cols", self.cols, integer=True)
        _positive("interconnect", "hop_energy_pj_per_byte", self.hop_energy_pj_per_byte, allow_zero=True)
        _positive("interconnect", "link_bandwidth_bytes_per_cycle", self.link_bandwidth_bytes_per_cycle)
        nodes = tuple((int(r), int(c)) for r, c in self.dram_nodes) or tuple(
            (r, c) for r in range(self.rows) for c in (0, self.cols - 1)
        )
        for r, c in nodes:
            if not (0 <= r < self.rows and 0 <= c < self.cols):
                raise ValueError(f"interconnect: dram node ({r}, {c}) is outside the {self.rows}x{self.cols} mesh")
        object.__setattr__(self, "dram_nodes", tuple(dict.fromkeys(nodes)))

    def position(self, core_id: int) -> tuple[int, int]:
        """Mesh coordinates ``(row, col)`` of a core."""
        return divmod(core_id, self.cols)

    def hops(self, src: int, dst: int) -> int:
        """Links crossed by XY routing between two cores."""
        (r1, c1), (r2, c2) = self.position(src), self.position(dst)
        return abs(r1 - r2) + abs(c1 - c2)

    def dram_hops(self, core_id: int) -> int:
        """Links between a core and the nearest DRAM attachment point."""
        r, c = self.position(core_id)
        return min(abs(r - dr) + abs(c - dc) for dr, dc in self.dram_nodes)


@dataclass(frozen=True)
class Bus:
    """A shared bus between cores (and the DRAM port)."""

    bandwidth_bytes_per_cycle: float
    energy_pj_per_byte: float
    kind: Literal["bus"] = "bus"

    def __post_init__(self) -> None:
        _positive("interconnect", "bandwidth_bytes_per_cycle", self.bandwidth_bytes_per_cycle)
        _positive("interconnect", "energy_pj_per_byte", self.energy_pj_per_byte, allow_zero=True)


@dataclass(frozen=True)
class Crossbar:
    """A crossbar: every pair of cores has its own path of ``bandwidth_bytes_per_cycle``."""

    bandwidth_bytes_per_cycle: float
    energy_pj_per_byte: float
    kind: Literal["crossbar"] = "crossbar"

    def __post_init__(self) -> None:
        _positive("interconnect", "bandwidth_bytes_per_cycle", self.bandwidth_bytes_per_cycle)
        _positive("interconnect", "energy_pj_per_byte", self.energy_pj_per_byte, allow_zero=True)


Interconnect = Mesh | Bus | Crossbar


@dataclass(frozen=True)
class Accelerator:
    """A complete accelerator.

    Parameters
    ----------
    name
        Preset or user name.
    cores
        The cores, with ids ``0 .. n-1`` in order.
    offchip
        Off-chip memory.
    interconnect
        Network between cores; None for a single core.
    clock_hz
        Clock frequency (cycles are of this clock).
    description
        One line on where the numbers come from.
    """

    name: str
    cores: tuple[Core, ...]
    offchip: OffChip
    interconnect: Interconnect | None = None
    clock_hz: float = 1e9
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"accelerator name must be a non-empty string, got {self.name!r}")
        object.__setattr__(self, "cores", tuple(self.cores))
        if not self.cores:
            raise ValueError(f"accelerator {self.name!r}: field cores is empty")
        for i, core in enumerate(self.cores):
            if core.id != i:
                raise ValueError(
                    f"accelerator {self.name!r}: core at position {i} has id {core.id}; ids must be 0..n-1"
                )
        _positive(f"accelerator {self.name!r}", "clock_hz", self.clock_hz)
        if isinstance(self.interconnect, Mesh) and self.interconnect.rows * self.interconnect.cols != len(self.cores):
            raise ValueError(
                f"accelerator {self.name!r}: a {self.interconnect.rows}x{self.interconnect.cols} mesh needs "
                f"{self.interconnect.rows * self.interconnect.cols} cores, got {len(self.cores)}"
            )
        if len(self.cores) > 1 and self.interconnect is None:
            raise ValueError(f"accelerator {self.name!r}: {len(self.cores)} cores need an interconnect")

    @property
    def n_cores(self) -> int:
        """Number of cores."""
        return len(self.cores)

    @cached_property
    def n_macs(self) -> int:
        """MAC units over all cores."""
        return sum(c.n_macs for c in self.cores)

    @cached_property
    def on_chip_bytes(self) -> int:
        """On-chip memory over all cores."""
        return sum(c.on_chip_bytes for c in self.cores)

    def core(self, core_id: int) -> Core:
        """The core with id ``core_id``."""
        if not 0 <= core_id < len(self.cores):
            raise KeyError(f"accelerator {self.name!r} has no core {core_id} (cores are 0..{len(self.cores) - 1})")
        return self.cores[core_id]

    def cores_for(self, kind: OpKind) -> tuple[Core, ...]:
        """Cores able to execute ``kind``."""
        return tuple(c for c in self.cores if c.supports(kind))

    def replace(self, **changes: Any) -> Accelerator:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def summary(self) -> str:
        """One line: name, cores, MACs, on-chip memory, interconnect."""
        net: str = self.interconnect.kind if self.interconnect is not None else "none"
        if isinstance(self.interconnect, Mesh):
            net = f"mesh {self.interconnect.rows}x{self.interconnect.cols}"
        return (
            f"{self.name}: {self.n_cores} core(s), {self.n_macs} MACs, "
            f"{self.on_chip_bytes / 2**20:.2f} MiB on chip, {net}, {self.clock_hz / 1e6:.0f} MHz"
        )
