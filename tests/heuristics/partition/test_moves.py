"""Cocco's operators keep genomes valid, on random DAGs, buffers and capacity lists (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from accelsched.heuristics.partition.moves import (
    MoveParams,
    crossover,
    merge_subgraph,
    modify_node,
    mutate,
    mutate_capacity,
    random_genome,
    split_subgraph,
)
from accelsched.heuristics.partition.space import PartitionSpace
from accelsched.problems.partition import Metric
from tests.heuristics.partition.helpers import assert_valid
from tests.problems.partition_oracle import small_instance

CAPACITIES = st.sampled_from([((4,), (1,)), ((2, 4, 8), (1, 2)), ((8,), (4,)), ((3, 6, 12, 24), (1, 2, 4))])


@st.composite
def spaces(draw: st.DrawFn) -> PartitionSpace:
    act, weight = draw(CAPACITIES)
    shared = draw(st.booleans())
    instance = small_instance(
        draw(st.integers(1, 14)),
        draw(st.integers(0, 100_000)),
        shared=shared,
        metric=draw(st.sampled_from(Metric)),
        act_kb=act,
        weight_kb=weight,
    )
    assume(instance.infeasibility is None)
    return PartitionSpace(instance)


@given(space=spaces(), seed=st.integers(0, 2**32 - 1))
def test_every_operator_returns_a_valid_genome(space: PartitionSpace, seed: int) -> None:
    rng = np.random.default_rng(seed)
    params = MoveParams()
    a, b = random_genome(space, params, rng), random_genome(space, params, rng)
    assert_valid(space, a)
    assert_valid(space, b)
    assert_valid(space, crossover(space, a, b, params, rng))
    for move in (modify_node, split_subgraph, merge_subgraph):
        child = move(space, a, rng)
        if child is not None:
            assert_valid(space, child)
    child = mutate_capacity(space, a, params, rng)
    assert (child is None) == (len(space.acts) == 1 and len(space.weights) == 1)
    if child is not None:
        assert_valid(space, child)


@given(space=spaces(), seed=st.integers(0, 2**32 - 1))
def test_long_chains_of_moves_stay_valid(space: PartitionSpace, seed: int) -> None:
    rng = np.random.default_rng(seed)
    params = MoveParams(crossover_points=3)
    genome = random_genome(space, params, rng)
    other = random_genome(space, params, rng)
    for _ in range(15):
        genome = mutate(space, genome, params, rng) or genome
        genome, other = crossover(space, genome, other, params, rng), genome
    assert_valid(space, genome)


def test_moves_that_cannot_apply_say_so() -> None:
    space = PartitionSpace(small_instance(1, 0))
    rng = np.random.default_rng(0)
    genome = space.singletons(0, 0)
    assert modify_node(space, genome, rng) is None
    assert split_subgraph(space, genome, rng) is None
    assert merge_subgraph(space, genome, rng) is None
    assert mutate(space, genome, MoveParams(), rng) is None


def test_merge_joins_two_adjacent_subgraphs_and_split_undoes_it() -> None:
    space = PartitionSpace(small_instance(3, 0, act_kb=(64,), weight_kb=(64,)))
    rng = np.random.default_rng(0)
    merged = merge_subgraph(space, space.singletons(0, 0), rng)
    assert merged is not None and len(merged.blocks) == 2
    split = split_subgraph(space, merged, rng)
    assert split is not None and len(split.blocks) == 3


def test_crossover_averages_the_capacities() -> None:
    space = PartitionSpace(small_instance(6, 1, act_kb=(16, 32, 48, 64), weight_kb=(8, 16, 24)))
    rng = np.random.default_rng(0)
    a, b = space.singletons(0, 0), space.singletons(2, 2)
    child = crossover(space, a, b, MoveParams(), rng)
    assert (child.act, child.weight) == (1, 1)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"new_subgraph_low": 0.6, "new_subgraph_high": 0.5}, "new_subgraph_low=0.6 is above"),
        ({"dse_sigma": 0.0}, "dse_sigma must be > 0"),
        ({"crossover_points": -1}, "crossover_points must be an integer >= 0"),
        ({"new_subgraph_high": 2.0}, r"new_subgraph_high must be a number in \[0, 1\]"),
    ],
)
def test_bad_move_parameters_are_named(fields: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MoveParams(**fields)  # type: ignore[arg-type]
