"""Cocco's Fig. 11 and co-exploration tables, on small random workloads: checked rows, merging, rendering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsched.bench import partition_tables
from accelsched.solvers import SolveOptions

OPTIONS = SolveOptions(time_limit_s=20, seed=0)


def test_fig11_rows_are_checked_and_the_exact_row_proves_its_bound(tmp_path: Path) -> None:
    rows = partition_tables.fig11(["random:7:1"], OPTIONS, tmp_path)
    by = {r.method: r for r in rows}
    assert set(by) == {*partition_tables.HEURISTICS, partition_tables.EXACT}
    exact = by[partition_tables.EXACT]
    assert exact.status == "OPTIMAL" and exact.objective is not None
    assert all(r.objective is not None and r.objective >= exact.objective * (1 - 1e-9) for r in rows)
    text = (tmp_path / "partition_fig11.md").read_text()
    assert "| random:7:1 | 7 |" in text and "| optimum |" in text


def test_merge_replaces_only_the_workloads_run(tmp_path: Path) -> None:
    partition_tables.fig11(["random:5:1", "random:6:2"], OPTIONS, tmp_path)
    before = json.loads((tmp_path / "partition_fig11.json").read_text())["rows"]
    partition_tables.fig11(["random:6:2", "random:4:3"], OPTIONS, tmp_path, merge=True)
    after = json.loads((tmp_path / "partition_fig11.json").read_text())["rows"]
    workloads = list(dict.fromkeys(r["workload"] for r in after))
    assert workloads == ["random:5:1", "random:6:2", "random:4:3"]  # in place, new ones last
    assert [r for r in after if r["workload"] == "random:5:1"] == [r for r in before if r["workload"] == "random:5:1"]
    assert len(after) == 3 * len(before) // 2


def test_merge_refuses_another_seed_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    partition_tables.fig11(["random:4:1"], OPTIONS, tmp_path)
    with pytest.raises(SystemExit) as stop:
        partition_tables.main(["fig11", "--workloads", "random:4:1", "--merge", "--seed", "3",
                               "--out-dir", str(tmp_path)])  # fmt: skip
    assert stop.value.code != 0
    assert "was made with seed 0, this run uses seed 3" in capsys.readouterr().err


def test_a_merged_row_with_another_time_limit_is_stated(tmp_path: Path) -> None:
    partition_tables.fig11(["random:5:1", "random:6:2"], OPTIONS, tmp_path)
    partition_tables.fig11(["random:6:2"], SolveOptions(time_limit_s=7, seed=0), tmp_path, merge=True)
    text = (tmp_path / "partition_fig11.md").read_text()
    assert "time limit 20 s (random:6:2: 7 s)" in text


def test_render_names_where_a_bound_comes_from(tmp_path: Path) -> None:
    partition_tables.fig11(["random:5:4"], OPTIONS, tmp_path)
    path = tmp_path / "partition_fig11.json"
    payload = json.loads(path.read_text())
    for row in payload["rows"]:
        if row["method"] == partition_tables.EXACT:
            row["status"] = "FEASIBLE"
            row["detail"]["native_status"] = "column budget reached: optimality not proven, bound = compulsory traffic"
    path.write_text(json.dumps(payload))
    partition_tables.render(path)
    assert "| compulsory traffic |" in (tmp_path / "partition_fig11.md").read_text()
