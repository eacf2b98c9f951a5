r"""Exact atom sizing: one atom size per layer minimizing the variance of the atoms' cycles across layers.

Atomic Dataflow's Algorithm 1 searches atom sizes by simulated annealing so that
atoms of different layers take similar time (a synchronous round lasts as long as
its slowest atom). This module gives the exact counterpart over the same
candidates.

Candidates (:func:`size_table`)
    Per layer, the halving sizes of :func:`accelsched.problems.atomic_atoms.size_candidates`
    (the PE-array rule, whole groups, working set within the engine buffer) whose
    atom count per sample is at most ``max_atoms`` (default 4 per engine: atoms too
    small to pay for their synchronisation are not offered), with at least
    ``min_atoms`` output blocks, the atoms of a sample that can run at once
    (instances ask for ``ceil(N / batch)``, so that a layer's atoms can fill the
    engines: variance alone is blind to parallelism and, on a batch of one, would
    settle on a few large atoms per layer, or on input-channel parts whose partial
    sums chain them one after the other, leaving most engines idle); a layer that
    cannot have that many blocks keeps its sizes with the most, and one whose blocks
    need more atoms than ``max_atoms`` its fewest atoms with enough blocks. Among
    those, only the sizes that run the layer's batch on the ``engines`` engines in
    lock step (input-channel parts one after the other, blocks side by side) within
    ``1 / efficiency`` of the fastest such size are kept (default
    :data:`EFFICIENCY`): balance is not bought with slower atoms or with rounds the
    layer leaves half empty, in the spirit of Algorithm 1's PE-utilization
    requirement. Each candidate's cycles come from
    :func:`accelsched.problems.atomic_atoms.atom_cost`.

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

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from accelsched.hardware.spec import Accelerator
from accelsched.models.layer import Layer
from accelsched.models.workload import Workload
from accelsched.problems.atomic import AtomSize
from accelsched.problems.atomic_atoms import atom_chunks, atom_count, candidate_table

__all__ = ["EFFICIENCY", "SizeTable", "exact_sizes", "size_table", "variance"]

EFFICIENCY = 0.9
"""Least speed of a candidate relative to the layer's fastest, in lock step on the engines (module docstring)."""


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


def size_table(
    workload: Workload,
    accelerator: Accelerator,
    max_atoms: int | None = None,
    min_atoms: int = 1,
    efficiency: float = EFFICIENCY,
    engines: int | None = None,
) -> SizeTable:
    """The candidates of every layer (module docstring); every layer has at least one.

    Raises
    ------
    ValueError
        ``efficiency`` not in (0, 1].
    """
    if not 0 < efficiency <= 1:
        raise ValueError(f"size_table: efficiency must be in (0, 1], got {efficiency}")
    engines = engines if engines is not None else accelerator.n_cores
    limit = max_atoms if max_atoms is not None else 4 * accelerator.n_cores
    layers, table = [], []
    for layer in workload:
        rows = candidate_table(layer, accelerator)
        blocks = [c.count // atom_chunks(layer, c.size) for c in rows]
        low = min(min_atoms, max(blocks))
        high = max(limit, min(c.count for c in rows))
        found = [(c.size, c.cycles) for c, b in zip(rows, blocks, strict=True) if b >= low and c.count <= high]
        if not found:  # the parallel blocks need more atoms than the limit: the fewest atoms with enough blocks
            fewest = min(c.count for c, b in zip(rows, blocks, strict=True) if b >= low)
            found = [(c.size, c.cycles) for c, b in zip(rows, blocks, strict=True) if b >= low and c.count == fewest]
        time = {size: _lock_step(layer, size, cycles, engines, workload.batch) for size, cycles in found}
        least = min(time.values())
        found = [(size, cycles) for size, cycles in found if time[size] * efficiency <= least]
        layers.append(layer.name)
        table.append(tuple(sorted(found, key=lambda item: (item[1], item[0].h, item[0].w, item[0].ci, item[0].co))))
    return SizeTable(tuple(layers), tuple(table))


def _lock_step(layer: Layer, size: AtomSize, cycles: int, engines: int, batch: int) -> int:
    """Cycles of the layer's whole batch on ``engines`` engines in lock step with atoms of ``size``."""
    chunks = atom_chunks(layer, size)
    return chunks * math.ceil(atom_count(layer, size) // chunks * batch / engines) * cycles


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
