"""The joint atom-to-engine mapping (CP-SAT) against brute force over every placement, and never above the
per-round assignment or the zig-zag order."""

from __future__ import annotations

import itertools

import pytest

from accelsched.formulations.atomic_joint_mapping import joint_engines
from accelsched.formulations.atomic_rounds import greedy_rounds
from accelsched.hardware import load_accelerator
from accelsched.problems.atomic import (
    AtomDag,
    AtomicInstance,
    RoundSchedule,
    assign_engines,
    check,
    hop_matrix,
    placement_byte_hops,
    zigzag_engines,
)
from accelsched.solvers import SolveOptions, Status

KC = load_accelerator("atomic-8x8-kc")
OPTIONS = SolveOptions(time_limit_s=30, threads=1, seed=0)


def brute_force(instance: AtomicInstance, schedule: RoundSchedule) -> int:
    """Least byte-hops over every placement of every round (distinct engines within a round)."""
    hops = hop_matrix(instance)
    per_round = [list(itertools.permutations(range(instance.n_engines), len(r))) for r in schedule.rounds]
    best = None
    for choice in itertools.product(*per_round):
        where = {a: e for members, engines in zip(schedule.rounds, choice, strict=True)
                 for a, e in zip(members, engines, strict=True)}  # fmt: skip
        cost = sum(n * int(hops[where[a], where[b]]) for a, b, n in instance.dag.edges)
        best = cost if best is None else min(best, cost)
    assert best is not None
    return best


@pytest.mark.parametrize("seed", range(12))
def test_the_joint_mapping_is_the_least_byte_hops_and_below_the_greedy_placements(seed: int) -> None:
    engines = 3 + seed % 2  # the first engines of the 8x8 mesh: one row
    instance = AtomicInstance(AtomDag.random(5 + seed % 3, seed, edge_probability=0.5), engines, KC)
    rounds = greedy_rounds(instance)
    joint, status, bound = joint_engines(instance, rounds, OPTIONS, hint=assign_engines(instance, rounds))
    check(instance, joint)
    assert status is Status.OPTIMAL and bound is not None
    value = placement_byte_hops(instance, joint)
    assert value == brute_force(instance, rounds) == bound
    assert value <= placement_byte_hops(instance, assign_engines(instance, rounds))
    assert value <= placement_byte_hops(instance, zigzag_engines(instance, rounds))


def test_the_joint_mapping_needs_a_mesh_and_one_atom_per_engine() -> None:
    abstract = AtomicInstance(AtomDag.random(4, 0), 2)
    with pytest.raises(ValueError, match="needs an instance on a mesh"):
        joint_engines(abstract, greedy_rounds(abstract), OPTIONS)
    crowded = AtomicInstance(AtomDag.random(4, 0, edge_probability=0.0), 2, KC)
    with pytest.raises(ValueError, match="round 0 holds 4 atoms > 2 engines"):
        joint_engines(crowded, RoundSchedule(((0, 1, 2, 3),)), OPTIONS)
