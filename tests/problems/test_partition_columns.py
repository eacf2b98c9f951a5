"""Column enumeration against an independent enumeration of every subset of a small DAG."""

from __future__ import annotations

import itertools
import math
import random
import time

import networkx as nx
import pytest

from accelsched.problems.partition import PartitionInstance
from accelsched.problems.partition_columns import FootprintBound, enumerate_columns
from tests.problems.partition_oracle import small_instance


def all_valid_subsets(instance: PartitionInstance) -> set[tuple[int, ...]]:
    """Every weakly connected, convex subset that fits the largest capacities, by brute force."""
    model = instance.cost_model
    n = instance.n_layers
    graph: nx.DiGraph[int] = nx.DiGraph()
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


@pytest.mark.parametrize("budget", [5, 14, 30, 60, 90])
def test_a_stopped_search_lists_every_column_below_its_size(budget: int) -> None:
    instance = small_instance(12, budget, act_kb=(64,), weight_kb=(64,))
    everything = all_valid_subsets(instance)
    cut = enumerate_columns(instance, budget=budget)
    assert not cut.complete and 1 <= cut.listed_below <= instance.n_layers
    assert cut.listed_below >= (2 if budget > instance.n_layers else 1)  # the single layers come first
    listed = {c.members for c in cut.columns}
    assert {m for m in everything if len(m) < cut.listed_below} <= listed
    assert enumerate_columns(instance).listed_below == instance.n_layers + 1


@pytest.mark.parametrize("seed", range(6))
def test_footprint_bound_is_below_the_footprint_and_grows_with_the_set(seed: int) -> None:
    instance = small_instance(10, seed, act_kb=(1024,), weight_kb=(1024,))
    model = instance.cost_model
    bound = FootprintBound(model)
    rng = random.Random(seed)
    for _ in range(200):
        members = sorted(rng.sample(range(10), rng.randint(2, 9)))
        cost = model.subgraph(members)
        acts = bound.activation_bytes(members)
        assert acts <= cost.resident.act_bytes + 1e-6
        assert bound.weight_bytes(members) == cost.resident.weight_bytes
        bigger = sorted({*members, rng.randrange(10)})
        assert bound.activation_bytes(bigger) >= acts - 1e-6


def test_footprint_bound_is_tight_without_strides() -> None:
    """With stride-1 consumers every update offset is 1 and the bound is the footprint."""
    instance = small_instance(9, 1, act_kb=(1024,), weight_kb=(1024,))
    model = instance.cost_model
    strides = {layer.stride_y for layer in model.layers}
    assert strides == {1}
    bound = FootprintBound(model)
    column = max(enumerate_columns(instance).columns, key=lambda c: len(c.members))
    assert len(column.members) == 9
    assert math.ceil(bound.activation_bytes(column.members)) == column.cost.resident.act_bytes


def test_a_passed_deadline_stops_the_search() -> None:
    instance = small_instance(9, 1, act_kb=(64,), weight_kb=(64,))
    cut = enumerate_columns(instance, deadline=time.perf_counter() - 1.0)
    assert not cut.complete and cut.visited == 0
    assert cut.stopped == "time limit reached during column enumeration"
