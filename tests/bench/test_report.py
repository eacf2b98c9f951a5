"""Gaps and the report: reference rules, per-method statistics, Markdown, CSV, figures."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from accelsched.bench.report import render_markdown, write_report
from accelsched.bench.summary import method_stats, reference, summarize


def rec(
    method: str,
    status: str,
    objective: float | None,
    bound: float | None = None,
    *,
    instance: str = "i1",
    seed: int = 0,
    kind: str = "heuristic",
    trace: tuple[tuple[float, float], ...] = (),
    runtime_s: float = 1.0,
    n_layers: int = 4,
    error: str | None = None,
) -> dict[str, Any]:
    return {
        "v": 1,
        "key": {"problem": "p", "instance": instance, "method": method, "seed": seed, "time_limit_s": 10.0},
        "instance": {"id": instance, "workload": "random:4:1", "hardware": "h", "batch": 1, "options": {"a": "b"}},
        "kind": kind,
        "seeded": False,
        "n_layers": n_layers,
        "error": error,
        "result": {
            "problem": "p",
            "method": method,
            "status": status,
            "objective": objective,
            "bound": bound,
            "gap": None,
            "runtime_s": runtime_s,
            "cost": None if objective is None else {"energy_pj": 5.0, "latency_cycles": 7.0},
            "solution": None,
            "backend": "",
            "seed": seed,
            "sense": "min",
            "stats": {"iterations": None, "nodes": None, "trace": [list(p) for p in trace], "native_status": ""},
        },
    }


def test_reference_is_the_proven_optimum_then_the_bound_then_the_best_found() -> None:
    summary = summarize(
        [
            rec("exact", "OPTIMAL", 100.0, 100.0, kind="exact"),
            rec("h", "FEASIBLE", 110.0),
            rec("exact", "FEASIBLE", 120.0, 90.0, instance="i2", kind="exact"),
            rec("h", "FEASIBLE", 117.0, instance="i2"),
            rec("h", "FEASIBLE", 50.0, instance="i3"),
            rec("h", "FEASIBLE", 60.0, instance="i3", seed=1),
            rec("h", "TIME_LIMIT_NO_SOLUTION", None, instance="i4"),
        ]
    )
    refs = summary.references
    assert (refs[("p", "i1")].kind, refs[("p", "i1")].value, refs[("p", "i1")].methods) == (
        "optimum",
        100.0,
        ("exact",),
    )
    assert (refs[("p", "i2")].kind, refs[("p", "i2")].value) == ("bound", 90.0)
    assert (refs[("p", "i3")].kind, refs[("p", "i3")].value) == ("best-found", 50.0)
    assert refs[("p", "i4")].kind == "none"
    assert summary.gaps[:-1] == pytest.approx((0.0, 0.1, 30 / 90, 27 / 90, 0.0, 0.2))
    assert summary.gaps[-1] is None
    assert not summary.warnings


def test_method_stats_mean_max_and_share_at_optimum() -> None:
    summary = summarize(
        [
            rec("exact", "OPTIMAL", 100.0, 100.0, kind="exact"),
            rec("h", "FEASIBLE", 100.0),
            rec("h", "FEASIBLE", 120.0, seed=1),
            rec("exact", "OPTIMAL", 10.0, 10.0, instance="i2", kind="exact"),
            rec("h", "FEASIBLE", 11.0, instance="i2"),
            rec("h", "FEASIBLE", 11.0, instance="i3"),  # best found only: not in mean / max
            rec("h", "ERROR", None, instance="i2", seed=1, error="InfeasibleSolution: rule 1"),
        ]
    )
    stats = {s.method: s for s in method_stats(summary, "p")}
    h = stats["h"]
    assert (h.runs, h.solved, h.proved, h.at_optimum, h.with_optimum, h.unproven, h.errors) == (5, 4, 0, 1, 4, 1, 1)
    assert h.mean_gap == pytest.approx((0 + 0.2 + 0.1) / 3) and h.max_gap == pytest.approx(0.2)
    assert stats["exact"].proved == 2 and stats["exact"].at_optimum == 2 and stats["exact"].mean_gap == 0


def test_disagreeing_optima_and_objectives_below_a_bound_are_warned() -> None:
    summary = summarize(
        [
            rec("a", "OPTIMAL", 100.0, 100.0, kind="exact"),
            rec("b", "OPTIMAL", 101.0, 101.0, kind="exact"),
            rec("h", "FEASIBLE", 80.0, instance="i2"),
            rec("a", "FEASIBLE", 95.0, 90.0, instance="i2", kind="exact"),
        ]
    )
    assert any("b proved 101" in w for w in summary.warnings)
    assert any("beyond the proven bound 90" in w for w in summary.warnings)


def test_markdown_lists_every_method_and_never_a_number_for_an_error() -> None:
    records = [
        rec("exact", "OPTIMAL", 100.0, 100.0, kind="exact"),
        rec("h", "FEASIBLE", 125.0),
        rec("broken", "ERROR", None, error="InfeasibleSolution: rule 4 | violated"),
    ]
    text = render_markdown(summarize(records), {"suite": "tiny", "problems": ["p"], "time_limit_s": {"p": 10}})
    assert text.startswith("# Benchmark report: suite `tiny`")
    assert "reference = proven optimum 100 (exact)" in text
    assert "| h | 1 | FEASIBLE | 125 | - | 25% |" in text
    line = next(x for x in text.splitlines() if x.startswith("| broken | 1 |"))
    assert "| ERROR | - | - | - |" in line and "rule 4 / violated" in line
    assert "1 with status ERROR" in text


def test_write_report_writes_csv_figures_and_markdown(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    records = [
        rec("exact", "OPTIMAL", 100.0, 100.0, kind="exact", runtime_s=0.5),
        rec("h", "FEASIBLE", 110.0, trace=((0.0, 150.0), (0.2, 120.0), (0.5, 110.0))),
        rec("h", "FEASIBLE", 105.0, seed=1, trace=((0.0, 140.0), (0.4, 105.0))),
        rec("exact", "OPTIMAL", 10.0, 10.0, instance="i2", kind="exact", n_layers=8),
        rec("h", "FEASIBLE", 12.0, instance="i2", n_layers=8, trace=((0.0, 20.0), (1.0, 12.0))),
    ]
    paths = write_report(tmp_path, records, {"suite": "tiny"})
    names = {p.name for p in paths}
    assert {"results.csv", "report.md", "gaps_p.png", "convergence_p.png", "time_p.png"} <= names
    assert all(p.stat().st_size > 0 for p in paths)
    with open(tmp_path / "results.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 5 and rows[1]["reference_kind"] == "optimum" and float(rows[1]["gap"]) == pytest.approx(0.1)
    assert "![gaps_p](gaps_p.png)" in (tmp_path / "report.md").read_text()


def test_reference_of_no_runs() -> None:
    assert reference([]).kind == "none"
