"""The depth-first benchmark commands, at tiny sizes: files written, numbers consistent with the evaluator."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from accelsched.bench.depth_first import CASE_WORKLOADS, default_archs, main
from accelsched.bench.depth_first_render import PAPER_SL_OVER_BEST, df_friendly_gains
from accelsched.bench.depth_first_sweep import halving_sizes
from accelsched.hardware import load_accelerator
from accelsched.heuristics.depth_first_rules import single_layer
from accelsched.models.random_dag import random_workload
from accelsched.models.registry import load_workload
from accelsched.problems.depth_first import (
    OverlapMode,
    Strategy,
    evaluate_solution,
    make_instance,
    single_stack_solution,
)

HARDWARE = "defines-meta-proto-df"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 3-layer workload on 8x8 maps whose last layer reads both earlier ones (one cut inside)."""
    path = tmp_path_factory.mktemp("workload") / "tiny.json"
    random_workload(3, 4, channels=(4, 8, 16), height=8, width=8).save_json(path)
    return str(path)


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_halving_grid_of_fsrcnn_is_11_by_10() -> None:
    assert halving_sizes(960) == (960, 480, 240, 120, 60, 30, 15, 8, 4, 2, 1)
    assert halving_sizes(540) == (540, 270, 135, 68, 34, 17, 8, 4, 2, 1)
    assert halving_sizes(1) == (1,)


def test_sweep_writes_points_and_heatmaps(tiny: str, tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    prefix = tmp_path / "sweep"
    args = ["sweep", "--workload", tiny, "--hardware", HARDWARE, "--sizes", "2", "--repeats", "2"]
    assert main([*args, "--out", str(out), "--png-prefix", str(prefix)]) == 0
    data = _load(out)
    assert data["kind"] == "sweep" and data["python"] and len(data["runs_s"]) == 2
    assert data["n_points"] == len(data["points"]) == 3 * len(data["sizes_x"]) * len(data["sizes_y"])
    assert data["median_per_point_ms"] == pytest.approx(data["median_total_s"] / data["n_points"] * 1e3)
    instance = make_instance(load_workload(tiny), load_accelerator(HARDWARE), {})
    for point in data["points"]:
        strategy = Strategy(point["tile_x"], point["tile_y"], OverlapMode.parse(point["mode"]))
        report = evaluate_solution(instance, single_stack_solution(instance.order, strategy)).report
        assert (point["energy_pj"], point["latency_cycles"], point["dram_bytes"]) == (
            report.energy_pj,
            report.latency_cycles,
            report.dram_bytes,
        )
    assert data["best"]["energy_pj"]["energy_pj"] == min(p["energy_pj"] for p in data["points"])
    for name in ("energy", "latency"):
        assert Path(f"{prefix}_{name}.png").read_bytes()[:4] == b"\x89PNG"


def test_cases_ratios_and_reference(tiny: str, tmp_path: Path) -> None:
    out = tmp_path / "cases.json"
    args = ["cases", "--hardware", HARDWARE, "--workloads", tiny, "--time-limit", "60", "--out", str(out)]
    assert main(args) == 0
    data = _load(out)
    rows = {r["method"]: r for r in data["rows"]}
    assert list(rows) == ["sl", "lbl", "fixed-df", "single", "auto", "dp"]
    dp = rows["dp"]
    assert dp["status"] == "OPTIMAL" and dp["reference"] == "dp" and dp["energy_over_ref"] == 1.0
    for r in rows.values():
        assert r["energy_pj"] >= dp["energy_pj"] * (1 - 1e-9)  # the DP's grid holds every other method's strategies
        assert r["energy_over_ref"] == pytest.approx(r["energy_pj"] / dp["energy_pj"])
        assert r["latency_over_ref"] == pytest.approx(r["latency_cycles"] / dp["latency_cycles"])
    instance = make_instance(load_workload(tiny), load_accelerator(HARDWARE), {})
    assert rows["sl"]["energy_pj"] == evaluate_solution(instance, single_layer(instance)).report.energy_pj
    (summary,) = data["summary"]
    assert summary["sl_over_ref_energy"] == pytest.approx(rows["sl"]["energy_pj"] / dp["energy_pj"])
    assert summary["paper_sl_over_best"] is None and PAPER_SL_OVER_BEST["mobilenet_v1"] == "5.7x"


def test_archs_geomeans_and_time_limit_status(tiny: str, tmp_path: Path) -> None:
    out = tmp_path / "archs.json"
    archs = "defines-meta-proto,defines-meta-proto-df"
    assert main(["archs", "--archs", archs, "--workloads", tiny, "--methods", "lbl,dp", "--out", str(out)]) == 0
    data = _load(out)
    assert [g["hardware"] for g in data["geomeans"]] == archs.split(",")
    for g in data["geomeans"]:
        lbl, dp = (
            next(r for r in data["rows"] if (r["hardware"], r["method"]) == (g["hardware"], m)) for m in ("lbl", "dp")
        )
        assert g["workloads"] == [tiny]
        assert g["geomean_lbl_over_df_energy"] == pytest.approx(lbl["energy_pj"] / dp["energy_pj"])
        assert g["geomean_lbl_over_df_latency"] == pytest.approx(lbl["latency_cycles"] / dp["latency_cycles"])
        assert g["geomean_lbl_over_df_energy"] >= 1 - 1e-9
    # --resume reuses every row already in --out (same code) and recomputes the same geometric means
    assert main(["archs", "--archs", archs, "--workloads", tiny, "--out", str(out), "--resume"]) == 0
    resumed = _load(out)
    assert all(r["reused"] for r in resumed["rows"]) and resumed["geomeans"] == data["geomeans"]
    # a method stopped by the time limit is kept with its status and left out of the geometric mean
    late = tmp_path / "late.json"
    args = ["archs", "--archs", "defines-tpu", "--workloads", tiny, "--time-limit", "1e-9", "--out", str(late)]
    assert main(args) == 0
    stopped = _load(late)
    assert [r["status"] for r in stopped["rows"]] == ["FEASIBLE", "TIME_LIMIT_NO_SOLUTION"]
    assert stopped["geomeans"][0]["workloads"] == [] and stopped["geomeans"][0]["geomean_lbl_over_df_energy"] is None
    markdown = tmp_path / "archs.md"
    assert main(["render", str(out), str(late), "--out", str(markdown)]) == 0
    text = markdown.read_text(encoding="utf-8")
    assert "TIME_LIMIT_NO_SOLUTION" in text and "6.0x" in text and "defines-meta-proto-df" in text


def test_render_all_kinds(tiny: str, tmp_path: Path) -> None:
    sweep, cases = tmp_path / "sweep.json", tmp_path / "cases.json"
    main(["sweep", "--workload", tiny, "--sizes", "2", "--repeats", "1", "--out", str(sweep), "--note", "tiny"])
    main(["cases", "--workloads", tiny, "--methods", "sl,lbl", "--out", str(cases)])
    out = tmp_path / "all.md"
    assert main(["render", str(sweep), str(cases), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "## Sweep" in text and "## Case study 2" in text and "Note: tiny" in text
    rows = _load(cases)["rows"]
    best = min(r["energy_pj"] for r in rows)  # without dp the reference is the best method run
    assert all(math.isclose(r["energy_over_ref"], r["energy_pj"] / best) for r in rows)


def test_case_workloads_have_defines_sizes() -> None:
    """DeFiNES' listing (reference/defines/wl.txt): MobileNetV1 32x253x253 first, 3.8 MiB largest; ResNet-18 5.9 MiB."""
    mib = 1 << 20
    largest = {n: max(layer.output_bytes for layer in load_workload(n)) for n in CASE_WORKLOADS}
    assert largest["mobilenet_v1_defines"] == 64 * 251 * 251 and largest["mobilenet_v1_defines"] / mib > 3.8
    assert largest["resnet18_defines"] == 64 * 311 * 311 and largest["resnet18_defines"] / mib > 5.9
    mobilenet = load_workload("mobilenet_v1_defines")
    sides = [(mobilenet[n].OX, mobilenet[n].K * mobilenet[n].G) for n in ("conv0", "conv1_dw", "conv13_pw")]
    assert sides == [(253, 32), (251, 32), (7, 1024)]


def test_case_study_3_runs_the_ten_paper_architectures_with_table_i_sizes() -> None:
    names = default_archs()
    assert len(names) == 10 and not any(n.endswith("-artifact") for n in names)
    for base in ("defines-ascend", "defines-ascend-df"):
        paper, artifact = load_accelerator(base).cores[0], load_accelerator(f"{base}-artifact").cores[0]
        for level in ("sram_64KB_I", "sram_64KB_W"):
            assert paper.memory(level).capacity_bytes == 64 * 1024
            assert artifact.memory(level).capacity_bytes == 8 * 1024
    for base in ("defines-tpu", "defines-tpu-df"):
        assert load_accelerator(base).cores[0].memory("rf_1KB").capacity_bytes == 1024
        assert load_accelerator(f"{base}-artifact").cores[0].memory("rf_1KB").capacity_bytes == 2


def test_df_friendly_gain_is_df_energy_on_default_over_df_variant() -> None:
    rows = [{"hardware": h, "workload": w, "method": m, "energy_pj": e}
            for h, w, m, e in [("a", "x", "dp", 8.0), ("a-df", "x", "dp", 2.0), ("a", "y", "dp", 9.0),
                               ("a-df", "y", "dp", 1.0), ("a", "x", "lbl", 1.0), ("b", "x", "dp", 1.0)]]  # fmt: skip
    gains = df_friendly_gains({"df_method": "dp", "workloads": ["x", "y"], "rows": rows})
    assert gains == {"a": pytest.approx(6.0)}
