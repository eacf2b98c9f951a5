r"""Exact atom sizing: one atom size per layer minimizing the variance of the atoms' cycles across layers.

Atomic Dataflow's Algorithm 1 searches atom sizes by simulated annealing so that
atoms of different layers take similar time (a synchronous round lasts as long as
its slowest atom). This module gives the exact counterpart over the same
candidates.

Candidates (:func:`size_table`)
    Per layer, sizes ``[h, w, ci, co]`` that keep the PE-array rule (on the
    engine's unrolled loops a multiple of the unrolling, or the whole loop), halving
    each loop from the whole (``h = ceil(OY / 2^k)``, ...), whose atom count per
    sample is at most ``max_atoms`` (default 4 per engine: atoms too small to pay
    for their synchronisation are not offered) and whose working set (inputs,
    weights, outputs) fits the engine's top on-chip level; a layer with no such size
    (a large FC layer) gets the fitting sizes with the fewest atoms, and a layer none
    of whose sizes fits (a global pooling over all channels, whose groups are never
    split) its sizes of least working set; grouped layers keep whole groups. Each candidate's cycles come from
    :func:`accelsched.problems.atomic.atom_cost`.

Exact choice (:func:`exact_sizes`)
    Choose one candidate :math:`c_l` per layer minimizing
    :math:`V = \frac1L \sum_l (t_{l c_l} - \bar t)^2`. At an optimum with mean
    :math:`\mu`, every layer takes its candidate nearest to :math:`\mu` (else
    moving it there lowers :math:`\sum_l (t_l - \mu)^2 \ge L V`); so scanning
    :math:`T` over the intervals between consecutive midpoints of every layer's
    sorted candidate cycles, taking each layer's nearest candidate, and keeping the
    least variance is exact. :math:`O(P L)` for :math:`P` candidates in all.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from accelsched.hardware.spec import Accelerator
from accelsched.models.layer import Layer
from accelsched.models.workload import Workload
from accelsched.problems.atomic import AtomSize, Partition, atom_cost

__all__ = ["SizeTable", "exact_sizes", "size_table", "variance"]


@dataclass(frozen=True)
class SizeTable:
    """Per layer (workload order), the candidate sizes and their cycles, sorted by cycles."""

    layers: tuple[str, ...]
    candidates: tuple[tuple[tuple[AtomSize, int], ...], ...]

    def cycles(self, choice: Mapping[str, AtomSize]) -> list[int]:
        """Cycles of each layer's chosen size."""
        return [dict(c)[choice[name]] for name, c in zip(self.layers, self.candidates, strict=True)]


def variance(cycles: list[int]) -> float:
    """Population variance of the atoms' cycles (one value per layer)."""
    return statistics.pvariance(cycles) if len(cycles) > 1 else 0.0


def _halvings(full: int, unit: int, constrained: bool) -> list[int]:
    values = {full}
    k = 1
    while True:
        value = math.ceil(full / 2**k)
        if constrained:
            value = math.ceil(value / unit) * unit
        if value < (unit if constrained else 1) or value >= full:
            break
        values.add(value)
        k += 1
    return sorted(values)


def _count(layer: Layer, size: AtomSize) -> int:
    """Atoms of ``size`` per sample of ``layer``."""
    count = math.ceil(layer.OY / size.h) * math.ceil(layer.OX / size.w) * math.ceil(layer.C / size.ci)
    return count * math.ceil(layer.K / size.co)


def _working_set(layer: Layer, size: AtomSize) -> int:
    """Bytes of an atom's inputs (with the halo), weights and partial sums."""
    rows = (size.h - 1) * layer.stride_y + (layer.FY - 1) * layer.dilation_y + 1
    cols = (size.w - 1) * layer.stride_x + (layer.FX - 1) * layer.dilation_x + 1
    inputs = rows * cols * size.ci * layer.G * layer.input_bits // 8
    weights = (
        size.co * size.ci * layer.FY * layer.FX * layer.G * layer.weight_bits // 8 if layer.kind.has_parameters else 0
    )
    outputs = size.h * size.w * size.co * layer.G * layer.psum_bits // 8
    return inputs + weights + outputs


def size_table(workload: Workload, accelerator: Accelerator, max_atoms: int | None = None) -> SizeTable:
    """The candidates of every layer (module docstring); every layer has at least one."""
    core = accelerator.cores[0]
    partition = Partition.of(core)
    unroll = dict(core.spatial)
    limit = max_atoms if max_atoms is not None else 4 * accelerator.n_cores
    capacity = min(core.memory(levels[-1]).capacity_bytes for levels in core.hierarchy.values() if levels)
    layers, table = [], []
    for layer in workload:
        kc = partition is Partition.KC
        grouped = layer.G > 1
        hs = _halvings(layer.OY, unroll.get("OY", 1), not kc)
        ws = _halvings(layer.OX, unroll.get("OX", 1), not kc)
        cis = [layer.C] if grouped else _halvings(layer.C, unroll.get("C", 1), kc)
        cos = [layer.K] if grouped else _halvings(layer.K, unroll.get("K", 1), kc)
        sizes = [AtomSize(h, w, ci, co) for h, w, ci, co in itertools.product(hs, ws, cis, cos)]
        fitting = [s for s in sizes if _working_set(layer, s) <= capacity]
        if not fitting:  # e.g. a global pooling of a whole group of channels: its smallest atoms, overflowing
            least_bytes = min(_working_set(layer, s) for s in sizes)
            fitting = [s for s in sizes if _working_set(layer, s) == least_bytes]
        counts = [_count(layer, s) for s in fitting]
        least = min(counts)
        found = [(size, atom_cost(layer, size, accelerator)[0]) for count, size in zip(counts, fitting, strict=True)
                 if count <= max(limit, least)]  # fmt: skip
        layers.append(layer.name)
        table.append(tuple(sorted(found, key=lambda item: (item[1], item[0].h, item[0].w, item[0].ci, item[0].co))))
    return SizeTable(tuple(layers), tuple(table))


def _nearest_index(values: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Index in the sorted ``values`` of the value nearest to each target (ties: the smaller value)."""
    right = np.clip(np.searchsorted(values, targets), 0, len(values) - 1)
    left = np.clip(right - 1, 0, len(values) - 1)
    return np.where(np.abs(values[left] - targets) <= np.abs(values[right] - targets), left, right)


def exact_sizes(table: SizeTable) -> tuple[dict[str, AtomSize], float]:
    """The sizes of least cycle variance and that variance (module docstring).

    The selection changes only where the target crosses the midpoint of two consecutive cycle values of a layer,
    so one probe inside each interval between those breakpoints (and one beyond each end) covers every selection;
    the variances of all probes are computed at once (vectorized).
    """
    values = [np.array(sorted({t for _, t in cands}), dtype=float) for cands in table.candidates]
    breakpoints = np.unique(np.concatenate([(v[1:] + v[:-1]) / 2 for v in values] + [np.empty(0)]))
    if breakpoints.size:
        probes = np.concatenate(([breakpoints[0] - 1.0], (breakpoints[1:] + breakpoints[:-1]) / 2,
                                 [breakpoints[-1] + 1.0]))  # fmt: skip
    else:
        probes = np.zeros(1)
    chosen = np.stack([v[_nearest_index(v, probes)] for v in values])  # layers x probes
    spread = chosen.var(axis=0)
    best = int(np.argmin(spread))
    sizes = {}
    for name, cands, v in zip(table.layers, table.candidates, chosen[:, best], strict=True):
        sizes[name] = next(size for size, t in cands if t == v)
    return sizes, variance(table.cycles(sizes))
