"""The partition genome: costs, repairs (components, cycles, capacities, in-situ splits), conversions."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from accelsched.errors import InputError
from accelsched.hardware import load_accelerator
from accelsched.heuristics.partition.space import PartitionSpace
from accelsched.models.builder import NetBuilder
from accelsched.problems.partition import BufferDesign, PartitionInstance, PartitionSolution
from tests.heuristics.partition.helpers import KIB, assert_valid
from tests.problems.partition_oracle import brute_force, small_instance


def diamond() -> PartitionInstance:
    """a -> b -> d, a -> c -> d."""
    b = NetBuilder("diamond", 8, 16, 16)
    a = b.conv(b.input, 8, 3, pad=1, name="a")
    left = b.conv(a, 8, 3, pad=1, name="b")
    right = b.conv(a, 8, 1, name="c")
    b.add(left, right, name="d")
    return PartitionInstance(
        b.build(), load_accelerator("cocco-simba-separate"), BufferDesign.SEPARATE, (1024 * KIB,), (1024 * KIB,)
    )


def test_a_valid_partition_is_left_as_it_is() -> None:
    instance = small_instance(7, 4)
    _, best = brute_force(instance)
    assert best is not None
    space = PartitionSpace(instance)
    genome = space.from_solution(best)
    assert_valid(space, genome)
    assert {frozenset(b) for b in genome.blocks} == {frozenset(b) for b in best.indices(instance)}
    assert space.to_solution(genome).act_capacity_bytes == best.act_capacity_bytes


def test_a_disconnected_group_is_split_into_its_components() -> None:
    space = PartitionSpace(diamond())
    genome = space.normalize([(1, 2), (0,), (3,)], 0, 0)
    assert_valid(space, genome)
    assert genome.blocks == ((0,), (1,), (2,), (3,))


def test_a_cycle_between_groups_is_broken() -> None:
    space = PartitionSpace(diamond())  # {a, b, d} and {c}: a -> c -> d goes out and back in
    genome = space.normalize([(0, 1, 3), (2,)], 0, 0)
    assert_valid(space, genome)
    assert len(genome.blocks) == 3 and (0, 1) in genome.blocks


def test_capacities_too_small_for_a_layer_are_raised_to_the_nearest_pair() -> None:
    instance = small_instance(6, 2, act_kb=(1, 2, 4, 8, 16), weight_kb=(1, 2))
    space = PartitionSpace(instance)
    assert not space.holds_every_layer(0, 0)
    act, weight = space.raise_capacity(0, 0)
    assert space.holds_every_layer(act, weight)
    assert not any(space.holds_every_layer(a, w) for a in range(act + 1) for w in range(2) if a + w < act + weight)
    assert_valid(space, space.singletons(0, 0))


def test_subgraphs_over_capacity_are_split_in_situ() -> None:
    instance = small_instance(8, 5, act_kb=(4,), weight_kb=(1,))
    space = PartitionSpace(instance)
    genome = space.normalize([range(space.n)], 0, 0)
    assert_valid(space, genome)
    assert len(genome.blocks) > 1


def test_block_metric_is_the_problem_metric_or_inf() -> None:
    instance = small_instance(7, 1, act_kb=(2, 4, 8), weight_kb=(1, 2))
    space = PartitionSpace(instance)
    for block in [(0,), (0, 1), (1, 2, 3), tuple(range(7))]:
        for a, act in enumerate(instance.act_candidates_bytes):
            for w, weight in enumerate(instance.weight_candidates_bytes):
                assert space.block_metric(block, a, w) == instance.subgraph_metric(block, act, weight)


@given(n=st.integers(2, 12), seed=st.integers(0, 10_000), shared=st.booleans(), data=st.data())
def test_the_weight_shortcut_agrees_with_the_cost_model(n: int, seed: int, shared: bool, data: st.DataObject) -> None:
    instance = small_instance(n, seed, shared=shared, act_kb=(2, 4, 8, 32), weight_kb=(1, 2, 4))
    assume(instance.infeasibility is None)
    space = PartitionSpace(instance)
    start = data.draw(st.integers(0, n - 1))
    size = data.draw(st.integers(1, n - start))
    block = tuple(range(start, start + size))
    for a, act in enumerate(instance.act_candidates_bytes):
        for w in range(len(space.weights)):
            assert space.block_metric(block, a, w) == instance.subgraph_metric(block, act, space.weights[w])


def test_a_warm_start_off_the_candidates_moves_to_the_nearest() -> None:
    instance = small_instance(6, 0, act_kb=(4, 8), weight_kb=(1, 2))
    space = PartitionSpace(instance)
    names = [layer.name for layer in instance.workload]
    genome = space.from_solution(PartitionSolution(tuple((n,) for n in names), 7 * KIB, 1 * KIB + 100))
    assert (space.acts[genome.act], space.weights[genome.weight]) == (8 * KIB, 1 * KIB)
    assert_valid(space, genome)


@pytest.mark.parametrize(
    ("subgraphs", "message"),
    [
        ((("L0", "nope"),), "unknown layer 'nope'"),
        ((("L0",),), "does not put every layer in exactly one subgraph"),
    ],
)
def test_a_warm_start_that_is_not_a_partition_is_refused(subgraphs: tuple[tuple[str, ...], ...], message: str) -> None:
    space = PartitionSpace(small_instance(6, 0))
    with pytest.raises(InputError, match=message):
        space.from_solution(PartitionSolution(subgraphs, 4 * KIB, KIB))


def test_an_infeasible_instance_has_no_space() -> None:
    with pytest.raises(ValueError, match="no partition fits"):
        PartitionSpace(small_instance(6, 0, act_kb=(1,), weight_kb=(1,)))
