"""ZigZag on one layer and one core: the two optima, the controls of ZigZag's own errors and the disk cache."""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

import pytest

from accelsched.bench import zigzag_run
from accelsched.bench.zigzag_run import (
    Controls,
    ZigZagCost,
    ZigZagJob,
    ZigZagPair,
    cached,
    require_zigzag,
    run_job,
    run_zigzag,
    zigzag_available,
)
from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.hardware.spec import Accelerator
from accelsched.models.layer import Layer, OpKind

ZIGZAG = "ZigZag not installed: pip install 'accelsched[zigzag]'"
PRESET = "defines-meta-proto"

# every loop divides its unrolling on the Meta prototype (K32 | C2 | OX4 | OY4) and the layer fits on chip
EVEN = Layer("even", OpKind.CONV, K=64, C=16, OY=8, OX=8)
TINY = Layer("tiny", OpKind.CONV, K=32, C=8, OY=4, OX=4)
# OX = OY = 7 on 4 columns / rows: a ragged unrolling, at stride 2 (a downsampling 1x1 convolution)
RAGGED = Layer("ragged", OpKind.CONV, K=32, C=8, OY=7, OX=7, stride_y=2, stride_x=2)
FC = Layer("fc", OpKind.FC, K=64, C=64, OY=1, OX=1)


@pytest.fixture(scope="module")
def acc() -> Accelerator:
    """The Meta prototype, the preset of every run here."""
    return load_accelerator(PRESET)


@pytest.fixture(scope="module")
def even_run(tmp_path_factory: pytest.TempPathFactory, acc: Accelerator) -> tuple[ZigZagPair, Path]:
    """ZigZag's optima of the even layer, searched once, and the cache folder it was written to."""
    pytest.importorskip("zigzag", reason=ZIGZAG)
    cache = tmp_path_factory.mktemp("zigzag-cache")
    return run_zigzag(EVEN, acc, Controls(), cache_dir=cache), cache


@pytest.fixture
def layer_node() -> Any:
    """ZigZag's ``LayerNode`` class (the test is skipped without ZigZag)."""
    pytest.importorskip("zigzag", reason=ZIGZAG)
    from zigzag.workload.layer_node import LayerNode

    return LayerNode


def _cost(**changes: Any) -> ZigZagCost:
    base = ZigZagCost(target="energy", energy_pj=10.5, latency_cycles=7.0, raw_latency_cycles=6.0,
                      steady_latency_cycles=5.0, ideal_cycles=4.0,
                      spatial_utilization=0.5, dram_bytes={"I": 1.0, "W": 2.0, "O": 3.0},
                      energy_breakdown_pj={"mac": 1.5, "mem:dram": 9.0}, temporal_mapping="K 2", seconds=0.1,
                      controls=asdict(Controls()), version="3.9.1")  # fmt: skip
    return replace(base, **changes)


# ------------------------------------------------------------------ without ZigZag
def test_controls_describe_one_line_per_control() -> None:
    """Every control is described, the optional ones only when on, with the values it ran with."""
    on = Controls().describe()
    assert len(on) == 4
    assert "`lpf_limit` 6" in on[0] and "= True" in on[-1]
    off = Controls(exact_tensor_dims=False, dram_floor=False, lpf_limit=8, same_data_no_access=False).describe()
    assert len(off) == 2
    assert "`lpf_limit` 8" in off[0] and "= False" in off[-1]
    assert not any("calc_tensor_dim" in line or "floored" in line for line in off)


def test_pair_round_trips_through_json() -> None:
    """A pair written as JSON and read back is equal to the original."""
    pair = ZigZagPair(_cost(), _cost(target="latency", energy_pj=12.0, latency_cycles=5.0))
    assert ZigZagPair.from_dict(json.loads(json.dumps(pair.to_dict()))) == pair


def test_job_key_depends_on_everything_the_result_depends_on(acc: Accelerator) -> None:
    """Equal jobs share a key; another control value, ZigZag version, layer shape or preset changes it."""
    job = ZigZagJob.of(EVEN, acc, Controls())
    assert job.key("3.9.1") == ZigZagJob.of(EVEN, load_accelerator(PRESET), Controls()).key("3.9.1")
    # the name is not part of the shape: equal shapes share one search
    renamed = ZigZagJob.of(EVEN.replace(name="another"), acc, Controls())
    assert renamed.workload != job.workload and renamed.key("3.9.1") == job.key("3.9.1")
    others = [ZigZagJob.of(EVEN, acc, replace(Controls(), **{f.name: _flip(getattr(Controls(), f.name))}))
              for f in fields(Controls)]  # fmt: skip
    others += [ZigZagJob.of(EVEN.replace(K=32), acc, Controls()),
               ZigZagJob.of(EVEN, load_accelerator("defines-edge-tpu"), Controls())]  # fmt: skip
    keys = {job.key("3.9.1"), job.key("3.9.2"), *(other.key("3.9.1") for other in others)}
    assert len(keys) == 2 + len(others)


def _flip(value: Any) -> Any:
    return (not value) if isinstance(value, bool) else value + 1


def test_without_zigzag_nothing_runs_and_nothing_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, acc: Accelerator
) -> None:
    """Without ZigZag a run is refused with the install command, and the cache is not consulted."""
    job = ZigZagJob.of(TINY, acc, Controls())
    (tmp_path / f"{job.key('3.9.1')}.json").write_text(json.dumps(ZigZagPair(_cost(), _cost()).to_dict()))
    monkeypatch.setattr(zigzag_run, "zigzag_available", lambda: None)
    assert cached(job, tmp_path) is None
    with pytest.raises(RuntimeError, match=r"pip install 'accelsched\[zigzag\]'"):
        run_job(job, tmp_path)
    with pytest.raises(RuntimeError, match="not installed"):
        require_zigzag()


def test_snap_removes_float_noise_only() -> None:
    """Sizes within float noise of an integer become that integer; real fractions stay."""
    assert zigzag_run._snap(56.99999999999999) == 57
    assert zigzag_run._snap(1e9 + 1e-4) == 1e9
    assert zigzag_run._snap(3.5) == 3.5
    assert zigzag_run._snap(3.99) == 3.99
    assert zigzag_run._snap(0.0) == 0


# ------------------------------------------------------------------ with ZigZag
def test_both_optima_are_ordered(even_run: tuple[ZigZagPair, Path], acc: Accelerator) -> None:
    """The energy optimum spends no more energy, the latency optimum no more time; both respect the ideal cycles."""
    pair, _ = even_run
    assert (pair.energy.target, pair.latency.target) == ("energy", "latency")
    assert pair.energy.energy_pj <= pair.latency.energy_pj
    assert pair.latency.latency_cycles <= pair.energy.latency_cycles
    for cost in (pair.energy, pair.latency):
        assert cost.latency_cycles >= cost.raw_latency_cycles >= cost.ideal_cycles > 0
        assert cost.latency_cycles >= cost.steady_latency_cycles >= cost.ideal_cycles
        assert cost.ideal_cycles == pytest.approx(EVEN.macs / acc.cores[0].n_macs / cost.spatial_utilization)
        assert cost.energy_pj == pytest.approx(sum(cost.energy_breakdown_pj.values()))
        assert cost.energy_breakdown_pj["mac"] == pytest.approx(EVEN.macs * acc.cores[0].mac_energy_pj)
        assert {"mac", "mem:dram"} <= set(cost.energy_breakdown_pj)
        assert cost.temporal_mapping and cost.seconds > 0
        assert cost.controls == asdict(Controls()) and cost.version == zigzag_available()


def test_dram_traffic_of_a_layer_that_fits(even_run: tuple[ZigZagPair, Path], acc: Accelerator) -> None:
    """Every operand crosses the DRAM port once, and the floored latency covers that traffic."""
    pair, _ = even_run
    bandwidth = acc.offchip.bandwidth_bytes_per_cycle
    for cost in (pair.energy, pair.latency):
        assert dict(cost.dram_bytes) == pytest.approx({"I": EVEN.input_bytes, "W": EVEN.weight_bytes,
                                                       "O": EVEN.output_bytes})  # fmt: skip
        floor = sum(cost.dram_bytes.values()) / bandwidth
        assert cost.latency_cycles >= floor - 1e-9 and cost.steady_latency_cycles >= floor - 1e-9
        assert cost.latency_cycles == pytest.approx(max(cost.raw_latency_cycles, floor))


def test_compute_agrees_with_layer_cost(acc: Accelerator) -> None:
    """On an even layer and an fc layer that idles the pixel dimensions, both tools count the same compute."""
    pytest.importorskip("zigzag", reason=ZIGZAG)
    for layer in (TINY, FC):
        pair = run_zigzag(layer, acc, Controls(), cache_dir=None)
        ours = layer_cost(layer, acc.cores[0], acc.offchip)
        assert pair.latency.ideal_cycles == pytest.approx(ours.compute_cycles)
        assert pair.latency.spatial_utilization == pytest.approx(ours.spatial_utilization)
    assert ours.spatial_utilization == pytest.approx(1 / 16)  # the fc layer: OX, OY of 1 on 4 x 4


def test_result_is_cached_under_its_key(even_run: tuple[ZigZagPair, Path], acc: Accelerator) -> None:
    """One JSON file named by the job's key, no temporary file left; reading it gives the same pair."""
    pair, cache = even_run
    job = ZigZagJob.of(EVEN, acc, Controls())
    version = zigzag_available()
    assert version is not None
    assert sorted(p.name for p in cache.iterdir()) == [f"{job.key(version)}.json"]
    assert cached(job, cache) == pair
    assert cached(job, None) is None


def test_cache_hit_does_not_run_zigzag(
    even_run: tuple[ZigZagPair, Path], acc: Accelerator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cached job is answered from the file; other controls miss the cache."""
    pair, cache = even_run

    def refuse(*_: Any) -> ZigZagPair:
        raise AssertionError("ZigZag ran for a cached job")

    monkeypatch.setattr(zigzag_run, "_evaluate", refuse)
    assert run_zigzag(EVEN, acc, Controls(), cache_dir=cache) == pair
    assert cached(ZigZagJob.of(EVEN, acc, Controls(lpf_limit=5)), cache) is None
    with pytest.raises(AssertionError, match="ZigZag ran"):
        run_zigzag(EVEN, acc, Controls(lpf_limit=5), cache_dir=cache)


def test_unreadable_cache_entries_are_misses(even_run: tuple[ZigZagPair, Path], acc: Accelerator,
                                            tmp_path: Path) -> None:  # fmt: skip
    """A truncated, malformed or incomplete cache file is not a result."""
    pytest.importorskip("zigzag", reason=ZIGZAG)
    job = ZigZagJob.of(EVEN, acc, Controls())
    version = zigzag_available()
    assert version is not None
    path = tmp_path / f"{job.key(version)}.json"
    for text in ('{"energy": {', "[]", '{"energy": {}, "latency": {}}', '{"latency": {}}'):
        path.write_text(text)
        assert cached(job, tmp_path) is None


def test_dram_floor_control(acc: Accelerator) -> None:
    """Without the floor the latency is ZigZag's own figure; with it, never below the DRAM traffic's time."""
    pytest.importorskip("zigzag", reason=ZIGZAG)
    raw = run_zigzag(TINY, acc, Controls(dram_floor=False), cache_dir=None)
    floored = run_zigzag(TINY, acc, Controls(), cache_dir=None)
    bandwidth = acc.offchip.bandwidth_bytes_per_cycle
    for cost in (raw.energy, raw.latency):
        assert cost.latency_cycles == cost.raw_latency_cycles
        # without loading before the first MAC and after the last: the steady state is never longer
        assert cost.ideal_cycles <= cost.steady_latency_cycles <= cost.raw_latency_cycles
    for before, after in ((raw.energy, floored.energy), (raw.latency, floored.latency)):
        floor = sum(after.dram_bytes.values()) / bandwidth
        assert after.raw_latency_cycles == before.raw_latency_cycles
        assert after.latency_cycles == pytest.approx(max(before.raw_latency_cycles, floor))
    # this layer's compulsory traffic takes longer than ZigZag's latency: the floor is what it reports
    assert floored.latency.latency_cycles > floored.latency.raw_latency_cycles
    # the minimum-latency mapping is chosen on the floored value, so no mapping reports less
    assert floored.latency.latency_cycles <= floored.energy.latency_cycles


def test_controls_apply_inside_the_block_only(layer_node: Any) -> None:
    """The patch and the silenced logging hold inside ``_controlled`` and are undone after it, even on error."""
    shipped, level = layer_node.calc_tensor_dim, logging.root.manager.disable
    with zigzag_run._controlled(Controls()):
        assert layer_node.calc_tensor_dim is zigzag_run._exact_calc_tensor_dim
        assert logging.root.manager.disable == logging.CRITICAL
    assert (layer_node.calc_tensor_dim, logging.root.manager.disable) == (shipped, level)
    with zigzag_run._controlled(Controls(exact_tensor_dims=False)):
        assert layer_node.calc_tensor_dim is shipped
    with pytest.raises(KeyError), zigzag_run._controlled(Controls()):
        raise KeyError("inside")
    assert (layer_node.calc_tensor_dim, logging.root.manager.disable) == (shipped, level)


def test_a_run_leaves_zigzag_as_shipped(layer_node: Any, acc: Accelerator) -> None:
    """Running ZigZag in this process does not leave it patched."""
    shipped, level = layer_node.calc_tensor_dim, logging.root.manager.disable
    run_zigzag(TINY, acc, Controls(), cache_dir=None)
    assert (layer_node.calc_tensor_dim, logging.root.manager.disable) == (shipped, level)


def test_tensor_dims_patch_keeps_fractional_tiles(layer_node: Any, acc: Accelerator) -> None:
    """ZigZag truncates a fractional tile to whole outputs before counting its inputs; the patch keeps it."""
    from zigzag.datatypes import LayerDim
    from zigzag.parser.mapping_validator import MappingValidator
    from zigzag.parser.workload_factory import WorkloadFactory
    from zigzag.parser.workload_validator import WorkloadValidator
    from zigzag.workload.layer_attributes import LayerDimSizes

    job = ZigZagJob.of(RAGGED, acc, Controls())
    workload, mapping = WorkloadValidator(job.workload), MappingValidator(job.mapping)
    assert workload.validate() and mapping.validate()
    (node,) = WorkloadFactory(workload.normalized_data, mapping.normalized_data).create().node_list
    ix, ox, fx = LayerDim("IX"), LayerDim("OX"), LayerDim("FX")

    def columns(tile_ox: float) -> Any:
        return node.calc_tensor_dim(ix, LayerDimSizes({ox: tile_ox, fx: 1}))

    noisy = 0.3 / 0.1 * 2  # 5.999999999999999: 6 outputs per tile, in float noise
    assert noisy != 6
    assert (columns(3.5), columns(4), columns(noisy), columns(57)) == (3, 4, 5, 13)  # int() truncates; IX clips
    with zigzag_run._controlled(Controls()):
        assert (columns(3.5), columns(4), columns(noisy), columns(57)) == (3.5, 4, 6, 13)
        assert node.calc_tensor_dim(ox, LayerDimSizes({ox: 3.5, fx: 1})) == 3.5  # a loop of the layer, as given


def test_exact_tensor_dims_control(layer_node: Any, acc: Accelerator) -> None:
    """An even layer is unchanged by the control; a ragged strided one reads its touched inputs only with it."""
    off_even = run_zigzag(TINY, acc, Controls(exact_tensor_dims=False), cache_dir=None)
    off_ragged = run_zigzag(RAGGED, acc, Controls(exact_tensor_dims=False), cache_dir=None)
    on_even = run_zigzag(TINY, acc, Controls(), cache_dir=None)
    on_ragged = run_zigzag(RAGGED, acc, Controls(), cache_dir=None)
    for off, on in ((off_even.energy, on_even.energy), (off_even.latency, on_even.latency)):
        assert (on.energy_pj, on.latency_cycles, dict(on.dram_bytes)) == (off.energy_pj, off.latency_cycles,
                                                                          dict(off.dram_bytes))  # fmt: skip
    touched = 7 * 7 * RAGGED.C  # 1x1 stride 2: one input pixel per output, per channel
    assert layer_cost(RAGGED, acc.cores[0], acc.offchip).dram_read_bytes["I"] == pytest.approx(touched)
    assert on_ragged.energy.dram_bytes["I"] == pytest.approx(touched)
    assert off_ragged.energy.dram_bytes["I"] < touched
