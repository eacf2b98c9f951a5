"""Layer-core allocation and CN scheduling on a heterogeneous multi-core (Stream).

Instance
--------
A workload, a multi-core accelerator whose cores talk over a bus (cores of
different dataflows, and typically a SIMD core for pooling and element-wise
layers), the granularity (``layer``: one computation node (CN) per layer;
``fused``: CNs of ``rows_per_cn`` output rows, see
:mod:`accelsched.hardware.cost.cn_graph`), the layer stacks (every CN of a stack
finishes before any CN of the next one starts; one stack by default), the cores
allowed per operator kind (by default those whose ``supported`` kinds hold it),
the priority of the list scheduler (``latency`` or ``memory``) and the objective
(``latency``, ``energy``, ``edp`` or ``memory``, the peak on-chip footprint).

Solution
--------
The core of every layer (all CNs of a layer run on its core) and the start cycle
of every activity:

* every CN;
* every *transfer* on the bus: the output of a CN sent to another core that has a
  consumer of it (once per destination core);
* every *off-chip access* on the DRAM port: ``input`` (the network-input rows a
  CN of a source layer newly needs), ``weights`` (a layer's weights loaded into
  its core's weight memory; when they do not fit that memory they are streamed
  in again for every CN), ``output`` (a CN of a sink layer written back),
  ``spill`` (a CN's output written to DRAM because it cannot stay on chip, see
  below) and ``fetch`` (a spilled output read back into a consumer's core, once
  per core; its ``core`` is the destination).

*Spilled activations.* The output of a layer that is not fused with its
consumers (at layer granularity, every layer; at fused granularity, a layer
alone in its stack, or one with a consumer in a later stack)
goes through DRAM when the whole tensor exceeds the activation memory of the
core computing it (the capacity of that core's top level of operand O): Stream's
layer-by-layer baseline pays for its large feature maps there, which a fused
stack, whose CNs hold a few rows each, does not.

Durations are not part of the solution: the shared cost model gives them
(:mod:`accelsched.hardware.cost.multicore`).

Rules checked by :func:`check`:

1. every layer has one core, allowed for its operator kind;
2. every CN has a start cycle >= 0; the CNs of a core do not overlap; the
   transfers do not overlap on the bus; the off-chip accesses do not overlap on
   the DRAM port;
3. a CN starts after each of its producer CNs: after its end on the same core,
   after the end of the transfer of its output to the consumer's core otherwise,
   after the end of the fetch of it into the consumer's core when it is spilled;
   a transfer starts after its CN ends, goes to a core other than the CN's that
   has a consumer of it, and exists once;
4. a CN of a source layer starts after the input loads of the rows it reads; an
   output store or a spill starts after its CN ends, a fetch after the spill
   ends, into a core with a consumer of it; each exists once (a spill and a
   fetch exactly where outputs are spilled);
5. a CN with weights starts after the end of the latest load of its layer's
   weights on its core that started before it; the loads resident on a core
   (from a load's start to the end of the last CN it serves) never exceed the
   capacity of the core's weight memory; weights that do not fit alone are
   streamed: one load per CN, just for that CN;
6. every CN of a stack starts after every CN of the earlier stacks ends.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

from accelsched.errors import InputError
from accelsched.hardware.cost.cn_graph import CNGraph, Granularity, build_cn_graph
from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.spec import Accelerator, Bus, Core
from accelsched.models.layer import OpKind
from accelsched.models.workload import Workload
from accelsched.problems.base import ProblemSpec

__all__ = [
    "ACCESS_KINDS",
    "OBJECTIVES",
    "OPTIONS",
    "PROBLEM",
    "MulticoreInstance",
    "MulticoreSolution",
    "OffChipAccess",
    "Priority",
    "Transfer",
    "auto_stacks",
    "check",
    "make_instance",
]

OBJECTIVES = ("latency", "energy", "edp", "memory")
"""Metrics the instance's objective may name (keys of :meth:`CostReport.metric`)."""

ACCESS_KINDS = ("input", "weights", "output", "spill", "fetch")
"""Kinds of off-chip access."""

OPTIONS = ("granularity", "rows", "stacks", "priority", "objective", "allowed")
"""``--option`` keys of :func:`make_instance`."""


class Priority(enum.Enum):
    """Which ready CN the list scheduler takes next."""

    LATENCY = "latency"
    """The CN whose producers finished earliest (Stream's latency priority)."""
    MEMORY = "memory"
    """The CN of the deepest layer, to free its inputs early (Stream's memory priority)."""

    @classmethod
    def parse(cls, text: str) -> Priority:
        """The priority named ``text``."""
        for member in cls:
            if member.value == text:
                return member
        raise ValueError(f"priority must be latency or memory, got {text!r}")


@dataclass(frozen=True)
class Transfer:
    """The output of CN ``cn`` (``layer:part``) sent over the bus to ``core``, starting at cycle ``start``."""

    cn: str
    core: int
    start: int


@dataclass(frozen=True)
class OffChipAccess:
    """An access on the DRAM port: ``kind`` (input, weights, output) for CN ``cn`` on ``core`` at ``start``."""

    kind: str
    cn: str
    core: int
    start: int

    def __post_init__(self) -> None:
        if self.kind not in ACCESS_KINDS:
            raise ValueError(f"off-chip access kind must be one of {', '.join(ACCESS_KINDS)}, got {self.kind!r}")


@dataclass(frozen=True)
class MulticoreSolution:
    """A core per layer and a start cycle per CN, transfer and off-chip access.

    Attributes
    ----------
    allocation
        Core id of every layer.
    starts
        Start cycle of every CN, by CN name (``layer:part``, see :class:`~accelsched.hardware.cost.cn_graph.CN`).
    transfers, offchip
        The bus transfers and the DRAM-port accesses.
    """

    allocation: Mapping[str, int]
    starts: Mapping[str, int]
    transfers: tuple[Transfer, ...] = ()
    offchip: tuple[OffChipAccess, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "allocation", MappingProxyType(dict(self.allocation)))
        object.__setattr__(self, "starts", MappingProxyType(dict(self.starts)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form."""
        return {
            "allocation": dict(self.allocation),
            "cns": dict(self.starts),
            "transfers": [[t.cn, t.core, t.start] for t in self.transfers],
            "offchip": [[a.kind, a.cn, a.core, a.start] for a in self.offchip],
        }

    @classmethod
    def from_dict(cls, data: Any) -> MulticoreSolution:
        """Inverse of :meth:`to_dict`; ``ValueError`` naming the bad field."""
        if not isinstance(data, Mapping) or not {"allocation", "cns"} <= set(data):
            raise ValueError("multicore solution: expected an object with allocation, cns, transfers, offchip")
        try:
            allocation = {str(k): int(v) for k, v in dict(data["allocation"]).items()}
            starts = {str(k): int(v) for k, v in dict(data["cns"]).items()}
            transfers = tuple(Transfer(str(t[0]), int(t[1]), int(t[2])) for t in data.get("transfers", ()))
            offchip = tuple(OffChipAccess(str(a[0]), str(a[1]), int(a[2]), int(a[3])) for a in data.get("offchip", ()))
        except (TypeError, IndexError, KeyError, ValueError) as exc:
            raise ValueError(f"multicore solution: malformed entry ({exc})") from None
        return cls(allocation, starts, transfers, offchip)


@dataclass(frozen=True)
class MulticoreInstance:
    """A Stream scheduling instance (see the module docstring).

    Parameters
    ----------
    workload, accelerator
        What runs, and where; the accelerator's interconnect must be a bus.
    granularity
        ``LAYER`` or ``FUSED``.
    rows_per_cn
        Output rows per CN at fused granularity.
    stacks
        Layer stacks in order; None is one stack holding every layer.
    allowed
        ``(operator kind, core ids)`` pairs overriding the cores allowed for a kind
        (by default every core that supports it).
    priority
        List-scheduler priority.
    objective
        ``latency``, ``energy``, ``edp`` or ``memory``.
    """

    workload: Workload
    accelerator: Accelerator
    granularity: Granularity = Granularity.LAYER
    rows_per_cn: int = 1
    stacks: tuple[tuple[str, ...], ...] | None = None
    allowed: tuple[tuple[OpKind, tuple[int, ...]], ...] = field(default=())
    priority: Priority = Priority.LATENCY
    objective: str = "latency"

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"MulticoreInstance: objective must be one of {', '.join(OBJECTIVES)}, "
                             f"got {self.objective!r}")  # fmt: skip
        if not isinstance(self.accelerator.interconnect, Bus):
            kind = getattr(self.accelerator.interconnect, "kind", None)
            raise ValueError(
                f"MulticoreInstance: accelerator {self.accelerator.name!r} must have a bus interconnect, got {kind}"
            )
        if isinstance(self.rows_per_cn, bool) or not isinstance(self.rows_per_cn, int) or self.rows_per_cn < 1:
            raise ValueError(f"MulticoreInstance: rows_per_cn must be an integer >= 1, got {self.rows_per_cn!r}")
        self._check_allowed()
        self._check_stacks()

    def _check_allowed(self) -> None:
        ids = {c.id for c in self.accelerator.cores}
        for kind, cores in self.allowed:
            bad = [c for c in cores if c not in ids]
            if bad:
                raise ValueError(f"MulticoreInstance: allowed cores of {kind.value} name unknown core {bad[0]} "
                                 f"(cores: {sorted(ids)})")  # fmt: skip
            unable = [c for c in cores if not self.accelerator.core(c).supports(kind)]
            if unable:
                core = self.accelerator.core(unable[0])
                raise ValueError(f"MulticoreInstance: core {core.id} ({core.name}) does not execute {kind.value} "
                                 "layers and cannot be allowed for them")  # fmt: skip
        for name in self.workload.names:
            if not self.cores_for(name):
                kind = self.workload[name].kind
                raise ValueError(
                    f"MulticoreInstance: layer {name!r} ({kind.value}) has no allowed core; give one with "
                    f"allowed={kind.value}:ID or use an accelerator with a core supporting {kind.value}"
                )

    def _check_stacks(self) -> None:
        if self.stacks is None:
            return
        where: dict[str, int] = {}
        for s, stack in enumerate(self.stacks):
            if not stack:
                raise ValueError(f"MulticoreInstance: stack {s} is empty; every stack needs at least one layer")
            for name in stack:
                if name not in self.workload:
                    raise ValueError(f"MulticoreInstance: stack {s} names unknown layer {name!r}")
                if name in where:
                    raise ValueError(f"MulticoreInstance: layer {name!r} is in stacks {where[name]} and {s}")
                where[name] = s
        missing = [n for n in self.workload.names if n not in where]
        if missing:
            raise ValueError(f"MulticoreInstance: layer {missing[0]!r} is in no stack")
        for producer, consumer in self.workload.edges:
            if where[producer] > where[consumer]:
                raise ValueError(
                    f"MulticoreInstance: layer {consumer!r} (stack {where[consumer]}) reads {producer!r} "
                    f"from a later stack ({where[producer]}); stacks must follow the data flow"
                )

    @cached_property
    def allowed_cores(self) -> Mapping[str, tuple[int, ...]]:
        """Core ids allowed for each layer."""
        return MappingProxyType({name: self.cores_for(name) for name in self.workload.names})

    def cores_for(self, layer: str) -> tuple[int, ...]:
        """Core ids allowed for ``layer``."""
        kind = self.workload[layer].kind
        for k, cores in self.allowed:
            if k is kind:
                return tuple(sorted(cores))
        return tuple(c.id for c in self.accelerator.cores_for(kind))

    @cached_property
    def graph(self) -> CNGraph:
        """The CNs and their dependencies."""
        return build_cn_graph(self.workload, self.granularity, self.rows_per_cn, self.stacks)

    @cached_property
    def cost_cache(self) -> dict[Any, Any]:
        """Memo of the evaluator (CN costs per core), shared by every evaluation of this instance."""
        return {}

    def weight_capacity_bytes(self, core: Core) -> int:
        """Capacity of the memory holding ``core``'s weights (its top level of operand W)."""
        return core.top_level("W").total_capacity_bytes

    def streams_weights(self, layer: str, core: int) -> bool:
        """Whether ``layer``'s weights exceed ``core``'s weight memory (streamed once per CN)."""
        return self.workload[layer].weight_bytes > self.weight_capacity_bytes(self.accelerator.core(core))

    def activation_capacity_bytes(self, core: Core) -> int:
        """Capacity of the memory holding ``core``'s outputs (its top level of operand O)."""
        return core.top_level("O").total_capacity_bytes

    @cached_property
    def unfused_outputs(self) -> frozenset[str]:
        """Layers whose output leaves its fused stack: every layer at layer granularity; otherwise layers
        alone in their stack, or read by a later stack."""
        if self.granularity is Granularity.LAYER:
            return frozenset(self.workload.names)
        graph = self.graph
        stack = {cn.layer: cn.stack for cn in graph.cns}
        size: dict[int, int] = {}
        for name in self.workload.names:
            size[stack[name]] = size.get(stack[name], 0) + 1
        out = {name for name in self.workload.names if size[stack[name]] == 1}
        out |= {producer for producer, consumer in self.workload.edges if stack[consumer] != stack[producer]}
        return frozenset(out)

    def spills(self, layer: str, core: int) -> bool:
        """Whether ``layer``'s output, computed on ``core``, goes through DRAM (see the module docstring)."""
        if layer not in self.unfused_outputs or not self.workload.successors[layer]:
            return False
        return self.workload[layer].output_bytes > self.activation_capacity_bytes(self.accelerator.core(core))

    def describe(self) -> str:
        """One line: workload, accelerator, granularity, objective."""
        fused = f"fused, {self.rows_per_cn} row(s) per CN" if self.granularity is Granularity.FUSED else "layer"
        return (f"{self.workload.name} on {self.accelerator.name}: {len(self.graph.cns)} CNs ({fused}), "
                f"{len(self.stacks or [()])} stack(s), objective {self.objective}")  # fmt: skip


def check(instance: MulticoreInstance, solution: MulticoreSolution) -> None:
    """Raise :class:`InfeasibleSolution` naming the first rule of the module docstring ``solution`` breaks."""
    from accelsched.hardware.cost.multicore import check_schedule

    check_schedule(instance, solution)


def auto_stacks(workload: Workload, accelerator: Accelerator) -> tuple[tuple[str, ...], ...]:
    """Stream-style layer stacks: fuse while the weights stay on chip.

    Stacks are cut only where one tensor crosses (``cut_points`` of the
    depth-first problem: never inside a residual block or a branch). A segment
    between two cuts holding a layer whose weights exceed the weight memory of
    the smallest core able to run it is not fused (each of its layers is a stack
    of its own, scheduled layer by layer). Other segments are appended to the
    current stack while the stack's weights fit the summed weight memories of the
    cores, so that a fused stack need not reload weights.
    """
    from accelsched.problems.depth_first import cut_points

    def capacity(core: Core) -> int:
        return core.top_level("W").total_capacity_bytes if "W" in core.hierarchy else 0

    total = sum(capacity(c) for c in accelerator.cores)
    names = workload.names
    stacks: list[list[str]] = []
    weights, begin, open_stack = 0, 0, False
    for cut in cut_points(workload):
        segment = list(names[begin : cut + 1])
        begin = cut + 1
        size = sum(workload[n].weight_bytes for n in segment)
        too_big = any(
            workload[n].weight_bytes > min((capacity(c) for c in accelerator.cores_for(workload[n].kind)), default=0)
            for n in segment
        )
        if too_big:
            stacks += [[n] for n in segment]
            open_stack = False
        elif open_stack and weights + size <= total:
            stacks[-1] += segment
            weights += size
        else:
            stacks.append(segment)
            weights, open_stack = size, True
    return tuple(tuple(s) for s in stacks)


def _split(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def _parse_allowed(text: str) -> tuple[tuple[OpKind, tuple[int, ...]], ...]:
    """``conv:0+1;pool:4`` -> ((CONV, (0, 1)), (POOL, (4,)))."""
    out = []
    for item in text.split(";"):
        kind, _, cores = item.partition(":")
        try:
            op = OpKind(kind.strip())
            ids = tuple(int(c) for c in cores.split("+") if c.strip())
        except ValueError:
            raise ValueError(f"allowed: expected KIND:ID+ID;... (e.g. conv:0+1;pool:4), got {item!r}") from None
        out.append((op, ids))
    return tuple(out)


def make_instance(workload: Workload, accelerator: Accelerator, options: Mapping[str, str]) -> MulticoreInstance:
    """Instance from CLI-style options; ``InputError`` on bad ones.

    Options: ``granularity=layer|fused``, ``rows=N`` (rows per CN), ``stacks=a,b|c,d``
    (layer names, stacks separated by ``|``) or ``stacks=auto`` (:func:`auto_stacks`;
    without the option, one stack), ``priority=latency|memory``,
    ``objective=latency|energy|edp|memory``, ``allowed=conv:0+1;pool:4``.
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise InputError(f"unknown multicore option {unknown[0]!r}", "--option", f"options: {', '.join(OPTIONS)}")
    try:
        rows = options.get("rows", "1")
        if not rows.isdigit():
            raise ValueError(f"rows must be a positive integer, got {rows!r}")
        stacks = None
        if options.get("stacks") == "auto":
            stacks = auto_stacks(workload, accelerator)
        elif "stacks" in options:
            stacks = tuple(tuple(_split(s)) for s in options["stacks"].split("|"))
        return MulticoreInstance(
            workload,
            accelerator,
            Granularity.parse(options.get("granularity", "layer")),
            int(rows),
            stacks,
            _parse_allowed(options["allowed"]) if "allowed" in options else (),
            Priority.parse(options.get("priority", "latency")),
            options.get("objective", "latency"),
        )
    except ValueError as exc:
        raise InputError(str(exc), "--option / --hardware / --workload", "see accelsched solve --help") from None


def evaluate(instance: MulticoreInstance, solution: MulticoreSolution) -> CostReport:
    """The shared multicore evaluator's cost report."""
    from accelsched.hardware.cost.multicore import evaluate_schedule

    return evaluate_schedule(instance, solution).report


def objective(instance: MulticoreInstance, solution: MulticoreSolution, report: CostReport) -> float:
    """The instance's objective."""
    return report.metric(instance.objective)


def _solution_from_dict(data: Any) -> MulticoreSolution:
    return MulticoreSolution.from_dict(data)


PROBLEM = ProblemSpec(
    name="multicore",
    description="layer-core allocation and CN scheduling on a heterogeneous multi-core with a bus (Stream)",
    make_instance=make_instance,
    check=check,
    evaluate=evaluate,
    objective=objective,
    solution_from_dict=_solution_from_dict,
)
