"""Graph partition and buffer sizing (Cocco, ASPLOS'24).

Instance: a workload DAG on a single-core accelerator, a buffer design (one shared
buffer, or separate activation and weight buffers), the candidate capacities of
each buffer (one candidate each: fixed capacities; several: co-exploration), a
metric (external memory access in bytes, or energy in pJ) and the preference
``alpha``.

Solution: subgraphs in execution order and the chosen capacities. Valid when every
layer is in exactly one subgraph, every subgraph is weakly connected, every edge
goes from an earlier subgraph to a later one (or stays inside one), the capacities
are candidates, and every subgraph fits its buffer(s) (see
:mod:`accelsched.hardware.cost.partition` for footprints).

Objective: ``sum of the metric over subgraphs`` with fixed capacities;
``capacity_bytes + alpha * sum of the metric`` in co-exploration (Cocco's
``BUF_SIZE + alpha * cost``; the capacity is the total of the chosen buffers).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.hardware.cost.partition import Mode, PartitionCostModel, SubgraphCost
from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.spec import Accelerator, Core
from accelsched.models.workload import Workload
from accelsched.problems.base import ProblemSpec

__all__ = [
    "COCCO_ACT_KB",
    "COCCO_SHARED_KB",
    "COCCO_WEIGHT_KB",
    "PROBLEM",
    "BufferDesign",
    "Metric",
    "PartitionInstance",
    "PartitionSolution",
    "check",
    "evaluate",
    "make_instance",
    "objective",
    "weakly_connected",
]

KIB = 1024
COCCO_ACT_KB: tuple[int, ...] = tuple(range(128, 2048 + 1, 64))
"""Cocco's activation-buffer candidates, KB (128-2048 step 64)."""
COCCO_WEIGHT_KB: tuple[int, ...] = tuple(range(144, 2304 + 1, 72))
"""Cocco's weight-buffer candidates, KB (144-2304 step 72)."""
COCCO_SHARED_KB: tuple[int, ...] = tuple(range(128, 3072 + 1, 64))
"""Cocco's shared-buffer candidates, KB (128-3072 step 64)."""
COCCO_ALPHA = 0.002
"""Cocco's preference between capacity (bytes) and cost (bytes or pJ)."""


class BufferDesign(enum.Enum):
    """How the on-chip buffer is organised."""

    SHARED = "shared"
    """One buffer holds activations and weights."""
    SEPARATE = "separate"
    """An activation buffer and a weight buffer."""


class Metric(enum.Enum):
    """The cost summed over subgraphs."""

    EMA = "ema"
    """External memory access, bytes."""
    ENERGY = "energy"
    """Energy, pJ."""


def _candidates(name: str, values: Sequence[int], allow_empty: bool = False) -> tuple[int, ...]:
    out = tuple(values)
    if not out and not allow_empty:
        raise ValueError(f"PartitionInstance: field {name} is empty; give at least one capacity")
    for v in out:
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError(f"PartitionInstance: field {name} must hold positive integers (bytes), got {v!r}")
    if list(out) != sorted(set(out)):
        raise ValueError(f"PartitionInstance: field {name} must be increasing without repeats, got {out!r}")
    return out


@dataclass(frozen=True)
class PartitionInstance:
    """A Cocco partition / buffer-sizing instance, validated at construction.

    Parameters
    ----------
    workload
        The DAG, at the batch to execute (weights are reused across its samples).
    accelerator
        A single-core accelerator.
    design
        Shared or separate buffers.
    act_candidates_bytes
        Candidate sizes of the shared buffer (shared design) or of the activation
        buffer (separate design), increasing.
    weight_candidates_bytes
        Candidate sizes of the weight buffer (separate design); empty for shared.
    metric
        EMA (bytes) or energy (pJ).
    alpha
        Weight of the metric against the capacity in co-exploration (>= 0).
    """

    workload: Workload
    accelerator: Accelerator
    design: BufferDesign
    act_candidates_bytes: tuple[int, ...]
    weight_candidates_bytes: tuple[int, ...] = ()
    metric: Metric = Metric.EMA
    alpha: float = COCCO_ALPHA
    cost_model: PartitionCostModel = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.accelerator.n_cores != 1:
            raise ValueError(
                f"PartitionInstance: field accelerator must have one core, {self.accelerator.name!r} has "
                f"{self.accelerator.n_cores}"
            )
        if not isinstance(self.design, BufferDesign):
            object.__setattr__(self, "design", BufferDesign(self.design))
        if not isinstance(self.metric, Metric):
            object.__setattr__(self, "metric", Metric(self.metric))
        object.__setattr__(self, "act_candidates_bytes", _candidates("act_candidates_bytes", self.act_candidates_bytes))
        shared = self.design is BufferDesign.SHARED
        weights = _candidates("weight_candidates_bytes", self.weight_candidates_bytes, allow_empty=shared)
        if shared and weights:
            raise ValueError("PartitionInstance: field weight_candidates_bytes must be empty with a shared buffer")
        object.__setattr__(self, "weight_candidates_bytes", weights)
        alpha = self.alpha
        if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not math.isfinite(alpha) or alpha < 0:
            raise ValueError(f"PartitionInstance: field alpha must be a finite number >= 0, got {alpha!r}")
        core = self.core
        for kind in {layer.kind for layer in self.workload}:
            if not core.supports(kind):
                raise ValueError(f"PartitionInstance: core of {self.accelerator.name!r} cannot run {kind.value} layers")
        object.__setattr__(self, "cost_model", PartitionCostModel(self.workload, core, self.accelerator.offchip))

    @property
    def core(self) -> Core:
        """The accelerator's core."""
        return self.accelerator.cores[0]

    @property
    def shared(self) -> bool:
        """Whether the buffer is shared."""
        return self.design is BufferDesign.SHARED

    @property
    def co_exploration(self) -> bool:
        """Whether capacities are chosen (more than one candidate in some list)."""
        return len(self.act_candidates_bytes) > 1 or len(self.weight_candidates_bytes) > 1

    @property
    def n_layers(self) -> int:
        """Layers of the workload."""
        return len(self.cost_model.layers)

    def metric_of(self, cost: SubgraphCost, mode: Mode | None = None) -> float:
        """The metric of one subgraph in ``mode`` (default resident), bytes or pJ."""
        return float(cost.ema_bytes(mode)) if self.metric is Metric.EMA else cost.energy_pj(mode)

    def subgraph_metric(self, members: Sequence[int], act_capacity_bytes: int, weight_capacity_bytes: int) -> float:
        """The metric of a subgraph under given capacities (``inf`` when it does not fit)."""
        cost = self.cost_model.subgraph(members)
        mode = cost.mode_for(self.shared, act_capacity_bytes, weight_capacity_bytes)
        return math.inf if mode is None else self.metric_of(cost, mode)

    def capacity_pairs(self) -> tuple[tuple[int, int], ...]:
        """Every candidate ``(act or shared bytes, weight bytes)``; weight bytes are 0 when shared."""
        if self.shared:
            return tuple((a, 0) for a in self.act_candidates_bytes)
        return tuple((a, w) for a in self.act_candidates_bytes for w in self.weight_candidates_bytes)

    def fits_largest(self, cost: SubgraphCost) -> bool:
        """Whether a subgraph fits the largest candidate capacities."""
        weight = self.weight_candidates_bytes[-1] if self.weight_candidates_bytes else 0
        return cost.fits(self.shared, self.act_candidates_bytes[-1], weight)

    @cached_property
    def infeasibility(self) -> str | None:
        """Why no partition exists (a layer that fits no candidate alone), or None."""
        model = self.cost_model
        for i, layer in enumerate(model.layers):
            cost = model.subgraph((i,))
            if not self.fits_largest(cost):
                need = " or ".join(f"{m.act_bytes} B activations + {m.weight_bytes} B weights" for m in cost.modes)
                if self.shared:
                    need = f"{min(m.act_bytes + m.weight_bytes for m in cost.modes)} B"
                    have = f"the largest shared buffer is {self.act_candidates_bytes[-1]} B"
                else:
                    have = (
                        f"the largest buffers are {self.act_candidates_bytes[-1]} B activations and "
                        f"{self.weight_candidates_bytes[-1]} B weights"
                    )
                return f"layer {layer.name!r} alone needs {need} but {have}; no partition fits"
        return None

    def capacity_total(self, solution: PartitionSolution) -> int:
        """Total buffer bytes chosen."""
        return solution.act_capacity_bytes + solution.weight_capacity_bytes

    def metric_of_report(self, report: CostReport) -> float:
        """The metric of a whole partition from the evaluator's report."""
        return report.dram_bytes if self.metric is Metric.EMA else report.energy_pj

    def objective_value(self, capacity_bytes: float, metric_sum: float) -> float:
        """Cocco's objective from a capacity and a summed metric."""
        if self.co_exploration:
            return capacity_bytes + self.alpha * metric_sum
        return metric_sum


@dataclass(frozen=True)
class PartitionSolution:
    """Subgraphs in execution order and the chosen buffer capacities.

    Parameters
    ----------
    subgraphs
        Layer names of every subgraph, in execution order.
    act_capacity_bytes
        The shared buffer (shared design) or the activation buffer.
    weight_capacity_bytes
        The weight buffer (separate design), 0 with a shared buffer.
    """

    subgraphs: tuple[tuple[str, ...], ...]
    act_capacity_bytes: int
    weight_capacity_bytes: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "subgraphs", tuple(tuple(s) for s in self.subgraphs))

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form."""
        return {
            "subgraphs": [list(s) for s in self.subgraphs],
            "act_capacity_bytes": self.act_capacity_bytes,
            "weight_capacity_bytes": self.weight_capacity_bytes,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PartitionSolution:
        """Inverse of :meth:`to_dict`; ``ValueError`` naming a missing or bad field."""
        try:
            subgraphs = data["subgraphs"]
            act = data["act_capacity_bytes"]
        except KeyError as exc:
            raise ValueError(f"partition solution: missing field {exc.args[0]!r}") from None
        weight = data.get("weight_capacity_bytes", 0)
        if not isinstance(subgraphs, list) or not all(
            isinstance(s, list) and all(isinstance(n, str) for n in s) for s in subgraphs
        ):
            raise ValueError("partition solution: field subgraphs must be a list of lists of layer names")
        for name, value in (("act_capacity_bytes", act), ("weight_capacity_bytes", weight)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"partition solution: field {name} must be an integer, got {value!r}")
        return cls(tuple(tuple(s) for s in subgraphs), act, weight)

    @classmethod
    def from_indices(
        cls, instance: PartitionInstance, subgraphs: Sequence[Sequence[int]], act_bytes: int, weight_bytes: int = 0
    ) -> PartitionSolution:
        """Build from layer indices (topological positions), kept in the given order."""
        layers = instance.cost_model.layers
        return cls(tuple(tuple(layers[i].name for i in sorted(s)) for s in subgraphs), act_bytes, weight_bytes)

    def indices(self, instance: PartitionInstance) -> list[tuple[int, ...]]:
        """Layer indices of every subgraph (raises ``KeyError`` on an unknown name)."""
        index = instance.cost_model.index
        return [tuple(sorted(index[n] for n in s)) for s in self.subgraphs]


# ---------------------------------------------------------------------- rules
def weakly_connected(instance: PartitionInstance, members: set[int]) -> bool:
    """Whether the layers ``members`` (indices, at least one) form a weakly connected subgraph."""
    model = instance.cost_model
    start = next(iter(members))
    seen, stack = {start}, [start]
    while stack:
        u = stack.pop()
        for v in (*model.preds[u], *model.succs[u]):
            if v in members and v not in seen:
                seen.add(v)
                stack.append(v)
    return len(seen) == len(members)


def check(instance: PartitionInstance, solution: PartitionSolution) -> None:
    """Raise :class:`InfeasibleSolution` naming the first violated rule.

    Rules: capacities are candidates; every layer in exactly one subgraph; no empty
    subgraph; every subgraph weakly connected; every edge from an earlier subgraph
    to a later one or inside one; every subgraph fits its buffer(s).
    """
    model = instance.cost_model
    if solution.act_capacity_bytes not in instance.act_candidates_bytes:
        which = "shared" if instance.shared else "activation"
        raise InfeasibleSolution(f"{which} buffer of {solution.act_capacity_bytes} B is not a candidate capacity")
    if instance.shared:
        if solution.weight_capacity_bytes != 0:
            raise InfeasibleSolution("a shared-buffer solution must have weight_capacity_bytes = 0")
    elif solution.weight_capacity_bytes not in instance.weight_candidates_bytes:
        raise InfeasibleSolution(f"weight buffer of {solution.weight_capacity_bytes} B is not a candidate capacity")
    position: dict[int, int] = {}
    for k, names in enumerate(solution.subgraphs):
        if not names:
            raise InfeasibleSolution(f"subgraph {k} is empty")
        for name in names:
            if name not in model.index:
                raise InfeasibleSolution(f"subgraph {k} names unknown layer {name!r}")
            i = model.index[name]
            if i in position:
                raise InfeasibleSolution(f"layer {name!r} is in subgraphs {position[i]} and {k}")
            position[i] = k
    missing = [layer.name for i, layer in enumerate(model.layers) if i not in position]
    if missing:
        raise InfeasibleSolution(f"layer {missing[0]!r} is in no subgraph ({len(missing)} missing)")
    for k, members in enumerate(solution.indices(instance)):
        if not weakly_connected(instance, set(members)):
            raise InfeasibleSolution(f"subgraph {k} ({', '.join(solution.subgraphs[k][:4])}...) is not connected")
    for v, ps in enumerate(model.preds):
        for p in ps:
            if position[p] > position[v]:
                raise InfeasibleSolution(
                    f"edge {model.layers[p].name} -> {model.layers[v].name} goes from subgraph "
                    f"{position[p]} back to subgraph {position[v]}"
                )
    for k, members in enumerate(solution.indices(instance)):
        cost = model.subgraph(members)
        if not cost.fits(instance.shared, solution.act_capacity_bytes, solution.weight_capacity_bytes):
            need = " or ".join(f"{m.act_bytes} B act + {m.weight_bytes} B weights" for m in cost.modes)
            raise InfeasibleSolution(
                f"subgraph {k} ({len(members)} layers from {solution.subgraphs[k][0]!r}) needs {need}; "
                f"buffers are {solution.act_capacity_bytes} B / {solution.weight_capacity_bytes} B"
            )


def evaluate(instance: PartitionInstance, solution: PartitionSolution) -> CostReport:
    """The shared cost model's report of a (checked) solution."""
    return instance.cost_model.evaluate(
        solution.indices(instance), instance.shared, solution.act_capacity_bytes, solution.weight_capacity_bytes
    )


def objective(instance: PartitionInstance, solution: PartitionSolution, report: CostReport) -> float:
    """The value every method minimizes, from the evaluator's report."""
    return instance.objective_value(instance.capacity_total(solution), instance.metric_of_report(report))


# ------------------------------------------------------------------ instances
def _kb_list(key: str, text: str) -> tuple[int, ...]:
    """``"1024"``, ``"512,1024"`` or ``"128-2048:64"`` (KB) as bytes."""
    try:
        if "-" in text:
            span, _, step = text.partition(":")
            lo, _, hi = span.partition("-")
            values = list(range(int(lo), int(hi) + 1, int(step or 64)))
        else:
            values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(
            f"bad capacity list {text!r}", f"--option {key}", "write KB values such as 1024, 512,1024 or 128-2048:64"
        ) from None
    if not values or min(values) <= 0:
        raise InputError(f"capacity list {text!r} is empty or not positive", f"--option {key}", "give sizes in KB > 0")
    return tuple(sorted({v * KIB for v in values}))


def _preset_design(core: Core) -> BufferDesign:
    return BufferDesign.SHARED if core.top_level("I").name == core.top_level("W").name else BufferDesign.SEPARATE


OPTIONS = {
    "buffer": "shared | separate (default: the preset's organisation)",
    "capacities": "preset (fixed, the preset's buffer sizes) | cocco (Cocco's candidate ranges)",
    "act_kb": "activation-buffer candidates in KB: 1024, 512,1024 or 128-2048:64",
    "weight_kb": "weight-buffer candidates in KB",
    "shared_kb": "shared-buffer candidates in KB",
    "metric": "ema | energy (default ema)",
    "alpha": "preference of cost against capacity in co-exploration (default 0.002)",
}


def make_instance(workload: Workload, accelerator: Accelerator, options: Mapping[str, str]) -> PartitionInstance:
    """Instance from CLI-style options (see :data:`OPTIONS`); ``InputError`` on bad ones."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        keys = ", ".join(OPTIONS)
        raise InputError(f"unknown partition option {unknown[0]!r}", "--option", f"options: {keys}")
    if accelerator.n_cores != 1:
        raise InputError(
            f"{accelerator.name} has {accelerator.n_cores} cores; the partition problem needs one",
            "--hardware",
            "use cocco-simba-separate, cocco-simba-shared or another single-core preset",
        )
    core = accelerator.cores[0]
    try:
        design = BufferDesign(options.get("buffer", _preset_design(core).value))
        metric = Metric(options.get("metric", "ema"))
    except ValueError as exc:
        raise InputError(str(exc), "--option buffer / metric", "buffer: shared|separate, metric: ema|energy") from None
    try:
        alpha = float(options.get("alpha", COCCO_ALPHA))
    except ValueError:
        raise InputError(f"alpha {options['alpha']!r} is not a number", "--option alpha", "e.g. alpha=0.002") from None
    if not math.isfinite(alpha) or alpha < 0:
        raise InputError(f"alpha must be >= 0, got {alpha}", "--option alpha", "e.g. alpha=0.002")
    mode = options.get("capacities", "preset")
    if mode not in ("preset", "cocco"):
        raise InputError(f"unknown capacities {mode!r}", "--option capacities", "write preset or cocco")
    top_i, top_w = core.top_level("I").capacity_bytes, core.top_level("W").capacity_bytes
    if design is BufferDesign.SHARED:
        if mode == "cocco":
            default_shared = tuple(kb * KIB for kb in COCCO_SHARED_KB)
        else:
            default_shared = (int(top_i) if _preset_design(core) is BufferDesign.SHARED else int(top_i + top_w),)
        act = _kb_list("shared_kb", options["shared_kb"]) if "shared_kb" in options else default_shared
        weight: tuple[int, ...] = ()
    else:
        if mode == "cocco":
            act, weight = tuple(kb * KIB for kb in COCCO_ACT_KB), tuple(kb * KIB for kb in COCCO_WEIGHT_KB)
        elif _preset_design(core) is BufferDesign.SEPARATE:
            act, weight = (int(top_i),), (int(top_w),)
        else:  # a shared preset split in two equal halves
            act, weight = (int(top_i) // 2,), (int(top_i) // 2,)
        act = _kb_list("act_kb", options["act_kb"]) if "act_kb" in options else act
        weight = _kb_list("weight_kb", options["weight_kb"]) if "weight_kb" in options else weight
    return PartitionInstance(workload, accelerator, design, act, weight, metric, alpha)


PROBLEM = ProblemSpec(
    name="partition",
    description="Cocco: fused-subgraph partition and buffer sizing on one core (metric: EMA bytes or energy pJ)",
    make_instance=make_instance,
    check=check,
    evaluate=evaluate,
    objective=objective,
    solution_from_dict=PartitionSolution.from_dict,
)
