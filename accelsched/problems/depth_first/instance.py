"""The depth-first instance (a workload on one core, the metric) and the cut points of a workload."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.spec import Accelerator, Core
from accelsched.models.layer import OpKind
from accelsched.models.workload import Workload

__all__ = ["METRICS", "DepthFirstInstance", "cut_points"]

METRICS = ("energy", "latency", "edp")
"""Metrics a depth-first instance can minimize."""


@dataclass(frozen=True)
class DepthFirstInstance:
    """A workload on a single core, with the metric to minimize.

    Raises
    ------
    ValueError
        If the accelerator has more than one core, the workload has more than one
        output, a layer is a matmul (whose W operand is an activation, outside
        DeFiNES' model) or the metric is unknown.
    """

    workload: Workload
    accelerator: Accelerator
    metric: str = "energy"

    def __post_init__(self) -> None:
        if self.accelerator.n_cores != 1:
            raise ValueError(
                f"depth-first: {self.accelerator.name} has {self.accelerator.n_cores} cores; "
                "the problem is stated for a single core (use a defines-* preset)"
            )
        if len(self.workload.sinks) != 1:
            raise ValueError(
                f"depth-first: workload {self.workload.name!r} has {len(self.workload.sinks)} outputs "
                f"({', '.join(self.workload.sinks)}); stacks are tiled from one output, give a workload with one"
            )
        if self.metric not in METRICS:
            raise ValueError(f"depth-first: metric must be one of {', '.join(METRICS)}, got {self.metric!r}")
        for layer in self.workload:
            if layer.kind is OpKind.MATMUL:
                raise ValueError(
                    f"depth-first: layer {layer.name!r} is a matmul of two activations, which depth-first "
                    "tiling does not cover; use a convolutional workload"
                )
            if not self.core.supports(layer.kind):
                raise ValueError(f"depth-first: the core does not execute {layer.kind.value} layers ({layer.name!r})")

    @property
    def core(self) -> Core:
        """The accelerator's only core."""
        return self.accelerator.cores[0]

    @cached_property
    def order(self) -> tuple[str, ...]:
        """The layers in the workload's topological order."""
        return self.workload.names

    @cached_property
    def cuts(self) -> frozenset[int]:
        """Positions where the network narrows to one tensor (see :func:`cut_points`)."""
        return frozenset(cut_points(self.workload))

    @cached_property
    def first_start(self) -> tuple[int, ...]:
        """For each position ``b``, the smallest ``a`` such that ``order[a..b]`` is a valid stack (rule 2).

        Every ``a`` between it and ``b`` is valid too: a stack stays valid when its
        first layers are dropped.
        """
        order = self.order
        last_use = _last_use(self.workload)
        out = []
        for b in range(len(order)):
            a = b
            while a > 0 and last_use[order[a - 1]] <= b:
                a -= 1
            out.append(a)
        return tuple(out)

    @cached_property
    def cost_cache(self) -> dict[Any, Any]:
        """What the evaluator already priced on this instance (stacks, axis schedules, layer-tiles)."""
        return {}

    def objective(self, report: CostReport) -> float:
        """The instance's metric of a cost report."""
        return self.metric_of(report.energy_pj, report.latency_cycles)

    def metric_of(self, energy_pj: float, latency_cycles: float) -> float:
        """The instance's metric of an energy and a latency: one of them, or their product for ``edp``."""
        if self.metric == "energy":
            return energy_pj
        if self.metric == "latency":
            return latency_cycles
        return energy_pj * latency_cycles


def _last_use(workload: Workload) -> dict[str, int]:
    """Position (in topological order) of the last layer reading each layer's output (its own when none)."""
    index = {n: i for i, n in enumerate(workload.names)}
    last_use = dict(index)
    for layer in workload:
        for producer in layer.inputs:
            last_use[producer] = max(last_use[producer], index[layer.name])
    return last_use


def cut_points(workload: Workload) -> list[int]:
    """Positions ``i`` (0-based, in topological order) after which a stack may end.

    A stack may end after layer ``i`` when no layer ``j <= i`` other than ``i``
    itself feeds a layer after ``i``: then one tensor crosses the cut. The last
    position is always a cut.
    """
    names = workload.names
    last_use = _last_use(workload)
    cuts = []
    furthest = -1  # the furthest consumer of the layers before i
    for i, name in enumerate(names):
        if furthest <= i:
            cuts.append(i)
        furthest = max(furthest, last_use[name])
    return cuts
