"""An RA-tree instance (a workload on a mesh of tiles and an E^n D^m objective), built from CLI options."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from accelsched.errors import InputError
from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.spec import Accelerator, Core, Mesh
from accelsched.models.workload import Workload
from accelsched.problems.ra_tree.tree import RATree

__all__ = [
    "OPTIONS",
    "NocModel",
    "RATreeInstance",
    "core_buffer_bytes",
    "make_instance",
    "objective",
    "tile_buffer_bytes",
]


@dataclass(frozen=True)
class NocModel:
    """How the evaluator moves tensors on the mesh.

    The defaults are SET's artifact's (``src/main.cpp``: ``NoC::unicast_only = true``
    and ``NoC::set_interleave(port_groups, 2)``), which its published figures come from.

    Attributes
    ----------
    multicast
        False (SET): a tensor several tiles need whole is sent to each of them
        separately; True: once, along an XY multicast tree.
    dram_groups
        SET: 2, every tile's DRAM traffic is spread equally over the ports of the two
        DRAM port groups nearest to it
        (:func:`accelsched.hardware.cost.transfer.interleaved_dram_ports`); 0: all of
        it through the single nearest attachment point.
    """

    multicast: bool = False
    dram_groups: int = 2

    def __post_init__(self) -> None:
        if not isinstance(self.multicast, bool):
            raise ValueError(f"NoC model: multicast must be a bool, got {self.multicast!r}")
        if isinstance(self.dram_groups, bool) or not isinstance(self.dram_groups, int) or self.dram_groups < 0:
            raise ValueError(f"NoC model: dram_groups must be an integer >= 0, got {self.dram_groups!r}")


@dataclass(frozen=True)
class RATreeInstance:
    """An inter-layer scheduling instance.

    Attributes
    ----------
    workload
        The DNN; its batch (``Workload.batch``) is the total batch of the schedule.
    accelerator
        A tiled accelerator: a mesh of identical tiles.
    energy_exponent, delay_exponent
        The objective is ``energy^energy_exponent x delay^delay_exponent`` (SET: E^2 D
        on the edge, E D^2 in the cloud).
    noc
        How tensors move on the mesh (default: SET's unicast and interleaved DRAM).
    """

    workload: Workload
    accelerator: Accelerator
    energy_exponent: int = 1
    delay_exponent: int = 1
    noc: NocModel = NocModel()
    _batched: dict[int, Workload] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.accelerator.interconnect, Mesh):
            raise ValueError(
                f"RA-tree instance: accelerator {self.accelerator.name!r} has no mesh of tiles "
                f"(its interconnect is {type(self.accelerator.interconnect).__name__}); use a mesh preset"
            )
        for name in ("energy_exponent", "delay_exponent"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"RA-tree instance: {name} must be an integer >= 0, got {value!r}")
        if self.energy_exponent == self.delay_exponent == 0:
            raise ValueError("RA-tree instance: energy_exponent and delay_exponent cannot both be 0")

    @property
    def batch(self) -> int:
        """The total batch."""
        return self.workload.batch

    def at_batch(self, batch: int) -> Workload:
        """The workload with every layer at ``batch`` samples (cached: leaves run on sub-batches)."""
        found = self._batched.get(batch)
        if found is None:
            found = self.workload if batch == self.workload.batch else self.workload.with_batch(batch)
            self._batched[batch] = found
        return found

    @property
    def n_tiles(self) -> int:
        """Tiles of the mesh."""
        return self.accelerator.n_cores


def tile_buffer_bytes(accelerator: Accelerator) -> int:
    """Capacity of a tile's outermost on-chip memory (the levels holding I, W and O next to DRAM)."""
    return core_buffer_bytes(accelerator.cores[0])


def core_buffer_bytes(core: Core) -> int:
    """Capacity of a core's outermost on-chip memory levels (those holding I, W and O next to DRAM)."""
    return core.top_capacity_bytes


def objective(instance: RATreeInstance, tree: RATree, report: CostReport) -> float:
    """``energy_pj ** energy_exponent * latency_cycles ** delay_exponent``."""
    return float(report.energy_pj) ** instance.energy_exponent * float(report.latency_cycles) ** instance.delay_exponent


OPTIONS = {
    "objective": "EnDm: energy^n x delay^m, e.g. E2D1 (default on edge meshes) or E1D2 (on set-cloud-*)",
    "noc": "unicast (default, SET's) or multicast",
    "dram": "interleave (default, SET's: the ports of the two nearest DRAM groups) or nearest",
}
"""The ``--option`` keys of the RA-tree problem."""


def make_instance(workload: Workload, accelerator: Accelerator, options: Mapping[str, str]) -> RATreeInstance:
    """Instance from CLI-style options; ``InputError`` on bad ones.

    The objective defaults to SET's: E^2 D, or E D^2 on the ``set-cloud-*`` presets.
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise InputError(f"unknown ra-tree option {unknown[0]!r}", "--option", "options: " + ", ".join(OPTIONS))
    noc_text, dram_text = options.get("noc", "unicast"), options.get("dram", "interleave")
    if noc_text not in ("unicast", "multicast"):
        raise InputError(f"bad noc {noc_text!r}", "--option noc", "write unicast or multicast")
    if dram_text not in ("interleave", "nearest"):
        raise InputError(f"bad dram {dram_text!r}", "--option dram", "write interleave or nearest")
    noc = NocModel(noc_text == "multicast", 2 if dram_text == "interleave" else 0)
    default = "E1D2" if accelerator.name.startswith("set-cloud") else "E2D1"
    text = options.get("objective", default)
    match = re.fullmatch(r"E(\d+)D(\d+)", text)
    if match is None:
        raise InputError(f"bad objective {text!r}", "--option objective", "write EnDm, e.g. E2D1 or E1D2")
    if not isinstance(accelerator.interconnect, Mesh):
        raise InputError(
            f"{accelerator.name} has no mesh of tiles",
            "--hardware",
            "use set-edge-4x4, set-cloud-12x12 or a mesh preset",
        )
    try:
        return RATreeInstance(workload, accelerator, int(match[1]), int(match[2]), noc)
    except ValueError as exc:
        raise InputError(str(exc), "--option objective") from None
