"""The RA-tree problem on the command line: evaluate a tree in SET's text form or as JSON, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsched.cli import main
from accelsched.models.registry import load_workload
from accelsched.problems.ra_tree import sequential_tree

INSTANCE = ("--workload", "set-resnet50", "--batch", "2", "--hardware", "set-edge-4x4")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_text_and_json_trees_give_the_same_objective(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    tree = sequential_tree(load_workload("set-resnet50", batch=2))
    text, data = tmp_path / "ls.txt", tmp_path / "ls.json"
    text.write_text(tree.to_text())
    data.write_text(json.dumps(tree.to_dict()))
    code, out, _ = run(capsys, "evaluate", "ra-tree", *INSTANCE, "--tree", str(text), "--json")
    assert code == 0
    from_text = json.loads(out)
    code, out, _ = run(capsys, "evaluate", "ra-tree", *INSTANCE, "--solution", str(data), "--json")
    assert code == 0 and json.loads(out)["objective"] == from_text["objective"] > 0
    assert from_text["cost"]["energy_pj"] ** 2 * from_text["cost"]["latency_cycles"] == pytest.approx(
        from_text["objective"]
    )


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        ("T 2/1\n\tconv1 2 x\n", 2, "line 2: expected 'S b/n', 'T b/n' or '<layer> b', got 'conv1 2 x'"),
        ("T 2/1\n\tconv1 2\n", 1, "layer 'pool1' has no leaf (71 layers missing)"),
        ("T 2/1\n\tnot_a_layer 2\n", 1, "leaf 0 names unknown layer 'not_a_layer'"),
    ],
)
def test_bad_trees_are_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, code: int, message: str
) -> None:
    path = tmp_path / "tree.txt"
    path.write_text(content)
    got, out, err = run(capsys, "evaluate", "ra-tree", *INSTANCE, "--tree", str(path))
    assert got == code and message in err and len(err.strip().splitlines()) == 1 and not out


def test_gap_runs_the_subspace_programs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "gap",
        "ra-tree",
        "--workload",
        "random:5:1",
        "--batch",
        "2",
        "--hardware",
        "set-edge-4x4",
        "--methods",
        "enumerate,dp-ls,dp-lp",
    )
    assert code == 0
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:] if line and not line.startswith("best")}
    assert {"dp-ls", "dp-lp"} <= set(rows) and all(rows[m][1] == "FEASIBLE" for m in ("dp-ls", "dp-lp"))
    assert rows["enumerate"][1] == "OPTIMAL"
    assert all(float(rows[m][2]) >= float(rows["enumerate"][2]) for m in ("dp-ls", "dp-lp"))


def test_threads_run_the_chains_in_processes_and_a_bad_count_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    small = ("--workload", "random:4:1", "--batch", "2", "--hardware", "set-edge-4x4", "--method", "sa")
    code, out, _ = run(capsys, "solve", "ra-tree", *small, "--threads", "2", "--json")
    assert code == 0
    parallel = json.loads(out)
    assert "2 processes" in parallel["stats"]["native_status"]
    code, out, _ = run(capsys, "solve", "ra-tree", *small, "--json")
    assert code == 0 and json.loads(out)["objective"] == parallel["objective"]
    code, out, err = run(capsys, "solve", "ra-tree", *small, "--threads", "0")
    assert code != 0 and not out and "field threads must be an integer >= 1, got 0" in err
    assert len(err.strip().splitlines()) == 1
