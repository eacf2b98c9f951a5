"""Atom-to-engine mapping: the per-round assignment against brute force over every placement, zig-zag order."""

from __future__ import annotations

import itertools

import pytest

from accelsched.formulations.atomic_mapping import assign_engines, serpentine, zigzag_engines
from accelsched.formulations.atomic_rounds import greedy_rounds
from accelsched.hardware import load_accelerator
from accelsched.hardware.spec import Mesh
from accelsched.models.registry import load_workload
from accelsched.problems.atomic import PROBLEM, AtomDag, AtomicInstance, check, make_instance
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions

MESH = Mesh(2, 2, hop_energy_pj_per_byte=1.0, link_bandwidth_bytes_per_cycle=16)


def hops(e: int, f: int) -> int:
    return abs(e // 2 - f // 2) + abs(e % 2 - f % 2)


@pytest.mark.parametrize("seed", range(30))
def test_each_round_is_placed_at_least_byte_hops_given_the_earlier_rounds(seed: int) -> None:
    instance = AtomicInstance(AtomDag.random(8, seed, edge_probability=0.4), 4, mesh=MESH)
    mapped = assign_engines(instance, greedy_rounds(instance))
    check(instance, mapped)
    assert mapped.engines is not None
    placed: dict[int, int] = {}
    for members in mapped.rounds:

        def cost(engines: tuple[int, ...], members: tuple[int, ...] = members) -> int:
            where = {**placed, **dict(zip(members, engines, strict=True))}
            return sum(n * hops(where[a], where[b]) for a, b, n in instance.dag.edges if b in members)

        best = min(cost(p) for p in itertools.permutations(range(4), len(members)))
        assert cost(tuple(mapped.engines[a] for a in members)) == best
        placed.update({a: mapped.engines[a] for a in members})


def test_zigzag_places_each_round_on_the_serpentine_order() -> None:
    acc = load_accelerator("atomic-8x8-kc")
    instance = make_instance(load_workload("random:5:2"), acc, {"engines": "16"})
    order = serpentine(instance)
    assert order[:10] == [0, 1, 2, 3, 4, 5, 6, 7, 15, 14]
    mapped = zigzag_engines(instance, greedy_rounds(instance))
    check(instance, mapped)
    assert mapped.engines is not None
    for members in mapped.rounds:
        assert sorted(mapped.engines[a] for a in members) == sorted(order[: len(members)])


def test_methods_place_atoms_on_a_mesh_and_the_evaluator_charges_the_noc() -> None:
    instance = make_instance(load_workload("random:5:2"), load_accelerator("atomic-8x8-kc"), {"engines": "4"})
    result = run_method(PROBLEM, instance, get_method("atomic", "dp"), SolveOptions())
    assert result.solution is not None and result.solution.engines is not None and result.cost is not None
    assert result.cost.noc_byte_hops == PROBLEM.evaluate(instance, result.solution).noc_byte_hops
