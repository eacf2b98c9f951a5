"""The data of the atomic problem: atom sizes, atoms, the atomic DAG and the round schedule (a solution).

An atom is one block of a layer for one sample: output rows x columns x output
channels, and a range of input channels when the reduction is split; its size per
layer is ``[h, w, ci, co]`` (:class:`AtomSize`). The atomic DAG (:class:`AtomDag`) has
an edge wherever a consumer atom reads what a producer atom writes. A
:class:`RoundSchedule` lists the atoms of each round in round order, the engine of
every atom, the atoms written back to HBM and optionally the atom sizes.
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

from accelsched.errors import InputError
from accelsched.hardware.spec import Core

__all__ = ["Atom", "AtomDag", "AtomSize", "Partition", "RoundSchedule", "SizeItems"]


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

    def _neighbours(self, of: int) -> tuple[tuple[int, ...], ...]:
        """For every atom, the sorted other ends of the edges whose column ``of`` (0 producer, 1 consumer) it is."""
        found: list[list[int]] = [[] for _ in self.atoms]
        for pair in self.edge_array[:, :2].tolist():
            found[pair[of]].append(pair[1 - of])
        return tuple(tuple(sorted(f)) for f in found)

    @cached_property
    def predecessors(self) -> tuple[tuple[int, ...], ...]:
        """Producers of every atom."""
        return self._neighbours(1)

    @cached_property
    def successors(self) -> tuple[tuple[int, ...], ...]:
        """Consumers of every atom."""
        return self._neighbours(0)

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

