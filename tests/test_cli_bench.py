"""``accelsched bench``: a tiny sweep end to end, resume, and one-line errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from accelsched.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_bench_tiny_writes_results_and_report_then_resumes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = ("bench", "tiny", "--problems", "multicore", "--seeds", "1", "--workers", "0", "--out", str(tmp_path))
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "ran 7 cells, resumed 0" in out and "bench tiny: 7 cells (multicore 30 s x 1 seeds)" in err
    for name in ("results.jsonl", "results.csv", "report.md", "sweep.json", "gaps_multicore.png"):
        assert (tmp_path / name).exists(), name
    report = (tmp_path / "report.md").read_text()
    assert "## multicore" in report and "reference = proven optimum" in report
    code, out, _ = run(capsys, *args)
    assert code == 0 and "ran 0 cells, resumed 7" in out
    assert "- run 2:" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("bench", "huge"), "SUITE: unknown suite 'huge' (suites: tiny, small, paper)"),
        (("bench", "tiny", "--problems", "nope"), "no benchmark suites for problem 'nope'"),
        (("bench", "tiny", "--time-limit", "-1"), "--time-limit: time limit must be a positive number"),
        (("bench", "tiny", "--dask", "nowhere"), "--dask: bad Dask address 'nowhere'"),
    ],
)
def test_bad_bench_input_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: tuple[str, ...], message: str
) -> None:
    code, out, err = run(capsys, *argv, "--out", str(tmp_path / "out"))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out


def test_dask_without_dask_installed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    code, _, err = run(capsys, "bench", "tiny", "--dask", "local", "--out", str(tmp_path))
    assert code == 2 and "Dask distributed is not installed" in err and "pip install 'accelsched[dask]'" in err
