r"""Exact atom sizing: one atom size per layer minimizing the variance of the atoms' cycles across layers.

Atomic Dataflow's Algorithm 1 searches atom sizes by simulated annealing so that
atoms of different layers take similar time (a synchronous round lasts as long as
its slowest atom). This module gives the exact counterpart over the same
candidates (:func:`accelsched.problems.atomic.sizes.size_table`), and the instance
step ``atoms=exact`` of the atomic problem (:data:`STEPS`).

Exact choice (:func:`exact_sizes`)
    Choose one candidate :math:`c_l` per layer minimizing
    :math:`V = \frac1L \sum_l (t_{l c_l} - \bar t)^2`. At an optimum with mean
    :math:`\mu`, every layer takes its candidate nearest to :math:`\mu` (else
    moving it there lowers :math:`\sum_l (t_l - \mu)^2 \ge L V`); so scanning
    :math:`T` over the intervals between consecutive midpoints of every layer's
    sorted candidate cycles, taking each layer's nearest candidate, and keeping the
    least variance is exact. :math:`O(P L)` for :math:`P` candidates in all.
The step (:data:`STEPS`)
    ``--option atoms=exact``: the exact sizes over the instance's candidates
    (:func:`accelsched.problems.atomic.instance_size_table`), handed to
    :func:`accelsched.problems.atomic.make_instance` as ``sizes=``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from accelsched.hardware.spec import Accelerator
from accelsched.models.workload import Workload
from accelsched.problems.atomic import PROBLEM, AtomSize, SizeTable, size_step_table, sized_options, variance
from accelsched.problems.base import InstanceStep

__all__ = ["STEPS", "exact_sizes", "exact_step"]


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


def exact_step(workload: Workload, accelerator: Accelerator, options: Mapping[str, str]) -> dict[str, str]:
    """``options`` with the exact least-variance sizes as ``sizes=`` (module docstring).

    Raises
    ------
    InputError
        Bad options (:func:`accelsched.problems.atomic.size_step_table`).
    """
    return sized_options(options, exact_sizes(size_step_table(workload, accelerator, options))[0])


STEPS: tuple[InstanceStep, ...] = (
    InstanceStep(PROBLEM.name, "atoms", "exact", exact_step, "atom sizes of least atom-cycle variance, exactly"),
)
"""The atom-size step ``atoms=exact`` of the atomic problem."""
