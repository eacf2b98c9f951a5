"""Atom-to-round scheduling on a multi-engine accelerator (Atomic Dataflow, HPCA'22).

Instance
--------
A workload cut into *atoms* on ``N`` engines of a mesh (:class:`AtomicInstance`).
An atom is one block of a layer for one sample: output rows x columns x output
channels, and a range of input channels when the reduction is split; its size per
layer is ``[h, w, ci, co]`` (:class:`AtomSize`), whole multiples of the PE array on
the unrolled loops. The *atomic DAG* (:class:`AtomDag`) has an edge wherever a
consumer atom reads what a producer atom writes (receptive fields, concatenation
offsets, partial sums); :mod:`accelsched.problems.atomic_atoms` builds it and costs
every atom with the shared per-layer cost model. The instance holds the DAG of its
default sizes (option ``atoms``); a solution may bring sizes of its own (the
baselines do), and then :meth:`AtomicInstance.dag_for` builds that DAG. Abstract
instances (a seeded random DAG, no workload, no accelerator) serve the tests; they
have no NoC, no HBM and no buffer limit.

Solution
--------
A :class:`RoundSchedule`: the atoms of each round in round order, the engine of
every atom, the atoms whose outputs are written back to HBM, and optionally the
atom sizes. Rounds are synchronous: a round starts when the previous one has
ended, each engine runs its atoms of the round in the listed order, and the round
ends with its last atom. Atomic Dataflow's rounds give each engine at most one atom
(so a round holds at most ``N`` atoms and lasts as long as its slowest); the
pipelined baselines (CNN-P) give an engine a sequence of atoms per pipeline step,
where an atom may read what an earlier atom of the same round wrote.

Rules checked by :func:`check`:

1. *cover*: every atom of the solution's DAG is in exactly one round, and no round is empty;
2. *engines*: without engines, a round holds at most ``N`` atoms (one per engine, in slot
   order); with engines, one engine in ``0 .. N-1`` per atom;
3. *precedence*: for every edge ``a -> b`` the round of ``a`` is before the round of ``b``,
   or both are in one round, engines are given and ``a`` is listed before ``b``;
4. *buffer*: on an accelerator, no engine's buffer holds more than its capacity in any
   round (:func:`accelsched.hardware.cost.rounds.buffer_occupancy` states what it holds);
5. *sizes*: the solution's sizes name every layer once and keep the PE-array rule;
6. *write-back*: the written-back atoms exist.

Objective: latency, energy or EDP of the round evaluator
(:mod:`accelsched.hardware.cost.rounds`).
"""

from __future__ import annotations

import enum
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.spec import Accelerator, Core, Mesh
from accelsched.models.workload import Workload
from accelsched.problems.base import ProblemSpec

__all__ = [
    "MAPPINGS",
    "PROBLEM",
    "Atom",
    "AtomDag",
    "AtomSize",
    "AtomicInstance",
    "Partition",
    "RoundSchedule",
    "check",
    "lower_bounds",
    "make_instance",
]

MAPPINGS: tuple[str, ...] = ("assignment", "zigzag")
"""How the round methods place atoms on engines (:mod:`accelsched.problems.atomic_placement`)."""


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
    """Output rows ``h``, columns ``w``, input channels ``ci`` and output channels ``co`` of one atom.

    For a grouped layer (depthwise convolution, pooling, element-wise) ``co`` counts output channels over all
    groups and an atom holds whole groups with all their input channels, so ``co`` is a multiple of the channels
    per group and ``ci`` is not used.
    """

    h: int
    w: int
    ci: int
    co: int

    def __post_init__(self) -> None:
        for name in ("h", "w", "ci", "co"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"atom size {name}={value!r} is not a positive integer", "--option atom",
                                 "give four positive integers h,w,ci,co")  # fmt: skip

    @classmethod
    def parse(cls, text: str) -> AtomSize:
        """``"h,w,ci,co"``."""
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 4 or not all(p.isdigit() for p in parts):
            raise InputError(f"atom size {text!r} is not four integers", "--option atom", "write it as h,w,ci,co")
        return cls(*(int(p) for p in parts))

    def as_list(self) -> list[int]:
        """``[h, w, ci, co]``."""
        return [self.h, self.w, self.ci, self.co]


@dataclass(frozen=True)
class Atom:
    """One atom: its layer, sample, half-open output ranges, input-channel range, duration and costs.

    Channel ranges are in the layer's total channels (over all groups). ``duration_cycles`` and ``energy_pj`` are
    the engine's compute with every operand in its buffer (``energy_breakdown_pj`` splits the energy by
    component); moving data in and out is priced by the round evaluator from the byte counts: ``input_bytes``
    (the activation operands it reads, halo included), ``weight_bytes``, ``output_bytes`` (partial sums when its
    input-channel range is not the last), ``network_input_bytes`` (the part of its input that is the network's
    input, read from HBM) and ``network_output`` (its output is a network output, written to HBM).
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
    input_bytes: int = 0
    weight_bytes: int = 0
    network_input_bytes: int = 0
    network_output: bool = False
    energy_breakdown_pj: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        if self.duration_cycles < 0 or not math.isfinite(self.energy_pj) or self.energy_pj < 0:
            raise ValueError(f"atom of layer {self.layer!r}: negative or non-finite duration or energy")
        if min(self.macs, self.output_bytes, self.input_bytes, self.weight_bytes, self.network_input_bytes) < 0:
            raise ValueError(f"atom of layer {self.layer!r}: negative MACs or bytes")

    @property
    def name(self) -> str:
        """``layer[sample]/rows/cols/ci/co`` ranges."""
        r, c, i, o = self.rows, self.cols, self.in_channels, self.out_channels
        return f"{self.layer}[{self.sample}]/{r[0]}:{r[1]}/{c[0]}:{c[1]}/{i[0]}:{i[1]}/{o[0]}:{o[1]}"

    @property
    def weight_key(self) -> tuple[str, tuple[int, int], tuple[int, int]]:
        """Atoms with the same key use the same weights: an engine that runs them in a row loads them once."""
        return self.layer, self.in_channels, self.out_channels


def _edge_array(edges: Any) -> np.ndarray:
    array = np.asarray(edges, dtype=np.int64)
    if array.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    if array.ndim != 2 or array.shape[1] != 3:
        raise ValueError(f"edges must be (producer, consumer, bytes) triples, got shape {array.shape}")
    return array


@dataclass(frozen=True, eq=False)
class AtomDag:
    """Atoms and the producer -> consumer edges between them (``(producer, consumer, bytes)``), acyclic.

    ``edges`` may be given as triples or as an ``(E, 3)`` integer array; it is kept as :attr:`edge_array` and
    read back as triples through :attr:`edges`.

    Raises
    ------
    ValueError
        An edge names a missing atom, joins an atom to itself, has negative bytes, repeats, or closes a cycle.
    """

    name: str
    atoms: tuple[Atom, ...]
    edge_array: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int64), repr=False)

    def __init__(self, name: str, atoms: Sequence[Atom], edges: Any = ()) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "atoms", tuple(atoms))
        object.__setattr__(self, "edge_array", _edge_array(edges))
        self._validate()

    def _validate(self) -> None:
        n = len(self.atoms)
        src, dst, nbytes = self.edge_array.T
        bad = (src < 0) | (src >= n) | (dst < 0) | (dst >= n) | (src == dst) | (nbytes < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"DAG {self.name!r}: bad edge {tuple(int(v) for v in self.edge_array[i])} for {n} atoms")
        keys = src * max(n, 1) + dst
        unique, counts = np.unique(keys, return_counts=True)
        if (counts > 1).any():
            key = int(unique[np.flatnonzero(counts > 1)[0]])
            raise ValueError(f"DAG {self.name!r}: edge {divmod(key, max(n, 1))} twice")
        if len(self.topological_order) < n:
            raise ValueError(f"DAG {self.name!r}: the edges close a cycle")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AtomDag):
            return NotImplemented
        return (self.name, self.atoms) == (other.name, other.atoms) and bool(
            np.array_equal(self.edge_array, other.edge_array)
        )

    __hash__ = None  # type: ignore[assignment]

    @cached_property
    def edges(self) -> tuple[tuple[int, int, int], ...]:
        """Edges as ``(producer, consumer, bytes)`` triples, in the order given."""
        return tuple((int(a), int(b), int(n)) for a, b, n in self.edge_array)

    @cached_property
    def predecessors(self) -> tuple[tuple[int, ...], ...]:
        """Producers of every atom."""
        preds: list[list[int]] = [[] for _ in self.atoms]
        for a, b in self.edge_array[:, :2].tolist():
            preds[b].append(a)
        return tuple(tuple(sorted(p)) for p in preds)

    @cached_property
    def successors(self) -> tuple[tuple[int, ...], ...]:
        """Consumers of every atom."""
        succ: list[list[int]] = [[] for _ in self.atoms]
        for a, b in self.edge_array[:, :2].tolist():
            succ[a].append(b)
        return tuple(tuple(sorted(s)) for s in succ)

    @cached_property
    def topological_order(self) -> tuple[int, ...]:
        """Atoms in an order where every producer comes before its consumers (shorter on a cycle)."""
        n = len(self.atoms)
        if not len(self.edge_array) or bool((self.edge_array[:, 0] < self.edge_array[:, 1]).all()):
            return tuple(range(n))  # every edge goes forward in index order (atomize builds them so)
        indegree = [len(p) for p in self.predecessors]
        order = [i for i, d in enumerate(indegree) if d == 0]
        for i in order:
            for j in self.successors[i]:
                indegree[j] -= 1
                if indegree[j] == 0:
                    order.append(j)
        return tuple(order)

    @cached_property
    def durations(self) -> tuple[int, ...]:
        """Cycles of every atom."""
        return tuple(a.duration_cycles for a in self.atoms)

    @cached_property
    def groups(self) -> dict[tuple[str, int], tuple[int, ...]]:
        """Atoms of every (layer, sample), in index order."""
        out: dict[tuple[str, int], list[int]] = {}
        for i, atom in enumerate(self.atoms):
            out.setdefault((atom.layer, atom.sample), []).append(i)
        return {key: tuple(value) for key, value in out.items()}

    @classmethod
    def random(cls, n_atoms: int, seed: int, edge_probability: float = 0.3, max_cycles: int = 20) -> AtomDag:
        """A seeded random DAG: ``n_atoms`` atoms of 1..``max_cycles`` cycles, edges forward in index order."""
        rng = np.random.default_rng(seed)
        atoms = tuple(Atom(f"l{i}", 0, (0, 1), (0, 1), (0, 1), (0, 1), int(rng.integers(1, max_cycles + 1)),
                           energy_pj=float(rng.integers(1, 100)), macs=1, output_bytes=int(rng.integers(1, 64)))
                      for i in range(n_atoms))  # fmt: skip
        edges = [(a, b, atoms[a].output_bytes) for a, b in itertools.combinations(range(n_atoms), 2)
                 if rng.random() < edge_probability]  # fmt: skip
        return cls(f"random:{n_atoms}:{seed}", atoms, edges)


SizeItems = tuple[tuple[str, AtomSize], ...]


@dataclass(frozen=True)
class RoundSchedule:
    """Atoms per round (round order; each engine runs its atoms of a round in this order), the engine of every atom
    (indexed by atom; None: the slot order within each round), the atoms whose outputs are written back to HBM, and
    the atom sizes per layer (None: the instance's own)."""

    rounds: tuple[tuple[int, ...], ...]
    engines: tuple[int, ...] | None = None
    write_back: frozenset[int] = frozenset()
    sizes: SizeItems | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "write_back", frozenset(self.write_back))
        if self.sizes is not None:
            object.__setattr__(self, "sizes", tuple(sorted(self.sizes)))

    @classmethod
    def with_sizes(
        cls,
        rounds: Iterable[Iterable[int]],
        sizes: Mapping[str, AtomSize] | None,
        engines: Sequence[int] | None = None,
        write_back: Iterable[int] = (),
    ) -> RoundSchedule:
        """A schedule from plain sequences and a ``{layer: size}`` mapping."""
        return cls(tuple(tuple(r) for r in rounds), None if engines is None else tuple(engines),
                   frozenset(write_back), None if sizes is None else tuple(sizes.items()))  # fmt: skip

    @property
    def size_map(self) -> dict[str, AtomSize] | None:
        """The sizes as ``{layer: size}``, or None."""
        return None if self.sizes is None else dict(self.sizes)

    def round_of(self, n_atoms: int) -> list[int]:
        """Round index of every atom (-1 where missing)."""
        where = [-1] * n_atoms
        for r, members in enumerate(self.rounds):
            for a in members:
                if 0 <= a < n_atoms:
                    where[a] = r
        return where

    def placed(self, engines: Sequence[int]) -> RoundSchedule:
        """The same rounds, write-backs and sizes on ``engines``."""
        return RoundSchedule(self.rounds, tuple(engines), self.write_back, self.sizes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rounds": [list(r) for r in self.rounds],
            "engines": None if self.engines is None else list(self.engines),
            "write_back": sorted(self.write_back),
            "sizes": None if self.sizes is None else {name: size.as_list() for name, size in self.sizes},
        }

    @classmethod
    def from_dict(cls, data: Any) -> RoundSchedule:
        """Read :meth:`to_dict` output.

        Raises
        ------
        InputError
            Missing or malformed ``rounds`` / ``engines`` / ``write_back`` / ``sizes``.
        """
        try:
            rounds = tuple(tuple(int(a) for a in r) for r in data["rounds"])
            engines = None if data.get("engines") is None else tuple(int(e) for e in data["engines"])
            write_back = frozenset(int(a) for a in data.get("write_back") or ())
            raw = data.get("sizes")
            sizes = None if raw is None else tuple((str(k), AtomSize(*(int(x) for x in v))) for k, v in raw.items())
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"not an atomic round schedule ({exc})", "solution file",
                             'write {"rounds": [[atom, ...], ...], "engines": [...] or null, "write_back": [...], '
                             '"sizes": {"layer": [h, w, ci, co]} or null}') from exc  # fmt: skip
        return cls(rounds, engines, write_back, sizes)


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
            from accelsched.problems.atomic_atoms import atomize

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


def check(instance: AtomicInstance, solution: RoundSchedule) -> None:
    """Raise :class:`InfeasibleSolution` naming the first rule of the module docstring ``solution`` breaks."""
    dag = instance.dag_for(solution)
    n = len(dag.atoms)
    counts = np.zeros(n, dtype=np.int64)
    for r, members in enumerate(solution.rounds):
        if not members:
            raise InfeasibleSolution(f"rule 1: round {r} is empty")
        if solution.engines is None and len(members) > instance.n_engines:
            raise InfeasibleSolution(f"rule 2: round {r} holds {len(members)} atoms > {instance.n_engines} engines")
        index = np.asarray(members, dtype=np.int64)
        if ((index < 0) | (index >= n)).any():
            raise InfeasibleSolution(f"rule 1: round {r} names an atom outside 0..{n - 1}")
        np.add.at(counts, index, 1)
    if (counts != 1).any():
        a = int(np.flatnonzero(counts != 1)[0])
        raise InfeasibleSolution(f"rule 1: atom {a} ({dag.atoms[a].name}) is in {int(counts[a])} rounds")
    if solution.engines is not None:
        if len(solution.engines) != n:
            raise InfeasibleSolution(f"rule 2: {len(solution.engines)} engines given for {n} atoms")
        engines = np.asarray(solution.engines, dtype=np.int64)
        if ((engines < 0) | (engines >= instance.n_engines)).any():
            a = int(np.flatnonzero((engines < 0) | (engines >= instance.n_engines))[0])
            last = instance.n_engines - 1
            raise InfeasibleSolution(f"rule 2: atom {a} on engine {int(engines[a])}, not in 0..{last}")
    round_of, position = _positions(solution, n)
    src, dst = dag.edge_array[:, 0], dag.edge_array[:, 1]
    later = round_of[src] < round_of[dst]
    same = (round_of[src] == round_of[dst]) & (position[src] < position[dst]) & (solution.engines is not None)
    broken = ~(later | same)
    if broken.any():
        i = int(np.flatnonzero(broken)[0])
        a, b = int(src[i]), int(dst[i])
        raise InfeasibleSolution(f"rule 3: edge {a} -> {b} goes from round {round_of[a]} to round {round_of[b]}"
                                 + (" (listed after its consumer)" if round_of[a] == round_of[b] else ""))  # fmt: skip
    if any(not 0 <= a < n for a in solution.write_back):
        raise InfeasibleSolution(f"rule 6: write-back names an atom outside 0..{n - 1}")
    if instance.accelerator is not None:
        from accelsched.hardware.cost.rounds import buffer_overflow

        overflow = buffer_overflow(instance, solution)
        if overflow is not None:
            engine, r, held, capacity = overflow
            raise InfeasibleSolution(f"rule 4: engine {engine} holds {held:,} bytes in round {r} > its buffer of "
                                     f"{capacity:,} bytes")  # fmt: skip


def _positions(solution: RoundSchedule, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Round of every atom and its position in the execution order (round by round, in listed order)."""
    round_of = np.full(n, -1, dtype=np.int64)
    position = np.full(n, -1, dtype=np.int64)
    k = 0
    for r, members in enumerate(solution.rounds):
        index = np.asarray(members, dtype=np.int64)
        round_of[index] = r
        position[index] = np.arange(k, k + len(index))
        k += len(index)
    return round_of, position


def make_instance(workload: Workload, accelerator: Accelerator, options: Mapping[str, str]) -> AtomicInstance:
    """Options: ``atoms=even|exact|sa`` (default ``even``: each layer split evenly over the engines, see
    :func:`accelsched.problems.atomic_atoms.split_size`; ``exact`` / ``sa``: the sizes of least atom-cycle variance,
    exactly or by Algorithm 1's annealing, see :mod:`accelsched.formulations.atom_sizes`), or ``atom=h,w,ci,co``
    (every layer, clipped to it); ``engines=N`` (default: every core); ``objective=latency|energy|edp``;
    ``mapping=assignment|zigzag`` (how the round methods place atoms).

    Raises
    ------
    InputError
        Unknown option, bad atom size, ``engines`` not in 1..cores, a batch of 0, an accelerator whose engines
        are not KC- or YX-partitioned.
    """
    from accelsched.problems.atomic_atoms import ATOMS_PER_ENGINE, atomize, clip_size, split_size

    known = {"atom", "atoms", "engines", "objective", "mapping"}
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
    partition = Partition.of(accelerator.cores[0])
    mode = options.get("atoms", "even")
    if "atom" in options and "atoms" in options:
        raise InputError("both atom= and atoms= given", "--option", "give one atom size for all layers or a method")
    if "atom" in options:
        size = AtomSize.parse(options["atom"])
        sizes = {layer.name: clip_size(layer, size) for layer in workload}
    elif mode == "even":
        sizes = {layer.name: split_size(layer, accelerator, n_engines) for layer in workload}
    elif mode in ("exact", "sa"):
        from accelsched.formulations.atom_sizes import exact_sizes, size_table
        from accelsched.heuristics.atom_sizes_sa import sa_sizes

        table = size_table(workload, accelerator, max_atoms=ATOMS_PER_ENGINE * n_engines,
                           min_atoms=-(-n_engines // workload.batch), engines=n_engines)  # fmt: skip
        sizes = exact_sizes(table)[0] if mode == "exact" else sa_sizes(table, seed=0)[0]
    else:
        raise InputError(f"atoms={mode!r}", "--option atoms", "use even, exact or sa")
    dag = atomize(workload, accelerator, sizes)
    meta = {"workload": workload.name, "accelerator": accelerator.name, "partition": partition.value,
            "atoms": "atom" if "atom" in options else mode}  # fmt: skip
    objective_name, mapping = options.get("objective", "latency"), options.get("mapping", "assignment")
    return AtomicInstance(dag, n_engines, accelerator, workload, tuple(sizes.items()), objective_name, mapping, meta)


def evaluate(instance: AtomicInstance, solution: RoundSchedule) -> CostReport:
    """The shared round evaluator's cost report."""
    from accelsched.hardware.cost.rounds import evaluate_rounds

    return evaluate_rounds(instance, solution)


def objective(instance: AtomicInstance, solution: RoundSchedule, report: CostReport) -> float:
    """The instance's objective."""
    return report.metric(instance.objective)


def lower_bounds(instance: AtomicInstance, dag: AtomDag | None = None) -> tuple[int, int, int]:
    """Three valid bounds of the latency of ``dag`` (default: the instance's): the longest path in cycles, the
    work over ``N`` engines (both also bound the asynchronous job shop and every pipelined schedule), and the
    *round bound* ``sum_i t_(iN+1)`` over the durations sorted from the longest: the ``iN + 1`` longest atoms fill
    at least ``i + 1`` rounds of at most ``N`` atoms, so the ``(i+1)``-th longest round lasts at least
    ``t_(iN+1)`` (this one holds for Atomic Dataflow's rounds only). Transfers and HBM stalls only add time, so
    the three bound the evaluator's latency too."""
    dag = dag or instance.dag
    finish = np.zeros(len(dag.atoms), dtype=np.int64)
    durations = np.asarray(dag.durations, dtype=np.int64)
    preds = dag.predecessors
    for b in dag.topological_order:
        p = preds[b]
        finish[b] = durations[b] + (int(finish[list(p)].max()) if p else 0)
    longest_first = np.sort(durations)[::-1]
    rounds = int(longest_first[:: instance.n_engines].sum())
    return int(finish.max()), math.ceil(int(durations.sum()) / instance.n_engines), rounds


PROBLEM = ProblemSpec(
    name="atomic",
    description="atom-to-round scheduling on a multi-engine accelerator (Atomic Dataflow)",
    make_instance=make_instance,
    check=check,
    evaluate=evaluate,
    objective=objective,
    solution_from_dict=RoundSchedule.from_dict,
)
