"""The validity rules of an RA tree on an instance (:func:`check`), each violation named with its node."""

from __future__ import annotations

from collections.abc import Sequence

from accelsched.errors import InfeasibleSolution
from accelsched.models.workload import Workload
from accelsched.problems.ra_tree.cost import SegmentCost, evaluate_tree
from accelsched.problems.ra_tree.instance import RATreeInstance, tile_buffer_bytes
from accelsched.problems.ra_tree.tree import Cut, CutKind, Leaf, RATree, min_tiles

__all__ = ["buffer_overflow", "check", "check_structure", "set_ls_tree"]


def check(instance: RATreeInstance, tree: RATree) -> None:
    """Raise :class:`InfeasibleSolution` naming the first violated rule and the node.

    Rules, in this order: the root is a T-Cut over the total batch; every cut's batch
    is a multiple of its sub-batch number and every child has the cut's sub-batch
    size; every leaf names a layer of the workload, once, and every layer has a
    leaf; the leaves are in a topological order from left to right; the S-Cuts'
    children can get disjoint, non-empty tile groups within the mesh (at least one
    tile per concurrently running leaf: :func:`min_tiles`); in every segment, every
    tile's buffer holds the weights of its layers' parts and the largest working set
    of its parts (:func:`tile_buffer_bytes`; the allocation and splits are the
    evaluator's).
    """
    check_structure(instance, tree)
    _check_buffers(instance, tree)


def check_structure(instance: RATreeInstance, tree: RATree) -> None:
    """The rules of :func:`check` that need no evaluation (all but the tile buffers)."""
    root = tree.root
    if root.kind is not CutKind.T:
        raise InfeasibleSolution(f"the root must be a T-Cut, got an S-Cut ({root.to_text()})")
    if root.batch != instance.batch:
        raise InfeasibleSolution(
            f"the root must process the total batch {instance.batch}, got {root.batch} ({root.to_text()})"
        )
    for path, node in tree.walk():
        if isinstance(node, Cut):
            _check_batches(path, node)
    position = _check_layers(instance.workload, tree)
    for producer, consumer in instance.workload.edges:
        if position[producer] > position[consumer]:
            raise InfeasibleSolution(
                f"leaves out of topological order: {consumer!r} (leaf {position[consumer]}) comes before "
                f"its producer {producer!r} (leaf {position[producer]})"
            )
    _check_tiles(tree, instance.n_tiles)


def _check_buffers(instance: RATreeInstance, tree: RATree) -> None:
    """Every tile's buffer holds, in every segment, every usage SET's buffer rules check."""
    overflow = buffer_overflow(instance, evaluate_tree(instance, tree).segments)
    if overflow:
        raise InfeasibleSolution(overflow)


def buffer_overflow(instance: RATreeInstance, segments: Sequence[SegmentCost]) -> str:
    """The first tile buffer overflow among evaluated segments, or ``""``."""
    capacity = tile_buffer_bytes(instance.accelerator)
    for segment in segments:
        for tile, need in segment.tile_buffer_bytes.items():
            if need > capacity:
                return (
                    f"{segment.path}: tile {tile} needs {need:.0f} B (SET's buffer rules: the inputs and weights "
                    f"it holds at once), its buffer holds {capacity} B"
                )
    return ""


def set_ls_tree(instance: RATreeInstance) -> RATree:
    """SET's layer-sequential (LS) baseline, built as SET's artifact builds it (``src/main.cpp``).

    The root T-Cut over the total batch ``B`` has every layer as a leaf, in the
    workload's order, at the leaf batch ``b = B, B/2, B/4, ...`` (integer halving): the
    first tree that passes :func:`check` (the root then has ``B / b`` sub-batches, and
    every layer reads its weights once per sub-batch). For ``b = B`` this is
    :func:`~accelsched.problems.ra_tree.tree.sequential_tree`.

    Raises
    ------
    InfeasibleSolution
        When no leaf batch passes (SET: "LS finds no valid solution"), with the batch-1 reason.
    """
    total = instance.batch
    batch = total
    reason = ""
    while batch > 0:
        if total % batch == 0:
            leaves = tuple(Leaf(name, batch) for name in instance.workload.names)
            tree = RATree(Cut(CutKind.T, total, total // batch, leaves))
            try:
                check(instance, tree)
            except InfeasibleSolution as exc:
                reason = str(exc)
            else:
                return tree
        batch //= 2
    raise InfeasibleSolution(f"SET's LS finds no valid tree: {reason}")


def _check_batches(path: str, cut: Cut) -> None:
    if cut.batch % cut.subbatches:
        raise InfeasibleSolution(
            f"{path} ({cut.to_text()}): batch {cut.batch} is not a multiple of its sub-batch number {cut.subbatches}"
        )
    for k, child in enumerate(cut.children):
        if child.batch != cut.child_batch:
            raise InfeasibleSolution(
                f"{path}/{k} ({child.to_text()}): batch {child.batch} differs from its parent's sub-batch "
                f"{cut.batch}/{cut.subbatches} = {cut.child_batch}"
            )


def _check_layers(workload: Workload, tree: RATree) -> dict[str, int]:
    """Position of every layer's leaf; raises on unknown, repeated or missing layers."""
    position: dict[str, int] = {}
    for k, leaf in enumerate(tree.leaves()):
        if leaf.layer not in workload:
            raise InfeasibleSolution(f"leaf {k} names unknown layer {leaf.layer!r} (workload {workload.name!r})")
        if leaf.layer in position:
            raise InfeasibleSolution(f"layer {leaf.layer!r} has two leaves ({position[leaf.layer]} and {k})")
        position[leaf.layer] = k
    missing = [name for name in workload.names if name not in position]
    if missing:
        raise InfeasibleSolution(f"layer {missing[0]!r} has no leaf ({len(missing)} layers missing)")
    return position


def _check_tiles(tree: RATree, n_tiles: int) -> None:
    need = min_tiles(tree.root)
    if need <= n_tiles:
        return
    path, cut = max(
        ((p, n) for p, n in tree.walk() if isinstance(n, Cut) and n.kind is CutKind.S and min_tiles(n) > n_tiles),
        key=lambda item: item[0].count("/"),
    )
    raise InfeasibleSolution(
        f"{path} ({cut.to_text()}): its children need {min_tiles(cut)} disjoint tiles at least, the mesh has {n_tiles}"
    )
