"""The analysis of an RA tree (SET, ISCA'23): normalized processing times, pipeline stages,
S-Cut tile allocation, tile placement, and how each tensor travels.

Normalized processing time (NPT)
--------------------------------
The NPT of a node estimates its time per sample on one tile, so that the time of a
node on ``f`` tiles is about ``NPT / f`` per sample:

* leaf: the MAC-array time of one sample of the layer on one tile
  (``compute_cycles`` of the shared per-layer primitive
  :func:`accelsched.hardware.cost.layer_cost.layer_cost`: the MACs over the array
  with the spatial padding, no memory or DRAM time). This is SET's unit time
  (``CoreMapper::set_conv_utime`` in SET's artifact: the operations with ``C`` and
  ``K`` padded to the PE's vector and lane widths, over the tile's MACs) and the time
  the evaluator gives a leaf run (:attr:`~accelsched.problems.ra_tree.cost.LeafRun.latency_cycles`),
  so that the allocation balances the time the score uses;
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
(``m_i`` = :func:`~accelsched.problems.ra_tree.tree.min_tiles` of the child, 1 for a leaf)
with ``sum f_i = C`` minimizing the bottleneck ``max_i NPT_i / f_i``: start every
child at ``m_i`` and give the remaining tiles one at a time to the current
bottleneck (:func:`balance_tiles`). Each increment lowers only the bottleneck
child's time and times only decrease, so the final bottleneck is the least possible
(the exchange argument of water-filling); when every ``m_i = 1`` this is the optimum
SET's published procedure reaches. Tiles are numbered in serpentine vertical
stripes (:func:`serpentine_order`) and every S-Cut child takes a contiguous range of
its parent's numbering, so that a group is compact on the mesh.

Routes
------
:func:`route` applies SET's data-flow rules to two leaves of an analyzed tree: a
tensor crosses DRAM between segments or when it skips a step of its lowest common
cut, and goes over the mesh otherwise (:mod:`accelsched.problems.ra_tree.cost`
prices both).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.hardware.spec import Accelerator, Mesh
from accelsched.models.layer import Layer
from accelsched.problems.ra_tree.instance import RATreeInstance
from accelsched.problems.ra_tree.tree import Cut, CutKind, Leaf, RANode, RATree, min_tiles

__all__ = ["NodeInfo", "TreeAnalysis", "analyze", "balance_tiles", "leaf_npt_cycles", "route", "serpentine_order"]


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


def leaf_npt_cycles(layer: Layer, accelerator: Accelerator) -> float:
    """A leaf's NPT: the MAC-array cycles of one sample of ``layer`` on one tile (module docstring).

    ``layer`` is at batch 1; the value is the shared primitive's ``compute_cycles``, the
    same quantity :attr:`~accelsched.problems.ra_tree.cost.LeafRun.latency_cycles` takes
    the maximum of over a leaf's parts.
    """
    return float(layer_cost(layer, accelerator.cores[0], accelerator.offchip).compute_cycles)


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
    leaf_npt = {layer.name: leaf_npt_cycles(layer, acc) for layer in single}
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
