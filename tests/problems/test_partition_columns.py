"""Column enumeration against an independent enumeration of every subset of a small DAG."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest

from accelsched.problems.partition import PartitionInstance
from accelsched.problems.partition_columns import enumerate_columns
from tests.problems.partition_oracle import small_instance


def all_valid_subsets(instance: PartitionInstance) -> set[tuple[int, ...]]:
    """Every weakly connected, convex subset that fits the largest capacities, by brute force."""
    model = instance.cost_model
    n = instance.n_layers
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((p, v) for v, ps in enumerate(model.preds) for p in ps)
    reach = {u: nx.descendants(graph, u) for u in range(n)}
    out = set()
    for size in range(1, n + 1):
        for members in itertools.combinations(range(n), size):
            chosen = set(members)
            if not nx.is_weakly_connected(graph.subgraph(members)):
                continue
            outside = set(range(n)) - chosen
            if any(reach[u] & outside and any(w in reach[x] for x in reach[u] & outside) for u in chosen
                   for w in chosen):  # fmt: skip
                continue  # a path leaves the set and comes back: not convex
            if instance.fits_largest(model.subgraph(members)):
                out.add(members)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_columns_are_exactly_the_valid_subsets(seed: int) -> None:
    instance = small_instance(9, seed, act_kb=(6,), weight_kb=(2,))
    columns = enumerate_columns(instance)
    assert columns.complete
    listed = [c.members for c in columns.columns]
    assert len(listed) == len(set(listed))
    assert set(listed) == all_valid_subsets(instance)


def test_budget_is_reported_not_silently_applied() -> None:
    instance = small_instance(9, 1, act_kb=(64,), weight_kb=(64,))
    full = enumerate_columns(instance)
    assert full.complete and len(full.columns) > 3
    cut = enumerate_columns(instance, budget=3)
    assert not cut.complete
    assert len(cut.columns) <= 3
