"""Tile geometry of depth-first stacks, checked by hand on small chains."""

from __future__ import annotations

import random

import pytest

from accelsched.hardware.cost.depth_first_tiles import AxisSchedule, input_interval, schedule_axis, tile_bounds
from accelsched.models.builder import NetBuilder
from accelsched.models.layer import Layer, OpKind
from accelsched.models.registry import load_workload
from accelsched.models.workload import Workload
from accelsched.models.zoo.defines import padding_free_chain
from accelsched.problems.depth_first import cut_points


def chain() -> Workload:
    """Two unpadded 3x3 convolutions: input 12 wide, conv0 writes 10, conv1 writes 8."""
    return padding_free_chain("two", 1, 8, 8, [(4, 3), (4, 3)])


def spans(schedule: AxisSchedule) -> list[tuple[int, dict[str, tuple[int, int, int]]]]:
    return [(c.count, {n: (s.needed, s.computed, s.kept) for n, s in c.tensors.items()}) for c in schedule.classes]


def test_input_interval_adds_the_halo_and_clips_to_the_input() -> None:
    layer = Layer("c", OpKind.CONV, K=1, C=1, OY=8, OX=8, FY=3, FX=3, stride_y=2, stride_x=2, padding=(1, 1, 1, 1))
    # output columns [2, 4) with stride 2, kernel 3, padding 1 read [3, 8)
    assert input_interval(layer, "x", (2, 4)) == (3, 8)
    # the first output column's window starts in the padding: clipped at 0
    assert input_interval(layer, "x", (0, 1)) == (0, 2)
    # the last ones run past the unpadded input (15 wide): clipped at 15
    assert layer.IX == 15
    assert input_interval(layer, "x", (7, 8)) == (13, 15)
    assert input_interval(layer, "x", (3, 3)) == (0, 0)


def test_tile_bounds_put_the_leftover_first() -> None:
    assert tile_bounds(10, 4) == [(0, 2), (2, 6), (6, 10)]
    assert tile_bounds(8, 4) == [(0, 4), (4, 8)]
    assert tile_bounds(5, 5) == [(0, 5)]


def test_recompute_back_calculates_every_tile_in_full() -> None:
    layers = list(chain())
    schedule = schedule_axis(layers, ["<input>"], "x", 4, cached=False)
    # conv1 [0,4) needs conv0 [0,6) which needs input [0,8); tile 1 is the same shifted by 4
    assert spans(schedule) == [(2, {"conv1": (4, 4, 0), "conv0": (6, 6, 0), "<input>": (8, 8, 0)})]
    assert schedule.n_tiles == 2


def test_cached_axis_computes_only_new_pixels_and_keeps_the_overlap() -> None:
    layers = list(chain())
    schedule = schedule_axis(layers, ["<input>"], "x", 4, cached=True, exact=True)
    first, second = spans(schedule)
    # tile 0: everything new; conv0 and the input keep their last 2 columns for tile 1
    assert first == (1, {"conv1": (4, 4, 0), "conv0": (6, 6, 2), "<input>": (8, 8, 2)})
    # tile 1: conv0 needs [4, 10) but computes only [6, 10); the input fetches only [8, 12)
    assert second == (1, {"conv1": (4, 4, 0), "conv0": (6, 4, 0), "<input>": (6, 4, 0)})
    reads = schedule.classes[1].reads
    # conv1 reads 6 columns of conv0, 4 of them new; conv0 reads 6 input columns, 4 new
    assert reads[("conv0", "conv1")] == (6, 4)
    assert reads[("<input>", "conv0")] == (6, 4)
    assert schedule.max_kept == {"conv1": 0, "conv0": 2, "<input>": 2}


def test_at_most_two_compute_shapes_per_axis_on_padding_free_chains() -> None:
    """First (leftover) tile and the others: at most 2 x 2 = 4 tile types, exact on padding-free chains."""
    layers = list(load_workload("fsrcnn"))
    for tile, cached in ((60, True), (60, False), (7, True), (1, True), (960, True)):
        default = schedule_axis(layers, ["<input>"], "x", tile, cached)
        exact = schedule_axis(layers, ["<input>"], "x", tile, cached, exact=True)
        assert len(default.classes) <= 2
        if cached and tile < 960:
            assert [c.count for c in default.classes] == [1, -(-960 // tile) - 1]
        shapes = {tuple(s.computed for s in c.tensors.values()) for c in exact.classes}
        assert shapes == {tuple(s.computed for s in c.tensors.values()) for c in default.classes}
        assert sum(c.count for c in exact.classes) == exact.n_tiles == default.n_tiles == -(-960 // tile)


def _merged(schedule: AxisSchedule) -> dict[object, int]:
    out: dict[object, int] = {}
    for c in schedule.classes:
        key = (tuple(sorted(c.tensors.items())), tuple(sorted(c.reads.items())))
        out[key] = out.get(key, 0) + c.count
    return out


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v1", "mccnn"])
def test_interior_tiles_priced_once_equal_pricing_every_tile(name: str) -> None:
    """The border windows plus one interior tile give exactly the classes of a tile-by-tile walk."""
    workload = load_workload(name)
    names = workload.names
    starts = [-1, *sorted(cut_points(workload))]
    rng = random.Random(7)
    for _ in range(8):
        i = rng.randrange(len(starts) - 1)
        j = rng.randrange(i + 1, len(starts))
        layers = [workload[n] for n in names[starts[i] + 1 : starts[j] + 1]]
        inside = {layer.name for layer in layers}
        outside = sorted({p for layer in layers for p in (layer.inputs or ("<input>",)) if p not in inside})
        for axis in "xy":
            extent = layers[-1].OX if axis == "x" else layers[-1].OY
            for tile in {1, 2, 3, max(1, extent // 7)}:
                for cached in (False, True):
                    full = schedule_axis(layers, outside, axis, tile, cached, exact=True, window=10**9)
                    fast = schedule_axis(layers, outside, axis, tile, cached, exact=True)
                    assert _merged(fast) == _merged(full)
                    assert fast.max_kept == full.max_kept
                    assert fast.n_tiles == full.n_tiles


def test_branches_take_the_hull_of_their_consumers() -> None:
    b = NetBuilder("branchy", 2, 12, 12, bits=8, psum_bits=16)
    x = b.conv(b.input, 4, 3, pad="valid", name="a")  # 10 x 10
    left = b.conv(x, 4, 3, pad="valid", name="l")  # 8 x 8
    right = b.conv(x, 4, 1, pad="valid", name="r")  # 10 x 10, reads a as is
    b.conv(b.concat(left, b.pool(right, 3, stride=1, pad="valid", name="p")), 4, 1, name="out")
    workload = b.build()
    layers = [workload[n] for n in workload.names]
    schedule = schedule_axis(layers, ["<input>"], "x", 4, cached=False)
    tensors = schedule.classes[0].tensors
    # out [0,4) -> l and p [0,4) -> a needs [0,6) for l and r [0,6) -> r needs a [0,6): hull [0,6)
    assert tensors["a"].needed == 6
    assert tensors["r"].needed == 6
