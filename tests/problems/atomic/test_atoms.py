"""The atoms of a workload and the atomic DAG, built by hand: tiles, edges, partial sums, groups, the PE-array rule."""

from __future__ import annotations

import pytest

from accelsched.errors import InputError
from accelsched.hardware import load_accelerator
from accelsched.models.builder import NetBuilder
from accelsched.problems.atomic import AtomSize, Partition, atom_cost, atomize, split_size, working_set
from tests.problems.atomic.helpers import KC, YX, chain


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


@pytest.mark.parametrize(("preset", "low", "high"), [("atomic-8x8-kc", 0.75, 1.0), ("atomic-8x8-kc-port64", 0.0, 0.2)])
def test_the_multi_bank_sram_feeds_the_pe_array_and_one_64_bit_port_starves_it(preset: str, low: float,
                                                                                high: float) -> None:  # fmt: skip
    """ResNet-50's 3x3 convolution of 64 channels on 56x56, split over the 64 engines: on the paper's multi-bank
    SRAM (16 banks of 64-bit ports) its atoms keep the 16x16 PEs busy most of their cycles; behind one 8 B/cycle
    port for all 256 PEs they wait for the port most of the time."""
    b = NetBuilder("res2", 64, 56, 56)
    b.conv(b.input, 64, 3, pad=1, name="conv")
    (layer,) = b.build()
    accelerator = load_accelerator(preset)
    size = split_size(layer, accelerator, 64)
    cycles, _, macs = atom_cost(layer, size, accelerator)
    assert low <= macs / (accelerator.cores[0].n_macs * cycles) <= high
