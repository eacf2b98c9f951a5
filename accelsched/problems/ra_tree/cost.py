"""The evaluator of RA trees (SET, ISCA'23): energy, latency, DRAM and mesh traffic of an analyzed tree,
built from the shared primitives of :mod:`accelsched.hardware.cost` (per-layer cost, layer parts,
mesh routes) on the analysis of :mod:`accelsched.problems.ra_tree.analysis`.

*Leaves.* A leaf runs its batch ``b`` on its ``f`` tiles, ``B / b`` times (``B`` the
total batch). Each run splits the layer into at most ``f`` near-equal parts along one
loop (``K``, ``G``, ``OY``, ``OX`` or ``B``) or, when no such split fits a tile,
along two (``K`` or ``G`` into ``a`` parts, a pixel or sample loop into ``f / a``, ``a``
a divisor of ``f``: SET's partitions combine loops). A split fits when every part's
input and weights fit a tile's buffer (SET's leaf rule); among the fitting splits (all,
when none fits) the one with the least MAC-array time, then on-chip energy, is taken.
Each part is costed on its tile with the shared per-layer primitive; the leaf
contributes the parts' on-chip energy (MACs and memories) per run, and the MAC-array
time of its slowest part as the time of a run.

*Data flow* (SET's rules, :func:`~accelsched.problems.ra_tree.analysis.route`). The
children of the root are the *segments*. A tensor between two segments, or one that
skips a step of its lowest common cut (a T-Cut child that is not the next one, an
S-Cut child more than one stage later), is written to and read back from DRAM; any
other tensor goes over the mesh from the producer's tiles to the consumer's. Network
inputs come from DRAM, network outputs go to it. Weights are read from DRAM once per
run of a segment (the segment runs once per root sub-batch): with one sub-batch they are
used once (streamed), with more they stay on chip for all of them
(:mod:`accelsched.problems.ra_tree.buffers`). SET's artifact counts them once per
schedule even when the root has sub-batches; here a root sub-batch reloads them.

*Mesh traffic* (the instance's :class:`~accelsched.problems.ra_tree.instance.NocModel`).
XY routing. Part ``i`` of a layer receives the share ``x_i`` of a tensor it reads (its
input bytes over the layer's, 1 for the input of an output-channel split, the slice
plus halo otherwise; the same for weights), from the producer tile of the same rank
(``sources[i mod |sources|]``) or from DRAM; a part writes an equal share of an output
that goes to DRAM. Default, SET's artifact's (``src/main.cpp``): **unicast only**
(``NoC::unicast_only = true``: a tensor several tiles need whole is sent to each
separately) and **interleaved DRAM**: a tile's DRAM bytes are spread equally over the
ports of the two DRAM port groups nearest to it
(:func:`accelsched.hardware.cost.transfer.interleaved_dram_ports`,
``NoC::set_interleave(port_groups, 2)``). Options: multicast (a tensor every part needs
whole goes once along an x-spine with y-branches,
:func:`accelsched.hardware.cost.transfer.mesh_multicast_links`) and the nearest port
(``NocModel(dram_groups=0)``). Every link's load is summed per segment.

*Latency.* A leaf: one run; a T-Cut: ``n x`` the sum of its children; an S-Cut:
``(n + S) x`` its slowest child; a segment: its tree time times the root's sub-batch
number, and at least its DRAM bytes over the DRAM bandwidth and its busiest link's
bytes over the link bandwidth; the schedule: the sum of its segments.

*Energy.* On-chip energy of the parts, DRAM bytes x DRAM energy, byte-hops x hop
energy.

*Buffers.* Per segment and tile, the largest usage SET's buffer rules check
(:mod:`accelsched.problems.ra_tree.buffers`: inputs held for the next T-Cut child and
for every sub-batch, weights resident across a segment's sub-batches or streamed layer
by layer in a one-sub-batch T-Cut segment; :attr:`SegmentCost.tile_buffer_bytes`;
:func:`accelsched.problems.ra_tree.check.check` rejects a tree that overflows a tile).

Simplifications, stated: the time of a leaf ignores its traffic (traffic bounds the
segment instead); transfers do not overlap or contend inside a segment beyond the
busiest-link bound; the DRAM bound uses the total DRAM bandwidth (SET: the busiest of
its four DRAMs); the split of a leaf is chosen by time and on-chip energy, not by its
traffic (SET's layer engine minimizes the layer's cost with its NoC energy).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from accelsched.hardware.cost.layer_by_layer import part_of
from accelsched.hardware.cost.layer_cost import LayerCost, layer_cost
from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.spec import Accelerator, Core, Mesh, OffChip
from accelsched.models.layer import Layer
from accelsched.problems.ra_tree.analysis import TreeAnalysis, analyze, route, serpentine_order
from accelsched.problems.ra_tree.buffers import TChain, Usage, leaf_usage, s_cut_usage
from accelsched.problems.ra_tree.instance import RATreeInstance, core_buffer_bytes, objective
from accelsched.problems.ra_tree.traffic import Links
from accelsched.problems.ra_tree.tree import Cut, CutKind, Leaf, RANode, RATree

__all__ = [
    "SPLIT_DIMS",
    "LeafRun",
    "RATreeCost",
    "SegmentCost",
    "TCutSegments",
    "best_run",
    "evaluate",
    "evaluate_tree",
    "segment_cost",
    "tree_cycles",
    "tree_objective",
    "tree_usage",
]


SPLIT_DIMS = ("K", "G", "OY", "OX", "B")
"""Loops a leaf may split over its tiles (``G`` for grouped / depthwise layers)."""


@dataclass(frozen=True)
class LeafRun:
    """One run of a leaf: its batch on its tiles.

    Attributes
    ----------
    layer
        Layer name.
    split_dim
        Loop split over the tiles (``""`` when the group has one tile).
    tiles
        The tiles running a part, in order (a group larger than the loop leaves some idle).
    parts
        Cost of each part on its tile (from DRAM to DRAM; only its on-chip share is used).
    runs
        How many times the leaf runs: the total batch over the leaf's batch.
    part_inputs, part_weights
        Per part: its input activation bytes (both operands of a matmul) and weight bytes.
    """

    layer: str
    split_dim: str
    tiles: tuple[int, ...]
    parts: tuple[LayerCost, ...]
    runs: int
    part_inputs: tuple[float, ...] = ()
    part_weights: tuple[float, ...] = ()
    _whole_input: float = 0.0
    _whole_weights: float = 0.0

    @property
    def usage(self) -> Usage:
        """The leaf's tile buffer usages (:func:`~accelsched.problems.ra_tree.buffers.leaf_usage`)."""
        return leaf_usage(self.tiles, self.part_inputs, self.part_weights)

    @property
    def latency_cycles(self) -> float:
        """Time of one run: the MAC-array time of the slowest part."""
        return float(max(p.compute_cycles for p in self.parts))

    @property
    def input_fractions(self) -> tuple[float, ...]:
        """Per part: the share of the layer's input it reads (1 for an output-channel split)."""
        return _fractions(self.part_inputs, self._whole_input)

    @property
    def weight_fractions(self) -> tuple[float, ...]:
        """Per part: the share of the layer's weights it holds (1 for a pixel or sample split)."""
        return _fractions(self.part_weights, self._whole_weights)


def _fractions(values: Sequence[float], whole: float) -> tuple[float, ...]:
    return tuple(v / whole for v in values) if whole > 0 else (0.0,) * len(values)


@dataclass(frozen=True)
class SegmentCost:
    """Cost of one child of the root (a segment: its inputs and outputs go through DRAM).

    Attributes
    ----------
    path
        The segment's path (``root/k``).
    tree_cycles
        Time from the tree (T-Cut: n x sum, S-Cut: (n + S) x max, leaves: one run).
    dram_bytes
        Bytes read from and written to DRAM.
    busiest_link_bytes
        Bytes over the most loaded mesh link (one direction).
    latency_cycles
        ``max(tree, DRAM bytes / DRAM bandwidth, busiest link bytes / link bandwidth)``.
    energy_breakdown_pj
        ``mac``, ``mem:<level>``, ``dram``, ``noc``.
    noc_byte_hops
        Bytes times links moved on the mesh.
    tile_buffer_bytes
        Per tile used: the largest buffer usage SET's rules check in the segment
        (:mod:`accelsched.problems.ra_tree.buffers`).
    """

    path: str
    tree_cycles: float
    dram_bytes: float
    busiest_link_bytes: float
    latency_cycles: float
    energy_breakdown_pj: dict[str, float]
    noc_byte_hops: float
    tile_buffer_bytes: dict[int, float]


@dataclass(frozen=True)
class RATreeCost:
    """Everything the evaluator computed for a tree.

    Attributes
    ----------
    analysis
        NPTs, stages, tiles.
    leaves
        The run of every leaf, by layer.
    routes
        How each edge's tensor travels: ``"noc"`` (straight to its consumer) or ``"dram"``.
    segments
        Per child of the root.
    report
        The totals, as the shared :class:`CostReport`.
    """

    analysis: TreeAnalysis
    leaves: dict[str, LeafRun]
    routes: dict[tuple[str, str], str]
    segments: tuple[SegmentCost, ...]
    report: CostReport


def best_run(layer: Layer, tiles: tuple[int, ...], runs: int, core: Core, offchip: OffChip) -> LeafRun:
    """The split of ``layer`` (at the leaf's batch) over ``tiles`` with the least time, then on-chip energy,
    among the splits whose parts hold their weights and working set in a tile's buffer (when some do).

    Cached per (layer shape, number of tiles, core, off-chip memory): tiles are identical.
    """
    key = (layer.shape_key(), len(tiles), core.cost_key(), offchip)
    found = _SPLITS.get(key)
    if found is None:
        found = _best_split(layer, len(tiles), core, offchip)
        _SPLITS[key] = found
    dim, costs, inputs, weights = found
    whole_in, whole_w = float(layer.activation_input_bytes), float(layer.weight_bytes)
    return LeafRun(layer.name, dim, tiles[: len(costs)], costs, runs, inputs, weights, whole_in, whole_w)


_Split = tuple[str, tuple[LayerCost, ...], tuple[float, ...], tuple[float, ...]]
_SPLITS: dict[tuple[object, ...], _Split] = {}


def _best_split(layer: Layer, n_tiles: int, core: Core, offchip: OffChip) -> _Split:
    """The best one-loop split (or none); when none fits a tile, the best fitting two-loop split if one does.

    Two-loop splits cut ``K`` (or ``G``) into ``a`` parts times a pixel or sample loop into
    ``n / a`` (``a`` a divisor of ``n``), as SET's partitions combine loops.
    """
    capacity = core_buffer_bytes(core)
    options: list[tuple[str, list[Layer]]] = [("", [layer])]
    if n_tiles > 1:
        options += [(d, _split(layer, ((d, n_tiles),))) for d in SPLIT_DIMS if _splittable(layer, d)]
    best = _best_of(options, core, offchip, capacity)
    if best[0][0] and n_tiles > 1:
        two = []
        for outer in (d for d in ("K", "G") if _splittable(layer, d)):
            for inner in (d for d in ("OY", "OX", "B") if _splittable(layer, d)):
                for a in (a for a in range(2, n_tiles // 2 + 1) if n_tiles % a == 0):
                    parts = _split(layer, ((outer, a), (inner, n_tiles // a)))
                    if not _overflows(parts, capacity):
                        two.append((f"{outer}*{inner}", parts))
        if two:
            best = _best_of(two, core, offchip, capacity)
    parts = best[3]
    inputs = tuple(float(p.activation_input_bytes) for p in parts)
    return best[1], best[2], inputs, tuple(float(p.weight_bytes) for p in parts)


def _overflows(parts: Sequence[Layer], capacity: int) -> bool:
    """Whether a part's input and weights exceed a tile's buffer (SET's leaf rule)."""
    return any(p.weight_bytes + p.activation_input_bytes > capacity for p in parts)


def _best_of(
    options: Sequence[tuple[str, list[Layer]]], core: Core, offchip: OffChip, capacity: int
) -> tuple[tuple[bool, float, float], str, tuple[LayerCost, ...], list[Layer]]:
    """The option that fits, then has the least MAC-array time, then on-chip energy."""
    known: dict[int, LayerCost] = {}
    best: tuple[tuple[bool, float, float], str, tuple[LayerCost, ...], list[Layer]] | None = None
    for dim, parts in options:
        costs = tuple(known.get(id(p)) or known.setdefault(id(p), layer_cost(p, core, offchip)) for p in parts)
        key = (_overflows(parts, capacity), float(max(c.compute_cycles for c in costs)),
               sum(c.on_chip_energy_pj for c in costs))  # fmt: skip
        if best is None or key < best[0]:
            best = (key, dim, costs, parts)
    assert best is not None
    return best


def _near_equal(size: int, n: int) -> list[int]:
    base, extra = divmod(size, min(n, size))
    return [base + (1 if i < extra else 0) for i in range(min(n, size))]


def _split(layer: Layer, cuts: Sequence[tuple[str, int]]) -> list[Layer]:
    """``layer`` in near-equal parts: ``n`` along each ``(dim, n)`` of ``cuts``, outer first (at most the product).

    The parts of equal shape are one object (at most two distinct sizes per loop), so that they are costed once;
    they are those of :func:`~accelsched.hardware.cost.layer_by_layer.split_layer` for one cut.
    """
    shapes: dict[tuple[int, ...], Layer] = {}
    parts: list[Layer] = []
    for sizes in itertools.product(*(_near_equal(getattr(layer, dim), n) for dim, n in cuts)):
        if sizes not in shapes:
            changes = {dim: v for (dim, _), v in zip(cuts, sizes, strict=True) if v < getattr(layer, dim)}
            shapes[sizes] = part_of(layer, **changes) if changes else layer
        parts.append(shapes[sizes])
    return parts


def _splittable(layer: Layer, dim: str) -> bool:
    if dim == "K":
        return layer.G == 1 and layer.K > 1
    if dim == "G":
        return layer.G > 1
    return bool(getattr(layer, dim) > 1)


def evaluate_tree(instance: RATreeInstance, tree: RATree, stripe_cols: int | None = None) -> RATreeCost:
    """Energy, latency and traffic of a checked tree (module docstring)."""
    analysis = analyze(instance, tree, stripe_cols)
    acc = instance.accelerator
    mesh = acc.interconnect
    assert isinstance(mesh, Mesh)
    core, offchip = acc.cores[0], acc.offchip
    total = instance.batch
    single = {layer.name: layer for layer in instance.at_batch(1)}
    runs: dict[str, LeafRun] = {}
    for path, node in tree.walk():
        if isinstance(node, Leaf):
            layer = instance.at_batch(node.batch)[node.layer]
            runs[node.layer] = best_run(layer, analysis.nodes[path].tiles, total // node.batch, core, offchip)
    routes = {
        (p, c): route(analysis, p, c) if p in runs and c in runs else "dram"  # a partial tree: see segment_cost
        for p, c in instance.workload.edges
        if p in runs or c in runs
    }
    flow = _Flow(routes, {name: [] for name in runs}, {name: [] for name in runs})
    for p, c in routes:
        if c in flow.preds:
            flow.preds[c].append(p)
        if p in flow.succs:
            flow.succs[p].append(c)
    segments = []
    for k, child in enumerate(tree.root.children):
        path = f"root/{k}"
        layers = analysis.nodes[path].layers
        links = Links(mesh, instance.noc)
        segments.append(
            _segment(path, child, layers, runs, flow, single, total, tree.root.subbatches, links, offchip, analysis)
        )
    report = _report(segments, runs, acc)
    return RATreeCost(analysis, runs, routes, tuple(segments), report)


class _Flow(NamedTuple):
    """How tensors travel (edge -> ``"noc"`` or ``"dram"``), with each layer's producers and consumers."""

    routes: dict[tuple[str, str], str]
    preds: dict[str, list[str]]
    succs: dict[str, list[str]]


@dataclass
class _Share:
    """What some layers of a segment add to its cost: DRAM bytes, on-chip energy, NoC (``links``)."""

    links: Links
    read: float = 0.0
    written: float = 0.0
    onchip_pj: dict[str, float] = field(default_factory=dict)

    def add(self, other: _Share) -> None:
        """Add ``other``'s layers (their link loads too)."""
        self.read += other.read
        self.written += other.written
        for key, value in other.onchip_pj.items():
            self.onchip_pj[key] = self.onchip_pj.get(key, 0.0) + value
        for link, value in other.links.load.items():
            self.links.load[link] = self.links.load.get(link, 0.0) + value
        self.links.byte_hops += other.links.byte_hops


def _layer_share(
    name: str, runs: dict[str, LeafRun], flow: _Flow, single: dict[str, Layer], total: int, repeats: int, share: _Share
) -> None:
    """Add one layer of a segment to ``share``: its parts' on-chip energy, its weights, inputs
    and outputs through DRAM or the NoC as ``flow`` routes them (a consumer missing from ``flow.routes`` is
    outside the segment: the output goes to DRAM)."""
    links = share.links
    run = runs[name]
    for part in run.parts:  # on-chip energy only: the segment accounts for DRAM itself
        for key, value in part.energy_breakdown_pj.items():
            if key != "dram":
                share.onchip_pj[key] = share.onchip_pj.get(key, 0.0) + run.runs * value
    layer = single[name]
    weights = float(layer.weight_bytes) * repeats  # read once per segment run: reused or streamed
    if weights:
        share.read += weights
        links.from_dram(run.tiles, weights, run.weight_fractions)
    producers = flow.preds[name]
    if not producers:  # a network input
        nbytes = float(layer.input_bytes) * total
        share.read += nbytes
        links.from_dram(run.tiles, nbytes, run.input_fractions)
    for producer in producers:
        nbytes = float(single[producer].output_bytes) * total
        if flow.routes[producer, name] == "noc":
            links.deliver(runs[producer].tiles, run.tiles, nbytes, run.input_fractions)
        else:
            share.read += nbytes
            links.from_dram(run.tiles, nbytes, run.input_fractions)
    consumers = flow.succs[name]
    if not consumers or any(flow.routes.get((name, c), "dram") == "dram" for c in consumers):
        nbytes = float(layer.output_bytes) * total
        share.written += nbytes
        links.to_dram(run.tiles, nbytes)


def _segment_of(path: str, share: _Share, tree_time: float, offchip: OffChip, buffers: Usage) -> SegmentCost:
    """A segment's cost from its layers' share, its tree time and its buffer usages."""
    links = share.links
    mesh = links.mesh
    breakdown = dict(share.onchip_pj)
    breakdown["dram"] = share.read * offchip.read_energy_pj_per_byte + share.written * offchip.write_energy_pj_per_byte
    breakdown["noc"] = links.byte_hops * mesh.hop_energy_pj_per_byte
    busiest = max(links.load.values(), default=0.0)
    dram = share.read + share.written
    latency = max(tree_time, dram / offchip.bandwidth_bytes_per_cycle, busiest / mesh.link_bandwidth_bytes_per_cycle)
    need = {tile: buffers.need[tile] for tile in sorted(buffers.need)}
    return SegmentCost(path, tree_time, dram, busiest, latency, breakdown, links.byte_hops, need)


def _segment(
    path: str,
    node: RANode,
    layers: tuple[str, ...],
    runs: dict[str, LeafRun],
    flow: _Flow,
    single: dict[str, Layer],
    total: int,
    repeats: int,
    links: Links,
    offchip: OffChip,
    analysis: TreeAnalysis,
) -> SegmentCost:
    """Cost of one child of the root: its leaves' runs, its traffic (counted on ``links``), its time.

    ``repeats`` is the root's sub-batch number: the segment runs once per root sub-batch
    and loads its weights each time.
    """
    share = _Share(links)
    for name in layers:  # an edge leaving the segment is routed through DRAM (their common ancestor is the root)
        _layer_share(name, runs, flow, single, total, repeats, share)
    buffers = tree_usage(node, runs, segment=True)
    return _segment_of(path, share, repeats * tree_cycles(node, path, runs, analysis), offchip, buffers)


def segment_cost(instance: RATreeInstance, segment: RANode, stripe_cols: int | None = None) -> SegmentCost:
    """Cost of one segment (a child of the root over the whole batch) on its own.

    A segment's cost does not depend on the rest of the tree: every tensor that
    enters or leaves it goes through DRAM, and it has every tile. Exact methods that
    build trees segment by segment (the LS / LP dynamic programs) price segments with
    this function; the sum over the segments of a tree is :func:`evaluate_tree`'s.
    """
    if segment.batch != instance.batch:
        raise ValueError(f"segment_cost: a segment processes the total batch {instance.batch}, got {segment.batch}")
    return evaluate_tree(instance, RATree(Cut(CutKind.T, instance.batch, 1, (segment,))), stripe_cols).segments[0]


class TCutSegments:
    """The costs of the T-Cut segments of a fixed layer order, one layer added at a time.

    A segment ``Cut(T, B, s, [Leaf(l_i, B/s), ..., Leaf(l_{j-1}, B/s)])``, a child of the
    root, gives every leaf all the tiles, so a layer's run is the same in every segment;
    its traffic depends only on whether its neighbours in the order are in the segment
    (a tensor from the previous child goes over the NoC, any other through DRAM,
    :func:`~accelsched.problems.ra_tree.analysis.route`). :meth:`grow` adds a segment's
    layers one by one, keeps the sum over the layers whose neighbours are settled, and
    prices every end with the last layer added on top: each segment costs O(1) layer shares instead of a full evaluation
    (the Pareto DP over the LS subspace prices every segment of the network). The
    costs are :func:`segment_cost`'s, up to the order of floating-point additions
    (a test compares them).

    Parameters
    ----------
    instance
        The RA-tree instance.
    subbatches
        The segments' sub-batch number (a divisor of the batch).
    stripe_cols
        Serpentine stripe width, as in :func:`evaluate_tree`.
    """

    def __init__(self, instance: RATreeInstance, subbatches: int, stripe_cols: int | None = None) -> None:
        if subbatches < 1 or instance.batch % subbatches:
            raise ValueError(f"TCutSegments: {subbatches} does not divide the batch {instance.batch}")
        acc = instance.accelerator
        mesh = acc.interconnect
        assert isinstance(mesh, Mesh)
        self.mesh, self.offchip, self.subbatches = mesh, acc.offchip, subbatches
        self.order = instance.workload.names
        self.position = {name: k for k, name in enumerate(self.order)}
        self.total = instance.batch
        self.single = {layer.name: layer for layer in instance.at_batch(1)}
        at_leaf = instance.at_batch(instance.batch // subbatches)
        tiles = serpentine_order(mesh, stripe_cols)
        self.runs = {name: best_run(at_leaf[name], tiles, subbatches, acc.cores[0], acc.offchip) for name in self.order}
        self.preds: dict[str, list[str]] = {name: [] for name in self.order}
        self.succs: dict[str, list[str]] = {name: [] for name in self.order}
        for p, c in instance.workload.edges:
            self.preds[c].append(p)
            self.succs[p].append(c)
        self.noc = instance.noc
        self._shares: dict[tuple[int, bool, bool], _Share] = {}

    def _share(self, k: int, after_previous: bool, before_next: bool) -> _Share:
        """Layer ``k``'s share when the layer before it (after it) in the order is in its segment."""
        key = (k, after_previous, before_next)
        if key not in self._shares:
            name = self.order[k]
            routes: dict[tuple[str, str], str] = {}
            for p in self.preds[name]:
                routes[p, name] = "noc" if after_previous and self.position[p] == k - 1 else "dram"
            for c in self.succs[name]:
                routes[name, c] = "noc" if before_next and self.position[c] == k + 1 else "dram"
            share = _Share(Links(self.mesh, self.noc))
            _layer_share(name, self.runs, _Flow(routes, self.preds, self.succs), self.single, self.total, 1, share)
            self._shares[key] = share
        return self._shares[key]

    def grow(self, start: int) -> Iterator[tuple[int, SegmentCost]]:
        """``(end, cost)`` of the segments over layers ``start .. end - 1``, for ``end = start + 2, ...``."""
        base = _Share(Links(self.mesh, self.noc))
        cycles = 0.0
        chain = TChain(self.subbatches, segment=True)
        chain.add(self.runs[self.order[start]].usage)
        for end in range(start + 2, len(self.order) + 1):
            settled = end - 2
            base.add(self._share(settled, settled > start, True))
            cycles += self.runs[self.order[settled]].latency_cycles
            last = end - 1
            share = _Share(Links(self.mesh, self.noc))
            share.add(base)
            share.add(self._share(last, True, False))
            tree_time = self.subbatches * (cycles + self.runs[self.order[last]].latency_cycles)
            chain.add(self.runs[self.order[last]].usage)
            yield end, _segment_of("root/0", share, tree_time, self.offchip, chain.usage())


def tree_usage(node: RANode, runs: dict[str, LeafRun], segment: bool) -> Usage:
    """A node's tile buffer usages by SET's rules (:mod:`accelsched.problems.ra_tree.buffers`).

    ``segment``: whether the node is a child of the root.
    """
    if isinstance(node, Leaf):
        return runs[node.layer].usage
    children = (tree_usage(child, runs, segment=False) for child in node.children)
    if node.kind is CutKind.S:
        return s_cut_usage(children, node.subbatches, segment)
    chain = TChain(node.subbatches, segment)
    for child in children:
        chain.add(child)
    return chain.usage()


def tree_cycles(node: RANode, path: str, runs: dict[str, LeafRun], analysis: TreeAnalysis) -> float:
    """T-Cut: n x the sum of its children; S-Cut: (n + S) x the slowest child; leaf: one run."""
    if isinstance(node, Leaf):
        return runs[node.layer].latency_cycles
    times = [tree_cycles(child, f"{path}/{k}", runs, analysis) for k, child in enumerate(node.children)]
    if node.kind is CutKind.T:
        return node.subbatches * sum(times)
    return (node.subbatches + analysis.nodes[path].n_stages) * max(times)


def _report(segments: Sequence[SegmentCost], runs: dict[str, LeafRun], acc: Accelerator) -> CostReport:
    breakdown: dict[str, float] = {}
    for segment in segments:
        for key, value in segment.energy_breakdown_pj.items():
            breakdown[key] = breakdown.get(key, 0.0) + value
    latency = sum(s.latency_cycles for s in segments)
    macs = sum(run.runs * sum(p.macs for p in run.parts) for run in runs.values())
    slots = acc.n_cores * acc.cores[0].n_macs
    return CostReport(
        energy_pj=sum(breakdown.values()),
        latency_cycles=latency,
        dram_bytes=sum(s.dram_bytes for s in segments),
        noc_byte_hops=sum(s.noc_byte_hops for s in segments),
        peak_memory_bytes=max(sum(s.tile_buffer_bytes.values()) for s in segments),
        utilization=min(1.0, macs / (slots * latency)) if latency > 0 else 0.0,
        macs=macs,
        energy_breakdown_pj=breakdown,
    )


def evaluate(instance: RATreeInstance, tree: RATree) -> CostReport:
    """The shared cost model's report of a tree: :func:`evaluate_tree`'s ``report``."""
    return evaluate_tree(instance, tree).report


def tree_objective(instance: RATreeInstance, tree: RATree) -> float:
    """The instance's objective ``E^n D^m`` of a tree, from :func:`evaluate`."""
    return objective(instance, tree, evaluate(instance, tree))
