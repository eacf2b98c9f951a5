"""Stream reproduction tables at tiny sizes: architecture classes, LBL/fused ratios, manual vs GA, rendering."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from accelsched.bench.multicore_tables import PAPER_RANGES, archs, fig12, main, render

TINY = "random:6:2"


@pytest.fixture(scope="module")
def archs_result(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("archs") / "archs.json"
    result = archs(["stream-sc-tpu", "stream-mc-homtpu", "stream-mc-hetero"], [TINY], "ga", 2.0, 0, str(out))
    return result, out


def test_archs_rows_are_evaluated_and_ratios_follow_from_them(archs_result: tuple[dict[str, Any], Path]) -> None:
    result, out = archs_result
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(json.dumps(result))
    rows = result["rows"]
    assert len(rows) == 3 * 2 and {r["granularity"] for r in rows} == {"layer", "fused"}
    for r in rows:
        assert r["status"] in ("FEASIBLE", "OPTIMAL") and r["edp"] == pytest.approx(
            r["latency_cycles"] * r["energy_pj"]
        )
        assert r["method"] == ("manual" if r["hardware"] == "stream-sc-tpu" else "ga")
        assert r.get("stacks") == ("auto" if r["granularity"] == "fused" else None)
    classes = {s["hardware"]: s["class"] for s in result["summary"]}
    assert classes == {
        "stream-sc-tpu": "single",
        "stream-mc-homtpu": "homogeneous",
        "stream-mc-hetero": "heterogeneous",
    }
    for s in result["summary"]:
        by_granularity = {r["granularity"]: r["edp"] for r in rows if r["hardware"] == s["hardware"]}
        assert s["lbl_over_fused_edp"][TINY] == pytest.approx(by_granularity["layer"] / by_granularity["fused"])
        assert s["geomean"] == pytest.approx(s["lbl_over_fused_edp"][TINY])
        assert s["paper"] == PAPER_RANGES[s["class"]]


def test_render_and_cli_render_agree(archs_result: tuple[dict[str, Any], Path], tmp_path: Path) -> None:
    result, out = archs_result
    text = render(result)
    assert "| stream-mc-hetero | heterogeneous |" in text and PAPER_RANGES["heterogeneous"] in text
    assert text.count("\n| stream-") == 3 + 6  # the summary rows and the detail rows
    md = tmp_path / "archs.md"
    assert main(["render", str(out), "--out", str(md)]) == 0
    assert md.read_text(encoding="utf-8") == text


def test_fig12_ga_is_never_worse_than_manual(tmp_path: Path) -> None:
    out = tmp_path / "fig12.json"
    result = fig12(TINY, ["stream-mc-hetero"], 2.0, 0, str(out))
    rows = result["rows"]
    assert [(r["priority"], r["method"]) for r in rows] == [
        ("latency", "manual"), ("latency", "ga"), ("memory", "manual"), ("memory", "ga")
    ]  # fmt: skip
    for manual, ga in (rows[0:2], rows[2:4]):
        assert ga["edp"] <= manual["edp"] * (1 + 1e-12)
        assert all(math.isfinite(r["peak_memory_bytes"]) and r["peak_memory_bytes"] > 0 for r in (manual, ga))
    assert "| stream-mc-hetero | memory | ga |" in render(json.loads(out.read_text(encoding="utf-8")))


def test_cli_rejects_bad_arguments() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["archs", "--time-limit", "0"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        main(["render"])
