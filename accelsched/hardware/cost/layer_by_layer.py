"""Layer-by-layer evaluator: every layer in turn, spread over the cores, through DRAM.

This is the classic baseline schedule (LBL in DeFiNES and Stream, LS in SET and
Atomic Dataflow): layers run one after another in topological order; each layer
reads its inputs and weights from DRAM and writes its output back to DRAM; a
layer is split evenly over 1, 2, 4, ... or all of the cores that can run it,
along the output channels (``K``, or ``G`` for depthwise layers), the output
rows (``OY``) or the batch (``B``), whichever gives the lowest latency (then
energy).

Time of a layer: the slowest part (each part's own roofline), bounded below by
the layer's total DRAM bytes over the shared off-chip bandwidth and, on a bus,
its bytes over the bus bandwidth. Mesh link contention is not modelled here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from accelsched.hardware.cost.layer_cost import LayerCost, layer_cost
from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.spec import Accelerator, Bus, Crossbar, Mesh
from accelsched.models.layer import Layer
from accelsched.models.workload import Workload

__all__ = ["LayerStep", "evaluate_layer_by_layer", "layer_by_layer_steps", "part_of", "split_layer"]


@dataclass(frozen=True)
class LayerStep:
    """One layer of a layer-by-layer schedule.

    Attributes
    ----------
    layer
        Layer name.
    split_dim
        Loop split across cores (``K``, ``G``, ``OY``, ``B``) or ``""`` for one core.
    cores
        Core ids used, one per part.
    parts
        Cost of each part on its core.
    latency_cycles
        Time of the step.
    network_energy_pj, noc_byte_hops
        Interconnect cost of the DRAM traffic of the step.
    """

    layer: str
    split_dim: str
    cores: tuple[int, ...]
    parts: tuple[LayerCost, ...]
    latency_cycles: float
    network_energy_pj: float
    noc_byte_hops: float

    @property
    def energy_pj(self) -> float:
        """Energy of the step, network included."""
        return sum(p.energy_pj for p in self.parts) + self.network_energy_pj

    @property
    def dram_bytes(self) -> float:
        """Off-chip bytes of the step."""
        return sum(p.dram_bytes for p in self.parts)


def part_of(layer: Layer, **sizes: int) -> Layer:
    """The part of ``layer`` with some loop sizes reduced (e.g. ``K=16`` or ``OY=7``).

    A part along ``OY``/``OX`` is an interior band: it has no padding along that
    axis and reads its full halo, which over-counts the input of the border
    parts by at most the padding.
    """
    for dim, value in sizes.items():
        full = getattr(layer, dim)
        if not 1 <= value <= full:
            raise ValueError(f"part of layer {layer.name!r}: {dim}={value} is outside 1..{full}")
    top, left, bottom, right = layer.padding
    if "OY" in sizes and sizes["OY"] < layer.OY:
        top = bottom = 0
    if "OX" in sizes and sizes["OX"] < layer.OX:
        left = right = 0
    return layer.replace(padding=(top, left, bottom, right), **sizes)


def split_layer(layer: Layer, dim: str, n_parts: int) -> list[Layer]:
    """Split ``layer`` into at most ``n_parts`` near-equal parts along ``dim``."""
    size = getattr(layer, dim)
    n = min(n_parts, size)
    base, extra = divmod(size, n)
    sizes = [base + (1 if i < extra else 0) for i in range(n)]
    return [part_of(layer, **{dim: s}) if s < size else layer for s in sizes]


def _network_cost(acc: Accelerator, core_id: int, nbytes: float) -> tuple[float, float]:
    """(energy, byte-hops) for ``nbytes`` between DRAM and a core."""
    net = acc.interconnect
    if isinstance(net, Mesh):
        hops = net.dram_hops(core_id)
        return nbytes * hops * net.hop_energy_pj_per_byte, nbytes * hops
    if isinstance(net, Bus | Crossbar):
        return nbytes * net.energy_pj_per_byte, 0.0
    return 0.0, 0.0


def _split_dims(layer: Layer) -> list[str]:
    dims = ["G" if layer.K == 1 and layer.G > 1 else "K", "OY", "B"]
    return [d for d in dims if getattr(layer, d) > 1]


def _step(layer: Layer, acc: Accelerator, core_ids: Sequence[int]) -> LayerStep:
    best: LayerStep | None = None
    counts = sorted({min(2**i, len(core_ids)) for i in range(len(core_ids).bit_length() + 1)})
    options: list[tuple[str, list[Layer]]] = [("", [layer])]
    for n in counts[1:]:
        options += [(d, split_layer(layer, d, n)) for d in _split_dims(layer)]
    for dim, parts in options:
        used = tuple(core_ids[: len(parts)])
        costs = tuple(layer_cost(p, acc.core(c), acc.offchip) for p, c in zip(parts, used, strict=True))
        net_energy = 0.0
        byte_hops = 0.0
        for cost, c in zip(costs, used, strict=True):
            e, h = _network_cost(acc, c, cost.dram_bytes)
            net_energy += e
            byte_hops += h
        dram = sum(c.dram_bytes for c in costs)
        latency = max(max(c.latency_cycles for c in costs), dram / acc.offchip.bandwidth_bytes_per_cycle)
        if isinstance(acc.interconnect, Bus):
            latency = max(latency, dram / acc.interconnect.bandwidth_bytes_per_cycle)
        step = LayerStep(layer.name, dim, used, costs, latency, net_energy, byte_hops)
        if best is None or (step.latency_cycles, step.energy_pj) < (best.latency_cycles, best.energy_pj):
            best = step
    assert best is not None
    return best


def layer_by_layer_steps(
    workload: Workload, acc: Accelerator, cores: Sequence[int] | None = None
) -> tuple[LayerStep, ...]:
    """The steps of the layer-by-layer schedule of ``workload`` on ``acc``.

    Parameters
    ----------
    cores
        Core ids to use (default: all). Each layer runs on those of them that
        support its operator kind.

    Raises
    ------
    ValueError
        If a layer has no core that supports it, or a core id does not exist.
    """
    chosen = list(range(acc.n_cores)) if cores is None else list(cores)
    for c in chosen:
        acc.core(c)
    steps = []
    for layer in workload:
        able = [c for c in chosen if acc.core(c).supports(layer.kind)]
        if not able:
            raise ValueError(
                f"layer {layer.name!r} ({layer.kind.value}) has no core among {chosen} of {acc.name!r} that runs it"
            )
        steps.append(_step(layer, acc, able))
    return tuple(steps)


def evaluate_layer_by_layer(workload: Workload, acc: Accelerator, cores: Sequence[int] | None = None) -> CostReport:
    """Cost report of the layer-by-layer schedule (see the module docstring)."""
    steps = layer_by_layer_steps(workload, acc, cores)
    breakdown: dict[str, float] = {}
    for step in steps:
        for part in step.parts:
            for key, value in part.energy_breakdown_pj.items():
                breakdown[key] = breakdown.get(key, 0.0) + value
        if acc.interconnect is not None:
            breakdown["noc"] = breakdown.get("noc", 0.0) + step.network_energy_pj
    latency = sum(s.latency_cycles for s in steps)
    used = sorted({c for s in steps for c in s.cores})
    slots = sum(acc.core(c).n_macs for c in used)
    peak = max(sum(sum(p.footprint_bytes.values()) for p in s.parts) for s in steps)
    return CostReport(
        energy_pj=sum(breakdown.values()),
        latency_cycles=latency,
        dram_bytes=sum(s.dram_bytes for s in steps),
        noc_byte_hops=sum(s.noc_byte_hops for s in steps),
        peak_memory_bytes=peak,
        utilization=min(1.0, workload.macs / (slots * latency)),
        macs=workload.macs,
        energy_breakdown_pj=breakdown,
    )
