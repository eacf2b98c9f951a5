r"""Candidate atom sizes per layer for the least-variance choice, and the ``sizes=`` option that carries a choice.

Atomic Dataflow's Algorithm 1 chooses one atom size per layer so that atoms of
different layers take similar time (a synchronous round lasts as long as its slowest
atom). The choice needs a solver (an exact scan, or annealing), so it is a step
before the instance (:class:`accelsched.problems.base.InstanceStep`); this module
holds what the step and the problem share.

Candidates (:func:`size_table`)
    Per layer, the halving sizes of :func:`accelsched.problems.atomic.atoms.size_candidates`
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
    lock step (:func:`accelsched.problems.atomic.atoms.lock_step_cycles`) within
    ``1 / efficiency`` of the fastest such size are kept (default
    :data:`EFFICIENCY`): balance is not bought with slower atoms or with rounds the
    layer leaves half empty, in the spirit of Algorithm 1's PE-utilization
    requirement. Each candidate's cycles come from
    :func:`accelsched.problems.atomic.atoms.atom_cost`.
Cost
    :func:`variance`: :math:`V = \frac1L \sum_l (t_{l c_l} - \bar t)^2` over the
    layers' chosen cycles.
The ``sizes=`` option
    One ``layer:h,w,ci,co`` item per layer, items separated by ``;`` (a layer name
    may itself contain ``:``; the last one separates the size):
    ``sizes=conv1:8,8,16,16;conv2:4,8,32,16``. :func:`format_sizes` writes it and
    :func:`parse_sizes` reads it.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass

from accelsched.errors import InputError
from accelsched.hardware.spec import Accelerator
from accelsched.models.workload import Workload
from accelsched.problems.atomic.atoms import (
    ATOMS_PER_ENGINE,
    atom_chunks,
    candidate_table,
    lock_step_cycles,
)
from accelsched.problems.atomic.dag import AtomSize

__all__ = [
    "EFFICIENCY",
    "SizeTable",
    "format_sizes",
    "instance_size_table",
    "parse_sizes",
    "size_table",
    "variance",
]

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

    def sizes(self, index: list[int]) -> dict[str, AtomSize]:
        """The sizes of the candidates ``index[i]`` of every layer ``i``."""
        return {name: self.candidates[i][k][0] for i, (name, k) in enumerate(zip(self.layers, index, strict=True))}


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
    limit = max_atoms if max_atoms is not None else ATOMS_PER_ENGINE * accelerator.n_cores
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
        time = {size: lock_step_cycles(layer, size, cycles, engines, workload.batch) for size, cycles in found}
        least = min(time.values())
        found = [(size, cycles) for size, cycles in found if time[size] * efficiency <= least]
        layers.append(layer.name)
        table.append(tuple(sorted(found, key=lambda item: (item[1], item[0].h, item[0].w, item[0].ci, item[0].co))))
    return SizeTable(tuple(layers), tuple(table))


def instance_size_table(workload: Workload, accelerator: Accelerator, n_engines: int) -> SizeTable:
    """The candidates an instance on ``n_engines`` engines chooses its sizes from: at most
    :data:`~accelsched.problems.atomic.atoms.ATOMS_PER_ENGINE` atoms per engine and sample, at least
    ``ceil(n_engines / batch)`` output blocks (module docstring)."""
    return size_table(workload, accelerator, max_atoms=ATOMS_PER_ENGINE * n_engines,
                      min_atoms=-(-n_engines // workload.batch), engines=n_engines)  # fmt: skip


def format_sizes(sizes: Mapping[str, AtomSize]) -> str:
    """The ``sizes=`` option of ``sizes`` (module docstring)."""
    return ";".join(f"{name}:{size.h},{size.w},{size.ci},{size.co}" for name, size in sizes.items())


def parse_sizes(text: str) -> dict[str, AtomSize]:
    """Read the ``sizes=`` option (module docstring).

    Raises
    ------
    InputError
        An item without ``:``, a layer named twice, or a size that is not four positive integers.
    """
    out: dict[str, AtomSize] = {}
    for item in text.split(";"):
        if not item.strip():
            continue
        name, sep, size = item.rpartition(":")
        if not sep or not name:
            raise InputError(f"sizes item {item!r} has no layer", "--option sizes", "write layer:h,w,ci,co;...")
        if name in out:
            raise InputError(f"sizes name layer {name!r} twice", "--option sizes", "give one size per layer")
        out[name] = AtomSize.parse(size)
    return out
