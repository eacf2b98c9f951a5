"""Depth-first (layer-fused) scheduling of a single core (DeFiNES, HPCA'23).

Instance
--------
A convolutional workload (branches allowed), an accelerator with one core and a
memory hierarchy (registers, local and global buffers, DRAM), and the metric to
minimize: ``energy`` (pJ, the default), ``latency`` (cycles) or ``edp``.

Solution
--------
The workload's layers, taken in the workload's topological order, are cut into
*stacks* of consecutive layers. Each stack is run tile by tile: its last layer's
output is cut into tiles of ``tile_x`` columns by ``tile_y`` rows (the leftover,
smaller tile first in each direction), and for each tile every layer of the stack
computes what the tile needs, back-calculated from the tile. The overlap between
neighbouring tiles is recomputed or cached according to the stack's mode:

* ``fully-recompute``: nothing is cached, every tile recomputes its halo;
* ``h-cached``: the horizontal overlap (with the tile to the left) is cached, the
  vertical one recomputed ("H-cached V-recompute");
* ``fully-cached``: both overlaps are cached.

Rules checked by :func:`check`:

1. every layer is in exactly one stack, stacks are consecutive runs of the
   topological order, in that order;
2. only a stack's last layer's output is used outside the stack: every other
   layer of the stack has all its consumers inside it. A stack reads the tensors
   it needs from DRAM (the network input, outputs of earlier stacks) and writes
   one tensor there. Fused stacks thus hold whole branches (a stack that starts
   and ends where the network narrows to one tensor, :func:`cut_points`, always
   qualifies), and every single layer is a valid stack, which makes single-layer
   execution part of the space;
3. ``1 <= tile_x <= OX`` and ``1 <= tile_y <= OY`` of the stack's last layer;
4. the mode is one of the three above.

Single-layer (SL) execution is every layer its own stack with the tile equal to
its output; layer-by-layer (LBL) is the whole network as one stack with the tile
equal to the final output, so that intermediate feature maps stay in the lowest
memory level that holds them.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.spec import Accelerator, Core
from accelsched.models.layer import OpKind
from accelsched.models.workload import Workload
from accelsched.problems.base import ProblemSpec

__all__ = [
    "METRICS",
    "PROBLEM",
    "DepthFirstInstance",
    "DepthFirstSolution",
    "OverlapMode",
    "Stack",
    "Strategy",
    "check",
    "cut_points",
    "make_instance",
    "parse_tile",
]

METRICS = ("energy", "latency", "edp")
"""Metrics a depth-first instance can minimize."""

OPTIONS = ("metric",)


class OverlapMode(enum.Enum):
    """How the overlap between neighbouring tiles is handled."""

    FULLY_RECOMPUTE = "fully-recompute"
    H_CACHED = "h-cached"
    FULLY_CACHED = "fully-cached"

    @property
    def caches_x(self) -> bool:
        """Whether the horizontal overlap (along a row of tiles) is cached."""
        return self is not OverlapMode.FULLY_RECOMPUTE

    @property
    def caches_y(self) -> bool:
        """Whether the vertical overlap (between rows of tiles) is cached."""
        return self is OverlapMode.FULLY_CACHED

    @classmethod
    def parse(cls, text: str) -> OverlapMode:
        """The mode called ``text``; ``ValueError`` naming the three modes otherwise."""
        for mode in cls:
            if mode.value == text:
                return mode
        names = ", ".join(m.value for m in cls)
        raise ValueError(f"unknown overlap mode {text!r}; modes are {names}")


@dataclass(frozen=True)
class Strategy:
    """Tile size (of the stack's last output, in pixels) and overlap mode of one stack."""

    tile_x: int
    tile_y: int
    mode: OverlapMode

    def __post_init__(self) -> None:
        for name in ("tile_x", "tile_y"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"strategy: {name} must be a positive integer, got {value!r}")
        if not isinstance(self.mode, OverlapMode):
            raise ValueError(f"strategy: mode must be an OverlapMode, got {self.mode!r}")

    def __str__(self) -> str:
        return f"{self.tile_x}x{self.tile_y} {self.mode.value}"

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {"tile_x": self.tile_x, "tile_y": self.tile_y, "mode": self.mode.value}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Strategy:
        """Inverse of :meth:`to_dict`; ``ValueError`` naming the bad field."""
        try:
            return cls(int(data["tile_x"]), int(data["tile_y"]), OverlapMode.parse(str(data["mode"])))
        except KeyError as exc:
            raise ValueError(f"strategy: field {exc.args[0]!r} is missing") from None
        except TypeError:
            raise ValueError(f"strategy: expected an object with tile_x, tile_y, mode, got {data!r}") from None


@dataclass(frozen=True)
class Stack:
    """Consecutive layers fused into one stack, with their strategy."""

    layers: tuple[str, ...]
    strategy: Strategy

    def __post_init__(self) -> None:
        object.__setattr__(self, "layers", tuple(self.layers))
        if not self.layers:
            raise ValueError("stack: field layers is empty")

    @property
    def last(self) -> str:
        """The stack's last layer, whose output is tiled."""
        return self.layers[-1]

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {"layers": list(self.layers), **self.strategy.to_dict()}


@dataclass(frozen=True)
class DepthFirstSolution:
    """The stacks, in execution order."""

    stacks: tuple[Stack, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "stacks", tuple(self.stacks))
        if not self.stacks:
            raise ValueError("depth-first solution: field stacks is empty")

    def to_dict(self) -> dict[str, Any]:
        """Plain data (``{"stacks": [{"layers": [...], "tile_x":, "tile_y":, "mode":}, ...]}``)."""
        return {"stacks": [s.to_dict() for s in self.stacks]}

    @classmethod
    def from_dict(cls, data: Any) -> DepthFirstSolution:
        """Inverse of :meth:`to_dict`; ``ValueError`` naming the bad field."""
        if not isinstance(data, Mapping) or not isinstance(data.get("stacks"), list):
            raise ValueError("depth-first solution: expected an object with a list 'stacks'")
        stacks = []
        for i, item in enumerate(data["stacks"]):
            if not isinstance(item, Mapping) or not isinstance(item.get("layers"), list):
                raise ValueError(f"depth-first solution: stacks[{i}] needs a list 'layers'")
            try:
                stacks.append(Stack(tuple(str(n) for n in item["layers"]), Strategy.from_dict(item)))
            except ValueError as exc:
                raise ValueError(f"depth-first solution: stacks[{i}]: {exc}") from None
        return cls(tuple(stacks))

    def describe(self) -> str:
        """One line per stack."""
        return "\n".join(
            f"stack {i}: {s.layers[0]}..{s.last} ({len(s.layers)} layers) {s.strategy}"
            for i, s in enumerate(self.stacks)
        )


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
        index = {n: i for i, n in enumerate(order)}
        last_use = dict(index)
        for layer in self.workload:
            for producer in layer.inputs:
                last_use[producer] = max(last_use[producer], index[layer.name])
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
        if self.metric == "energy":
            return report.energy_pj
        if self.metric == "latency":
            return report.latency_cycles
        return report.edp


def cut_points(workload: Workload) -> list[int]:
    """Positions ``i`` (0-based, in topological order) after which a stack may end.

    A stack may end after layer ``i`` when no layer ``j <= i`` other than ``i``
    itself feeds a layer after ``i``: then one tensor crosses the cut. The last
    position is always a cut.
    """
    names = workload.names
    index = {n: i for i, n in enumerate(names)}
    last_use = dict(index)
    for layer in workload:
        for producer in layer.inputs:
            last_use[producer] = max(last_use[producer], index[layer.name])
    cuts = []
    furthest = -1  # the furthest consumer of the layers before i
    for i, name in enumerate(names):
        if furthest <= i:
            cuts.append(i)
        furthest = max(furthest, last_use[name])
    return cuts


def check(instance: DepthFirstInstance, solution: DepthFirstSolution) -> None:
    """Raise :class:`InfeasibleSolution` naming the first violated rule (module docstring)."""
    order = instance.order
    position = 0
    for k, stack in enumerate(solution.stacks):
        where = f"stack {k}"
        for j, name in enumerate(stack.layers):
            if name not in instance.workload:
                raise InfeasibleSolution(f"{where}: unknown layer {name!r}")
            if position + j >= len(order) or order[position + j] != name:
                expected = order[position + j] if position + j < len(order) else "nothing"
                raise InfeasibleSolution(
                    f"{where}: layer {name!r} is out of place; stacks must be consecutive runs of the topological "
                    f"order (expected {expected!r} at position {position + j})"
                )
        start, position = position, position + len(stack.layers)
        if start < instance.first_start[position - 1]:
            inner = stack.layers[: instance.first_start[position - 1] - start]
            raise InfeasibleSolution(
                f"{where} ends after {stack.last!r} inside a branch: the output of {inner[-1]!r} is still needed "
                "after the stack (only a stack's last layer may feed later stacks; fused stacks hold whole branches)"
            )
        last = instance.workload[stack.last]
        strategy = stack.strategy
        if strategy.tile_x > last.OX or strategy.tile_y > last.OY:
            raise InfeasibleSolution(
                f"{where}: tile {strategy.tile_x}x{strategy.tile_y} is larger than the output "
                f"{last.OX}x{last.OY} (OX x OY) of its last layer {stack.last!r}"
            )
    if position != len(order):
        raise InfeasibleSolution(f"the stacks cover {position} of {len(order)} layers; missing {order[position]!r}")


def parse_tile(text: str) -> tuple[int, int]:
    """``"TXxTY"`` as two positive integers; ``ValueError`` saying how to write it."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if match is None:
        raise ValueError(f"bad tile {text!r}; write TXxTY, e.g. 60x72")
    tile_x, tile_y = int(match[1]), int(match[2])
    if tile_x < 1 or tile_y < 1:
        raise ValueError(f"bad tile {text!r}: both sizes must be at least 1")
    return tile_x, tile_y


def make_instance(workload: Workload, accelerator: Accelerator, options: Mapping[str, str]) -> DepthFirstInstance:
    """Instance from CLI-style options (``metric=energy|latency|edp``); ``InputError`` on bad ones."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise InputError(f"unknown depth-first option {unknown[0]!r}", "--option", "options: metric")
    try:
        return DepthFirstInstance(workload, accelerator, options.get("metric", "energy"))
    except ValueError as exc:
        raise InputError(str(exc), "--option metric / --hardware / --workload") from None


def evaluate(instance: DepthFirstInstance, solution: DepthFirstSolution) -> CostReport:
    """The shared depth-first evaluator's cost report."""
    from accelsched.hardware.cost.depth_first import evaluate_solution

    return evaluate_solution(instance, solution).report


def objective(instance: DepthFirstInstance, solution: DepthFirstSolution, report: CostReport) -> float:
    """The instance's metric."""
    return instance.objective(report)


def _solution_from_dict(data: Any) -> DepthFirstSolution:
    return DepthFirstSolution.from_dict(data)


PROBLEM = ProblemSpec(
    name="depth-first",
    description="DeFiNES: fused stacks x tile size x overlap mode on one core's memory hierarchy",
    make_instance=make_instance,
    check=check,
    evaluate=evaluate,
    objective=objective,
    solution_from_dict=_solution_from_dict,
)
"""The depth-first problem as the registry and the CLI see it."""
