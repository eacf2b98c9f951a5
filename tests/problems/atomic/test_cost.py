"""The round evaluator against the shared transfer primitives: rounds, pipelined rounds, HBM, weights, buffers."""

from __future__ import annotations

import dataclasses

import pytest

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.hardware.cost.transfer import core_to_core, dram_to_core
from accelsched.models.builder import NetBuilder
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
    """Atom a (network input, weights) on engine 1, then b (its consumer, a network output) on engine 2: each is its
    engine's first atom, so its reads are exposed before its computation, and b's write, with no later round on its
    engine to drain in, after it."""
    instance = make_instance(chain(), KC, {"engines": "4", "atom": "8,8,32,32"})
    a, b = instance.dag.atoms
    ((_, _, edge),) = instance.dag.edges
    schedule = RoundSchedule(((0,), (1,)), engines=(1, 2))
    check(instance, schedule)
    run = simulate(instance, schedule)
    load_a = dram_to_core(KC, 1, a.weight_bytes + a.network_input_bytes)
    noc_b = core_to_core(KC, 1, 2, edge).cycles
    read_b = dram_to_core(KC, 2, b.weight_bytes).cycles
    store_b = dram_to_core(KC, 2, b.output_bytes)
    # load = NoC + exposed reads before the computation, store = the exposed write after it
    assert list(run.load_cycles) == pytest.approx([load_a.cycles, noc_b + read_b])
    assert list(run.hbm_cycles) == pytest.approx([load_a.cycles, read_b + store_b.cycles])
    assert list(run.store_cycles) == pytest.approx([0.0, store_b.cycles])
    assert run.latency_cycles == pytest.approx(load_a.cycles + a.duration_cycles
                                               + noc_b + read_b + b.duration_cycles + store_b.cycles)  # fmt: skip
    assert run.latency_cycles == pytest.approx(705 + 2304 + 129 + 578 + 2304 + 130)  # by hand, 6,150 cycles
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
    # the exposed HBM transfers add their time; b's NoC load (its producer ran in the round before) precedes b
    assert metrics.hbm_stall_share == pytest.approx((load_a.cycles + read_b + store_b.cycles) / run.latency_cycles)
    assert metrics.onchip_reuse == 1.0 and metrics.noc_overhead == pytest.approx(noc_b / run.latency_cycles)


def test_the_transfers_of_a_round_share_the_hbm_channel_fairly() -> None:
    """Two convolutions of the network input, 16 and 32 output channels, in one round on two engines:
    processor sharing, the smaller transfer ends after twice its bytes over the bandwidth, the larger after both."""
    b = NetBuilder("fork", 16, 8, 8)
    b.conv(b.input, 16, 3, pad=1, name="narrow")
    b.conv(b.input, 32, 3, pad=1, name="wide")
    slow = KC.replace(offchip=dataclasses.replace(KC.offchip, bandwidth_bytes_per_cycle=1))
    instance = make_instance(b.build(), slow, {"engines": "4", "atom": "8,8,16,32"})
    schedule = RoundSchedule(((0, 1),), engines=(0, 1))
    check(instance, schedule)
    run = simulate(instance, schedule)
    moved = run.hbm_read_bytes + run.hbm_write_bytes
    small, large = sorted(moved)
    assert small < large and sorted(run.hbm_cycles) == pytest.approx([2 * small, small + large])


def test_an_engines_first_atom_pays_its_load_and_then_its_computation() -> None:
    """One atom alone: its weights and input cannot be prefetched (no earlier round), so it takes load + compute,
    not max(load, compute), even when its load is shorter than its computation."""
    instance = make_instance(chain(), KC, {"engines": "4", "atom": "8,8,32,32"})
    a = instance.dag.atoms[0]
    run = simulate(instance, RoundSchedule(((0,), (1,)), engines=(1, 1)))
    load_a = dram_to_core(KC, 1, a.weight_bytes + a.network_input_bytes).cycles
    assert 0 < load_a < a.duration_cycles
    assert run.round_end_cycles[0] == pytest.approx(load_a + a.duration_cycles)


def test_the_next_atoms_reads_are_prefetched_during_the_round_before_and_a_last_write_is_exposed() -> None:
    """A 2 B/cycle HBM, a then b on engine 1. Round 0: a's reads (weights and network input, 11,264 B) exposed,
    5,632 cycles; then a computes (2,304) while b's weights (9,216 B) stream in, 4,608 cycles: 2,304 exposed. Round 1:
    b's input is on the engine, its weights are in the buffer; it computes 2,304 cycles and, with no next round to
    drain in, writes its output (2,048 B) after it: 1,024. Total 5,632 + 4,608 + 2,304 + 1,024 = 13,568 cycles."""
    slow = KC.replace(offchip=dataclasses.replace(KC.offchip, bandwidth_bytes_per_cycle=2))
    instance = make_instance(chain(), slow, {"engines": "4", "atom": "8,8,32,32"})
    a, b = instance.dag.atoms
    assert (a.duration_cycles, b.duration_cycles) == (2304, 2304)
    schedule = RoundSchedule(((0,), (1,)), engines=(1, 1))
    check(instance, schedule)
    run = simulate(instance, schedule)
    assert list(run.load_cycles) == pytest.approx([5632.0, 0.0])
    assert list(run.store_cycles) == pytest.approx([4608.0 - 2304.0, 1024.0])
    assert run.latency_cycles == pytest.approx(13568.0)
    # the buffer of round 0 holds b's prefetched weights beside a's working set and output (kept for b)
    held = buffer_occupancy(instance, schedule)
    assert held is not None and held[1, 0] == a.input_bytes + a.weight_bytes + a.output_bytes + b.weight_bytes


def test_a_written_back_output_drains_in_the_next_round_and_is_prefetched_only_once_it_is_in_hbm() -> None:
    """Batch 2 on engine 0, a0's output written back: it drains while a1 computes (round 1), so it is in HBM at the
    end of round 1; b0 in round 2 reads it exposed, b0 in round 3 has it prefetched during round 2."""
    instance = make_instance(chain().with_batch(2), KC, {"engines": "2", "atom": "8,8,32,32"})
    a0, a1 = instance.dag.groups["a", 0][0], instance.dag.groups["a", 1][0]
    b0, b1 = instance.dag.groups["b", 0][0], instance.dag.groups["b", 1][0]
    early = RoundSchedule(((a0,), (a1,), (b0,), (b1,)), engines=(0, 0, 0, 0), write_back=frozenset({a0}))
    late = RoundSchedule(((a0,), (a1,), (b1,), (b0,)), engines=(0, 0, 0, 0), write_back=frozenset({a0}))
    check(instance, early)
    check(instance, late)
    soon, later = simulate(instance, early), simulate(instance, late)
    assert soon.store_cycles[a0] == 0 and later.store_cycles[a0] == 0  # drained under a1
    assert soon.load_cycles[b0] > 0 and later.load_cycles[b0] == 0


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
    # round 0: a's working set (its output kept for round 1) and b's weights, prefetched; round 1: a's output, held,
    # is all b reads, plus b's weights and output
    assert held[0, 0] == a.input_bytes + a.weight_bytes + a.output_bytes + b.weight_bytes
    assert held[0, 1] == a.output_bytes + b.weight_bytes + b.output_bytes
    # no room for the prefetch: b's weights are read in its own round, exposed, and the buffer fits
    own = int(held[0, 0]) - b.weight_bytes
    short = AtomicInstance(dag, 2, with_buffer(KC, int(held[0, 0]) - 1), instance.workload, instance.sizes)
    check(short, schedule)
    short_held = buffer_occupancy(short, schedule)
    assert short_held is not None and short_held[0, 0] == own
    assert simulate(short, schedule).load_cycles[2] > simulate(instance, schedule).load_cycles[2]
    tight = AtomicInstance(dag, 2, with_buffer(KC, own - 1), instance.workload, instance.sizes)
    with pytest.raises(InfeasibleSolution, match=r"rule 4: engine 0 holds [\d,]+ bytes in round 0"):
        check(tight, schedule)


def test_engines_of_one_round_share_one_multicast_hbm_read_of_the_same_weights() -> None:
    """Layer a cut into two row halves: the same weights for both. Together in a round they read them once;
    in two rounds on two engines each reads its own copy."""
    instance = make_instance(chain(), KC, {"engines": "2", "atom": "4,8,32,32"})
    a0, a1 = instance.dag.groups["a", 0]
    b0, b1 = instance.dag.groups["b", 0]
    weight = instance.dag.atoms[a0].weight_bytes
    assert instance.dag.atoms[a0].weight_key == instance.dag.atoms[a1].weight_key and weight > 0
    together = simulate(instance, RoundSchedule(((a0, a1), (b0, b1)), engines=(0, 1, 0, 1)))
    apart = simulate(instance, RoundSchedule(((a0,), (a1,), (b0, b1)), engines=(0, 1, 0, 1)))
    assert together.hbm_read_bytes[[a0, a1]] == pytest.approx([weight / 2 + x for x in
                                                              apart.hbm_read_bytes[[a0, a1]] - weight])  # fmt: skip
    assert apart.report.dram_bytes - together.report.dram_bytes == pytest.approx(weight)  # b shares in both
    assert together.noc_byte_hops == apart.noc_byte_hops  # every engine still receives its whole block
