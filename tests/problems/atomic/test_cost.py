"""The round evaluator against the shared transfer primitives: rounds, pipelined rounds, HBM, weights, buffers."""

from __future__ import annotations

import pytest

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.hardware.cost.transfer import core_to_core, dram_to_core
from accelsched.problems.atomic import (
    PROBLEM,
    AtomicInstance,
    RoundSchedule,
    atomic_metrics,
    buffer_occupancy,
    check,
    make_instance,
    simulate,
)
from tests.problems.atomic.helpers import KC, chain, tiny, with_buffer


def test_rounds_last_as_their_slowest_atom_and_an_engine_runs_its_atoms_in_turn() -> None:
    instance = tiny()
    schedule = RoundSchedule(((0, 1), (2,)), engines=(0, 1, 1))
    check(instance, schedule)
    report = PROBLEM.evaluate(instance, schedule)
    assert report.latency_cycles == 5 + 4
    assert report.energy_pj == pytest.approx(3.0) and report.utilization == pytest.approx(12 / (2 * 9))
    # one pipelined round: engine 0 runs atom 0 then atom 2 (its consumer), engine 1 runs atom 1 meanwhile
    piped = RoundSchedule(((0, 1, 2),), engines=(0, 1, 0))
    check(instance, piped)
    run = simulate(instance, piped)
    assert list(run.start_cycles) == [0, 0, 5] and run.latency_cycles == 9
    crossed = RoundSchedule(((0, 1, 2),), engines=(0, 1, 1))  # atom 2 waits for atom 1 on its engine and for atom 0
    assert simulate(instance, crossed).latency_cycles == 5 + 4
    assert RoundSchedule.from_dict(schedule.to_dict()) == schedule
    with pytest.raises(InputError, match="not an atomic round schedule"):
        RoundSchedule.from_dict({"rounds": "x"})


def test_transfers_and_hbm_are_priced_by_the_shared_primitives() -> None:
    """Atom a (network input, weights) on engine 1, then b (its consumer, a network output) on engine 2."""
    instance = make_instance(chain(), KC, {"engines": "4", "atom": "8,8,32,32"})
    a, b = instance.dag.atoms
    ((_, _, edge),) = instance.dag.edges
    schedule = RoundSchedule(((0,), (1,)), engines=(1, 2))
    check(instance, schedule)
    run = simulate(instance, schedule)
    load_a = dram_to_core(KC, 1, a.weight_bytes + a.network_input_bytes)
    load_b = max(core_to_core(KC, 1, 2, edge).cycles, dram_to_core(KC, 2, b.weight_bytes).cycles)
    store_b = dram_to_core(KC, 2, b.output_bytes)
    assert list(run.load_cycles) == pytest.approx([load_a.cycles, load_b])
    assert list(run.store_cycles) == pytest.approx([0.0, store_b.cycles])
    assert run.latency_cycles == pytest.approx(load_a.cycles + a.duration_cycles + load_b + b.duration_cycles
                                               + store_b.cycles)  # fmt: skip
    report = run.report
    hbm = a.weight_bytes + a.network_input_bytes + b.weight_bytes + b.output_bytes
    assert report.dram_bytes == hbm
    transfers = [load_a, core_to_core(KC, 1, 2, edge), dram_to_core(KC, 2, b.weight_bytes), store_b]
    filled = a.weight_bytes + a.network_input_bytes + edge + b.weight_bytes
    sram_fill = filled * KC.cores[0].memory("sram").write_energy_pj_per_byte
    expected = a.energy_pj + b.energy_pj + sum(t.energy_pj for t in transfers) + sram_fill
    assert report.energy_pj == pytest.approx(expected)
    assert report.noc_byte_hops == pytest.approx(sum(t.byte_hops for t in transfers))
    assert report.utilization == pytest.approx((a.macs + b.macs) / (4 * 256 * report.latency_cycles))
    # written back: a's output goes to HBM and b reads it from there (no NoC transfer between the engines)
    through = simulate(instance, RoundSchedule(((0,), (1,)), engines=(1, 2), write_back=frozenset({0})))
    assert through.report.dram_bytes == hbm + 2 * edge and through.onchip_bytes == 0
    metrics = atomic_metrics(instance, schedule)
    # b's transfer over the mesh hides behind its longer load of weights from HBM: the NoC adds no time here
    assert metrics.onchip_reuse == 1.0 and metrics.noc_overhead == 0 and 0 < metrics.hbm_stall_share < 1


def test_an_engine_keeps_its_weights_for_the_next_atom_of_the_same_block() -> None:
    instance = make_instance(chain().with_batch(2), KC, {"engines": "2", "atom": "8,8,32,32"})
    a0, a1 = instance.dag.groups["a", 0][0], instance.dag.groups["a", 1][0]
    same = simulate(instance, RoundSchedule(((a0,), (a1,), (2,), (3,)), engines=(0, 0, 0, 0)))
    apart = simulate(instance, RoundSchedule(((a0,), (a1,), (2,), (3,)), engines=(0, 1, 0, 0)))
    weight = instance.dag.atoms[a0].weight_bytes
    assert same.hbm_read_bytes[a1] == apart.hbm_read_bytes[a1] - weight


def test_the_buffer_holds_outputs_until_their_last_consumer_and_the_rule_names_the_overflow() -> None:
    instance = make_instance(chain().with_batch(2), KC, {"engines": "2", "atom": "8,8,32,32"})
    dag = instance.dag
    schedule = RoundSchedule(((0, 1), (2, 3)), engines=(0, 1, 0, 1))
    held = buffer_occupancy(instance, schedule)
    assert held is not None
    a, b = dag.atoms[0], dag.atoms[2]
    # round 0: a's working set (its output kept for round 1); round 1: a's output, held, is all b reads, plus b's
    # weights and output
    assert held[0, 0] == a.input_bytes + a.weight_bytes + a.output_bytes
    assert held[0, 1] == a.output_bytes + b.weight_bytes + b.output_bytes
    tight = AtomicInstance(dag, 2, with_buffer(KC, int(held[0, 0]) - 1), instance.workload, instance.sizes)
    with pytest.raises(InfeasibleSolution, match=r"rule 4: engine 0 holds [\d,]+ bytes in round 0"):
        check(tight, schedule)
