"""The atom-sizing benchmark on a small workload: exact never above the annealing, rendering."""

from __future__ import annotations

import json
from pathlib import Path

from accelsched.bench.atomic_sizes import main, render, run


def test_a_small_run_and_its_rendering(tmp_path: Path) -> None:
    out = tmp_path / "sizes.json"
    data = run(["random:5:1"], ["atomic-8x8-kc", "atomic-8x8-yx"], seeds=2, out=str(out))
    assert [r["preset"] for r in data["rows"]] == ["atomic-8x8-kc", "atomic-8x8-yx"]
    for row in data["rows"]:
        assert row["exact_variance"] <= min(row["sa_variance"]) and len(row["sa_variance"]) == 2
    target = tmp_path / "sizes.md"
    assert main(["render", str(out), "--out", str(target)]) == 0
    assert target.read_text() == render(json.loads(out.read_text()))
    assert "| atomic-8x8-yx | random:5:1 |" in target.read_text()
