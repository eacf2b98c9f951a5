"""The ZigZag cross-check: ZigZag runs, its cache, the statistics and the table."""

from __future__ import annotations

import json
import math
import random
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accelsched.bench import zigzag_crosscheck as zc
from accelsched.bench.zigzag_run import Controls, ZigZagJob, cached, run_job, run_zigzag, zigzag_available
from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.models import zoo
from accelsched.models.layer import Layer, OpKind
from accelsched.models.workload import Workload


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


def _fake_row(energy: float, latency: float, steady: float, cause: str | None) -> dict[str, Any]:
    worst = max(energy, 1 / energy, latency, 1 / latency)
    return {"preset": "p", "workload": "w", "layer": "l", "same_shape": [], "shape": "conv", "macs": 1,
            "ours": {"energy_pj": 2.0, "latency_cycles": 3.0, "spatial_utilization": 1.0},
            "zigzag_energy": {"energy_pj": 2.0 / energy},
            "zigzag_latency": {"latency_cycles": 3.0 / latency, "steady_latency_cycles": 3.0 / steady,
                               "spatial_utilization": 1.0},
            "energy_ratio": energy, "latency_ratio": latency, "steady_ratio": steady,
            "flagged": worst > zc.FLAG_RATIO, "traced": worst > zc.TRACE_RATIO, "cause": cause}  # fmt: skip


def test_render_lists_controls_rows_and_causes() -> None:
    """The Markdown names every control, lists layers off by 2x and by 1.25x with their causes, and every row."""
    rows = [_fake_row(2.5, 3.0, 3.0, None), _fake_row(1.0, 0.7, 0.97, zc.SERIAL_LOADING), _fake_row(1, 1, 1, None)]
    data = {"zigzag_version": "3.9.1", "controls_described": Controls().describe(), "raised_lpf": {"w": 7},
            "flag_ratio": zc.FLAG_RATIO, "trace_ratio": zc.TRACE_RATIO, "cause_notes": dict(zc.CAUSE_NOTES),
            "cells": [{"preset": "p", "workload": "w", "layers": 3, **zc._summary(rows)}],
            "rows": rows, "wall_s": 1.0, "conditions": {"python": "3.11", "cpu_count": 2}}  # fmt: skip
    text = zc.render(data)
    for line in Controls().describe():
        assert f"- {line}" in text
    assert "- LOMA `lpf_limit` raised to 7 for w" in text
    assert "## Layers off by more than 2x (1)" in text and "## Layers outside [0.80, 1.25] (2)" in text
    assert "| p | w | l | conv | 2.50 | 3.00 | 3.00 | not traced |" in text
    assert f"| p | w | l | conv | 1.00 | 0.70 | 0.97 | {zc.SERIAL_LOADING} |" in text
    assert f"- **{zc.SERIAL_LOADING}**: {zc.CAUSE_NOTES[zc.SERIAL_LOADING]}" in text
    assert text.count("| p | w | l | conv |") == 3 + 2 + 1


def test_summary_of_three_rows() -> None:
    """Geometric mean, extremes and rank correlation of each ratio, the steady one on ZigZag's steady latency."""
    rows = [_fake_row(1.0, 0.5, 1.0, None), _fake_row(2.0, 1.0, 0.8, None), _fake_row(4.0, 2.0, 1.25, None)]
    rows[1]["ours"] = {"energy_pj": 4.0, "latency_cycles": 6.0}
    summary = zc._summary(rows)
    assert summary["layers"] == 3
    assert summary["energy"]["geomean"] == pytest.approx(2.0) and summary["latency"]["geomean"] == pytest.approx(1.0)
    assert (summary["steady"]["min"], summary["steady"]["max"]) == (0.8, 1.25)
    assert summary["steady"]["geomean"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("ratios", "cause"),
    [
        ({"energy": 1.0, "latency": 0.67, "steady": 0.97}, zc.SERIAL_LOADING),  # the steady state agrees
        ({"energy": 1.0, "latency": 0.67, "steady": 0.70}, None),  # it does not: not this cause
        ({"energy": 0.7, "latency": 0.67, "steady": 0.97}, None),  # energy is off too
        ({"energy": 1.0, "latency": 1.0, "steady": 1.0}, None),  # nothing to explain
    ],
)
def test_cause_of_attributes_serial_loading_from_the_figures(ratios: dict[str, float], cause: str | None) -> None:
    """A latency gap is ZigZag's serial loading only when energy and the steady-state latency agree."""
    assert zc.cause_of("p", "w", "l", ratios) == cause


def test_controls_for_raises_lpf_per_workload() -> None:
    """FSRCNN's layers are searched with a higher lpf_limit; other workloads keep the run's; never lowered."""
    assert zc.controls_for("fsrcnn", Controls()).lpf_limit == zc.RAISED_LPF["fsrcnn"] == 7
    assert zc.controls_for("resnet18", Controls()) == Controls()
    assert zc.controls_for("fsrcnn", Controls(lpf_limit=8)).lpf_limit == 8
    assert zc.controls_for("fsrcnn", Controls(dram_floor=False)).dram_floor is False


# ------------------------------------------------------------------ rank correlation
def test_spearman_known_values() -> None:
    """Textbook values: one swapped pair each side of five, and mid ranks for ties."""
    # no ties: 1 - 6 * sum(d^2) / (n (n^2 - 1)) = 1 - 6 * 4 / 120
    assert zc.spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == pytest.approx(0.8)
    # ties share their mean rank: ranks (1.5, 1.5, 3.5, 3.5) against (1, 2, 3, 4) -> 4 / sqrt(20)
    assert zc.spearman([1, 2, 3, 4], [1, 1, 2, 2]) == pytest.approx(4 / math.sqrt(20))
    assert zc.spearman([3.0, 1.0, 2.0], [30.0, 10.0, 20.0]) == pytest.approx(1.0)


def test_spearman_without_spread_or_values() -> None:
    """A constant sample has no rank order; fewer than three values are too few; lengths must match."""
    assert zc.spearman([5, 5, 5, 5], [1, 2, 3, 4]) is None
    assert zc.spearman([1, 2, 3], [7, 7, 7]) is None
    assert zc.spearman([], []) is None
    assert zc.spearman([1.0], [2.0]) is None
    with pytest.raises(ValueError, match="3 and 4"):
        zc.spearman([1, 2, 3], [1, 2, 3, 4])


@given(st.lists(st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6)), min_size=3, max_size=12), st.randoms())
def test_spearman_depends_on_ranks_only(pairs: list[tuple[float, float]], rng: random.Random) -> None:
    """Symmetric, in [-1, 1], unchanged by reordering the pairs and by an increasing transform of a sample."""
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    shuffled = rng.sample(pairs, len(pairs))
    rho = zc.spearman(a, b)
    others = [zc.spearman(b, a), zc.spearman([x for x, _ in shuffled], [y for _, y in shuffled])]
    # atan is increasing; it keeps the rank order when it keeps the values apart in floating point
    transformed = [3 * math.atan(x) + 1 for x in a]
    if len(set(transformed)) == len(set(a)):
        others.append(zc.spearman(transformed, b))
    if rho is None:
        assert others == [None] * len(others)
        assert len(set(a)) == 1 or len(set(b)) == 1
    else:
        assert -1 - 1e-9 <= rho <= 1 + 1e-9
        assert others == [pytest.approx(rho)] * len(others)


# ------------------------------------------------------------------ the layers compared
def test_distinct_layers_keeps_first_of_each_shape() -> None:
    """Groups are in first-occurrence order, share a shape, hold every conv / fc layer once and nothing else."""
    layers = zoo.get("resnet18").layers
    groups = zc.distinct_layers(layers)
    by_name = {x.name: x for x in layers}
    names = [n for _, group in groups for n in group]
    assert sorted(names) == sorted(x.name for x in layers if x.kind in (OpKind.CONV, OpKind.FC))
    assert "maxpool" not in names and not any(n.endswith("_add") for n in names)
    assert [layer.shape_key() for layer, _ in groups] == list(dict.fromkeys(by_name[n].shape_key() for n in names))
    for layer, group in groups:
        assert layer.name == group[0]
        assert all(by_name[n].shape_key() == layer.shape_key() for n in group)
        assert [n for n in by_name if n in group] == group  # workload order within a group
    assert ["layer1_0_conv1", "layer1_0_conv2", "layer1_1_conv1", "layer1_1_conv2"] in [g for _, g in groups]


def test_distinct_layers_of_nothing_to_compare() -> None:
    """A workload without conv / fc layers has nothing to compare."""
    pool = Layer("pool", OpKind.POOL, K=1, C=1, G=8, OY=4, OX=4, FY=2, FX=2, stride_y=2, stride_x=2)
    assert zc.distinct_layers([pool]) == []


# ------------------------------------------------------------------ the command line
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--workers", "0"], "--workers must be >= 1"),
        (["run", "--lpf-limit", "0"], "--lpf-limit must be >= 1"),
        (["render"], "render takes one JSON file"),
        (["compare"], "invalid choice"),
    ],
)
def test_bad_command_lines_exit_with_usage(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Bad arguments end with argparse's exit status 2 and say what is wrong."""
    with pytest.raises(SystemExit) as info:
        zc.main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err or (argv[0] == "run" and "ZigZag is not installed" in err)


# ------------------------------------------------------------------ a run on a workload of three distinct layers
TINY = (
    Layer("a", OpKind.CONV, K=32, C=8, OY=4, OX=4),
    Layer("b", OpKind.CONV, K=32, C=32, OY=4, OX=4, inputs=("a",)),
    Layer("c", OpKind.CONV, K=32, C=32, OY=4, OX=4, inputs=("b",)),
    Layer("add", OpKind.ELTWISE, K=1, C=1, G=32, OY=4, OX=4, inputs=("b", "c")),
    Layer("down", OpKind.CONV, K=32, C=32, OY=2, OX=2, stride_y=2, stride_x=2, inputs=("add",)),
)
PRESET = "defines-meta-proto"


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """:func:`run` on a workload file of five layers (three distinct conv shapes): one cached beforehand, two run
    in a worker process."""
    pytest.importorskip("zigzag", reason="ZigZag not installed: pip install 'accelsched[zigzag]'")
    folder = tmp_path_factory.mktemp("zigzag-crosscheck")
    workload = folder / "tiny.json"
    Workload("tiny", TINY).save_json(workload)
    cache = folder / "cache"
    run_job(ZigZagJob.of(TINY[0], load_accelerator(PRESET), Controls()), cache)
    messages: list[str] = []
    out = folder / "run.json"
    data = zc.run([PRESET], [str(workload)], workers=1, cache_dir=cache, out=str(out), progress=messages.append)
    return {"data": data, "messages": messages, "workload": str(workload), "cache": cache, "out": out}


def test_run_compares_every_distinct_layer(tiny_run: dict[str, Any]) -> None:
    """One row per distinct conv shape, equal shapes listed together, the ratios those of the two tools' figures."""
    data, workload = tiny_run["data"], tiny_run["workload"]
    assert data["kind"] == "zigzag_crosscheck" and data["zigzag_version"] == zigzag_available()
    assert data["controls"] == asdict(Controls()) and data["controls_described"] == Controls().describe()
    rows = data["rows"]
    assert [(r["layer"], r["same_shape"]) for r in rows] == [("a", []), ("b", ["c"]), ("down", [])]
    acc = load_accelerator(PRESET)
    by_name = {x.name: x for x in TINY}
    for r in rows:
        assert (r["preset"], r["workload"]) == (PRESET, workload)
        layer = by_name[r["layer"]]
        ours = layer_cost(layer, acc.cores[0], acc.offchip)
        assert r["macs"] == layer.macs
        assert r["ours"]["energy_pj"] == pytest.approx(ours.energy_pj)
        assert r["ours"]["latency_cycles"] == pytest.approx(ours.latency_cycles)
        assert r["energy_ratio"] == pytest.approx(ours.energy_pj / r["zigzag_energy"]["energy_pj"])
        assert r["latency_ratio"] == pytest.approx(ours.latency_cycles / r["zigzag_latency"]["latency_cycles"])
        # small layers that fit on chip on an unrolling that divides them: the two models agree closely
        assert 0.8 <= r["energy_ratio"] <= 1.25 and 0.8 <= r["latency_ratio"] <= 1.25
        assert r["steady_ratio"] == pytest.approx(ours.latency_cycles / r["zigzag_latency"]["steady_latency_cycles"])
        assert r["steady_ratio"] >= r["latency_ratio"]  # the steady state is never longer
        assert not r["flagged"] and not r["traced"] and r["cause"] is None
        assert r["lpf_limit"] == Controls().lpf_limit
        assert r["zigzag_energy"]["target"] == "energy" and r["zigzag_latency"]["target"] == "latency"


def test_run_summarises_each_preset_and_workload(tiny_run: dict[str, Any]) -> None:
    """One cell per preset and workload: geometric mean between min and max, a rank correlation of three layers."""
    data = tiny_run["data"]
    (cell,) = data["cells"]
    assert (cell["preset"], cell["workload"], cell["layers"]) == (PRESET, tiny_run["workload"], 3)
    for what in ("energy", "latency", "steady"):
        ratios = [r[f"{what}_ratio"] for r in data["rows"]]
        summary = cell[what]
        assert summary["min"] == min(ratios) and summary["max"] == max(ratios)
        assert summary["geomean"] == pytest.approx(math.prod(ratios) ** (1 / 3))
        assert summary["spearman"] is not None and -1 <= summary["spearman"] <= 1


def test_run_uses_the_cache_and_writes_its_result(tiny_run: dict[str, Any]) -> None:
    """The pre-filled layer is not run again, the others are cached by the run; the result file is the result."""
    assert tiny_run["messages"][0] == "3 layer-core pairs: 1 cached, 2 to run in ZigZag"
    assert len(tiny_run["messages"]) == 3
    assert len(list(tiny_run["cache"].glob("*.json"))) == 3
    assert json.loads(tiny_run["out"].read_text()) == json.loads(json.dumps(tiny_run["data"]))
    messages: list[str] = []
    again = zc.run([PRESET], [tiny_run["workload"]], workers=1, cache_dir=tiny_run["cache"], progress=messages.append)
    assert messages == ["3 layer-core pairs: 3 cached, 0 to run in ZigZag"]
    assert again["rows"] == tiny_run["data"]["rows"]


def test_render_of_a_run(tiny_run: dict[str, Any]) -> None:
    """The Markdown names every control, has the cell and one row per distinct layer, and no flagged layer."""
    text = zc.render(tiny_run["data"])
    for line in Controls().describe():
        assert f"- {line}" in text
    workload = tiny_run["workload"]
    assert f"| {PRESET} | {workload} | 3 |" in text
    for name in ("a", "b (+1)", "down"):
        assert f"| {PRESET} | {workload} | {name} | conv K32 " in text
    assert "## Layers off by more than 2x (0)" in text and "## Layers outside [0.80, 1.25] (0)" in text
    assert "None." in text
    assert text.endswith(" s wall.\n")


def test_command_line_run_and_render(tiny_run: dict[str, Any], capsys: pytest.CaptureFixture[str],
                                     tmp_path: Path) -> None:  # fmt: skip
    """``run`` prints the table (from the cache here); ``render`` turns a result file into the same Markdown."""
    out = tmp_path / "again.json"
    code = zc.main(["run", "--presets", PRESET, "--workloads", tiny_run["workload"], "--workers", "1",
                    "--cache", str(tiny_run["cache"]), "--out", str(out)])  # fmt: skip
    assert code == 0
    progress, printed = capsys.readouterr().out.split("\n", 1)
    assert progress == "3 layer-core pairs: 3 cached, 0 to run in ZigZag"
    assert printed == zc.render(json.loads(out.read_text()))
    assert "| b (+1) |" in printed
    markdown = tmp_path / "table.md"
    assert zc.main(["render", str(tiny_run["out"]), "--out", str(markdown)]) == 0
    assert markdown.read_text() == zc.render(json.loads(tiny_run["out"].read_text()))
