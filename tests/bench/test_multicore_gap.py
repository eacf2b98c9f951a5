"""The GA-gap benchmark of the multicore problem: its instances, one small run, the summary and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsched.bench import multicore_gap
from accelsched.bench.multicore_gap import CN_RANGE, gap_instances, main, render, run


def test_the_instances_are_seeded_and_within_the_cn_range() -> None:
    first, skipped = gap_instances(6)
    again, _ = gap_instances(6)
    assert [(i.workload, i.hardware, i.rows, i.cns) for i in first] == [
        (i.workload, i.hardware, i.rows, i.cns) for i in again
    ]
    assert all(CN_RANGE[0] <= i.cns <= CN_RANGE[1] for i in first)
    assert {i.hardware for i in first} == {"stream-mc-hetero", "stream-mc-homtpu"}
    assert skipped >= 0 and len({i.workload for i in first}) == 6


def test_a_small_run_writes_checked_gaps_and_renders(tmp_path: Path) -> None:
    out = tmp_path / "gap.json"
    data = run(count=2, ga_seeds=2, time_limit_s=300, out=str(out))  # a safety net: CP-SAT proves these quickly
    assert json.loads(out.read_text()) == json.loads(json.dumps(data))
    for row in data["rows"]:
        assert row["cpsat_status"] == "OPTIMAL" and row["reference_kind"] == "optimum"
        assert len(row["ga_latency_cycles"]) == 2
        assert row["reference"] == row["cpsat_latency_cycles"]
        assert all(g >= -1e-9 for g in row["ga_gaps"])  # the GA never beats a proven optimum
        assert row["manual_gap"] >= -1e-9 and not row["ga_below_optimum"]
    summary = data["summary"]
    assert summary["instances"] == summary["proven_optimal"] == 2 and summary["ga_below_optimum"] == 0
    assert summary["ga_best_gap_max"] == max(min(r["ga_gaps"]) for r in data["rows"])
    text = render(data)
    assert text.count("| random:") == 2 and "CP-SAT proved the optimum on 2/2" in text


def test_bad_arguments_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="must be >= 1"):
        run(count=0)
    with pytest.raises(SystemExit):
        main(["run", "--ga-seeds", "0"])
    assert "--ga-seeds must be >= 1" in capsys.readouterr().err


def test_render_from_the_command_line(tmp_path: Path) -> None:
    data = {"kind": "multicore_gap", "ga_seeds": 1, "time_limit_s": 5.0, "skipped_candidates": 0, "wall_s": 1.0,
            "conditions": {"python": "3.11", "cpu_count": 2, "load_average_1_5_15": [0.1, 0.1, 0.1]}, "rows": [
                {"workload": "random:5:100", "hardware": "stream-mc-hetero", "rows_per_cn": 8, "layers": 5, "cns": 20,
                 "cpsat_status": "OPTIMAL", "reference": 100.0, "reference_kind": "optimum", "ga_gaps": [0.05],
                 "manual_gap": 0.25, "cpsat_time_s": 0.1, "ga_time_s": 0.2, "ga_below_optimum": False,
                 "cpsat_latency_cycles": 100.0}]}  # fmt: skip
    data["summary"] = multicore_gap._summary(data["rows"])  # type: ignore[arg-type]
    source, target = tmp_path / "in.json", tmp_path / "out.md"
    source.write_text(json.dumps(data))
    assert main(["render", str(source), "--out", str(target)]) == 0
    text = target.read_text()
    assert "| random:5:100 | stream-mc-hetero | 8 | 5 | 20 | OPTIMAL | 100 (optimum) | 5.00% |" in text
    assert "manual allocation: mean gap 25.00%" in text
