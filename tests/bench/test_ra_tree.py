"""The RA-tree benchmarks: compare and render on a small network, the rate protocol, the search column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsched.bench import ra_tree
from tests.problems.ra_tree.instances import diamond


@pytest.mark.parametrize(
    ("note", "shown"),
    [
        ("2 chains x 7200 iterations, 13683 trees evaluated", "2 chains"),
        ("4 chains at T0 = 0.07 and 4 at T0 = 2, 500 iterations each, 865 trees evaluated, 2 processes",
         "4 + 4 hot chains"),
        ("4 chains at T0 = 0.07, 500 iterations each, 9 trees evaluated; stopped by the time limit after 12 iterations",
         "4 chains, time-limited"),
        ("optimal in the LS subspace (889 segments evaluated)", "-"),
    ],
)  # fmt: skip
def test_search_note_names_the_chains_and_a_time_limit(note: str, shown: str) -> None:
    assert ra_tree.search_note({"note": note}) == shown


def test_compare_then_render(tmp_path: Path) -> None:
    out = tmp_path / "compare.json"
    # the time limit is a safety net: every method here ends by its own budget, far below it
    data = ra_tree.compare(["random:4:3:2"], "set-edge-4x4", 3600, ["dp-ls", "dp-lp", "sa"], str(out))
    assert json.loads(out.read_text()) == {**data, "python": json.loads(out.read_text())["python"]}
    rows = {r["method"]: r for r in data["rows"]}
    assert set(rows) == {"dp-ls", "dp-lp", "sa"} and all(r["objective"] for r in rows.values())
    markdown = ra_tree.render([str(out)])
    assert "## set-edge-4x4, batch 2 (time limit 3600 s per method)" in markdown
    sa_line = next(line for line in markdown.splitlines() if "| SET (SA) |" in line)
    assert sa_line.split(" | ")[6] == "1.00" and sa_line.endswith("| 4 + 4 hot chains |")
    ls_line = next(line for line in markdown.splitlines() if "| LS (exact) |" in line)
    assert float(ls_line.split(" | ")[6]) == pytest.approx(
        rows["dp-ls"]["objective"] / rows["sa"]["objective"], abs=0.005
    )


def test_rate_compares_every_run_with_enumeration() -> None:
    result = ra_tree.measure_rate(2, 4, 2, chains=1, hot_chains=1, first_seed=7, repeats=2)
    assert (result["chains"], result["hot_chains"], result["hot_t0"]) == (1, 1, 2.0)
    assert len(result["rows"]) == 2 and all(len(r["repeat_gaps"]) == 2 for r in result["rows"])
    assert all(g >= -1e-9 for r in result["rows"] for g in r["repeat_gaps"])  # never below the optimum
    assert result["optimum_rate"] == sum(r["gap"] <= 1e-9 for r in result["rows"]) / 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["rate", "--sa-repeats", "0"], "--sa-repeats must be >= 1, got 0"),
        (["compare", "--threads", "0"], "--threads must be >= 1, got 0"),
        (["rate", "--hot-chains", "-1"], "--hot-chains must be >= 0, got -1"),
    ],
)
def test_bad_counts_are_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as stopped:
        ra_tree.main(argv)
    assert stopped.value.code == 2 and message in capsys.readouterr().err


def test_s_t_graph_is_written(tmp_path: Path) -> None:
    tree = tmp_path / "tree.txt"
    tree.write_text("T 2/1\n\tS 2/2\n" + "".join(f"\t\t{n} 1\n" for n in ("a", "b", "c", "d")))
    workload = tmp_path / "diamond.json"
    diamond(1).save_json(workload)
    out = tmp_path / "st.png"
    assert ra_tree.main(["plot", "--tree", str(tree), "--workload", str(workload), "--batch", "2",
                         "--out", str(out)]) == 0  # fmt: skip
    assert out.read_bytes()[:4] == b"\x89PNG"
