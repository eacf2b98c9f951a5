"""The ZigZag cross-check: ZigZag runs, its cache, the statistics and the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelsched.bench import zigzag_crosscheck as zc
from accelsched.bench.zigzag_run import Controls, ZigZagJob, cached, run_zigzag
from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.models import zoo
from accelsched.models.layer import Layer, OpKind


def test_spearman() -> None:
    """Rank correlation: order, reversal, ties, too few values, mismatched lengths."""
    assert zc.spearman([1, 2, 3, 4], [10, 20, 30, 45]) == pytest.approx(1.0)
    assert zc.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert zc.spearman([1, 2, 2, 3], [1, 2, 2, 3]) == pytest.approx(1.0)
    assert zc.spearman([1, 2], [1, 2]) is None
    with pytest.raises(ValueError):
        zc.spearman([1, 2, 3], [1, 2])


def test_distinct_layers_groups_shapes() -> None:
    """Equal shapes are evaluated once; pooling and element-wise layers are left out."""
    layers = zoo.get("resnet18").layers
    groups = zc.distinct_layers(layers)
    assert len(groups) == 12
    assert sum(len(names) for _, names in groups) == sum(1 for x in layers if x.kind in (OpKind.CONV, OpKind.FC))


def test_bad_arguments_exit_with_usage() -> None:
    """Non-positive workers are refused by the parser."""
    with pytest.raises(SystemExit) as info:
        zc.main(["render", "x.json", "--workers", "0"])
    assert info.value.code == 2


def test_small_layer_against_zigzag(tmp_path: Path) -> None:
    """A small layer through ZigZag: both optima, the DRAM floor, the cache and the agreement with ours."""
    pytest.importorskip("zigzag", reason="ZigZag not installed: pip install 'accelsched[zigzag]'")
    acc = load_accelerator("defines-meta-proto")
    layer = Layer("small", OpKind.CONV, K=32, C=16, OY=8, OX=8, FY=3, FX=3, padding=(1, 1, 1, 1))
    pair = run_zigzag(layer, acc, Controls(), cache_dir=tmp_path)
    assert pair.energy.energy_pj <= pair.latency.energy_pj
    assert pair.latency.latency_cycles <= pair.energy.latency_cycles
    for cost in (pair.energy, pair.latency):
        assert cost.latency_cycles >= cost.ideal_cycles
        assert cost.latency_cycles >= sum(cost.dram_bytes.values()) / acc.offchip.bandwidth_bytes_per_cycle - 1e-6
        # the layer fits on chip: every operand crosses the DRAM port once
        assert cost.dram_bytes["W"] == pytest.approx(layer.w_elements)
        assert cost.dram_bytes["O"] == pytest.approx(layer.output_elements)
    job = ZigZagJob.of(layer, acc, Controls())
    assert cached(job, tmp_path) == pair
    assert job.key("3.9.1") != ZigZagJob.of(layer, acc, Controls(lpf_limit=5)).key("3.9.1")
    ours = layer_cost(layer, acc.cores[0], acc.offchip)
    assert 0.8 <= ours.energy_pj / pair.energy.energy_pj <= 1.25
    assert ours.compute_cycles == pytest.approx(pair.latency.ideal_cycles)


def test_render_lists_controls_and_rows() -> None:
    """The Markdown names every control and has one row per layer."""
    row = {"preset": "p", "workload": "w", "layer": "l", "same_shape": [], "shape": "conv", "macs": 1,
           "ours": {"energy_pj": 2.0, "latency_cycles": 3.0, "spatial_utilization": 1.0},
           "zigzag_energy": {"energy_pj": 1.0}, "zigzag_latency": {"latency_cycles": 1.0, "spatial_utilization": 1.0},
           "energy_ratio": 2.5, "latency_ratio": 3.0, "flagged": True, "cause": None}  # fmt: skip
    data = {"zigzag_version": "3.9.1", "controls_described": Controls().describe(), "flag_ratio": 2.0,
            "cells": [{"preset": "p", "workload": "w", "layers": 1, **zc._summary([row | {
                "zigzag_energy": {"energy_pj": 0.8}, "zigzag_latency": {"latency_cycles": 1.0}}])}],
            "rows": [row], "wall_s": 1.0, "conditions": {"python": "3.11", "cpu_count": 2}}  # fmt: skip
    text = zc.render(data)
    for line in Controls().describe():
        assert line in text
    assert "| p | w | l | conv |" in text
    assert "not traced" in text
