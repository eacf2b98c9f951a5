"""Atom-to-round scheduling on a multi-engine accelerator (Atomic Dataflow, HPCA'22).

Instance
--------
An *atomic DAG* (:class:`AtomDag`): one vertex per atom, i.e. per (layer, sample,
block of output rows x columns x output channels, block of input channels), with
its duration on one engine, and an edge wherever a consumer atom reads what a
producer atom writes; and the number ``N`` of engines. From a workload and a mesh
preset (:func:`make_instance`) the atoms come from one atom size ``[h, w, ci, co]``
per layer (:class:`AtomSize`) and the durations from the shared cost model, see
:func:`atomize`. Seeded random DAGs (:meth:`AtomDag.random`) serve the tests.

Solution
--------
A :class:`RoundSchedule`: the atoms of each round, in round order, and optionally
the engine of every atom. Rounds are synchronous: every atom of a round starts
with the round, and the round ends with its slowest atom.

Rules checked by :func:`check`:

1. every atom is in exactly one round, and no round is empty;
2. a round holds at most ``N`` atoms;
3. for every edge ``a -> b`` the round of ``a`` is before the round of ``b``;
4. engines, when given: one per atom, in ``0 .. N-1``, different within a round.

Objective: latency, the sum over rounds of the longest atom (the evaluator,
:mod:`accelsched.hardware.cost.rounds`, adds the energy).
"""

from __future__ import annotations

import enum
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.spec import Accelerator, Core, Mesh
from accelsched.models.layer import Layer, OpKind
from accelsched.models.workload import Workload
from accelsched.problems.base import ProblemSpec

__all__ = [
    "PROBLEM",
    "Atom",
    "AtomDag",
    "AtomSize",
    "AtomicInstance",
    "Partition",
    "RoundSchedule",
    "atom_cost",
    "atomize",
    "check",
    "check_atom_size",
    "make_instance",
]


class Partition(enum.Enum):
    """How an engine's PE array is unrolled: over channels (K x C) or over output pixels (OY x OX)."""

    KC = "kc"
    YX = "yx"

    @classmethod
    def of(cls, core: Core) -> Partition:
        """The partition of ``core``'s two-dimensional unrolling.

        Raises
        ------
        InputError
            The unrolling is neither ``K x C`` nor ``OY x OX``.
        """
        loops = {loop for loop, _ in core.spatial}
        if loops == {"K", "C"}:
            return cls.KC
        if loops == {"OY", "OX"}:
            return cls.YX
        raise InputError(f"core {core.id} ({core.name}) unrolls {sorted(loops)}", "--hardware",
                         "Atomic Dataflow engines unroll K x C (KC-partition) or OY x OX (YX-partition)")  # fmt: skip


@dataclass(frozen=True)
class AtomSize:
    """Output rows ``h``, columns ``w``, input channels ``ci`` and output channels ``co`` of one atom."""

    h: int
    w: int
    ci: int
    co: int

    def __post_init__(self) -> None:
        for name in ("h", "w", "ci", "co"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise InputError(f"atom size {name}={value!r} is not a positive integer", "--option atom",
                                 "give four positive integers h,w,ci,co")  # fmt: skip

    @classmethod
    def parse(cls, text: str) -> AtomSize:
        """``"h,w,ci,co"``."""
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 4 or not all(p.isdigit() for p in parts):
            raise InputError(f"atom size {text!r} is not four integers", "--option atom", "write it as h,w,ci,co")
        return cls(*(int(p) for p in parts))

    def clipped(self, layer: Layer) -> AtomSize:
        """The size limited to the layer's loops (per sample)."""
        return AtomSize(min(self.h, layer.OY), min(self.w, layer.OX), min(self.ci, layer.C), min(self.co, layer.K))


@dataclass(frozen=True)
class Atom:
    """One atom: its layer, sample, half-open output ranges, input-channel range, duration and cost.

    ``channel_offset`` is the first output channel of the layer's group when the layer is grouped (the atom's
    ``co`` range is within one group; its ``ci`` range is within that group's input channels).
    """

    layer: str
    sample: int
    rows: tuple[int, int]
    cols: tuple[int, int]
    in_channels: tuple[int, int]
    out_channels: tuple[int, int]
    duration_cycles: int
    energy_pj: float = 0.0
    macs: int = 0
    output_bytes: int = 0

    def __post_init__(self) -> None:
        if self.duration_cycles < 0 or not math.isfinite(self.energy_pj) or self.energy_pj < 0:
            raise ValueError(f"atom of layer {self.layer!r}: negative or non-finite duration or energy")

    @property
    def name(self) -> str:
        """``layer[sample]/rows/cols/ci/co`` ranges."""
        r, c, i, o = self.rows, self.cols, self.in_channels, self.out_channels
        return f"{self.layer}[{self.sample}]/{r[0]}:{r[1]}/{c[0]}:{c[1]}/{i[0]}:{i[1]}/{o[0]}:{o[1]}"


@dataclass(frozen=True)
class AtomDag:
    """Atoms and the producer -> consumer edges between them (``(producer, consumer, bytes)``), acyclic.

    Raises
    ------
    ValueError
        An edge names a missing atom, joins an atom to itself, repeats, or closes a cycle.
    """

    name: str
    atoms: tuple[Atom, ...]
    edges: tuple[tuple[int, int, int], ...] = ()

    def __post_init__(self) -> None:
        n = len(self.atoms)
        seen: set[tuple[int, int]] = set()
        for a, b, nbytes in self.edges:
            if not (0 <= a < n and 0 <= b < n) or a == b or nbytes < 0:
                raise ValueError(f"DAG {self.name!r}: bad edge {(a, b, nbytes)} for {n} atoms")
            if (a, b) in seen:
                raise ValueError(f"DAG {self.name!r}: edge {(a, b)} twice")
            seen.add((a, b))
        if len(self.topological_order) < n:
            raise ValueError(f"DAG {self.name!r}: the edges close a cycle")

    @cached_property
    def predecessors(self) -> tuple[tuple[int, ...], ...]:
        """Producers of every atom."""
        preds: list[list[int]] = [[] for _ in self.atoms]
        for a, b, _ in self.edges:
            preds[b].append(a)
        return tuple(tuple(sorted(p)) for p in preds)

    @cached_property
    def topological_order(self) -> tuple[int, ...]:
        """Atoms in an order where every producer comes before its consumers (shorter on a cycle)."""
        indegree = [len(p) for p in self.predecessors]
        succ: list[list[int]] = [[] for _ in self.atoms]
        for a, b, _ in self.edges:
            succ[a].append(b)
        order = [i for i, d in enumerate(indegree) if d == 0]
        for i in order:
            for j in succ[i]:
                indegree[j] -= 1
                if indegree[j] == 0:
                    order.append(j)
        return tuple(order)

    @property
    def durations(self) -> tuple[int, ...]:
        """Cycles of every atom."""
        return tuple(a.duration_cycles for a in self.atoms)

    @classmethod
    def random(cls, n_atoms: int, seed: int, edge_probability: float = 0.3, max_cycles: int = 20) -> AtomDag:
        """A seeded random DAG: ``n_atoms`` atoms of 1..``max_cycles`` cycles, edges forward in index order."""
        rng = np.random.default_rng(seed)
        atoms = tuple(Atom(f"l{i}", 0, (0, 1), (0, 1), (0, 1), (0, 1), int(rng.integers(1, max_cycles + 1)),
                           energy_pj=float(rng.integers(1, 100)), macs=1, output_bytes=int(rng.integers(1, 64)))
                      for i in range(n_atoms))  # fmt: skip
        edges = tuple((a, b, atoms[a].output_bytes) for a, b in itertools.combinations(range(n_atoms), 2)
                      if rng.random() < edge_probability)  # fmt: skip
        return cls(f"random:{n_atoms}:{seed}", atoms, edges)


@dataclass(frozen=True)
class RoundSchedule:
    """Atoms per round (round order) and, optionally, the engine of every atom (indexed by atom)."""

    rounds: tuple[tuple[int, ...], ...]
    engines: tuple[int, ...] | None = None

    def round_of(self, n_atoms: int) -> list[int]:
        """Round index of every atom (-1 where missing)."""
        where = [-1] * n_atoms
        for r, members in enumerate(self.rounds):
            for a in members:
                if 0 <= a < n_atoms:
                    where[a] = r
        return where

    def to_dict(self) -> dict[str, Any]:
        return {"rounds": [list(r) for r in self.rounds],
                "engines": None if self.engines is None else list(self.engines)}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Any) -> RoundSchedule:
        """Read :meth:`to_dict` output.

        Raises
        ------
        InputError
            Missing or malformed ``rounds`` / ``engines``.
        """
        try:
            rounds = tuple(tuple(int(a) for a in r) for r in data["rounds"])
            engines = None if data.get("engines") is None else tuple(int(e) for e in data["engines"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"not an atomic round schedule ({exc})", "solution file",
                             'write {"rounds": [[atom, ...], ...], "engines": [...] or null}') from exc  # fmt: skip
        return cls(rounds, engines)


@dataclass(frozen=True)
class AtomicInstance:
    """An atomic DAG on ``n_engines`` engines; ``mesh`` (optional) places engine ``e`` at ``(e // cols, e % cols)``.

    Raises
    ------
    InputError
        No engine, or an empty DAG.
    """

    dag: AtomDag
    n_engines: int
    mesh: Mesh | None = None
    objective: str = "latency"
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.n_engines < 1:
            raise InputError(f"{self.n_engines} engines", "instance", "an atomic instance needs at least 1 engine")
        if not self.dag.atoms:
            raise InputError("the atomic DAG has no atom", "instance", "give a workload with at least one layer")
        if self.objective not in ("latency", "energy", "edp"):
            raise InputError(f"unknown objective {self.objective!r}", "--option objective",
                             "use latency, energy or edp")  # fmt: skip


def check(instance: AtomicInstance, solution: RoundSchedule) -> None:
    """Raise :class:`InfeasibleSolution` naming the first rule of the module docstring ``solution`` breaks."""
    n = len(instance.dag.atoms)
    counts = [0] * n
    for r, members in enumerate(solution.rounds):
        if not members:
            raise InfeasibleSolution(f"rule 1: round {r} is empty")
        if len(members) > instance.n_engines:
            raise InfeasibleSolution(f"rule 2: round {r} holds {len(members)} atoms > {instance.n_engines} engines")
        for a in members:
            if not 0 <= a < n:
                raise InfeasibleSolution(f"rule 1: round {r} names atom {a}, not in 0..{n - 1}")
            counts[a] += 1
    for a, count in enumerate(counts):
        if count != 1:
            raise InfeasibleSolution(f"rule 1: atom {a} ({instance.dag.atoms[a].name}) is in {count} rounds")
    where = solution.round_of(n)
    for a, b, _ in instance.dag.edges:
        if where[a] >= where[b]:
            raise InfeasibleSolution(f"rule 3: edge {a} -> {b} goes from round {where[a]} to round {where[b]}")
    if solution.engines is not None:
        if len(solution.engines) != n:
            raise InfeasibleSolution(f"rule 4: {len(solution.engines)} engines given for {n} atoms")
        for r, members in enumerate(solution.rounds):
            used = [solution.engines[a] for a in members]
            if any(not 0 <= e < instance.n_engines for e in used) or len(set(used)) < len(used):
                raise InfeasibleSolution(
                    f"rule 4: round {r} uses engines {used} (distinct, in 0..{instance.n_engines - 1})"
                )


# ----------------------------------------------------------------- atom generation
def _top_levels(core: Core) -> dict[str, str]:
    """The on-chip level holding each operand at the top of the engine (atoms work out of the engine's SRAM)."""
    return {op: levels[-1] for op, levels in core.hierarchy.items() if levels}


def atom_cost(layer: Layer, shape: AtomSize, accelerator: Accelerator) -> tuple[int, float, int]:
    """Cycles, on-chip energy (pJ) and MACs of one atom of ``shape`` (within the layer, one sample) on an engine.

    The shared per-layer cost model on the atom's part of the layer, with every operand in the engine's top
    on-chip level (atoms run out of the engine's SRAM; DRAM is not charged here).

    Raises
    ------
    InputError
        The engine cannot run the layer's operator.
    """
    from accelsched.hardware.cost import layer_cost
    from accelsched.hardware.cost.layer_by_layer import part_of

    core = accelerator.cores[0]
    part = part_of(layer, B=1, OY=shape.h, OX=shape.w, C=shape.ci, K=shape.co)
    try:
        cost = layer_cost(part, core, accelerator.offchip, _top_levels(core))
    except ValueError as exc:
        raise InputError(str(exc), f"layer {layer.name!r}", "use an accelerator whose engines run it") from exc
    on_chip = sum(v for k, v in cost.energy_breakdown_pj.items() if k != "dram")
    return math.ceil(cost.latency_cycles), float(on_chip), part.macs


def check_atom_size(layer: Layer, size: AtomSize, core: Core) -> None:
    """Raise :class:`InputError` when ``size`` (clipped to the layer) breaks the PE-array rule of ``core``."""
    _check_size(layer, size.clipped(layer), core, Partition.of(core))


def _check_size(layer: Layer, size: AtomSize, core: Core, partition: Partition) -> None:
    """Atom sizes on the unrolled loops must be whole multiples of the PE array (or the whole loop)."""
    unroll = dict(core.spatial)
    pairs = (("ci", "C", size.ci, layer.C), ("co", "K", size.co, layer.K)) if partition is Partition.KC else (
        ("h", "OY", size.h, layer.OY), ("w", "OX", size.w, layer.OX))  # fmt: skip
    for field_name, loop, value, full in pairs:
        if value % unroll[loop] and value != full:
            raise InputError(
                f"layer {layer.name!r}: atom {field_name}={value} is not a multiple of the PE array's {loop} "
                f"unrolling {unroll[loop]} (and not the whole {loop}={full})",
                "--option atom",
                f"use a multiple of {unroll[loop]} for {field_name} ({partition.value.upper()}-partition engines)",
            )


def _ranges(total: int, step: int) -> list[tuple[int, int]]:
    return [(s, min(s + step, total)) for s in range(0, total, step)]


def _input_span(layer: Layer, rows: tuple[int, int], axis: str) -> tuple[int, int]:
    """Input rows (``axis="y"``) or columns the output range reads, clipped to the input."""
    if axis == "y":
        stride, kernel, dil, pad, size = layer.stride_y, layer.FY, layer.dilation_y, layer.padding[0], layer.IY
    else:
        stride, kernel, dil, pad, size = layer.stride_x, layer.FX, layer.dilation_x, layer.padding[1], layer.IX
    low = rows[0] * stride - pad
    high = (rows[1] - 1) * stride - pad + (kernel - 1) * dil + 1
    return max(low, 0), min(high, size)


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def atomize(workload: Workload, accelerator: Accelerator, sizes: Mapping[str, AtomSize]) -> AtomDag:
    """The atomic DAG of ``workload`` with the given atom size per layer, costed on the first engine.

    Atoms of a layer tile its output rows x columns x output channels per sample and, when ``ci < C``, its input
    channels: the atoms of one output block with successive input-channel ranges are chained (partial sums). A
    consumer atom depends on a producer atom when it reads rows, columns and channels the producer writes (the
    receptive field of its output range under stride, dilation and padding; channels through concatenation
    offsets; element-wise operands channel by channel); the producer's last input-channel atom writes the block.
    Durations and energies: :func:`accelsched.hardware.cost.layer_cost` of the atom's part of the layer on the
    engine with every operand in the engine's SRAM.

    Raises
    ------
    InputError
        A size on the PE array's unrolled loops that is neither a multiple of the unrolling nor the whole loop,
        a grouped layer whose atom's channels span groups, or a layer the engine cannot run.
    """
    core = accelerator.cores[0]
    partition = Partition.of(core)
    atoms: list[Atom] = []
    writer: dict[str, list[int]] = {}  # layer -> atoms that write an output block (last ci chunk)
    edges: dict[tuple[int, int], int] = {}
    for layer in workload:
        size = sizes[layer.name].clipped(layer)
        _check_size(layer, size, core, partition)
        if layer.G > 1 and (size.co < layer.K or size.ci < layer.C):
            raise InputError(f"layer {layer.name!r} is grouped ({layer.G} groups): its atoms keep whole groups",
                             "--option atom", "give grouped layers ci >= C and co >= K")  # fmt: skip
        writer[layer.name] = []
        blocks = (range(layer.B), _ranges(layer.OY, size.h), _ranges(layer.OX, size.w), _ranges(layer.K, size.co))
        for sample, rows, cols, co in itertools.product(*blocks):
            chunks = _ranges(layer.C, size.ci)
            previous = None
            for ci in chunks:
                shape = AtomSize(rows[1] - rows[0], cols[1] - cols[0], ci[1] - ci[0], co[1] - co[0])
                cycles, energy, macs = atom_cost(layer, shape, accelerator)
                out_bytes = shape.h * shape.w * shape.co * layer.G * layer.output_bits // 8
                atoms.append(Atom(layer.name, sample, rows, cols, ci, co, cycles, energy, macs, out_bytes))
                index = len(atoms) - 1
                if previous is not None:
                    edges[previous, index] = atoms[previous].output_bytes
                previous = index
                _connect(workload, layer, atoms, writer, edges, index)
            assert previous is not None
            writer[layer.name].append(previous)
    return AtomDag(workload.name, tuple(atoms), tuple((a, b, n) for (a, b), n in sorted(edges.items())))


def _connect(
    workload: Workload, layer: Layer, atoms: list[Atom], writer: Mapping[str, list[int]],
    edges: dict[tuple[int, int], int], index: int,
) -> None:  # fmt: skip
    """Edges from the producer atoms whose output the consumer atom ``index`` reads."""
    atom = atoms[index]
    ys, xs = _input_span(layer, atom.rows, "y"), _input_span(layer, atom.cols, "x")
    offset = 0
    for producer in layer.inputs:
        p = workload[producer]
        if layer.kind is OpKind.ELTWISE or layer.kind is OpKind.MATMUL:
            span = atom.in_channels if layer.kind is OpKind.ELTWISE else (0, p.out_channels)
            ys, xs = (atom.rows, atom.cols) if layer.kind is OpKind.ELTWISE else ((0, p.OY), (0, p.OX))
        else:
            span = (atom.in_channels[0] - offset, atom.in_channels[1] - offset)
            if layer.G > 1:
                span = (0, p.out_channels)
            offset += p.out_channels
        for w in writer[producer]:
            pa = atoms[w]
            if pa.sample != atom.sample:
                continue
            channels = (pa.out_channels[0] * p.G, pa.out_channels[1] * p.G) if p.G > 1 else pa.out_channels
            area = _overlap(ys, pa.rows) * _overlap(xs, pa.cols) * _overlap(span, channels)
            if area:
                edges[w, index] = edges.get((w, index), 0) + area * p.output_bits // 8


def _default_size(layer: Layer, core: Core, partition: Partition, n_engines: int) -> AtomSize:
    """A layer split evenly over the engines along its unrolled output loop (whole rows, columns, channels)."""
    unroll = dict(core.spatial)
    if partition is Partition.KC:
        co = max(unroll["K"], math.ceil(layer.K / n_engines / unroll["K"]) * unroll["K"])
        return AtomSize(layer.OY, layer.OX, layer.C, min(co, layer.K))
    h = max(unroll["OY"], math.ceil(layer.OY / n_engines / unroll["OY"]) * unroll["OY"])
    return AtomSize(min(h, layer.OY), layer.OX, layer.C, layer.K)


def make_instance(workload: Workload, accelerator: Accelerator, options: Mapping[str, str]) -> AtomicInstance:
    """Options: ``atoms=even|exact|sa`` (default ``even``: each layer split evenly over the engines along the PE
    array's output loop; ``exact`` / ``sa``: the sizes of least atom-cycle variance, exactly or by Algorithm 1's
    annealing, see :mod:`accelsched.formulations.atom_sizes`), or ``atom=h,w,ci,co`` (every layer, clipped to
    it); ``engines=N`` (default: every core), ``objective=latency|energy|edp``.

    Raises
    ------
    InputError
        Unknown option, bad atom size (see :func:`atomize`), ``engines`` not in 1..cores, a batch of 0.
    """
    known = {"atom", "atoms", "engines", "objective"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise InputError(f"unknown option(s) {unknown}", "--option", f"atomic options: {', '.join(sorted(known))}")
    if workload.batch < 1:
        raise InputError(f"batch {workload.batch}", "--batch", "use a batch of at least 1")
    text = options.get("engines", str(accelerator.n_cores))
    if not text.isdigit() or not 1 <= int(text) <= accelerator.n_cores:
        raise InputError(f"engines={text!r}", "--option engines",
                         f"give an integer in 1..{accelerator.n_cores} (the accelerator's cores)")  # fmt: skip
    n_engines = int(text)
    core = accelerator.cores[0]
    partition = Partition.of(core)
    mode = options.get("atoms", "even")
    if "atom" in options and "atoms" in options:
        raise InputError("both atom= and atoms= given", "--option", "give one atom size for all layers or a method")
    if "atom" in options:
        size = AtomSize.parse(options["atom"])
        sizes = {layer.name: size for layer in workload}
    elif mode == "even":
        sizes = {layer.name: _default_size(layer, core, partition, n_engines) for layer in workload}
    elif mode in ("exact", "sa"):
        from accelsched.formulations.atom_sizes import exact_sizes, size_table
        from accelsched.heuristics.atom_sizes_sa import sa_sizes

        table = size_table(workload, accelerator, max_atoms=4 * n_engines)
        sizes = exact_sizes(table)[0] if mode == "exact" else sa_sizes(table, seed=0)[0]
    else:
        raise InputError(f"atoms={mode!r}", "--option atoms", "use even, exact or sa")
    mesh = accelerator.interconnect if isinstance(accelerator.interconnect, Mesh) else None
    dag = atomize(workload, accelerator, sizes)
    meta = {"workload": workload.name, "accelerator": accelerator.name, "partition": partition.value}
    return AtomicInstance(dag, n_engines, mesh, options.get("objective", "latency"), meta)


def evaluate(instance: AtomicInstance, solution: RoundSchedule) -> CostReport:
    """The shared round evaluator's cost report."""
    from accelsched.hardware.cost.rounds import evaluate_rounds

    return evaluate_rounds(instance, solution)


def objective(instance: AtomicInstance, solution: RoundSchedule, report: CostReport) -> float:
    """The instance's objective."""
    return report.metric(instance.objective)


def lower_bounds(instance: AtomicInstance) -> tuple[int, int, int]:
    """Three valid bounds of the round latency: the longest path in cycles, the work over ``N`` engines (both also
    bound the asynchronous job shop), and the *round bound* ``sum_i t_(iN+1)`` over the durations sorted from the
    longest: the ``iN + 1`` longest atoms fill at least ``i + 1`` rounds, so the ``(i+1)``-th longest round lasts at
    least ``t_(iN+1)`` (this one holds for rounds only)."""
    dag = instance.dag
    finish = [0] * len(dag.atoms)
    for b in dag.topological_order:
        finish[b] = dag.atoms[b].duration_cycles + max((finish[a] for a in dag.predecessors[b]), default=0)
    longest_first = sorted(dag.durations, reverse=True)
    rounds = sum(longest_first[:: instance.n_engines])
    return max(finish), math.ceil(sum(dag.durations) / instance.n_engines), rounds


PROBLEM = ProblemSpec(
    name="atomic",
    description="atom-to-round scheduling on a multi-engine accelerator (Atomic Dataflow)",
    make_instance=make_instance,
    check=check,
    evaluate=evaluate,
    objective=objective,
    solution_from_dict=RoundSchedule.from_dict,
)
