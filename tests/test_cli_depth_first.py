"""The depth-first problem on the command line: evaluate one strategy, solve, and the errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsched.cli import main

INSTANCE = ("--workload", "mccnn", "--hardware", "defines-meta-proto-df")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_evaluate_one_strategy_and_its_solution_file_agree(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(
        capsys, "evaluate", "depth-first", *INSTANCE, "--tile", "47x78", "--mode", "fully-cached", "--json"
    )
    assert code == 0
    first = json.loads(out)
    assert first["cost"]["energy_pj"] == first["objective"] > 0
    path = tmp_path / "df.json"
    path.write_text(json.dumps(first["solution"]))
    code, out, _ = run(capsys, "evaluate", "depth-first", *INSTANCE, "--solution", str(path), "--json")
    assert code == 0
    assert json.loads(out)["objective"] == first["objective"]
    code, out, _ = run(capsys, "evaluate", "depth-first", *INSTANCE, "--tile", "47x78", "--mode", "h-cached")
    assert code == 0
    assert "47x78 h-cached" in out and "energy" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--tile", "0x4", "--mode", "h-cached"), "both sizes must be at least 1"),
        (("--tile", "5000x4", "--mode", "h-cached"), "larger than every output"),
        (("--tile", "4x4", "--mode", "cached"), "unknown overlap mode 'cached'"),
        (("--tile", "4x4"), "needs a solution file, or --tile and --mode"),
    ],
)
def test_bad_strategies_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    code, out, err = run(capsys, "evaluate", "depth-first", *INSTANCE, *args)
    assert code == 2
    assert message in err
    assert "Traceback" not in err and out == ""


def test_solve_and_gap(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "solve", "depth-first", *INSTANCE, "--method", "auto", "--json")
    assert code == 0
    auto = json.loads(out)
    code, out, _ = run(capsys, "gap", "depth-first", *INSTANCE, "--methods", "sl,lbl,fixed-df,auto", "--json")
    assert code == 0
    rows = json.loads(out)
    text = json.dumps(rows)
    for name in ("sl", "lbl", "fixed-df", "auto"):
        assert f'"{name}"' in text
    assert auto["objective"] > 0
