"""Analyzer and evaluator of RA trees (SET, ISCA'23): normalized processing times,
pipeline stages, S-Cut tile allocation, tile placement, then energy, latency and traffic.

Normalized processing time (NPT)
--------------------------------
The NPT of a node estimates its time per sample on one tile, so that the time of a
node on ``f`` tiles is about ``NPT / f`` per sample:

* leaf: the latency of one sample of the layer on one tile, from the shared
  per-layer primitive (:func:`accelsched.hardware.cost.layer_cost.layer_cost`);
* T-Cut: the sum of its children's NPTs (they run one after the other);
* S-Cut with ``n`` sub-batches and ``S`` stages: the sum of its children's NPTs
  times ``(n + S) / n`` (its children share the tiles; the pipeline fills and
  drains over ``S`` extra steps).

Stages
------
The children of an S-Cut run as a pipeline over its sub-batches. A child's stage is
0 when no earlier child produces one of its inputs, else one more than the largest
stage of the earlier children it depends on; ``S`` is the largest stage. Children on
the same stage run on the same sub-batch at the same time.

Allocation and placement
------------------------
The root has every tile; the children of a T-Cut and a leaf have their parent's
tiles. An S-Cut with ``C`` tiles gives its children disjoint groups ``f_i >= m_i``
(``m_i`` = :func:`accelsched.problems.ra_tree.min_tiles` of the child, 1 for a leaf)
with ``sum f_i = C`` minimizing the bottleneck ``max_i NPT_i / f_i``: start every
child at ``m_i`` and give the remaining tiles one at a time to the current
bottleneck (:func:`balance_tiles`). Each increment lowers only the bottleneck
child's time and times only decrease, so the final bottleneck is the least possible
(the exchange argument of water-filling); when every ``m_i = 1`` this is the optimum
SET's published procedure reaches. Tiles are numbered in serpentine vertical
stripes (:func:`serpentine_order`) and every S-Cut child takes a contiguous range of
its parent's numbering, so that a group is compact on the mesh.

Evaluator
---------
*Leaves.* A leaf runs its batch ``b`` on its ``f`` tiles, ``B / b`` times (``B`` the
total batch). Each run splits the layer into ``f`` near-equal parts along one loop
(``K``, ``G``, ``OY``, ``OX`` or ``B``; among the splits whose parts fit a tile's
buffer, the one with the least MAC-array time, then on-chip energy) and costs each
part on its tile with the shared per-layer primitive; the leaf contributes the parts'
on-chip energy (MACs and memories) per run, and the MAC-array time of its slowest
part as the time of a run.

*Data flow* (SET's rules, :func:`route`). The children of the root are the
*segments*. A tensor between two segments, or one that skips a step of its lowest
common cut (a T-Cut child that is not the next one, an S-Cut child more than one
stage later), is written to and read back from DRAM; any other tensor goes over the
mesh from the producer's tiles to the consumer's. Network inputs come from DRAM,
network outputs go to it. Weights are read from DRAM once per segment and stay on
chip for all of its sub-batches.

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
link bandwidth; the schedule: the sum of its segments. *Energy*: on-chip energy of the parts, DRAM bytes x DRAM energy,
byte-hops x hop energy. *Buffers*: per segment and tile, the weights of all parts the
tile runs plus the largest working set of those parts
(:attr:`SegmentCost.tile_buffer_bytes`; :func:`accelsched.problems.ra_tree.check`
rejects a tree that overflows a tile).

Simplifications, stated: halos of row splits are not counted as extra traffic; the
time of a leaf ignores its traffic (traffic bounds the segment instead); transfers
do not overlap or contend inside a segment beyond the busiest-link bound.
"""

from __future__ import annotations

import heapq
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
from accelsched.problems.ra_tree import (
    Cut,
    CutKind,
    Leaf,
    RANode,
    RATree,
    RATreeInstance,
    core_buffer_bytes,
    min_tiles,
)

__all__ = [
    "Box",
    "LeafRun",
    "NodeInfo",
    "RATreeCost",
    "SegmentCost",
    "TCutSegments",
    "TreeAnalysis",
    "analyze",
    "balance_tiles",
    "best_run",
    "evaluate",
    "route",
    "segment_cost",
    "serpentine_order",
    "timeline",
]


@dataclass(frozen=True)
class NodeInfo:
    """What the analyzer knows of one node.

    Attributes
    ----------
    path
        ``root``, ``root/0``, ... (as :meth:`RATree.walk`).
    node
        The node.
    npt_cycles
        Normalized processing time, cycles per sample on one tile.
    stages
        S-Cut: the stage of each child; empty otherwise.
    tiles
        The node's tiles (mesh core ids), in placement order.
    layers
        Names of the layers below the node, left to right.
    """

    path: str
    node: RANode
    npt_cycles: float
    stages: tuple[int, ...]
    tiles: tuple[int, ...]
    layers: tuple[str, ...]

    @property
    def n_stages(self) -> int:
        """``S``: the largest stage of an S-Cut's children (0 for other nodes)."""
        return max(self.stages, default=0)


@dataclass(frozen=True)
class TreeAnalysis:
    """NPTs, stages, tiles of every node of a tree.

    Attributes
    ----------
    nodes
        Every node's :class:`NodeInfo`, by path, depth first, left to right.
    """

    nodes: dict[str, NodeInfo]
    _leaves: dict[str, NodeInfo] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for info in self.nodes.values():
            if isinstance(info.node, Leaf):
                self._leaves[info.node.layer] = info

    @property
    def root(self) -> NodeInfo:
        """The root's information."""
        return self.nodes["root"]

    def leaf(self, layer: str) -> NodeInfo:
        """The information of a layer's leaf."""
        return self._leaves[layer]


@cache
def serpentine_order(mesh: Mesh, stripe_cols: int | None = None) -> tuple[int, ...]:
    """Core ids of a mesh in serpentine vertical stripes (computed once per mesh and stripe width).

    The mesh is cut into vertical stripes of ``stripe_cols`` columns (default: half
    the columns, at least 1; the last stripe may be narrower). Stripes are visited
    left to right, alternately top-down and bottom-up; inside a stripe each row is
    visited alternately left to right and right to left. Consecutive ids inside a
    stripe are neighbours on the mesh, so a contiguous range of ids is a compact
    group of tiles.
    """
    width = max(1, mesh.cols // 2) if stripe_cols is None else stripe_cols
    if isinstance(width, bool) or not isinstance(width, int) or not 1 <= width <= mesh.cols:
        raise ValueError(f"serpentine_order: stripe_cols must be an integer in 1..{mesh.cols}, got {stripe_cols!r}")
    order: list[int] = []
    for s, first in enumerate(range(0, mesh.cols, width)):
        cols = list(range(first, min(first + width, mesh.cols)))
        rows = range(mesh.rows) if s % 2 == 0 else range(mesh.rows - 1, -1, -1)
        for k, r in enumerate(rows):
            order.extend(r * mesh.cols + c for c in (cols if k % 2 == 0 else reversed(cols)))
    return tuple(order)


def balance_tiles(npt: Sequence[float], tiles: int, minimum: Sequence[int] | None = None) -> tuple[int, ...]:
    """Tiles per child minimizing ``max_i npt_i / f_i`` with ``f_i >= minimum_i`` and ``sum f_i = tiles``.

    Water-filling (module docstring): optimal for the bottleneck.

    Raises
    ------
    ValueError
        If an NPT is not positive, or the minimums exceed ``tiles``.
    """
    need = [1] * len(npt) if minimum is None else list(minimum)
    if len(need) != len(npt) or not npt:
        raise ValueError("balance_tiles: give one NPT (and one minimum) per child, at least one child")
    if any(not t > 0 for t in npt):
        raise ValueError(f"balance_tiles: NPTs must be positive, got {list(npt)}")
    if sum(need) > tiles:
        raise ValueError(f"balance_tiles: the children need {sum(need)} tiles at least, there are {tiles}")
    given = list(need)
    heap = [(-t / f, k) for k, (t, f) in enumerate(zip(npt, given, strict=True))]
    heapq.heapify(heap)
    for _ in range(tiles - sum(given)):
        _, k = heapq.heappop(heap)
        given[k] += 1
        heapq.heappush(heap, (-npt[k] / given[k], k))
    return tuple(given)


def analyze(instance: RATreeInstance, tree: RATree, stripe_cols: int | None = None) -> TreeAnalysis:
    """NPTs, stages, allocation and placement of a tree that passed :func:`accelsched.problems.ra_tree.check`.

    Two passes: bottom-up the NPTs, stages and layers of every node, then top-down the
    tiles (the allocation of an S-Cut needs its children's NPTs).
    """
    mesh = instance.accelerator.interconnect
    if not isinstance(mesh, Mesh):  # pragma: no cover - RATreeInstance requires a mesh
        raise TypeError("analyze: the accelerator has no mesh")
    acc = instance.accelerator
    single = instance.at_batch(1)
    leaf_npt = {layer.name: float(layer_cost(layer, acc.cores[0], acc.offchip).latency_cycles) for layer in single}
    preds = {name: set(single.predecessors(name)) for name in single.names}
    timing: dict[str, tuple[float, tuple[int, ...], tuple[str, ...]]] = {}
    _time(tree.root, "root", leaf_npt, preds, timing)
    tiles: dict[str, tuple[int, ...]] = {}
    _place(tree.root, "root", serpentine_order(mesh, stripe_cols), timing, tiles)
    return TreeAnalysis({path: NodeInfo(path, node, *timing[path][:2], tiles[path], timing[path][2])
                         for path, node in tree.walk()})  # fmt: skip


def _time(
    node: RANode,
    path: str,
    leaf_npt: dict[str, float],
    preds: dict[str, set[str]],
    out: dict[str, tuple[float, tuple[int, ...], tuple[str, ...]]],
) -> tuple[float, tuple[int, ...], tuple[str, ...]]:
    """(NPT, stages, layers) of ``node`` and, recorded in ``out``, of every node below it."""
    if isinstance(node, Leaf):
        result: tuple[float, tuple[int, ...], tuple[str, ...]] = (leaf_npt[node.layer], (), (node.layer,))
    else:
        children = [_time(child, f"{path}/{k}", leaf_npt, preds, out) for k, child in enumerate(node.children)]
        total = sum(npt for npt, _, _ in children)
        layers = tuple(name for _, _, names in children for name in names)
        stages: tuple[int, ...] = ()
        if node.kind is CutKind.S:
            stages = _stages([names for _, _, names in children], preds)
            total *= (node.subbatches + max(stages)) / node.subbatches
        result = (total, stages, layers)
    out[path] = result
    return result


def _place(
    node: RANode,
    path: str,
    tiles: tuple[int, ...],
    timing: dict[str, tuple[float, tuple[int, ...], tuple[str, ...]]],
    out: dict[str, tuple[int, ...]],
) -> None:
    """Give ``node`` its tiles and, recursively, its children theirs."""
    out[path] = tiles
    if isinstance(node, Leaf):
        return
    if node.kind is CutKind.T:
        for k, child in enumerate(node.children):
            _place(child, f"{path}/{k}", tiles, timing, out)
        return
    npts = [timing[f"{path}/{k}"][0] for k in range(len(node.children))]
    counts = balance_tiles(npts, len(tiles), [min_tiles(child) for child in node.children])
    start = 0
    for k, (child, count) in enumerate(zip(node.children, counts, strict=True)):
        _place(child, f"{path}/{k}", tiles[start : start + count], timing, out)
        start += count


def _stages(children: Sequence[tuple[str, ...]], preds: dict[str, set[str]]) -> tuple[int, ...]:
    """Stage of each child of an S-Cut: one more than the latest earlier child it depends on."""
    stages: list[int] = []
    for k, layers in enumerate(children):
        needs = set().union(*(preds[name] for name in layers))
        stage = max((stages[j] + 1 for j in range(k) if needs & set(children[j])), default=0)
        stages.append(stage)
    return tuple(stages)


# ====================================================================== evaluator
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


def route(analysis: TreeAnalysis, producer: str, consumer: str) -> str:
    """How the producer's output reaches the consumer: ``"noc"`` or ``"dram"`` (SET's rules).

    Through DRAM when the two leaves are in different children of the root, or when
    the tensor skips a step at their lowest common cut: a T-Cut whose children
    holding them are not adjacent, or an S-Cut whose consumer child is more than one
    stage after the producer child. Otherwise the tensor is consumed right away and
    goes over the mesh.
    """
    a = analysis.leaf(producer).path.split("/")
    b = analysis.leaf(consumer).path.split("/")
    depth = next(k for k in range(min(len(a), len(b))) if a[k] != b[k])
    lca = analysis.nodes["/".join(a[:depth])]
    i, j = int(a[depth]), int(b[depth])
    if lca.path == "root":
        return "dram"
    assert isinstance(lca.node, Cut)
    if lca.node.kind is CutKind.S:
        return "dram" if lca.stages[j] > lca.stages[i] + 1 else "noc"
    return "dram" if j > i + 1 else "noc"


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


def evaluate(instance: RATreeInstance, tree: RATree, stripe_cols: int | None = None) -> RATreeCost:
    """Energy, latency and traffic of a checked tree (module docstring, *Evaluator*)."""
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


def _segment_of(path: str, share: _Share, tree_cycles: float, offchip: OffChip) -> SegmentCost:
    """A segment's cost from its layers' share and its tree time."""
    links = share.links
    mesh = links.mesh
    breakdown = dict(share.onchip_pj)
    breakdown["dram"] = share.read * offchip.read_energy_pj_per_byte + share.written * offchip.write_energy_pj_per_byte
    breakdown["noc"] = links.byte_hops * mesh.hop_energy_pj_per_byte
    busiest = max(links.load.values(), default=0.0)
    dram = share.read + share.written
    latency = max(tree_cycles, dram / offchip.bandwidth_bytes_per_cycle, busiest / mesh.link_bandwidth_bytes_per_cycle)
    buffers = {tile: share.weight_bytes[tile] + share.working_set[tile] for tile in sorted(share.weight_bytes)}
    return SegmentCost(path, tree_cycles, dram, busiest, latency, breakdown, links.byte_hops, buffers)


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
    return _segment_of(path, share, repeats * _tree_cycles(node, path, runs, analysis), offchip)


def segment_cost(instance: RATreeInstance, segment: RANode, stripe_cols: int | None = None) -> SegmentCost:
    """Cost of one segment (a child of the root over the whole batch) on its own.

    A segment's cost does not depend on the rest of the tree: every tensor that
    enters or leaves it goes through DRAM, and it has every tile. Exact methods that
    build trees segment by segment (the LS / LP dynamic programs) price segments with
    this function; the sum over the segments of a tree is :func:`evaluate`'s.
    """
    if segment.batch != instance.batch:
        raise ValueError(f"segment_cost: a segment processes the total batch {instance.batch}, got {segment.batch}")
    return evaluate(instance, RATree(Cut(CutKind.T, instance.batch, 1, (segment,))), stripe_cols).segments[0]


class TCutSegments:
    """The costs of the T-Cut segments of a fixed layer order, one layer added at a time.

    A segment ``Cut(T, B, s, [Leaf(l_i, B/s), ..., Leaf(l_{j-1}, B/s)])``, a child of the
    root, gives every leaf all the tiles, so a layer's run is the same in every segment;
    its traffic depends only on whether its neighbours in the order are in the segment
    (a tensor from the previous child goes over the NoC, any other through DRAM,
    :func:`route`). :meth:`grow` adds a segment's layers one by one, keeps the sum over
    the layers whose neighbours are settled, and prices every end with the last layer
    added on top: each segment costs O(1) layer shares instead of a full evaluation
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
        Serpentine stripe width, as in :func:`evaluate`.
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
            tree_cycles = self.subbatches * (cycles + self.runs[self.order[last]].latency_cycles)
            yield end, _segment_of("root/0", share, tree_cycles, self.offchip)


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


def _tree_cycles(node: RANode, path: str, runs: dict[str, LeafRun], analysis: TreeAnalysis) -> float:
    """T-Cut: n x the sum of its children; S-Cut: (n + S) x the slowest child; leaf: one run."""
    if isinstance(node, Leaf):
        return runs[node.layer].latency_cycles
    times = [_tree_cycles(child, f"{path}/{k}", runs, analysis) for k, child in enumerate(node.children)]
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


# ====================================================================== timeline
@dataclass(frozen=True)
class Box:
    """One run of a leaf in the schedule: a box of the S-T graph.

    Attributes
    ----------
    layer
        The leaf's layer.
    start_cycles, duration_cycles
        When the run starts and how long it takes (its MAC-array time).
    first_tile, n_tiles
        The run's tiles as a range of positions in the root's serpentine numbering.
    """

    layer: str
    start_cycles: float
    duration_cycles: float
    first_tile: int
    n_tiles: int


def timeline(cost: RATreeCost, tree: RATree) -> tuple[Box, ...]:
    """The runs of every leaf in time and space (the S-T graph of SET).

    Segments run one after the other for the length of their latency (repeated for
    the root's sub-batches); inside, a T-Cut runs its children in turn for each of its
    sub-batches and an S-Cut starts sub-batch ``k`` of a child on stage ``s`` at
    ``(k + s)`` times its slowest child's time.
    """
    position = {tile: k for k, tile in enumerate(cost.analysis.root.tiles)}
    boxes: list[Box] = []

    def place(node: RANode, path: str, start: float) -> float:
        if isinstance(node, Leaf):
            run = cost.leaves[node.layer]
            tiles = cost.analysis.nodes[path].tiles
            first = min(position[t] for t in tiles)
            boxes.append(Box(node.layer, start, run.latency_cycles, first, len(tiles)))
            return run.latency_cycles
        children = [(f"{path}/{k}", child) for k, child in enumerate(node.children)]
        if node.kind is CutKind.T:
            t = start
            for _ in range(node.subbatches):
                for child_path, child in children:
                    t += place(child, child_path, t)
            return t - start
        info = cost.analysis.nodes[path]
        slot = max(_tree_cycles(child, p, cost.leaves, cost.analysis) for p, child in children)
        for k in range(node.subbatches):
            for (child_path, child), stage in zip(children, info.stages, strict=True):
                place(child, child_path, start + (k + stage) * slot)
        return (node.subbatches + info.n_stages) * slot

    t = 0.0
    for _ in range(tree.root.subbatches):
        for k, (segment, child) in enumerate(zip(cost.segments, tree.root.children, strict=True)):
            place(child, f"root/{k}", t)
            t += segment.latency_cycles / tree.root.subbatches
    return tuple(boxes)
