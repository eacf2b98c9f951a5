"""The evaluator of RA trees (SET, ISCA'23): energy, latency, DRAM and mesh traffic of an analyzed tree,
built from the shared primitives of :mod:`accelsched.hardware.cost` (per-layer cost, layer splits,
mesh multicast) on the analysis of :mod:`accelsched.problems.ra_tree.analysis`.

*Leaves.* A leaf runs its batch ``b`` on its ``f`` tiles, ``B / b`` times (``B`` the
total batch). Each run splits the layer into ``f`` near-equal parts along one loop
(``K``, ``G``, ``OY``, ``OX`` or ``B``; among the splits whose parts fit a tile's
buffer, the one with the least MAC-array time, then on-chip energy) and costs each
part on its tile with the shared per-layer primitive; the leaf contributes the parts'
on-chip energy (MACs and memories) per run, and the MAC-array time of its slowest
part as the time of a run.

*Data flow* (SET's rules, :func:`~accelsched.problems.ra_tree.analysis.route`). The
children of the root are the *segments*. A tensor between two segments, or one that
skips a step of its lowest common cut (a T-Cut child that is not the next one, an
S-Cut child more than one stage later), is written to and read back from DRAM; any
other tensor goes over the mesh from the producer's tiles to the consumer's. Network
inputs come from DRAM, network outputs go to it. Weights are read from DRAM once per
segment and stay on chip for all of its sub-batches.

*Mesh traffic.* XY routing; DRAM enters and leaves at the attachment point nearest to
a tile. A tensor every part needs whole (the input of an output-channel split, the
weights of a pixel or sample split) is multicast once along an x-spine with
y-branches (:func:`accelsched.hardware.cost.transfer.mesh_multicast_links`), from the
first producer tile; otherwise each consumer tile receives an equal slice from the
producer tile of the same rank. Every link's load is summed per segment.

*Latency.* A leaf: one run; a T-Cut: ``n x`` the sum of its children; an S-Cut:
``(n + S) x`` its slowest child; a segment: its tree time times the root's sub-batch
number (it runs once per root sub-batch and reloads its weights each time), and at
least its DRAM bytes over the DRAM bandwidth and its busiest link's bytes over the
link bandwidth; the schedule: the sum of its segments.

*Energy.* On-chip energy of the parts, DRAM bytes x DRAM energy, byte-hops x hop
energy.

*Buffers.* Per segment and tile, the weights of all parts the tile runs plus the
largest working set of those parts (:attr:`SegmentCost.tile_buffer_bytes`;
:func:`accelsched.problems.ra_tree.check.check` rejects a tree that overflows a tile).

Simplifications, stated: halos of row splits are not counted as extra traffic; the
time of a leaf ignores its traffic (traffic bounds the segment instead); transfers
do not overlap or contend inside a segment beyond the busiest-link bound.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

from accelsched.hardware.cost.layer_by_layer import split_layer
from accelsched.hardware.cost.layer_cost import LayerCost, layer_cost
from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.cost.transfer import mesh_multicast_links
from accelsched.hardware.spec import Accelerator, Core, Mesh, OffChip
from accelsched.models.layer import Layer
from accelsched.problems.ra_tree.analysis import TreeAnalysis, analyze, route, serpentine_order
from accelsched.problems.ra_tree.instance import RATreeInstance, core_buffer_bytes, objective
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
    """

    layer: str
    split_dim: str
    tiles: tuple[int, ...]
    parts: tuple[LayerCost, ...]
    runs: int

    @property
    def latency_cycles(self) -> float:
        """Time of one run: the MAC-array time of the slowest part."""
        return float(max(p.compute_cycles for p in self.parts))

    @property
    def replicates_inputs(self) -> bool:
        """Whether every part reads the whole input (an output-channel split)."""
        return self.split_dim == "K"

    @property
    def replicates_weights(self) -> bool:
        """Whether every part holds the whole weights (a split along pixels or samples)."""
        return self.split_dim in ("OY", "OX", "B")


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
        Per tile used: the weights of all of its parts in the segment (they stay on chip
        across the sub-batches) plus the largest activation working set of its parts.
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
    dim, costs = found
    return LeafRun(layer.name, dim, tiles[: len(costs)], costs, runs)


_SPLITS: dict[tuple[object, ...], tuple[str, tuple[LayerCost, ...]]] = {}


def _best_split(layer: Layer, n_tiles: int, core: Core, offchip: OffChip) -> tuple[str, tuple[LayerCost, ...]]:
    options: list[tuple[str, list[Layer]]] = [("", [layer])]
    if n_tiles > 1:
        options += [(d, split_layer(layer, d, n_tiles)) for d in SPLIT_DIMS if _splittable(layer, d)]
    capacity = core_buffer_bytes(core)
    best: tuple[tuple[bool, float, float], str, tuple[LayerCost, ...]] | None = None
    for dim, parts in options:
        costs = tuple(layer_cost(p, core, offchip) for p in parts)
        overflows = any(
            p.weight_bytes + c.footprint_bytes.get("I", 0.0) + c.footprint_bytes.get("O", 0.0) > capacity
            for p, c in zip(parts, costs, strict=True)
        )
        key = (overflows, float(max(c.compute_cycles for c in costs)), sum(c.on_chip_energy_pj for c in costs))
        if best is None or key < best[0]:
            best = (key, dim, costs)
    assert best is not None
    return best[1], best[2]


def _splittable(layer: Layer, dim: str) -> bool:
    if dim == "K":
        return layer.G == 1 and layer.K > 1
    if dim == "G":
        return layer.G > 1
    return bool(getattr(layer, dim) > 1)


class _Links:
    """Bytes per directed mesh link, and byte-hops."""

    def __init__(self, mesh: Mesh, nearest_dram: Sequence[int]) -> None:
        self.mesh = mesh
        self.nearest_dram = nearest_dram
        self.load: dict[tuple[tuple[int, int], tuple[int, int]], float] = {}
        self.byte_hops = 0.0

    def add(self, links: Iterable[tuple[tuple[int, int], tuple[int, int]]], nbytes: float) -> None:
        for link in links:
            self.load[link] = self.load.get(link, 0.0) + nbytes
            self.byte_hops += nbytes

    def unicast(self, src: int, dst: int, nbytes: float) -> None:
        self.add(_tree_links(self.mesh, src, (dst,)), nbytes)

    def multicast(self, src: int, dsts: Sequence[int], nbytes: float) -> None:
        self.add(_tree_links(self.mesh, src, tuple(dsts)), nbytes)

    def dram_node(self, core_id: int) -> int:
        """The core id at the DRAM attachment point nearest to ``core_id``."""
        return self.nearest_dram[core_id]

    def deliver(self, sources: Sequence[int], dsts: Sequence[int], nbytes: float, replicate: bool) -> None:
        """``nbytes`` from ``sources`` (evenly spread) to ``dsts``: the whole of it to every one, or a slice each.

        A replicated tensor is multicast once from the first source (the tree is the
        same shape from any source); slices go from ``sources[i mod |sources|]`` to
        ``dsts[i]``.
        """
        if replicate:
            self.multicast(sources[0], dsts, nbytes)
            return
        share = nbytes / len(dsts)
        for i, dst in enumerate(dsts):
            self.unicast(sources[i % len(sources)], dst, share)


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
    nearest = _nearest_dram(mesh)
    segments = []
    for k, child in enumerate(tree.root.children):
        path = f"root/{k}"
        layers = analysis.nodes[path].layers
        links = _Links(mesh, nearest)
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
    """What some layers of a segment add to its cost: DRAM bytes, on-chip energy, tile buffers, NoC (``links``)."""

    links: _Links
    read: float = 0.0
    written: float = 0.0
    onchip_pj: dict[str, float] = field(default_factory=dict)
    weight_bytes: dict[int, float] = field(default_factory=dict)
    """Per tile: weights of the layers' parts (they stay on chip across the segment's sub-batches)."""
    working_set: dict[int, float] = field(default_factory=dict)
    """Per tile: the largest activation working set of the layers' parts."""

    def add(self, other: _Share) -> None:
        """Add ``other``'s layers (their link loads too)."""
        self.read += other.read
        self.written += other.written
        for key, value in other.onchip_pj.items():
            self.onchip_pj[key] = self.onchip_pj.get(key, 0.0) + value
        for tile, value in other.weight_bytes.items():
            self.weight_bytes[tile] = self.weight_bytes.get(tile, 0.0) + value
        for tile, value in other.working_set.items():
            self.working_set[tile] = max(self.working_set.get(tile, 0.0), value)
        for link, value in other.links.load.items():
            self.links.load[link] = self.links.load.get(link, 0.0) + value
        self.links.byte_hops += other.links.byte_hops


def _layer_share(
    name: str, runs: dict[str, LeafRun], flow: _Flow, single: dict[str, Layer], total: int, repeats: int, share: _Share
) -> None:
    """Add one layer of a segment to ``share``: its parts' buffers and on-chip energy, its weights, inputs
    and outputs through DRAM or the NoC as ``flow`` routes them (a consumer missing from ``flow.routes`` is
    outside the segment: the output goes to DRAM)."""
    links = share.links
    run = runs[name]
    replicated = 1.0 if run.replicates_weights else 1.0 / len(run.parts)
    for tile, part in zip(run.tiles, run.parts, strict=True):
        share.weight_bytes[tile] = share.weight_bytes.get(tile, 0.0) + single[name].weight_bytes * replicated
        acts = part.footprint_bytes.get("I", 0.0) + part.footprint_bytes.get("O", 0.0)
        share.working_set[tile] = max(share.working_set.get(tile, 0.0), acts)
    for part in run.parts:  # on-chip energy only: the segment accounts for DRAM itself
        for key, value in part.energy_breakdown_pj.items():
            if key != "dram":
                share.onchip_pj[key] = share.onchip_pj.get(key, 0.0) + run.runs * value
    layer = single[name]
    weights = float(layer.weight_bytes) * repeats  # weights stay on chip across the segment's sub-batches
    if weights:
        share.read += weights
        links.deliver([links.dram_node(run.tiles[0])], run.tiles, weights, run.replicates_weights)
    producers = flow.preds[name]
    if not producers:  # a network input
        nbytes = float(layer.input_bytes) * total
        share.read += nbytes
        links.deliver([links.dram_node(run.tiles[0])], run.tiles, nbytes, run.replicates_inputs)
    for producer in producers:
        nbytes = float(single[producer].output_bytes) * total
        if flow.routes[producer, name] == "noc":
            links.deliver(runs[producer].tiles, run.tiles, nbytes, run.replicates_inputs)
        else:
            share.read += nbytes
            links.deliver([links.dram_node(run.tiles[0])], run.tiles, nbytes, run.replicates_inputs)
    consumers = flow.succs[name]
    if not consumers or any(flow.routes.get((name, c), "dram") == "dram" for c in consumers):
        nbytes = float(layer.output_bytes) * total
        share.written += nbytes
        for tile in run.tiles:
            links.unicast(tile, links.dram_node(tile), nbytes / len(run.tiles))


def _segment_of(path: str, share: _Share, tree_time: float, offchip: OffChip) -> SegmentCost:
    """A segment's cost from its layers' share and its tree time."""
    links = share.links
    mesh = links.mesh
    breakdown = dict(share.onchip_pj)
    breakdown["dram"] = share.read * offchip.read_energy_pj_per_byte + share.written * offchip.write_energy_pj_per_byte
    breakdown["noc"] = links.byte_hops * mesh.hop_energy_pj_per_byte
    busiest = max(links.load.values(), default=0.0)
    dram = share.read + share.written
    latency = max(tree_time, dram / offchip.bandwidth_bytes_per_cycle, busiest / mesh.link_bandwidth_bytes_per_cycle)
    buffers = {tile: share.weight_bytes[tile] + share.working_set[tile] for tile in sorted(share.weight_bytes)}
    return SegmentCost(path, tree_time, dram, busiest, latency, breakdown, links.byte_hops, buffers)


def _segment(
    path: str,
    node: RANode,
    layers: tuple[str, ...],
    runs: dict[str, LeafRun],
    flow: _Flow,
    single: dict[str, Layer],
    total: int,
    repeats: int,
    links: _Links,
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
    return _segment_of(path, share, repeats * tree_cycles(node, path, runs, analysis), offchip)


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
        self.nearest = _nearest_dram(mesh)
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
            share = _Share(_Links(self.mesh, self.nearest))
            _layer_share(name, self.runs, _Flow(routes, self.preds, self.succs), self.single, self.total, 1, share)
            self._shares[key] = share
        return self._shares[key]

    def grow(self, start: int) -> Iterator[tuple[int, SegmentCost]]:
        """``(end, cost)`` of the segments over layers ``start .. end - 1``, for ``end = start + 2, ...``."""
        base = _Share(_Links(self.mesh, self.nearest))
        cycles = 0.0
        for end in range(start + 2, len(self.order) + 1):
            settled = end - 2
            base.add(self._share(settled, settled > start, True))
            cycles += self.runs[self.order[settled]].latency_cycles
            last = end - 1
            share = _Share(_Links(self.mesh, self.nearest))
            share.add(base)
            share.add(self._share(last, True, False))
            tree_time = self.subbatches * (cycles + self.runs[self.order[last]].latency_cycles)
            yield end, _segment_of("root/0", share, tree_time, self.offchip)


@cache
def _tree_links(mesh: Mesh, src: int, dsts: tuple[int, ...]) -> tuple[tuple[tuple[int, int], tuple[int, int]], ...]:
    """The XY multicast tree's links from ``src`` to ``dsts`` (one path for one destination), computed once."""
    return tuple(mesh_multicast_links(mesh, src, dsts))


@cache
def _nearest_dram(mesh: Mesh) -> tuple[int, ...]:
    """For every tile, the core id at its nearest DRAM attachment point (computed once per mesh)."""
    out = []
    for tile in range(mesh.rows * mesh.cols):
        r, c = mesh.position(tile)
        dr, dc = min(mesh.dram_nodes, key=lambda node: abs(node[0] - r) + abs(node[1] - c))
        out.append(dr * mesh.cols + dc)
    return tuple(out)


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
