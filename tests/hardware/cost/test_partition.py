"""The Cocco subgraph cost model: footprints, traffic and modes checked by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.partition import PartitionCostModel
from accelsched.models.layer import Layer, OpKind
from accelsched.models.random_dag import random_workload
from accelsched.models.workload import Workload

ACC = load_accelerator("cocco-simba-separate")
CORE, DRAM = ACC.cores[0], ACC.offchip


def conv(name: str, c: int, k: int, size: int, inputs: tuple[str, ...] = (), stride: int = 1) -> Layer:
    out = size // stride
    pad_end = (out - 1) * stride + 3 - size - 1
    return Layer(name, OpKind.CONV, K=k, C=c, OY=out, OX=out, FY=3, FX=3, stride_y=stride, stride_x=stride,
                 padding=(1, 1, pad_end, pad_end), inputs=inputs)  # fmt: skip


def model(*layers: Layer, batch: int = 1) -> PartitionCostModel:
    workload = Workload("t", layers).with_batch(batch)
    return PartitionCostModel(workload, CORE, DRAM)


def test_two_fused_convs_by_hand() -> None:
    """conv 2->4 then conv 4->4, 3x3 stride 1 on 8x8, int8.

    Fused: L1's output leaves (2 rows of 32 B); L0 advances 1 row and keeps
    f(1) = 3 rows for L1 plus 1 new row (4 x 32 B); the network input is kept the
    same way (4 rows of 2 x 8 B). Weights 72 + 144 B.
    """
    m = model(conv("L0", 2, 4, 8), conv("L1", 4, 4, 8, ("L0",)))
    fused = m.subgraph((0, 1))
    assert fused.resident.act_bytes == 2 * 32 + 4 * 32 + 4 * 16
    assert fused.resident.weight_bytes == 72 + 144
    assert (fused.weight_dram_bytes, fused.input_dram_bytes, fused.output_dram_bytes) == (216, 128, 256)
    alone = [m.subgraph((0,)), m.subgraph((1,))]
    assert [c.ema_bytes() for c in alone] == [72 + 128 + 256, 144 + 256 + 256]
    # fusing saves the intermediate tensor twice (written, then read back)
    assert sum(c.ema_bytes() for c in alone) - fused.ema_bytes() == 2 * 256


def test_stride_two_consumer_makes_the_producer_advance_two_rows() -> None:
    """Δ_L0 = lcm(Δ_L1 x s_L1) = 2; L1 reads f(1) = 3 rows: L0 keeps 3 + 2 rows."""
    m = model(conv("L0", 2, 4, 8), conv("L1", 4, 4, 8, ("L0",), stride=2))
    fused = m.subgraph((0, 1))
    l1_out = 2 * 4 * 4  # 2 rows of 4 channels x 4 columns
    l0_out = 5 * 4 * 8
    net_in = (4 + 2) * (2 * 8)  # L0 reads f(2) = 4 input rows per update and advances 2
    assert fused.resident.act_bytes == l1_out + l0_out + net_in


def test_lcm_over_several_consumers() -> None:
    """A producer read by a stride-1 and a stride-2 consumer advances lcm(1, 2) = 2 rows."""
    layers = (
        conv("A", 2, 4, 8),
        conv("B", 4, 4, 8, ("A",)),
        conv("C", 4, 4, 8, ("A",), stride=2),
    )
    m = model(*layers)
    fused = m.subgraph((0, 1, 2))
    # B and C are outputs (2 rows each); A keeps max(f_B(1), f_C(1)) = 3 rows + Δ = 2
    expected_a = (3 + 2) * 32
    expected_b, expected_c = 2 * 32, 2 * 16
    net_in = min(8, 4 + 2) * 16  # A's input: f_A(2) = 4 rows + 2 new
    assert fused.resident.act_bytes == expected_a + expected_b + expected_c + net_in


def test_external_tensor_read_once_by_two_consumers() -> None:
    layers = (conv("A", 2, 4, 8), conv("B", 4, 4, 8, ("A",)), conv("C", 4, 4, 8, ("A",)))
    m = model(*layers)
    both = m.subgraph((1, 2))  # B and C are not connected to each other inside, but share A's output
    assert both.input_dram_bytes == 256  # A's output, read once for the subgraph


def test_whole_tensor_for_a_reshaped_consumer() -> None:
    """A classifier written as a 4x4 convolution to one pixel (tiled along columns) reads its
    producer (tiled along rows) whole: L0 advances and keeps all 4 rows, and so does its input."""
    fc = Layer("fc", OpKind.CONV, K=10, C=4, OY=1, OX=1, FY=4, FX=4, inputs=("L0",))
    m = model(conv("L0", 2, 4, 4), fc)
    fused = m.subgraph((0, 1))
    assert fused.resident.act_bytes == 4 * (4 * 4) + 1 * 10 + 4 * (2 * 4)


def test_batch_scales_traffic_but_not_weights_or_footprint() -> None:
    one = model(conv("L0", 2, 4, 8), conv("L1", 4, 4, 8, ("L0",))).subgraph((0, 1))
    four = model(conv("L0", 2, 4, 8), conv("L1", 4, 4, 8, ("L0",)), batch=4).subgraph((0, 1))
    assert four.weight_dram_bytes == one.weight_dram_bytes
    assert four.input_dram_bytes == 4 * one.input_dram_bytes
    assert four.output_dram_bytes == 4 * one.output_dram_bytes
    assert four.resident.act_bytes == one.resident.act_bytes


def test_streaming_modes_of_a_layer_with_large_weights() -> None:
    big = conv("L0", 64, 64, 8)  # 36 KB of weights
    cost = model(big).subgraph((0,))
    names = [mode.name for mode in cost.modes]
    assert names[0] == "resident" and "stream" in names and any(n.startswith("blocks:") for n in names)
    stream = next(m for m in cost.modes if m.name == "stream")
    assert stream.weight_bytes == 2 * math.ceil(big.weight_bytes / 64)
    assert stream.extra_read_bytes == 0
    blocks = [m for m in cost.modes if m.name.startswith("blocks:")]
    for mode in blocks:
        n = int(mode.name.split(":")[1])
        assert mode.extra_read_bytes == (n - 1) * cost.input_dram_bytes
    # modes are by increasing extra traffic, and none is dominated by a cheaper one
    extras = [m.extra_read_bytes for m in cost.modes]
    assert extras == sorted(extras)
    for i, mode in enumerate(cost.modes):
        assert not any(o.act_bytes <= mode.act_bytes and o.weight_bytes <= mode.weight_bytes for o in cost.modes[:i]), (
            mode
        )
    # the cheapest fitting mode is chosen
    assert cost.mode_for(False, 10**9, big.weight_bytes) is cost.resident
    small_weights = cost.mode_for(False, 10**9, stream.weight_bytes)
    assert small_weights is not None and small_weights.extra_read_bytes == 0
    assert cost.mode_for(False, 1, 1) is None
    assert cost.ema_bytes(blocks[0]) == cost.ema_bytes() + blocks[0].extra_read_bytes


def test_evaluate_sums_traffic_and_energy_and_prefetches_weights() -> None:
    m = model(conv("L0", 2, 4, 8), conv("L1", 4, 4, 8, ("L0",)))
    report = m.evaluate([(0,), (1,)], False, 10**6, 10**6)
    parts = [m.subgraph((0,)), m.subgraph((1,))]
    assert report.dram_bytes == sum(p.ema_bytes() for p in parts)
    assert report.energy_pj == pytest.approx(sum(p.energy_pj() for p in parts), rel=1e-12)
    bw = DRAM.bandwidth_bytes_per_cycle
    expected = parts[0].weight_dram_bytes / bw
    expected += max(parts[0].compute_cycles, (parts[0].activation_dram_bytes() + parts[1].weight_dram_bytes) / bw)
    expected += max(parts[1].compute_cycles, parts[1].activation_dram_bytes() / bw)
    assert report.latency_cycles == pytest.approx(expected)
    assert report.macs == sum(layer.macs for layer in m.layers)


@given(st.integers(4, 14), st.integers(0, 10_000))
def test_fusing_a_whole_network_never_costs_more_traffic(n: int, seed: int) -> None:
    """One subgraph reads every weight and the network inputs once and writes only the
    outputs: never more DRAM traffic than layer by layer, and the sums are additive."""
    workload = random_workload(n, seed, channels=(4, 8, 16), height=8, width=8)
    m = PartitionCostModel(workload, CORE, DRAM)
    alone = [m.subgraph((i,)) for i in range(n)]
    whole = m.subgraph(range(n))
    assert whole.ema_bytes() <= sum(c.ema_bytes() for c in alone)
    assert whole.weight_dram_bytes == sum(c.weight_dram_bytes for c in alone)
    report = m.evaluate([(i,) for i in range(n)], False, 10**9, 10**9)
    assert report.dram_bytes == sum(c.ema_bytes() for c in alone)
    assert 0 < report.utilization <= 1
