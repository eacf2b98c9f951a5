"""The atomic problem on the command line: every method by name, the gap table, evaluating a solution file, and
the errors of bad input (one line, exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accelsched.cli import main

# small enough for both CP-SAT models to prove their optimum at once: the time limits below are hang guards only
INSTANCE = ("--workload", "random:3:0", "--hardware", "atomic-8x8-kc", "--option", "engines=2")
METHODS = ("cpsat-rounds", "cpsat-jobshop", "dp", "ls", "cnn-p", "il-pipe")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("method", METHODS)
def test_every_method_solves_by_name_and_its_file_evaluates_the_same(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, method: str
) -> None:
    code, out, _ = run(capsys, "solve", "atomic", *INSTANCE, "--atoms", "exact", "--method", method,
                       "--time-limit", "60", "--json")  # fmt: skip
    assert code == 0
    result = json.loads(out)
    assert result["method"] == method and result["status"] in ("OPTIMAL", "FEASIBLE")
    assert result["objective"] == result["cost"]["latency_cycles"] > 0
    path = tmp_path / "sol.json"
    path.write_text(out)
    code, out, _ = run(capsys, "evaluate", "atomic", *INSTANCE, "--atoms", "exact", "--solution", str(path), "--json")
    assert code == 0 and json.loads(out)["objective"] == result["objective"]


def test_gap_prints_every_method(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "gap", "atomic", *INSTANCE, "--atoms", "sa", "--time-limit", "60")
    assert code == 0 and all(m in out for m in METHODS)
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split() and line.split()[0] in METHODS}
    bound = float(out.split("best proven bound: ")[1].split()[0])
    below = [m for m, row in rows.items() if float(row[2]) < bound * (1 - 1e-6)]
    assert not below or f"note: {', '.join(below)} finish below it" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--option", "engines=0"), "engines='0'"),
        (("--batch", "0"), "batch"),
        (("--option", "atom=3,8,16,16"), "atom h=3"),
        (("--option", "atom=8,8,8,16"), "not a multiple of the PE array's C unrolling 16"),
        (("--atoms", "exact", "--option", "atoms=sa"), "--atoms exact and --option atoms=sa disagree"),
        (("--option", "mapping=best"), "unknown mapping 'best'"),
    ],
)
def test_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str) -> None:
    hardware = "atomic-8x8-yx" if "atom=3,8,16,16" in argv else "atomic-8x8-kc"
    code, out, err = run(capsys, "solve", "atomic", "--workload", "random:3:1", "--hardware", hardware, "--method",
                         "dp", *argv)  # fmt: skip
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out


def test_a_solution_file_breaking_a_rule_is_refused_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"rounds": [[0]], "engines": None}))
    code, _, err = run(capsys, "evaluate", "atomic", *INSTANCE, "--solution", str(path))
    assert code != 0 and "rule 1: atom 1" in err and len(err.strip().splitlines()) == 1
