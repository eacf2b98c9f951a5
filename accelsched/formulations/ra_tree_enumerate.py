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
from dataclasses import dataclass
from functools import cache

import networkx as nx

from accelsched.problems.base import MethodSpec
from accelsched.problems.ra_tree import PROBLEM, RATreeInstance, buffer_overflow, evaluate_tree
from accelsched.problems.ra_tree.tree import Cut, CutKind, Leaf, RANode, RATree, min_tiles
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["METHODS", "RATreeEnumerateParams", "all_trees", "solve_enumerate", "trees_in_order"]


@dataclass(frozen=True)
class RATreeEnumerateParams:
    """Parameters of the enumeration, validated at construction.

    Parameters
    ----------
    max_layers
        Largest network enumerated, >= 1 (the space grows about tenfold per layer); a
        larger one is TIME_LIMIT_NO_SOLUTION without an evaluation.
    """

    max_layers: int = 6

    def __post_init__(self) -> None:
        value = self.max_layers
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"RATreeEnumerateParams: field max_layers must be an integer >= 1, got {value!r}")


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
    params: RATreeEnumerateParams | None = None,
) -> Result[RATree]:
    """The optimum by evaluating every valid tree (networks of at most ``params.max_layers`` layers).

    Returns
    -------
    Result
        OPTIMAL (bound = objective); TIME_LIMIT_NO_SOLUTION with the reason (too many
        layers, time limit); INFEASIBLE when no tree fits the tiles.
    """
    start = time.perf_counter()
    n = len(instance.workload)
    max_layers = (params or RATreeEnumerateParams()).max_layers
    if n > max_layers:
        reason = f"too large for exhaustive enumeration ({n} layers > {max_layers})"
        return Result.no_solution(Status.TIME_LIMIT_NO_SOLUTION, PROBLEM.name, "enumerate", reason, iterations=0)
    deadline = None if options.time_limit_s is None else start + options.time_limit_s
    best: tuple[float, RATree] | None = None
    seen = 0
    for seen, tree in enumerate(all_trees(instance), start=1):
        if deadline is not None and seen % 64 == 0 and time.perf_counter() > deadline:
            reason = f"time limit reached after {seen} trees"
            return Result.no_solution(Status.TIME_LIMIT_NO_SOLUTION, PROBLEM.name, "enumerate", reason, iterations=seen)
        if min_tiles(tree.root) > instance.n_tiles:
            continue
        cost = evaluate_tree(instance, tree)
        if buffer_overflow(instance, cost.segments):
            continue
        value = PROBLEM.objective(instance, tree, cost.report)
        if best is None or value < best[0]:
            best = (value, tree)
    if best is None:
        reason = f"none of the {seen} trees fits the tiles"
        return Result.no_solution(Status.INFEASIBLE, PROBLEM.name, "enumerate", reason, iterations=seen)
    value, tree = best
    return Result(
        Status.OPTIMAL,
        PROBLEM.name,
        "enumerate",
        solution=tree,
        objective=value,
        bound=value,
        stats=SolveStats(iterations=seen, native_status=f"optimal over {seen} trees"),
    )


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "enumerate",
        PROBLEM.name,
        "exact",
        solve_enumerate,
        f"every RA tree (orders x shapes x cut types x sub-batches) of networks up to "
        f"{RATreeEnumerateParams().max_layers} layers",
    ),
)
"""The enumeration method: ``enumerate``."""
