"""The S-T graph of an RA tree (SET's space-time diagram): every run of a leaf as a box in time and tiles
(:func:`timeline`), and its drawing to a PNG file (:func:`st_graph`)."""

from __future__ import annotations

from dataclasses import dataclass

from accelsched.problems.ra_tree.cost import RATreeCost, evaluate_tree, tree_cycles
from accelsched.problems.ra_tree.instance import RATreeInstance
from accelsched.problems.ra_tree.tree import CutKind, Leaf, RANode, RATree

__all__ = ["Box", "st_graph", "timeline"]


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
        slot = max(tree_cycles(child, p, cost.leaves, cost.analysis) for p, child in children)
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


def st_graph(instance: RATreeInstance, tree: RATree, path: str) -> None:
    """Draw the S-T graph of ``tree`` to the PNG file ``path``: time on x, serpentine tile positions on y.

    One box per run of a leaf (:func:`timeline`), coloured by layer.
    """
    import matplotlib  # optional heavy backend: imported only when a graph is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # optional heavy backend, as above

    cost = evaluate_tree(instance, tree)
    boxes = timeline(cost, tree)
    names = list(dict.fromkeys(box.layer for box in boxes))
    colours = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(12, 4))
    for box in boxes:
        colour = colours(names.index(box.layer) % 20)
        ax.add_patch(plt.Rectangle((box.start_cycles / 1e3, box.first_tile), box.duration_cycles / 1e3, box.n_tiles,
                                   facecolor=colour, edgecolor="black", linewidth=0.3))  # fmt: skip
    ax.set_xlim(0, max(b.start_cycles + b.duration_cycles for b in boxes) / 1e3)
    ax.set_ylim(0, instance.n_tiles)
    ax.set_xlabel("time (k cycles)")
    ax.set_ylabel("tile (serpentine position)")
    ax.set_title(f"{instance.workload.name}, batch {instance.batch}, {instance.accelerator.name}: "
                 f"{len(tree.root.children)} segments")  # fmt: skip
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
