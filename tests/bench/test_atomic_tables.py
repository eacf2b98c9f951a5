"""The Atomic Dataflow comparison, DP-speed and rolling-horizon benchmarks, on small instances."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsched.bench import atomic_tables
from accelsched.formulations.atomic_rounds import RoundsParams


def test_compare_runs_every_method_resumes_and_renders(tmp_path: Path) -> None:
    out = tmp_path / "compare.json"
    data = atomic_tables.compare(["random:3:1"], [1, 2], time_limit_s=30, out=str(out))
    assert [(r["batch"], r["method"]) for r in data["rows"]] == [
        (b, m) for b in (1, 2) for m in ("LS", "CNN-P", "IL-Pipe", "AD")
    ]
    assert all(0 < r["pe_utilization"] <= 1 and 0 <= r["onchip_reuse"] <= 1 for r in data["rows"])
    again = atomic_tables.compare(["random:3:1"], [1, 2], time_limit_s=30, out=str(out), resume=True)
    assert again["rows"] == json.loads(out.read_text())["rows"] == data["rows"]  # nothing run twice
    text = atomic_tables.render(data)
    assert "| random:3:1 | 1 | AD |" in text and "the paper's 1.45-2.30x" in text
    assert text.count("x |") >= 2  # the speedup table


def test_dp_time_and_rolling_report_their_figures(tmp_path: Path) -> None:
    timing = atomic_tables.dp_time("random:3:1", batch=2, repeats=2, out=str(tmp_path / "t.json"))
    assert len(timing["dp_s"]) == 2 and timing["n_atoms"] > 0 and "DP speed" in atomic_tables.render(timing)
    small = RoundsParams(max_atoms=5)  # force the rolling horizon on a small DAG
    result = atomic_tables.rolling("random:3:1", batch=1, time_limit_s=10, out=str(tmp_path / "r.json"), params=small)
    assert result["cpsat"]["status"] == "FEASIBLE" and "rolling horizon" in result["cpsat"]["note"]
    assert result["cpsat"]["bound_cycles"] <= result["cpsat"]["latency_cycles"]
    assert "gap" in atomic_tables.render(result)


def test_the_command_line_exits_with_the_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        atomic_tables.main(["compare", "--workloads", "no_such_net", "--batches", "1", "--out", str(tmp_path / "x")])
    assert stop.value.code == 2 and "no_such_net" in capsys.readouterr().err
