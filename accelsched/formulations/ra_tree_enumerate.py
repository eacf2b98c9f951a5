r"""Exhaustive enumeration of RA trees for small networks: the exact optimum, and the tests' oracle.

Space
-----
For every topological order of the layers (the leaves, left to right), every tree
over that order: the root is a T-Cut over the total batch :math:`B` with any
sub-batch number :math:`n \mid B` and an ordered forest of one or more children;
below it, every *shape* (ordered trees whose inner nodes have at least two
children), every cut type (S or T) and every sub-batch number dividing the cut's
batch. Trees that break a rule of the problem (more concurrent leaves than tiles, a
tile buffer that overflows) are skipped; every other tree is evaluated by the shared
cost model, so the minimum is the optimum of the problem.

Counting
--------
With batch 1 and a fixed order, the labeled shapes over :math:`n` leaves number
:math:`a(n)` = 1, 2, 10, 62, 430, 3194, 24850, 199910 (SET's space size,
:func:`accelsched.problems.ra_tree.tree_space_size`; growth :math:`(5 + 2\sqrt 6)^n`).
Here they sit under the root T-Cut (the DRAM cut), whose single child may also be a
T-Cut (one segment fused in time, not the same schedule as the root's own children),
so there are :math:`a(n) + a(n)/2` trees for :math:`n \ge 2` (a labeled shape with
an S root, one with a T root, and the latter's children as the root's own).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from functools import cache

import networkx as nx

from accelsched.hardware.cost.ra_tree import evaluate
from accelsched.problems.base import MethodSpec
from accelsched.problems.ra_tree import (
    PROBLEM,
    Cut,
    CutKind,
    Leaf,
    RANode,
    RATree,
    RATreeInstance,
    min_tiles,
    tile_buffer_bytes,
)
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["DEFAULT_MAX_LAYERS", "METHODS", "all_trees", "solve_enumerate", "trees_in_order"]

DEFAULT_MAX_LAYERS = 6
"""Largest network the method enumerates (the space grows about tenfold per layer)."""


def trees_in_order(leaves: Sequence[str], batch: int) -> Iterator[RATree]:
    """Every RA tree whose leaves are ``leaves`` in this order, over ``batch`` samples."""
    names = tuple(leaves)
    for n in _divisors(batch):
        for children in _forests(names, batch // n, 1):
            yield RATree(Cut(CutKind.T, batch, n, children))


def all_trees(instance: RATreeInstance) -> Iterator[RATree]:
    """Every RA tree of the instance: every topological order, every tree over it."""
    graph = instance.workload.to_networkx()
    for order in nx.all_topological_sorts(graph):
        yield from trees_in_order(order, instance.batch)


@cache
def _divisors(batch: int) -> tuple[int, ...]:
    return tuple(s for s in range(1, batch + 1) if batch % s == 0)


@cache
def _subtrees(leaves: tuple[str, ...], batch: int) -> tuple[RANode, ...]:
    """Every subtree over ``leaves`` (in order) whose samples are ``batch``."""
    if len(leaves) == 1:
        return (Leaf(leaves[0], batch),)
    out: list[RANode] = []
    for kind in (CutKind.S, CutKind.T):
        for n in _divisors(batch):
            out.extend(Cut(kind, batch, n, children) for children in _forests(leaves, batch // n, 2))
    return tuple(out)


@cache
def _forests(leaves: tuple[str, ...], batch: int, min_parts: int) -> tuple[tuple[RANode, ...], ...]:
    """Every sequence of at least ``min_parts`` subtrees covering ``leaves`` in order."""
    out: list[tuple[RANode, ...]] = []
    longest = len(leaves) - 1 if min_parts >= 2 else len(leaves)
    for first in range(1, longest + 1):
        rest = leaves[first:]
        heads = _subtrees(leaves[:first], batch)
        if not rest:
            out.extend((head,) for head in heads)
            continue
        tails = _forests(rest, batch, max(1, min_parts - 1))
        out.extend((head, *tail) for head in heads for tail in tails)
    return tuple(out)


def solve_enumerate(
    instance: RATreeInstance,
    options: SolveOptions,
    warm_start: RATree | None = None,
    *,
    max_layers: int = DEFAULT_MAX_LAYERS,
) -> Result[RATree]:
    """The optimum by evaluating every valid tree (networks of at most ``max_layers`` layers).

    Returns
    -------
    Result
        OPTIMAL (bound = objective); TIME_LIMIT_NO_SOLUTION with the reason (too many
        layers, time limit); INFEASIBLE when no tree fits the tiles.
    """
    start = time.perf_counter()
    n = len(instance.workload)
    if n > max_layers:
        return _none(Status.TIME_LIMIT_NO_SOLUTION, f"too large for exhaustive enumeration ({n} layers > {max_layers})",
                     start, 0)  # fmt: skip
    deadline = None if options.time_limit_s is None else start + options.time_limit_s
    capacity = tile_buffer_bytes(instance.accelerator)
    best: tuple[float, RATree] | None = None
    seen = 0
    for seen, tree in enumerate(all_trees(instance), start=1):
        if deadline is not None and seen % 64 == 0 and time.perf_counter() > deadline:
            return _none(Status.TIME_LIMIT_NO_SOLUTION, f"time limit reached after {seen} trees", start, seen)
        if min_tiles(tree.root) > instance.n_tiles:
            continue
        cost = evaluate(instance, tree)
        if any(need > capacity for s in cost.segments for need in s.tile_buffer_bytes.values()):
            continue
        value = PROBLEM.objective(instance, tree, cost.report)
        if best is None or value < best[0]:
            best = (value, tree)
    if best is None:
        return _none(Status.INFEASIBLE, f"none of the {seen} trees fits the tiles", start, seen)
    value, tree = best
    return Result(
        Status.OPTIMAL,
        PROBLEM.name,
        "enumerate",
        solution=tree,
        objective=value,
        bound=value,
        runtime_s=time.perf_counter() - start,
        stats=SolveStats(iterations=seen, native_status=f"optimal over {seen} trees"),
    )


def _none(status: Status, reason: str, start: float, seen: int) -> Result[RATree]:
    return Result.no_solution(
        status, PROBLEM.name, "enumerate", reason, runtime_s=time.perf_counter() - start, iterations=seen
    )


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "enumerate",
        PROBLEM.name,
        "exact",
        solve_enumerate,
        f"every RA tree (orders x shapes x cut types x sub-batches) of networks up to {DEFAULT_MAX_LAYERS} layers",
    ),
)
"""The enumeration method: ``enumerate``."""
