"""The atomic instance: an atomic DAG on ``N`` engines of an accelerator, with the atom sizes it was built from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.hardware.spec import Accelerator, Mesh
from accelsched.models.workload import Workload
from accelsched.problems.atomic.atoms import atomize
from accelsched.problems.atomic.dag import AtomDag, RoundSchedule, SizeItems

__all__ = ["MAPPINGS", "AtomicInstance"]

MAPPINGS: tuple[str, ...] = ("assignment", "zigzag")
"""How the round methods place atoms on engines (:mod:`accelsched.problems.atomic.placement`)."""


@dataclass(frozen=True)
class AtomicInstance:
    """An atomic DAG on ``n_engines`` engines (engine ``e`` is core ``e`` of ``accelerator``).

    ``workload`` and ``accelerator`` are None for abstract instances (no NoC, HBM or buffer limit); ``sizes`` are
    the atom sizes of ``dag`` (None when it was given directly); ``mapping`` is how the round methods place atoms
    (:data:`MAPPINGS`).

    Raises
    ------
    InputError
        No engine, more engines than the accelerator's cores, an empty DAG, an unknown objective or mapping.
    """

    dag: AtomDag
    n_engines: int
    accelerator: Accelerator | None = None
    workload: Workload | None = None
    sizes: SizeItems | None = None
    objective: str = "latency"
    mapping: str = "assignment"
    meta: Mapping[str, Any] = field(default_factory=dict)
    _dags: dict[SizeItems, AtomDag] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.n_engines < 1:
            raise InputError(f"{self.n_engines} engines", "instance", "an atomic instance needs at least 1 engine")
        if self.accelerator is not None and self.n_engines > self.accelerator.n_cores:
            raise InputError(f"{self.n_engines} engines", "instance",
                             f"the accelerator has {self.accelerator.n_cores} cores")  # fmt: skip
        if not self.dag.atoms:
            raise InputError("the atomic DAG has no atom", "instance", "give a workload with at least one layer")
        if self.objective not in ("latency", "energy", "edp"):
            raise InputError(f"unknown objective {self.objective!r}", "--option objective",
                             "use latency, energy or edp")  # fmt: skip
        if self.mapping not in MAPPINGS:
            raise InputError(f"unknown mapping {self.mapping!r}", "--option mapping", f"use {', '.join(MAPPINGS)}")
        if self.sizes is not None:
            object.__setattr__(self, "sizes", tuple(sorted(self.sizes)))
            self._dags[self.sizes] = self.dag

    @property
    def mesh(self) -> Mesh | None:
        """The accelerator's mesh, if it has one."""
        net = self.accelerator.interconnect if self.accelerator is not None else None
        return net if isinstance(net, Mesh) else None

    @property
    def batch(self) -> int:
        """Samples of the workload (1 for abstract instances)."""
        return self.workload.batch if self.workload is not None else 1

    def dag_for(self, solution: RoundSchedule) -> AtomDag:
        """The atomic DAG of ``solution``: the instance's own, or the one of the solution's sizes (cached).

        Raises
        ------
        InfeasibleSolution
            Sizes on an abstract instance, or sizes that miss a layer or break the PE-array rule (rule 5).
        """
        if solution.sizes is None or solution.sizes == self.sizes:
            return self.dag
        if solution.sizes not in self._dags:
            if self.workload is None or self.accelerator is None:
                raise InfeasibleSolution("rule 5: the solution gives atom sizes but the instance has no workload")
            sizes = dict(solution.sizes)
            missing = [layer.name for layer in self.workload if layer.name not in sizes]
            extra = sorted(set(sizes) - set(self.workload.names))
            if missing or extra:
                raise InfeasibleSolution(f"rule 5: sizes miss layers {missing[:5]} or name unknown layers {extra[:5]}")
            try:
                self._dags[solution.sizes] = atomize(self.workload, self.accelerator, sizes)
            except InputError as exc:
                raise InfeasibleSolution(f"rule 5: {exc}") from exc
        return self._dags[solution.sizes]

