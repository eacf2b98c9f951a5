"""An independent brute-force oracle for the partition problem, for tests only.

It shares nothing with the exact models but the problem's ``check`` and the shared
evaluator: it lists every set partition of the layers (restricted growth strings),
orders the blocks topologically when the block graph is acyclic, and tries every
candidate capacity (pair). Only for tiny workloads (Bell(8) = 4140 partitions).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import networkx as nx

from accelsched.errors import InfeasibleSolution
from accelsched.hardware import load_accelerator
from accelsched.models.random_dag import random_workload
from accelsched.problems.partition import (
    BufferDesign,
    Metric,
    PartitionInstance,
    PartitionSolution,
    check,
    evaluate,
    objective,
)

MAX_LAYERS = 8


def set_partitions(n: int) -> Iterator[list[list[int]]]:
    """Every partition of ``range(n)`` into non-empty blocks, each once."""

    def grow(i: int, blocks: list[list[int]]) -> Iterator[list[list[int]]]:
        if i == n:
            yield [list(b) for b in blocks]
            return
        for b in blocks:
            b.append(i)
            yield from grow(i + 1, blocks)
            b.pop()
        blocks.append([i])
        yield from grow(i + 1, blocks)
        blocks.pop()

    yield from grow(0, [])


def _ordered(instance: PartitionInstance, blocks: list[list[int]]) -> list[list[int]] | None:
    """The blocks in a topological order of the block graph, or None when it has a cycle."""
    where = {i: k for k, block in enumerate(blocks) for i in block}
    graph: nx.DiGraph[int] = nx.DiGraph()
    graph.add_nodes_from(range(len(blocks)))
    for v, preds in enumerate(instance.cost_model.preds):
        for p in preds:
            if where[p] != where[v]:
                graph.add_edge(where[p], where[v])
    if not nx.is_directed_acyclic_graph(graph):
        return None
    return [blocks[k] for k in nx.topological_sort(graph)]


def brute_force(
    instance: PartitionInstance, admits: Callable[[tuple[int, ...]], bool] | None = None
) -> tuple[float, PartitionSolution | None]:
    """Optimal objective and one optimal solution (``inf, None`` when nothing is feasible); with
    ``admits``, over the partitions whose every block (sorted layer indices) it admits."""
    n = instance.n_layers
    if n > MAX_LAYERS:
        raise ValueError(f"brute force is for at most {MAX_LAYERS} layers, got {n}")
    best, best_solution = math.inf, None
    for blocks in set_partitions(n):
        if admits is not None and not all(admits(tuple(sorted(block))) for block in blocks):
            continue
        ordered = _ordered(instance, blocks)
        if ordered is None:
            continue
        for act, weight in instance.capacity_pairs():
            solution = PartitionSolution.from_indices(instance, ordered, act, weight)
            try:
                check(instance, solution)
            except InfeasibleSolution:
                continue
            value = objective(instance, solution, evaluate(instance, solution))
            if math.isinf(best) or value < best - 1e-9 * max(1.0, abs(best)):
                best, best_solution = value, solution
    return best, best_solution


def small_instance(
    n_layers: int,
    seed: int,
    *,
    shared: bool = False,
    metric: Metric = Metric.EMA,
    act_kb: tuple[int, ...] = (4,),
    weight_kb: tuple[int, ...] = (1,),
    alpha: float = 0.002,
    batch: int = 1,
) -> PartitionInstance:
    """A seeded random DAG with small channels and rows on the Cocco core, with tight buffers
    (in KB) so that capacities and modes matter."""
    workload = random_workload(n_layers, seed, channels=(4, 8, 16, 32), height=16, width=16, batch=batch)
    preset = "cocco-simba-shared" if shared else "cocco-simba-separate"
    return PartitionInstance(
        workload,
        load_accelerator(preset),
        BufferDesign.SHARED if shared else BufferDesign.SEPARATE,
        tuple(kb * 1024 for kb in act_kb),
        () if shared else tuple(kb * 1024 for kb in weight_kb),
        metric,
        alpha,
    )
