"""The atomic DP-gap benchmark: its instances, one small run, rendering."""

from __future__ import annotations

import json
from pathlib import Path

from accelsched.bench.atomic_gap import gap_instance, main, render, run


def test_the_instances_spread_over_20_to_60_atoms() -> None:
    sizes = [len(gap_instance(i).dag.atoms) for i in range(50)]
    assert min(sizes) == 20 and max(sizes) == 60 and len(set(sizes)) > 30
    assert {gap_instance(i).n_engines for i in range(3)} == {2, 3, 4}
    assert gap_instance(7).dag == gap_instance(7).dag


def test_a_small_run_reports_gaps_against_valid_references(tmp_path: Path) -> None:
    out = tmp_path / "gap.json"
    # CP-SAT stops at a relative gap (deterministic on one thread); the time limit is a hang guard
    data = run(count=2, time_limit_s=120, out=str(out), rel_gap=0.9)
    for row in data["rows"]:
        assert row["dp_gap"] >= -1e-9 and row["cpsat_latency"] <= row["dp_latency"]  # warm-started by the DP
        assert row["reference"] <= row["cpsat_latency"]
    assert json.loads(out.read_text())["summary"]["instances"] == 2
    assert render(data).count("\n| ") == 2 + 1  # header + two rows
    target = tmp_path / "gap.md"
    assert main(["render", str(out), "--out", str(target)]) == 0 and target.read_text() == render(data)
