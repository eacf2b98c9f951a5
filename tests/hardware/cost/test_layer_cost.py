"""The layer-cost primitive: hand-computed cases and properties."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accelsched.hardware.cost import cache_info, clear_cache, layer_cost
from accelsched.hardware.cost.layer_cost import window_extent
from accelsched.hardware.spec import Core, MemoryLevel
from accelsched.models.layer import Layer, OpKind
from tests.hardware.cost.helpers import flat_core, offchip


def conv(**kw: Any) -> Layer:
    base: dict[str, Any] = {"K": 4, "C": 2, "OY": 2, "OX": 2}
    base.update(kw)
    return Layer("L", OpKind.CONV, **base)


def test_hand_computed_tiny_conv() -> None:
    """4x2 1x1 conv on 2x2 pixels, K2|C2 array, everything fits (worked out in the comments)."""
    cost = layer_cost(conv(), flat_core(), offchip())
    # spatial K2|C2: steps K 2, C 1, OY 2, OX 2 -> 8 cycles, 32 MACs on 4 units -> full use
    assert cost.compute_cycles == 8
    assert cost.spatial_utilization == 1.0
    # DRAM: I 2*2*2 = 8 B, W 4*2 = 8 B read once; O 4*2*2 = 16 B written once
    assert dict(cost.dram_read_bytes) == {"I": 8, "W": 8, "O": 0}
    assert dict(cost.dram_write_bytes) == {"I": 0, "W": 0, "O": 16}
    # buf reads: inputs 2/cycle (8 cycles) = 16 B, weights 4/cycle = 32 B, outputs sent to DRAM 16 B
    # buf writes: I+W from DRAM 16 B, 16 output updates at 16-bit partial sums = 32 B
    assert cost.energy_breakdown_pj["mem:buf"] == pytest.approx(64 * 1.0 + 48 * 2.0)
    assert cost.energy_breakdown_pj["dram"] == pytest.approx(32 * 10.0)
    assert cost.energy_breakdown_pj["mac"] == pytest.approx(32 * 0.5)
    assert cost.energy_pj == pytest.approx(496.0)
    assert cost.fits


def test_weights_refetched_when_buffer_too_small() -> None:
    """With room for only part of the weights, the cheapest schedule re-reads something from DRAM."""
    layer = conv(K=64, C=64, OY=8, OX=8, FY=3, FX=3, padding=(1, 1, 1, 1))
    big = layer_cost(layer, flat_core(), offchip())
    compulsory = layer.input_bytes + layer.weight_bytes + layer.output_bytes
    assert big.dram_bytes == pytest.approx(compulsory)
    small = layer_cost(layer, flat_core(capacity_bytes=4096), offchip())
    assert small.dram_bytes > compulsory
    assert small.fits


def test_bandwidth_bound_latency() -> None:
    layer = conv(K=64, C=64, OY=8, OX=8)
    slow = layer_cost(layer, flat_core(spatial=(("K", 64), ("C", 64))), offchip(bandwidth=1.0))
    assert slow.latency_cycles == pytest.approx(slow.dram_bytes)
    assert slow.latency_cycles > slow.compute_cycles


def test_depthwise_uses_the_k_dimension_for_groups() -> None:
    layer = Layer("dw", OpKind.CONV, K=1, C=1, G=16, OY=4, OX=4, FY=3, FX=3, padding=(1, 1, 1, 1))
    cost = layer_cost(layer, flat_core(), offchip())
    assert cost.spatial_mapping.get("G") == 2
    assert cost.compute_cycles == 8 * 4 * 4 * 9


def test_overflow_is_reported_not_hidden() -> None:
    layer = conv(K=64, C=64, OY=8, OX=8)
    cost = layer_cost(layer, flat_core(capacity_bytes=2), offchip())
    assert not cost.fits


def test_unsupported_kind_is_rejected() -> None:
    core = flat_core()
    simd = Core(0, "simd", (("G", 4),), core.memories, core.hierarchy, 0.1, frozenset({OpKind.POOL}))
    with pytest.raises(ValueError, match="does not execute conv"):
        layer_cost(conv(), simd, offchip())


def test_cache_is_keyed_by_shape_not_name() -> None:
    clear_cache()
    layer_cost(conv(), flat_core(), offchip())
    layer_cost(conv().replace(name="other"), flat_core(), offchip())
    info = cache_info()
    assert (info["misses"], info["hits"]) == (1, 1)


def test_two_level_weight_stationary() -> None:
    """A per-PE weight register makes weights read once from the buffer when pixels are innermost."""
    buf = MemoryLevel("buf", 1 << 20, 1.0, 1.0, 1e6, 1e6)
    reg = MemoryLevel("wreg", 1, 0.0, 0.0, 1, 1, instances=4)
    core = Core(0, "ws", (("K", 2), ("C", 2)), (reg, buf), {"I": ("buf",), "W": ("wreg", "buf"), "O": ("buf",)}, 0.5)
    layer = conv(K=2, C=2, OY=16, OX=16)
    cost = layer_cost(layer, core, offchip())
    assert cost.level_read_bytes[("buf", "W")] == pytest.approx(layer.weight_bytes)
    assert cost.level_read_bytes[("wreg", "W")] == pytest.approx(4 * cost.compute_cycles)


layers = st.builds(
    lambda k, c, oy, ox, f, s: Layer(
        "L", OpKind.CONV, K=k, C=c, OY=oy, OX=ox, FY=f, FX=f, stride_y=s, stride_x=s, padding=(f // 2,) * 4
    ),
    k=st.integers(1, 96),
    c=st.integers(1, 96),
    oy=st.integers(1, 24),
    ox=st.integers(1, 24),
    f=st.sampled_from([1, 3, 5]),
    s=st.sampled_from([1, 2]),
)


@given(layer=layers, cap_small=st.integers(64, 1 << 14), factor=st.integers(2, 64))
def test_larger_buffer_never_increases_dram_traffic(layer: Layer, cap_small: int, factor: int) -> None:
    small = layer_cost(layer, flat_core(capacity_bytes=cap_small), offchip())
    large = layer_cost(layer, flat_core(capacity_bytes=cap_small * factor), offchip())
    assert large.dram_bytes <= small.dram_bytes + 1e-9


@given(layer=layers, dim=st.sampled_from(["K", "C", "OY", "OX"]), extra=st.integers(1, 16))
def test_more_macs_never_cost_less(layer: Layer, dim: str, extra: int) -> None:
    bigger = layer.replace(**{dim: getattr(layer, dim) + extra})
    core = flat_core(capacity_bytes=1 << 13)
    a, b = layer_cost(layer, core, offchip()), layer_cost(bigger, core, offchip())
    assert b.macs > a.macs
    assert b.compute_cycles >= a.compute_cycles
    assert b.latency_cycles >= a.latency_cycles - 1e-9
    assert b.energy_pj >= a.energy_pj - 1e-6


@given(layer=layers, spatial=st.sampled_from([(("K", 16), ("C", 16)), (("OX", 8), ("FX", 3)), (("K", 4),)]))
def test_utilization_in_unit_interval(layer: Layer, spatial: tuple[tuple[str, int], ...]) -> None:
    cost = layer_cost(layer, flat_core(spatial=spatial), offchip())
    assert 0 < cost.spatial_utilization <= 1
    assert cost.compute_cycles * flat_core(spatial=spatial).n_macs >= layer.macs


# --------------------------------------------------------------- strided windows


@given(st.integers(1, 5), st.integers(1, 12), st.integers(1, 4), st.integers(1, 7))
def test_window_extent_counts_distinct_coordinates(stride: int, outputs: int, dilation: int, taps: int) -> None:
    """The extent is the number of distinct ``stride * o + dilation * f``, as a brute force counts them."""
    brute = len({stride * o + dilation * f for o in range(outputs) for f in range(taps)})
    assert window_extent(stride, outputs, dilation, taps) == brute


def test_strided_pointwise_layer_reads_only_touched_pixels() -> None:
    """A 1x1 stride-2 layer reads from DRAM the pixels it uses, not the rows and columns between them."""
    from accelsched.hardware import load_accelerator

    acc = load_accelerator("defines-meta-proto")
    layer = Layer("down", OpKind.CONV, K=128, C=64, OY=28, OX=28, stride_y=2, stride_x=2)
    cost = layer_cost(layer, acc.cores[0], acc.offchip)
    assert cost.dram_read_bytes["I"] == pytest.approx(28 * 28 * 64)


def test_strided_unrolled_window_is_not_port_bound() -> None:
    """ResNet-18 conv1 (7x7 stride 2) on an OX4|OY4 array reads 16 pixels a cycle per channel and is compute-bound."""
    from accelsched.hardware import load_accelerator
    from accelsched.models import zoo

    acc = load_accelerator("defines-meta-proto")
    conv1 = next(x for x in zoo.get("resnet18").layers if x.name == "conv1")
    cost = layer_cost(conv1, acc.cores[0], acc.offchip)
    assert cost.latency_cycles == cost.compute_cycles


@given(st.integers(1, 5), st.integers(1, 12), st.integers(1, 7))
def test_overlapping_windows_span_their_bounding_box(stride: int, outputs: int, taps: int) -> None:
    """Undilated windows with at least ``stride`` taps touch every coordinate from the first to the last."""
    taps = max(taps, stride)
    assert window_extent(stride, outputs, 1, taps) == (outputs - 1) * stride + taps


@given(st.integers(2, 5), st.integers(2, 12), st.integers(1, 4))
def test_sparse_windows_skip_the_gaps(stride: int, outputs: int, taps: int) -> None:
    """Fewer taps than the stride: the windows are disjoint, each reads its own taps, less than the bounding box."""
    taps = min(taps, stride - 1)
    assert window_extent(stride, outputs, 1, taps) == outputs * taps
    assert window_extent(stride, outputs, 1, taps) < (outputs - 1) * stride + taps


def test_window_extent_is_elementwise_on_arrays() -> None:
    """Arrays of outputs and taps give the scalar extents element by element; a mean tile size is accepted."""
    import numpy as np

    outputs = np.array([1, 4, 7, 12, 3])
    taps = np.array([1, 1, 3, 7, 2])
    got = window_extent(2, outputs, 1, taps)
    assert got.shape == outputs.shape
    assert got.tolist() == [window_extent(2, int(o), 1, int(t)) for o, t in zip(outputs, taps, strict=True)]
    # two ragged tiles of a 7-wide 1x1 stride-2 layer (mean 3.5 outputs) read the 7 touched columns together
    assert 2 * window_extent(2, np.float64(3.5), 1, 1) == pytest.approx(7.0)


def test_strided_3x3_input_between_touched_and_whole() -> None:
    """A 3x3 stride-2 layer's DRAM input lies between the pixels its windows touch and its whole input."""
    from accelsched.hardware import load_accelerator

    acc = load_accelerator("defines-meta-proto")
    layer = Layer("d3", OpKind.CONV, K=128, C=64, OY=28, OX=28, FY=3, FX=3, stride_y=2, stride_x=2,
                  padding=(1, 1, 1, 1))  # fmt: skip
    cost = layer_cost(layer, acc.cores[0], acc.offchip)
    touched = _touched_inputs(layer) * layer.input_bits / 8
    assert touched <= cost.dram_read_bytes["I"] <= layer.input_bytes
    # windows of 3 taps at stride 2 overlap: every input pixel is touched, and read once
    assert touched == layer.input_bytes
    assert cost.dram_read_bytes["I"] == pytest.approx(layer.input_bytes)


def test_strided_sparse_window_reads_only_touched_pixels() -> None:
    """A 2x2 stride-3 layer skips a row and a column between windows: DRAM input is the touched pixels only."""
    from accelsched.hardware import load_accelerator

    acc = load_accelerator("defines-meta-proto")
    layer = Layer("s3", OpKind.CONV, K=64, C=32, OY=10, OX=10, FY=2, FX=2, stride_y=3, stride_x=3)
    cost = layer_cost(layer, acc.cores[0], acc.offchip)
    assert cost.dram_read_bytes["I"] == pytest.approx(_touched_inputs(layer) * layer.input_bits / 8)
    assert cost.dram_read_bytes["I"] < layer.input_bytes


def test_ragged_strided_tiles_are_not_over_counted() -> None:
    """OX = OY = 7 on the OX4|OY4 array: ragged 1x1 stride-2 tiles still read exactly the 7x7 touched pixels."""
    from accelsched.hardware import load_accelerator

    acc = load_accelerator("defines-meta-proto")
    layer = Layer("r", OpKind.CONV, K=32, C=16, OY=7, OX=7, stride_y=2, stride_x=2)
    cost = layer_cost(layer, acc.cores[0], acc.offchip)
    assert cost.dram_read_bytes["I"] == pytest.approx(7 * 7 * 16)


@given(
    c=st.integers(1, 32),
    oy=st.integers(1, 16),
    ox=st.integers(1, 16),
    f=st.integers(1, 5),
    s=st.integers(1, 4),
    d=st.integers(1, 2),
)
def test_dram_input_between_touched_pixels_and_whole_input(c: int, oy: int, ox: int, f: int, s: int, d: int) -> None:
    """Whatever the stride and dilation, a layer that fits reads at least the touched pixels, at most its input."""
    layer = Layer("L", OpKind.CONV, K=8, C=c, OY=oy, OX=ox, FY=f, FX=f, stride_y=s, stride_x=s,
                  dilation_y=d, dilation_x=d)  # fmt: skip
    cost = layer_cost(layer, flat_core(), offchip())
    touched = _touched_inputs(layer) * layer.input_bits / 8
    assert touched - 1e-9 <= cost.dram_read_bytes["I"] <= layer.input_bytes + 1e-9


def test_per_cycle_inputs_of_a_strided_unrolled_window() -> None:
    """OX4|OY4 at stride 2 with FY, FX not unrolled: 4x4 distinct pixels a cycle per unrolled channel, not 7x7."""
    from accelsched.hardware import load_accelerator
    from accelsched.hardware.cost.layer_cost import _Model
    from accelsched.models import zoo

    acc = load_accelerator("defines-meta-proto")
    conv1 = next(x for x in zoo.get("resnet18").layers if x.name == "conv1")
    assert (conv1.stride_y, conv1.stride_x, conv1.C) == (2, 2, 3)
    model = _Model(conv1, acc.cores[0], acc.offchip, {})
    assert model.spatial["C"] == 2
    assert model._peak_per_cycle("I") == 16 * 2


@given(ox=st.integers(1, 12), fx=st.integers(1, 7), s=st.integers(1, 4), d=st.integers(1, 3),
       uo=st.sampled_from([1, 2, 4, 8]), uf=st.sampled_from([1, 2, 3]))  # fmt: skip
def test_per_cycle_inputs_count_distinct_columns(ox: int, fx: int, s: int, d: int, uo: int, uf: int) -> None:
    """An OX|FX unrolling feeds the array the distinct input columns of its unrolled outputs and taps."""
    from accelsched.hardware.cost.layer_cost import _Model

    layer = Layer("L", OpKind.CONV, K=2, C=3, OY=2, OX=ox, FY=1, FX=fx, stride_x=s, dilation_x=d)
    model = _Model(layer, flat_core(spatial=(("OX", uo), ("FX", uf))), offchip(), {})
    columns = {s * o + d * f for o in range(min(ox, uo)) for f in range(min(fx, uf))}
    assert model._peak_per_cycle("I") == len(columns)


def _touched_inputs(layer: Layer) -> int:
    """Input elements (all channels) that some output's window reads, padding excluded, by brute force."""
    top, left, _, _ = layer.padding
    rows = {layer.stride_y * o + layer.dilation_y * f - top for o in range(layer.OY) for f in range(layer.FY)}
    cols = {layer.stride_x * o + layer.dilation_x * f - left for o in range(layer.OX) for f in range(layer.FX)}
    real_rows = sum(1 for r in rows if 0 <= r < layer.IY)
    real_cols = sum(1 for c in cols if 0 <= c < layer.IX)
    return layer.B * layer.G * layer.C * real_rows * real_cols


@given(ox=st.integers(1, 14), fx=st.integers(1, 7), s=st.integers(1, 4), d=st.integers(1, 3),
       uo=st.sampled_from([1, 2, 3, 4, 8]), uf=st.sampled_from([1, 2, 3]))  # fmt: skip
def test_mean_per_cycle_inputs_average_the_ragged_steps(ox: int, fx: int, s: int, d: int, uo: int, uf: int) -> None:
    """Averaged over every (OX step, FX step), the array reads the distinct columns that step has, no more."""
    from accelsched.hardware.cost.layer_cost import _Model

    layer = Layer("L", OpKind.CONV, K=2, C=3, OY=2, OX=ox, FY=1, FX=fx, stride_x=s, dilation_x=d)
    model = _Model(layer, flat_core(spatial=(("OX", uo), ("FX", uf))), offchip(), {})
    counts = []
    for o0 in range(0, ox, uo):
        for f0 in range(0, fx, uf):
            cols = {s * o + d * f for o in range(o0, min(ox, o0 + uo)) for f in range(f0, min(fx, f0 + uf))}
            counts.append(min(len(cols), layer.IX))
    assert model._mean_per_cycle("I") == pytest.approx(sum(counts) / len(counts))


def test_ragged_spatial_steps_are_not_billed_as_full() -> None:
    """A 14x14 depthwise map on an OX4|OY4 array reads 3.5 x 3.5 pixels a cycle on average (14 = 4+4+4+2)."""
    from accelsched.hardware import load_accelerator
    from accelsched.hardware.cost.layer_cost import _Model

    acc = load_accelerator("defines-meta-proto")
    layer = Layer("dw", OpKind.CONV, K=1, C=1, G=32, OY=14, OX=14, FY=3, FX=3, padding=(1, 1, 1, 1))
    model = _Model(layer, acc.cores[0], acc.offchip, {})
    assert (model.spatial["OX"], model.spatial["OY"], model.spatial["G"]) == (4, 4, 32)
    assert model._peak_per_cycle("I") == 32 * 4 * 4
    assert model._mean_per_cycle("I") == pytest.approx(32 * 3.5 * 3.5)
    assert model._mean_per_cycle("O") == pytest.approx(32 * 3.5 * 3.5)
    # the mean equals the total over all steps: every output is accumulated FY*FX times
    cycles = math.prod(model._steps(dim) for dim in model.loops)
    assert model._mean_per_cycle("O") * cycles == pytest.approx(layer.output_elements * 9)
