"""The multicore instance: workload, bus multi-core, granularity, stacks, allowed cores, priority, objective."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

from accelsched.hardware.cost.cn_graph import CNGraph, Granularity, build_cn_graph
from accelsched.hardware.spec import Accelerator, Bus, Core
from accelsched.models.layer import OpKind
from accelsched.models.workload import Workload

__all__ = ["OBJECTIVES", "MulticoreInstance", "Priority"]

OBJECTIVES = ("latency", "energy", "edp", "memory")
"""Metrics the instance's objective may name (keys of :meth:`CostReport.metric`)."""


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
class MulticoreInstance:
    """A Stream scheduling instance (see :mod:`accelsched.problems.multicore`).

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
    def whole_layers(self) -> frozenset[str]:
        """Layers kept as one CN at fused granularity: their weights exceed the weight memory of the smallest
        core allowed to run them.

        Cut into rows, such a layer would stream all its weights through the DRAM port once per CN (rule 5 of
        :mod:`accelsched.problems.multicore`); as one CN it streams them once, the traffic of Stream's layer
        splitting (``LayerSplittingStage``: a layer whose weights exceed the smallest allowed core's weight
        memory is cut along ``K`` into parts that fit, each loaded once).
        """
        if self.granularity is Granularity.LAYER:
            return frozenset()
        out = set()
        for name in self.workload.names:
            layer = self.workload[name]
            if not (layer.kind.has_parameters and layer.weight_bytes > 0):
                continue
            smallest = min(self.weight_capacity_bytes(self.accelerator.core(c)) for c in self.cores_for(name))
            if layer.weight_bytes > smallest:
                out.add(name)
        return frozenset(out)

    @cached_property
    def graph(self) -> CNGraph:
        """The CNs and their dependencies (layers of :attr:`whole_layers` are one CN each)."""
        return build_cn_graph(self.workload, self.granularity, self.rows_per_cn, self.stacks, whole=self.whole_layers)

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
        """Layers whose output leaves its fused stack, or is held whole: every layer at layer granularity;
        otherwise layers alone in their stack, read by a later stack, of :attr:`whole_layers`, or read by one
        (a whole layer's CN needs its producers' whole outputs and writes its whole output at once, so they
        spill like a stack boundary's when they exceed the core's activation memory)."""
        if self.granularity is Granularity.LAYER:
            return frozenset(self.workload.names)
        graph = self.graph
        stack = {cn.layer: cn.stack for cn in graph.cns}
        size: dict[int, int] = {}
        for name in self.workload.names:
            size[stack[name]] = size.get(stack[name], 0) + 1
        out = {name for name in self.workload.names if size[stack[name]] == 1}
        out |= {producer for producer, consumer in self.workload.edges if stack[consumer] != stack[producer]}
        whole = self.whole_layers
        out |= whole | {producer for producer, consumer in self.workload.edges if consumer in whole}
        return frozenset(out)

    def spills(self, layer: str, core: int) -> bool:
        """Whether ``layer``'s output, computed on ``core``, goes through DRAM (spilled activations of
        :mod:`accelsched.problems.multicore`)."""
        if layer not in self.unfused_outputs or not self.workload.successors[layer]:
            return False
        return self.workload[layer].output_bytes > self.activation_capacity_bytes(self.accelerator.core(core))

    def describe(self) -> str:
        """One line: workload, accelerator, granularity, objective."""
        fused = f"fused, {self.rows_per_cn} row(s) per CN" if self.granularity is Granularity.FUSED else "layer"
        return (f"{self.workload.name} on {self.accelerator.name}: {len(self.graph.cns)} CNs ({fused}), "
                f"{len(self.stacks or [()])} stack(s), objective {self.objective}")  # fmt: skip
