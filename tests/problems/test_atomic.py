"""The atomic problem: atoms and the atomic DAG by hand, the checker's rules, the evaluator against the shared
transfer primitives, bad input."""

from __future__ import annotations

import pytest

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.rounds import atomic_metrics, buffer_occupancy, simulate
from accelsched.hardware.cost.transfer import core_to_core, dram_to_core
from accelsched.models.builder import NetBuilder
from accelsched.models.workload import Workload
from accelsched.problems.atomic import (
    PROBLEM,
    Atom,
    AtomDag,
    AtomicInstance,
    AtomSize,
    Partition,
    RoundSchedule,
    check,
    make_instance,
)
from accelsched.problems.atomic_atoms import atomize, split_size, working_set
from tests.problems.atomic_helpers import with_buffer

KC = load_accelerator("atomic-8x8-kc")
YX = load_accelerator("atomic-8x8-yx")


def chain() -> Workload:
    """Two 3x3 convolutions, padding 1, 32 -> 32 -> 32 channels on an 8x8 map."""
    b = NetBuilder("chain", 32, 8, 8)
    x = b.conv(b.input, 32, 3, pad=1, name="a")
    b.conv(x, 32, 3, pad=1, name="b")
    return b.build()


def test_atoms_tile_the_output_and_receptive_fields_give_the_edges() -> None:
    sizes = {"a": AtomSize(4, 8, 32, 32), "b": AtomSize(4, 8, 32, 32)}
    dag = atomize(chain(), KC, sizes)
    assert [(a.layer, a.rows) for a in dag.atoms] == [("a", (0, 4)), ("a", (4, 8)), ("b", (0, 4)), ("b", (4, 8))]
    # b's rows 0-3 read a's rows 0-4 (3x3 window, padding 1): all of a's first atom, one row of the second
    row_bytes = 8 * 32  # one row of 8 columns x 32 channels at 8 bits
    assert dag.edges == ((0, 2, 4 * row_bytes), (0, 3, 1 * row_bytes), (1, 2, 1 * row_bytes), (1, 3, 4 * row_bytes))
    assert all(a.duration_cycles > 0 and a.energy_pj > 0 for a in dag.atoms)
    assert sum(a.macs for a in dag.atoms) == sum(layer.macs for layer in chain())
    # an atom's bytes are those of its shape: 4 output rows read 6 input rows with the halo (a border band is counted
    # as an interior one, as in part_of) of the 8 columns, all 32 channels of the network input, and its weights
    first = dag.atoms[0]
    assert (first.input_bytes, first.network_input_bytes) == (6 * 8 * 32, 6 * 8 * 32)
    assert first.weight_bytes == 32 * 32 * 9 and not first.network_output
    assert [a.network_output for a in dag.atoms[2:]] == [True, True] and dag.atoms[2].network_input_bytes == 0


def test_split_input_channels_chain_the_partial_sums() -> None:
    dag = atomize(chain(), KC, {"a": AtomSize(8, 8, 16, 32), "b": AtomSize(8, 8, 32, 32)})
    assert [(a.layer, a.in_channels) for a in dag.atoms] == [("a", (0, 16)), ("a", (16, 32)), ("b", (0, 32))]
    # the second half of a's input channels completes the output: b depends on it, the halves are chained
    assert [(p, c) for p, c, _ in dag.edges] == [(0, 1), (1, 2)]
    assert dag.atoms[0].output_bytes == 8 * 8 * 32 * 2  # partial sums at 16 bits
    assert dag.atoms[1].output_bytes == 8 * 8 * 32


def test_samples_are_independent_and_the_partition_follows_the_engine() -> None:
    dag = atomize(chain().with_batch(2), KC, {n: AtomSize(8, 8, 32, 32) for n in "ab"})
    assert [(a.layer, a.sample) for a in dag.atoms] == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    assert [(p, c) for p, c, _ in dag.edges] == [(0, 2), (1, 3)]
    assert dag.groups["b", 1] == (3,)
    assert (Partition.of(KC.cores[0]), Partition.of(YX.cores[0])) == (Partition.KC, Partition.YX)


def test_grouped_layers_are_cut_into_whole_groups() -> None:
    b = NetBuilder("dw", 64, 8, 8)
    x = b.conv(b.input, 64, 1, name="pw")
    b.dwconv(x, 3, name="dw")
    net = b.build()
    dag = atomize(net, KC, {"pw": AtomSize(8, 8, 64, 64), "dw": AtomSize(8, 8, 1, 16)})
    depthwise = [a for a in dag.atoms if a.layer == "dw"]
    assert [a.out_channels for a in depthwise] == [(0, 16), (16, 32), (32, 48), (48, 64)]
    assert [a.in_channels for a in depthwise] == [(0, 16), (16, 32), (32, 48), (48, 64)]
    assert sum(a.macs for a in depthwise) == net["dw"].macs
    # every depthwise atom reads its 16 channels of the single pointwise atom: 8 x 8 pixels x 16 channels
    assert [n for _, c, n in dag.edges] == [8 * 8 * 16] * 4
    # the KC array unrolls K and C within a group: any number of whole groups keeps the rule
    assert len(atomize(net, KC, {"pw": AtomSize(8, 8, 64, 64), "dw": AtomSize(8, 8, 1, 8)}).groups["dw", 0]) == 8
    g = NetBuilder("g", 32, 4, 4)
    g.conv(g.input, 32, 1, groups=4, name="grouped")  # 4 groups of 8 output channels
    with pytest.raises(InputError, match="cuts a group"):
        atomize(g.build(), YX, {"grouped": AtomSize(4, 4, 8, 4)})


def test_a_broadcast_operand_is_read_whole_by_every_atom() -> None:
    b = NetBuilder("se", 32, 8, 8)
    x = b.conv(b.input, 32, 1, name="x")
    s = b.global_pool(x, name="squeeze")
    b.mul(x, s, name="scale")
    dag = atomize(b.build(), KC, {"x": AtomSize(8, 8, 32, 32), "squeeze": AtomSize(1, 1, 1, 32),
                                  "scale": AtomSize(4, 8, 1, 32)})  # fmt: skip
    scale = [i for i, a in enumerate(dag.atoms) if a.layer == "scale"]
    squeeze = next(i for i, a in enumerate(dag.atoms) if a.layer == "squeeze")
    assert all((squeeze, i) in {(p, c) for p, c, _ in dag.edges} for i in scale)


def test_atom_sizes_off_the_pe_array_are_refused_naming_the_layer() -> None:
    with pytest.raises(InputError, match="layer 'a': atom ci=8 is not a multiple of the PE array's C unrolling 16"):
        atomize(chain(), KC, {n: AtomSize(8, 8, 8, 32) for n in "ab"})
    with pytest.raises(InputError, match="atom h=3 is not a multiple of the PE array's OY unrolling 16"):
        atomize(chain(), YX, {n: AtomSize(3, 8, 32, 32) for n in "ab"})
    atomize(chain(), YX, {n: AtomSize(8, 8, 32, 32) for n in "ab"})  # the whole loop is always allowed


def test_an_even_split_fills_the_engines_and_fits_the_buffer() -> None:
    layer = chain()["a"]
    size = split_size(layer, KC, 4)
    assert working_set(layer, size) <= KC.cores[0].top_capacity_bytes == 128 * 1024
    dag = atomize(chain(), KC, {"a": size, "b": size})
    assert len(dag.groups["a", 0]) >= 4


def test_bad_options_zero_engines_and_batch_zero_are_clear_errors() -> None:
    with pytest.raises(InputError, match="engines='0'"):
        make_instance(chain(), KC, {"engines": "0"})
    with pytest.raises(InputError, match="not four integers"):
        make_instance(chain(), KC, {"atom": "4,4"})
    with pytest.raises(InputError, match="unknown option"):
        make_instance(chain(), KC, {"rounds": "3"})
    with pytest.raises(InputError, match="unknown mapping 'best'"):
        make_instance(chain(), KC, {"mapping": "best"})
    with pytest.raises(InputError, match="at least 1 engine"):
        AtomicInstance(AtomDag.random(3, 0), 0)
    with pytest.raises((InputError, ValueError), match="batch"):
        make_instance(chain().with_batch(0), KC, {})


def test_the_dag_rejects_cycles_and_bad_edges() -> None:
    atoms = AtomDag.random(3, 0).atoms
    with pytest.raises(ValueError, match="cycle"):
        AtomDag("c", atoms, ((0, 1, 1), (1, 2, 1), (2, 0, 1)))
    with pytest.raises(ValueError, match="bad edge"):
        AtomDag("c", atoms, ((0, 5, 1),))
    with pytest.raises(ValueError, match="twice"):
        AtomDag("c", atoms, ((0, 1, 1), (0, 1, 2)))


def tiny() -> AtomicInstance:
    """Three abstract atoms of 5, 3 and 4 cycles, an edge 0 -> 2, two engines."""
    atoms = tuple(Atom(f"l{i}", 0, (0, 1), (0, 1), (0, 1), (0, 1), d, energy_pj=1.0, output_bytes=4)
                  for i, d in enumerate((5, 3, 4)))  # fmt: skip
    return AtomicInstance(AtomDag("t", atoms, ((0, 2, 4),)), 2)


@pytest.mark.parametrize(
    ("schedule", "rule"),
    [
        (RoundSchedule(((0, 1), ())), "rule 1: round 1 is empty"),
        (RoundSchedule(((0, 1, 2),)), "rule 2: round 0 holds 3 atoms > 2 engines"),
        (RoundSchedule(((0, 1), (1, 2))), "rule 1: atom 1"),
        (RoundSchedule(((0, 1),)), "rule 1: atom 2"),
        (RoundSchedule(((0, 2), (1,))), "rule 3: edge 0 -> 2 goes from round 0 to round 0"),
        (RoundSchedule(((2, 0, 1),), engines=(0, 0, 1)), "rule 3: edge 0 -> 2 .*listed after its consumer"),
        (RoundSchedule(((0, 1), (2,)), engines=(0, 2, 1)), "rule 2: atom 1 on engine 2, not in 0..1"),
        (RoundSchedule(((0, 1), (2,)), engines=(0, 1)), "rule 2: 2 engines given"),
        (RoundSchedule(((0, 1), (2,)), write_back=frozenset({7})), "rule 6: write-back names an atom"),
        (RoundSchedule.with_sizes(((0, 1), (2,)), {"l0": AtomSize(1, 1, 1, 1)}), "rule 5: .* no workload"),
    ],
)
def test_each_rule_is_named(schedule: RoundSchedule, rule: str) -> None:
    with pytest.raises(InfeasibleSolution, match=rule):
        check(tiny(), schedule)


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


def test_a_solution_with_sizes_of_its_own_gets_its_own_dag() -> None:
    instance = make_instance(chain(), KC, {"engines": "4"})
    sizes = {"a": AtomSize(4, 8, 32, 32), "b": AtomSize(8, 8, 32, 32)}
    rounds = ((0, 1), (2,))
    schedule = RoundSchedule.with_sizes(rounds, sizes, engines=(0, 1, 0))
    check(instance, schedule)
    assert len(instance.dag_for(schedule).atoms) == 3
    assert RoundSchedule.from_dict(schedule.to_dict()) == schedule
    with pytest.raises(InfeasibleSolution, match="rule 5: sizes miss layers \\['b'\\]"):
        check(instance, RoundSchedule.with_sizes(rounds, {"a": sizes["a"]}))
    with pytest.raises(InfeasibleSolution, match=r"rule 5: .*ci=8 is not a multiple"):
        check(instance, RoundSchedule.with_sizes(rounds, {**sizes, "b": AtomSize(8, 8, 8, 32)}))
