"""Placement and buffering: the per-round assignment against brute force over every placement, the zig-zag order,
Algorithm 3's write-backs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from accelsched.formulations.atomic_rounds import greedy_rounds
from accelsched.hardware import load_accelerator
from accelsched.models.builder import NetBuilder
from accelsched.models.registry import load_workload
from accelsched.problems.atomic import (
    PROBLEM,
    AtomDag,
    AtomicInstance,
    RoundSchedule,
    assign_engines,
    buffer_occupancy,
    buffer_overflow,
    check,
    evict,
    hop_matrix,
    make_instance,
    placement_byte_hops,
    serpentine,
    zigzag_engines,
)
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions
from tests.problems.atomic.helpers import with_buffer

KC = load_accelerator("atomic-8x8-kc")


def on_mesh(dag: AtomDag, engines: int = 4) -> AtomicInstance:
    """``dag`` on the first engines of the 8x8 mesh (one row: hops are index differences)."""
    return AtomicInstance(dag, engines, KC)


@pytest.mark.parametrize("seed", range(30))
def test_each_round_is_placed_at_least_byte_hops_given_the_earlier_rounds(seed: int) -> None:
    instance = on_mesh(AtomDag.random(8, seed, edge_probability=0.4))
    mapped = assign_engines(instance, greedy_rounds(instance))
    check(instance, mapped)
    assert mapped.engines is not None
    hops = hop_matrix(instance)
    placed: dict[int, int] = {}
    for members in mapped.rounds:

        def cost(engines: tuple[int, ...], members: tuple[int, ...] = members) -> int:
            where = {**placed, **dict(zip(members, engines, strict=True))}
            return sum(n * int(hops[where[a], where[b]]) for a, b, n in instance.dag.edges if b in members)

        best = min(cost(p) for p in itertools.permutations(range(4), len(members)))
        assert cost(tuple(mapped.engines[a] for a in members)) == best
        placed.update({a: mapped.engines[a] for a in members})
    assert placement_byte_hops(instance, mapped) == sum(
        n * int(hops[mapped.engines[a], mapped.engines[b]]) for a, b, n in instance.dag.edges
    )


def test_zigzag_places_each_round_on_the_serpentine_order() -> None:
    instance = make_instance(load_workload("random:5:2"), KC, {"engines": "16"})
    order = serpentine(instance)
    assert order[:10] == [0, 1, 2, 3, 4, 5, 6, 7, 15, 14]
    mapped = zigzag_engines(instance, greedy_rounds(instance))
    check(instance, mapped)
    assert mapped.engines is not None
    for members in mapped.rounds:
        assert sorted(mapped.engines[a] for a in members) == sorted(order[: len(members)])
    with pytest.raises(ValueError, match="needs one atom per engine"):
        assign_engines(instance, RoundSchedule((tuple(range(len(instance.dag.atoms))),)))


def test_methods_place_atoms_on_a_mesh_and_the_evaluator_charges_the_noc() -> None:
    instance = make_instance(load_workload("random:5:2"), KC, {"engines": "4"})
    result = run_method(PROBLEM, instance, get_method("atomic", "dp"), SolveOptions())
    assert result.solution is not None and result.solution.engines is not None and result.cost is not None
    assert result.cost.noc_byte_hops == PROBLEM.evaluate(instance, result.solution).noc_byte_hops


def fan_out() -> AtomicInstance:
    """A 16x16x64 map read by three later layers: its atoms' outputs wait on one engine for their readers."""
    b = NetBuilder("fan", 64, 16, 16)
    x = b.conv(b.input, 64, 1, name="x")
    y = b.conv(x, 64, 1, name="y")
    z = b.conv(y, 64, 1, name="z")
    b.add(x, z, name="sum")
    return make_instance(b.build(), KC, {"engines": "1", "atom": "4,16,64,64"})


def test_writing_back_frees_the_buffer_and_never_holds_more_anywhere() -> None:
    instance = fan_out()
    dag = instance.dag
    rounds = RoundSchedule(tuple((a,) for a in dag.topological_order), engines=(0,) * len(dag.atoms))
    held = buffer_occupancy(instance, rounds)
    assert held is not None and held.max() > 0
    rng = np.random.default_rng(0)
    for _ in range(20):
        chosen = frozenset(int(a) for a in rng.choice(len(dag.atoms), size=4, replace=False))
        fewer = buffer_occupancy(instance, RoundSchedule(rounds.rounds, rounds.engines, chosen))
        assert fewer is not None and (fewer <= held + 1e-9).all()


def test_algorithm_3_writes_back_the_largest_size_times_time_to_reuse_until_the_rounds_fit() -> None:
    instance = fan_out()
    dag = instance.dag
    rounds = RoundSchedule(tuple((a,) for a in dag.topological_order), engines=(0,) * len(dag.atoms))
    held = buffer_occupancy(instance, rounds)
    assert held is not None
    capacity = KC.cores[0].top_capacity_bytes
    assert held.max() <= capacity  # fits as is: nothing to write back
    assert evict(instance, rounds) == rounds
    # a buffer that holds the peak less a bit: x's outputs, read last by "sum", go first (they wait longest)
    tight = AtomicInstance(dag, 1, with_buffer(KC, int(held.max()) - 1), instance.workload, instance.sizes)
    assert buffer_overflow(tight, rounds) is not None
    buffered = evict(tight, rounds)
    check(tight, buffered)
    assert buffered.write_back and {dag.atoms[a].layer for a in buffered.write_back} == {"x"}
