"""Computation nodes (CNs) of a workload and their producer-consumer dependencies (Stream).

A *computation node* is a part of a layer that runs as one unit on one core. At
``layer`` granularity every layer is one CN (layer-by-layer scheduling); at
``fused`` granularity every layer of a stack of two or more layers is cut along
its output rows into CNs of ``rows_per_cn`` rows (the last one may be shorter),
so that a consumer can start as soon as the rows it reads exist (Stream's
fine-grained, layer-fused schedule); a layer alone in its stack stays one CN,
and so does a layer named in ``whole`` (the multicore problem names the layers
whose weights exceed the weight memory of the smallest core allowed to run them: cut
into rows, each CN would stream all the weights again; as one CN they cross the
DRAM port once, as Stream's layer splitting, which cuts such a layer along
``K`` into parts whose weights fit, also achieves). The other loops, and in
particular every loop a core unrolls spatially, stay inside the CN.

Dependencies
------------
CN ``q`` of layer ``Q`` depends on CN ``p`` of a producer ``P`` of ``Q`` when the
rows ``q`` reads overlap the rows ``p`` writes. The rows read are the receptive
field of ``q``'s output rows (stride, kernel, dilation, top padding), clipped to
``P``'s output. Where rows do not map one to one (a producer with a single row,
which is then broadcast or flattened, or either operand of a matmul) ``q`` reads
all of ``P``.

The overlap search is a spatial-index query, as in Stream: every CN is a box
``(layer position, first row) - (layer position, last row)`` in an R-tree
(``rtree``, libspatialindex), and each consumer queries the box of the rows it
reads. :func:`dependencies_naive` tests every (producer CN, consumer CN) pair of
every edge instead; both return the same set, and ``python -m
accelsched.bench.multicore deps`` compares their speed.
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

from accelsched.hardware.cost.depth_first_tiles import input_interval
from accelsched.hardware.cost.layer_by_layer import part_of
from accelsched.models.layer import Layer, OpKind
from accelsched.models.workload import Workload

__all__ = [
    "CN",
    "CNGraph",
    "Granularity",
    "build_cn_graph",
    "dependencies_naive",
    "dependencies_rtree",
    "rows_read",
]

Rows = tuple[int, int]
"""A half-open range of rows ``[first, end)``."""


class Granularity(enum.Enum):
    """How layers are cut into computation nodes."""

    LAYER = "layer"
    """One CN per layer: layer-by-layer scheduling."""
    FUSED = "fused"
    """CNs of a few output rows: fine-grained, layer-fused scheduling."""

    @classmethod
    def parse(cls, text: str) -> Granularity:
        """The granularity named ``text`` (``layer`` or ``fused``)."""
        for member in cls:
            if member.value == text:
                return member
        raise ValueError(f"granularity must be one of {', '.join(m.value for m in cls)}, got {text!r}")


@dataclass(frozen=True)
class CN:
    """One computation node.

    Attributes
    ----------
    index
        Position in :attr:`CNGraph.cns` (CNs are listed layer by layer, in the
        workload's topological order, parts in row order).
    layer
        Name of the layer the CN is part of.
    part
        Position of the CN among its layer's CNs.
    rows
        Output rows ``[first, end)`` of the layer computed by the CN.
    layer_index
        Position of the layer in the workload's topological order.
    stack
        Position of the layer's stack.
    shape
        The part of the layer the CN computes (its loop sizes), as priced by the
        shared primitive :func:`accelsched.hardware.cost.layer_cost`.
    """

    index: int
    layer: str
    part: int
    rows: Rows
    layer_index: int
    stack: int
    shape: Layer

    @property
    def name(self) -> str:
        """``layer:part``, the CN's name in solutions and messages."""
        return f"{self.layer}:{self.part}"

    @property
    def output_bytes(self) -> int:
        """Bytes of the output rows the CN produces."""
        return self.shape.output_bytes


def rows_read(producer: Layer, consumer: Layer, rows: Rows) -> Rows:
    """Rows of ``producer``'s output that ``consumer`` reads to compute its output ``rows``."""
    if consumer.kind is OpKind.MATMUL or producer.OY == 1 or consumer.IY > producer.OY:
        return (0, producer.OY)
    first, end = input_interval(consumer, "y", rows)
    return (min(first, producer.OY), min(end, producer.OY))


def _parts(layer: Layer, granularity: Granularity, rows_per_cn: int, fused: bool) -> list[Rows]:
    if granularity is Granularity.LAYER or not fused or rows_per_cn >= layer.OY:
        return [(0, layer.OY)]
    return [(a, min(a + rows_per_cn, layer.OY)) for a in range(0, layer.OY, rows_per_cn)]


@dataclass(frozen=True)
class CNGraph:
    """The CNs of a workload and their dependencies.

    Attributes
    ----------
    workload
        The workload the CNs cut.
    cns
        Every CN, layer by layer in topological order.
    edges
        ``(producer CN index, consumer CN index)`` pairs, sorted.
    """

    workload: Workload
    cns: tuple[CN, ...]
    edges: tuple[tuple[int, int], ...]

    @cached_property
    def by_layer(self) -> Mapping[str, tuple[int, ...]]:
        """CN indices of each layer, in row order."""
        table: dict[str, list[int]] = {name: [] for name in self.workload.names}
        for cn in self.cns:
            table[cn.layer].append(cn.index)
        return MappingProxyType({k: tuple(v) for k, v in table.items()})

    @cached_property
    def predecessors(self) -> tuple[tuple[int, ...], ...]:
        """Producer CNs of each CN."""
        table: list[list[int]] = [[] for _ in self.cns]
        for p, q in self.edges:
            table[q].append(p)
        return tuple(tuple(v) for v in table)

    @cached_property
    def successors(self) -> tuple[tuple[int, ...], ...]:
        """Consumer CNs of each CN."""
        table: list[list[int]] = [[] for _ in self.cns]
        for p, q in self.edges:
            table[p].append(q)
        return tuple(tuple(v) for v in table)

    @cached_property
    def names(self) -> Mapping[str, int]:
        """CN index by ``layer:part`` name."""
        return MappingProxyType({cn.name: cn.index for cn in self.cns})

    @cached_property
    def input_rows(self) -> tuple[Rows | None, ...]:
        """Rows of the network input each CN of a source layer newly needs (None elsewhere).

        The rows a CN reads minus those read by the earlier CNs of its layer: the
        part of the input that is loaded from DRAM for it.
        """
        out: list[Rows | None] = [None] * len(self.cns)
        for name in self.workload.sources:
            layer = self.workload[name]
            loaded = 0
            for k in self.by_layer[name]:
                first, end = input_interval(layer, "y", self.cns[k].rows)
                out[k] = (max(first, loaded), max(end, loaded))
                loaded = max(loaded, end)
        return tuple(out)

    def input_bytes(self, k: int) -> int:
        """Bytes of the network input loaded for CN ``k`` (0 if not a source CN or nothing new)."""
        rows = self.input_rows[k]
        if rows is None:
            return 0
        layer = self.workload[self.cns[k].layer]
        per_row = layer.B * layer.in_channels * layer.IX * layer.input_bits
        return (rows[1] - rows[0]) * per_row // 8

    @cached_property
    def input_reads(self) -> tuple[tuple[int, ...], ...]:
        """For each CN of a source layer, the CNs whose input loads it reads (new rows overlapping its needs)."""
        out: list[tuple[int, ...]] = [()] * len(self.cns)
        for name in self.workload.sources:
            layer = self.workload[name]
            loads = [(r, j) for j in self.by_layer[name] if (r := self.input_rows[j]) is not None and r[1] > r[0]]
            firsts = [r[0] for r, _ in loads]
            for k in self.by_layer[name]:
                first, end = input_interval(layer, "y", self.cns[k].rows)
                lo = max(0, bisect.bisect_right(firsts, first) - 1)
                hi = bisect.bisect_left(firsts, end)
                out[k] = tuple(j for r, j in loads[lo:hi] if r[1] > first)
        return tuple(out)

    @cached_property
    def input_readers(self) -> tuple[tuple[int, ...], ...]:
        """For each CN with an input load, the CNs that read it (inverse of :attr:`input_reads`)."""
        out: list[list[int]] = [[] for _ in self.cns]
        for k, loads in enumerate(self.input_reads):
            for j in loads:
                out[j].append(k)
        return tuple(tuple(v) for v in out)


def _consumer_queries(workload: Workload, cns: Sequence[CN]) -> Iterator[tuple[int, str, int, Rows]]:
    """``(consumer CN, producer layer, producer layer index, rows read)`` for every edge and consumer CN."""
    position = {name: i for i, name in enumerate(workload.names)}
    for q in cns:
        consumer = workload[q.layer]
        for producer_name in dict.fromkeys(consumer.inputs):
            producer = workload[producer_name]
            yield q.index, producer_name, position[producer_name], rows_read(producer, consumer, q.rows)


def dependencies_rtree(workload: Workload, cns: Sequence[CN]) -> list[tuple[int, int]]:
    """Producer-consumer CN pairs found with an R-tree over (layer position, rows) boxes."""
    from rtree import index  # heavy native backend (libspatialindex): only the R-tree search loads it

    tree = index.Index(interleaved=True)
    for cn in cns:
        tree.insert(cn.index, (cn.layer_index, cn.rows[0], cn.layer_index, cn.rows[1] - 1))
    edges: set[tuple[int, int]] = set()
    for q, _, li, (first, end) in _consumer_queries(workload, cns):
        if end <= first:
            continue
        for p in tree.intersection((li, first, li, end - 1)):
            edges.add((int(p), q))
    return sorted(edges)


def dependencies_naive(workload: Workload, cns: Sequence[CN]) -> list[tuple[int, int]]:
    """Producer-consumer CN pairs found by testing every CN of the producer layer (the baseline)."""
    by_layer: dict[str, list[int]] = {}
    for cn in cns:
        by_layer.setdefault(cn.layer, []).append(cn.index)
    edges: list[tuple[int, int]] = []
    for q, producer, _, (first, end) in _consumer_queries(workload, cns):
        for p in by_layer[producer]:
            a, b = cns[p].rows
            if a < end and first < b:
                edges.append((p, q))
    return sorted(edges)


def build_cn_graph(
    workload: Workload,
    granularity: Granularity,
    rows_per_cn: int = 1,
    stacks: Sequence[Sequence[str]] | None = None,
    index: str = "rtree",
    whole: Collection[str] = (),
) -> CNGraph:
    """Cut ``workload`` into CNs and find their dependencies.

    Parameters
    ----------
    workload
        The DAG of layers.
    granularity
        ``LAYER`` (one CN per layer) or ``FUSED`` (CNs of ``rows_per_cn`` rows).
    rows_per_cn
        Output rows per CN at fused granularity (>= 1).
    stacks
        Layer stacks in order (each a sequence of layer names); None is one stack.
        At fused granularity, layers alone in their stack are not cut.
    index
        ``rtree`` or ``naive``: how dependencies are found (same result).
    whole
        Layers kept as one CN at fused granularity even inside a multi-layer stack.
    """
    if isinstance(rows_per_cn, bool) or not isinstance(rows_per_cn, int) or rows_per_cn < 1:
        raise ValueError(f"rows_per_cn must be an integer >= 1, got {rows_per_cn!r}")
    groups = stacks or [workload.names]
    stack_of = {name: s for s, stack in enumerate(groups) for name in stack}
    cns: list[CN] = []
    for li, name in enumerate(workload.names):
        layer = workload[name]
        fused = len(groups[stack_of[name]]) > 1 and name not in whole
        for part, rows in enumerate(_parts(layer, granularity, rows_per_cn, fused)):
            height = rows[1] - rows[0]
            shape = layer if height == layer.OY else part_of(layer, OY=height)
            cns.append(CN(len(cns), name, part, rows, li, stack_of[name], shape))
    if index == "rtree":
        edges = dependencies_rtree(workload, cns)
    elif index == "naive":
        edges = dependencies_naive(workload, cns)
    else:
        raise ValueError(f"index must be rtree or naive, got {index!r}")
    return CNGraph(workload, tuple(cns), tuple(edges))
