"""The atomic DP heuristic (method ``dp``): valid, never below the optimum, bounded by its memo limit."""

from __future__ import annotations

import dataclasses

import pytest

from accelsched.formulations.atomic_rounds import greedy_rounds
from accelsched.hardware import load_accelerator
from accelsched.heuristics.atomic_dp import DPParams, dp_rounds
from accelsched.models.builder import NetBuilder
from accelsched.models.registry import load_workload
from accelsched.problems.atomic import PROBLEM, AtomDag, AtomicInstance, check, lower_bounds, place_and_buffer
from accelsched.registry import get_method, make_instance, run_method
from accelsched.solvers import SolveOptions, Status
from tests.formulations.test_atomic_exact import SEEDS, brute_force, random_instance
from tests.problems.atomic.helpers import KC

DP = get_method("atomic", "dp")


def test_the_dp_is_never_below_the_optimum_and_often_reaches_it() -> None:
    reached = 0
    for seed in SEEDS:
        instance = random_instance(seed)
        result = run_method(PROBLEM, instance, DP, SolveOptions())  # checked and re-evaluated
        assert result.status is Status.FEASIBLE and result.objective is not None
        optimum = brute_force(instance)
        assert result.objective >= optimum
        reached += result.objective == optimum
    assert reached >= 0.95 * len(SEEDS), reached  # a regression of the candidates shows here


def test_the_memo_limit_turns_the_dp_into_the_critical_path_greedy() -> None:
    instance = AtomicInstance(AtomDag.random(30, 3, edge_probability=0.1), 4)
    bounded, stats = dp_rounds(instance, DPParams(max_states=1))
    check(instance, bounded)
    assert stats.mode == "full" and stats.states == len(bounded.rounds) + 1  # one state per round, plus the last
    free, more = dp_rounds(instance)
    latency = [PROBLEM.evaluate(instance, s).latency_cycles for s in (bounded, free, greedy_rounds(instance))]
    assert more.states > stats.states and latency[1] <= latency[0]
    with pytest.raises(ValueError, match="max_states must be >= 1"):
        DPParams(max_states=0)
    with pytest.raises(ValueError, match="horizon must be >= 1"):
        DPParams(horizon=0)


@pytest.mark.parametrize("seed", range(6))
def test_the_rolling_horizon_is_valid_and_never_worse_than_its_greedy(seed: int) -> None:
    instance = AtomicInstance(AtomDag.random(80, seed, edge_probability=0.05), 2 + seed % 4)
    greedy, _ = dp_rounds(instance, DPParams(full_atoms=0, max_candidates=1))
    for horizon in (1, 2):
        rolled, stats = dp_rounds(instance, DPParams(full_atoms=0, horizon=horizon))
        check(instance, rolled)
        assert stats.mode.startswith(f"rolling horizon {horizon}")
        assert stats.compute_latency_cycles == PROBLEM.evaluate(instance, rolled).latency_cycles
        assert stats.compute_latency_cycles <= PROBLEM.evaluate(instance, greedy).latency_cycles
        assert stats.compute_latency_cycles >= max(lower_bounds(instance))


def test_samples_in_flight_hold_the_rest_back_and_the_method_keeps_the_best_limit() -> None:
    instance = make_instance(PROBLEM, load_workload("random:3:1", batch=3), load_accelerator("atomic-8x8-kc"),
                             {"engines": "4", "atoms": "exact"})  # fmt: skip
    dag = instance.dag
    rounds, _ = dp_rounds(instance, DPParams(full_atoms=0, in_flight=1))
    check(instance, rounds)
    last = {s: max(r for r, members in enumerate(rounds.rounds) for a in members if dag.atoms[a].sample == s)
            for s in range(3)}  # fmt: skip
    first = {s: min(r for r, members in enumerate(rounds.rounds) for a in members if dag.atoms[a].sample == s)
             for s in range(3)}  # fmt: skip
    assert last[0] < first[1] and last[1] < first[2]  # one sample at a time
    result = run_method(PROBLEM, instance, DP, SolveOptions())
    assert "samples in flight" in result.stats.native_status
    with pytest.raises(ValueError, match="in_flight must be >= 1"):
        DPParams(in_flight=0)


def test_rounds_valued_with_their_hbm_weights_keep_the_atoms_of_a_weight_block_together() -> None:
    """A 1x1 convolution 64 -> 256 on 8x8 cut into 4 row pairs x 8 output-channel blocks on 4 engines behind a
    4 B/cycle HBM: valued by compute alone every round holds 4 blocks; valued with its weights (a block read once
    per round and multicast) the DP puts the row pairs of one block together, and the evaluator agrees."""
    b = NetBuilder("wide", 64, 8, 8)
    b.conv(b.input, 256, 1, name="w")
    slow = KC.replace(offchip=dataclasses.replace(KC.offchip, bandwidth_bytes_per_cycle=4))
    instance = make_instance(PROBLEM, b.build(), slow, {"engines": "4", "atom": "2,8,64,32"})
    latency, blocks = [], []
    for params in (DPParams(), DPParams(hbm_bytes_per_cycle=4)):
        rounds, _ = dp_rounds(instance, params)
        latency.append(PROBLEM.evaluate(instance, place_and_buffer(instance, rounds)).latency_cycles)
        blocks.append(sum(len({instance.dag.atoms[a].weight_key for a in r}) for r in rounds.rounds))
    assert latency[1] < latency[0] and blocks[1] < blocks[0]
    result = run_method(PROBLEM, instance, DP, SolveOptions())
    assert result.objective == min(latency) and "compute and HBM weights" in result.stats.native_status
    with pytest.raises(ValueError, match="hbm_bytes_per_cycle must be > 0"):
        DPParams(hbm_bytes_per_cycle=0)
