"""The atomic problem: atom generation and the atomic DAG by hand, the checker's rules, the evaluator, bad input."""

from __future__ import annotations

import pytest

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.hardware import load_accelerator
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
    atomize,
    check,
    make_instance,
)

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


def test_split_input_channels_chain_the_partial_sums() -> None:
    dag = atomize(chain(), KC, {"a": AtomSize(8, 8, 16, 32), "b": AtomSize(8, 8, 32, 32)})
    assert [(a.layer, a.in_channels) for a in dag.atoms] == [("a", (0, 16)), ("a", (16, 32)), ("b", (0, 32))]
    # the second half of a's input channels completes the output: b depends on it, the halves are chained
    assert [(p, c) for p, c, _ in dag.edges] == [(0, 1), (1, 2)]


def test_samples_are_independent_and_the_partition_follows_the_engine() -> None:
    dag = atomize(chain().with_batch(2), KC, {n: AtomSize(8, 8, 32, 32) for n in "ab"})
    assert [(a.layer, a.sample) for a in dag.atoms] == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    assert [(p, c) for p, c, _ in dag.edges] == [(0, 2), (1, 3)]
    assert (Partition.of(KC.cores[0]), Partition.of(YX.cores[0])) == (Partition.KC, Partition.YX)


def test_atom_sizes_off_the_pe_array_are_refused_naming_the_layer() -> None:
    with pytest.raises(InputError, match="layer 'a': atom ci=8 is not a multiple of the PE array's C unrolling 16"):
        atomize(chain(), KC, {n: AtomSize(8, 8, 8, 32) for n in "ab"})
    with pytest.raises(InputError, match="atom h=3 is not a multiple of the PE array's OY unrolling 16"):
        atomize(chain(), YX, {n: AtomSize(3, 8, 32, 32) for n in "ab"})
    atomize(chain(), YX, {n: AtomSize(8, 8, 32, 32) for n in "ab"})  # the whole loop is always allowed


def test_bad_options_zero_engines_and_batch_zero_are_clear_errors() -> None:
    with pytest.raises(InputError, match="engines='0'"):
        make_instance(chain(), KC, {"engines": "0"})
    with pytest.raises(InputError, match="not four integers"):
        make_instance(chain(), KC, {"atom": "4,4"})
    with pytest.raises(InputError, match="unknown option"):
        make_instance(chain(), KC, {"rounds": "3"})
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
    atoms = tuple(Atom(f"l{i}", 0, (0, 1), (0, 1), (0, 1), (0, 1), d, energy_pj=1.0, output_bytes=4)
                  for i, d in enumerate((5, 3, 4)))  # fmt: skip
    return AtomicInstance(AtomDag("t", atoms, ((0, 2, 4),)), 2, mesh=KC.interconnect)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("schedule", "rule"),
    [
        (RoundSchedule(((0, 1), ())), "rule 1: round 1 is empty"),
        (RoundSchedule(((0, 1, 2),)), "rule 2: round 0 holds 3 atoms > 2 engines"),
        (RoundSchedule(((0, 1), (1, 2))), "rule 1: atom 1"),
        (RoundSchedule(((0, 1),)), "rule 1: atom 2"),
        (RoundSchedule(((0, 2), (1,))), "rule 3: edge 0 -> 2"),
        (RoundSchedule(((0, 1), (2,)), engines=(0, 0, 1)), "rule 4: round 0 uses engines"),
        (RoundSchedule(((0, 1), (2,)), engines=(0, 1)), "rule 4: 2 engines given"),
    ],
)
def test_each_rule_is_named(schedule: RoundSchedule, rule: str) -> None:
    with pytest.raises(InfeasibleSolution, match=rule):
        check(tiny(), schedule)


def test_the_evaluator_sums_the_slowest_atoms_and_prices_noc_hops() -> None:
    instance = tiny()
    schedule = RoundSchedule(((0, 1), (2,)), engines=(0, 1, 1))  # engines 0 and 1 are neighbours on the mesh
    check(instance, schedule)
    report = PROBLEM.evaluate(instance, schedule)
    assert report.latency_cycles == 5 + 4
    assert report.noc_byte_hops == 4 * 1  # the edge 0 -> 2 crosses one hop
    assert report.energy_pj == pytest.approx(3.0 + 4 * KC.interconnect.hop_energy_pj_per_byte)  # type: ignore[union-attr]
    assert report.utilization == pytest.approx(12 / (2 * 9))
    assert RoundSchedule.from_dict(schedule.to_dict()) == schedule
    with pytest.raises(InputError, match="not an atomic round schedule"):
        RoundSchedule.from_dict({"rounds": "x"})
