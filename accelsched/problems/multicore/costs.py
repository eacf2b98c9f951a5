"""Durations and energies of the activities of a multicore schedule, from the shared primitives.

Costs
-----
*CN.* The shared primitive :func:`~accelsched.hardware.cost.layer_cost` prices the
CN's part of the layer on its core with every operand already in the core's top
on-chip level (``tops``): the data movement into and out of that level is priced
by the transfers and off-chip accesses below. Duration = the primitive's roofline
latency rounded up to whole cycles (at least one).

*Transfer.* The CN's whole output crosses the bus once per destination core:
``ceil(bytes / bus bandwidth)`` cycles; energy = bytes x (bus energy + read of the
source core's top output level + write of the destination's top input level).

*Off-chip access.* ``ceil(bytes / DRAM bandwidth)`` cycles on the single DRAM
port; energy = bytes x DRAM energy plus the write (loads) or read (stores) of the
core's top level of the operand. Input loads carry the network-input rows a
source CN newly needs, weight loads the layer's weights, output stores and
spills the CN's output, fetches a spilled CN output into a consumer's core.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.hardware.spec import Bus, Core
from accelsched.problems.multicore.instance import MulticoreInstance

__all__ = ["CNCost", "bus_of", "cn_cost", "offchip_bytes", "offchip_cycles", "transfer_cycles"]

@dataclass(frozen=True)
class CNCost:
    """Cost of one CN on one core (its data already on chip).

    Attributes
    ----------
    duration_cycles
        Whole cycles the CN occupies its core.
    energy_pj
        MAC and on-chip memory energy.
    energy_breakdown_pj
        ``mac`` and ``mem:<level>`` shares.
    macs
        Multiply-accumulates.
    """

    duration_cycles: int
    energy_pj: float
    energy_breakdown_pj: Mapping[str, float]
    macs: int


def _tops(core: Core) -> dict[str, str]:
    return {op: core.hierarchy[op][-1] for op in ("I", "W", "O")}


def cn_cost(instance: MulticoreInstance, k: int, core_id: int) -> CNCost:
    """Cost of CN ``k`` on core ``core_id`` (cached on the instance)."""
    key = ("cn", k, core_id)
    cached = instance.cost_cache.get(key)
    if cached is not None:
        return cached
    core = instance.accelerator.core(core_id)
    cost = layer_cost(instance.graph.cns[k].shape, core, instance.accelerator.offchip, _tops(core))
    breakdown = {name: e for name, e in cost.energy_breakdown_pj.items() if name != "dram"}
    result = CNCost(max(1, math.ceil(cost.latency_cycles - 1e-9)), sum(breakdown.values()), breakdown, cost.macs)
    instance.cost_cache[key] = result
    return result


def bus_of(instance: MulticoreInstance) -> Bus:
    bus = instance.accelerator.interconnect
    assert isinstance(bus, Bus)
    return bus


def transfer_cycles(instance: MulticoreInstance, k: int) -> int:
    """Cycles of the transfer of CN ``k``'s output over the bus."""
    return math.ceil(instance.graph.cns[k].output_bytes / bus_of(instance).bandwidth_bytes_per_cycle)


def offchip_bytes(instance: MulticoreInstance, kind: str, k: int) -> int:
    """Bytes of an off-chip access of ``kind`` for CN ``k``."""
    graph = instance.graph
    if kind == "input":
        return graph.input_bytes(k)
    if kind == "weights":
        return instance.workload[graph.cns[k].layer].weight_bytes
    return graph.cns[k].output_bytes  # output, spill, fetch


def offchip_cycles(instance: MulticoreInstance, kind: str, k: int) -> int:
    """Cycles of an off-chip access of ``kind`` for CN ``k`` on the DRAM port."""
    return math.ceil(offchip_bytes(instance, kind, k) / instance.accelerator.offchip.bandwidth_bytes_per_cycle)
