"""The partition problem on the command line: solve, gap, evaluate --solution and its errors."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from accelsched import cli
from accelsched.cli import main
from tests.test_filelock import held_elsewhere

INSTANCE = ("--workload", "random:7:3", "--hardware", "cocco-simba-separate", "--option", "act_kb=64",
            "--option", "weight_kb=16")  # fmt: skip
EXACT = ("enumerate", "milp-highs", "milp-cbc", "milp-pyomo", "cpsat")
HEURISTICS = ("ga", "sa", "greedy", "dp")
METHODS = (*EXACT, *HEURISTICS)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_every_method_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "methods")
    assert code == 0
    listed = {line.split()[0] for line in out.splitlines() if line.startswith("  ")}
    assert set(METHODS) <= listed


def test_solve_json_then_evaluate_the_solution(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "solve", "partition", *INSTANCE, "--method", "greedy", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["status"] == "FEASIBLE" and result["problem"] == "partition"
    assert result["objective"] == pytest.approx(result["cost"]["dram_bytes"])
    path = tmp_path / "solve.json"
    path.write_text(out)
    code, out, _ = run(capsys, "evaluate", "partition", *INSTANCE, "--solution", str(path), "--json")
    assert code == 0
    assert json.loads(out)["objective"] == pytest.approx(result["objective"])
    bare = tmp_path / "solution.json"
    bare.write_text(json.dumps(result["solution"]))
    code, out, _ = run(capsys, "evaluate", "partition", *INSTANCE, "--solution", str(bare))
    assert code == 0 and "valid, objective" in out


def test_gap_table_has_every_method(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "gap", "partition", *INSTANCE, "--time-limit", "60")  # a safety net
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines()[1:] if line and not line.startswith("best")}
    assert set(METHODS) <= set(rows)
    assert all(rows[m].split()[1] == "OPTIMAL" for m in EXACT)
    assert all(rows[m].split()[1] == "FEASIBLE" for m in HEURISTICS)
    best = float(rows["enumerate"].split()[2])
    assert all(float(rows[m].split()[2]) == best for m in EXACT)
    assert all(float(rows[m].split()[2]) >= best for m in HEURISTICS)


def test_warm_start_from_a_heuristic(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "solve", "partition", *INSTANCE, "--method", "sa", "--warm-start", "greedy")
    assert code == 0 and "FEASIBLE" in out


@pytest.mark.parametrize("method", ["milp-highs", "cpsat"])
def test_exact_model_warm_started_by_the_ga(capsys: pytest.CaptureFixture[str], method: str) -> None:
    code, out, _ = run(capsys, "solve", "partition", *INSTANCE, "--method", method, "--warm-start", "ga", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["status"] == "OPTIMAL" and "warm start given" in result["stats"]["native_status"]


def test_exact_model_warm_started_from_a_solution_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "solve", "partition", *INSTANCE, "--method", "greedy", "--json")
    greedy = json.loads(out)
    path = tmp_path / "greedy.json"
    path.write_text(out)
    code, out, _ = run(capsys, "solve", "partition", *INSTANCE, "--method", "milp-highs", "--warm-start", str(path),
                       "--json")  # fmt: skip
    assert code == 0
    result = json.loads(out)
    assert f"warm start given (objective {greedy['objective']:.12g})" in result["stats"]["native_status"]
    assert result["status"] == "OPTIMAL" and result["objective"] <= greedy["objective"]


def test_a_warm_start_of_another_instance_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    other = ("--workload", "random:9:3", *INSTANCE[2:])
    code, out, _ = run(capsys, "solve", "partition", *other, "--method", "greedy", "--json")
    path = tmp_path / "other.json"
    path.write_text(out)
    code, out, err = run(capsys, "solve", "partition", *INSTANCE, "--method", "milp-highs", "--warm-start", str(path))
    assert code == 2 and out == ""
    assert "the warm start is not a solution of this instance" in err and str(path) in err


@pytest.mark.parametrize("source", ["nope", "missing.json"])
def test_a_warm_start_neither_method_nor_file_is_refused(capsys: pytest.CaptureFixture[str], source: str) -> None:
    code, out, err = run(capsys, "solve", "partition", *INSTANCE, "--method", "milp-highs", "--warm-start", source)
    assert code == 2 and out == ""
    assert f"{source!r} is neither a method of partition nor a file" in err and "greedy" in err


def test_a_layer_larger_than_every_buffer_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    tiny = ("--workload", "random:7:3", "--hardware", "cocco-simba-separate", "--option", "act_kb=1",
            "--option", "weight_kb=16")  # fmt: skip
    code, out, _ = run(capsys, "solve", "partition", *tiny, "--method", "greedy")
    assert code == 0
    assert "INFEASIBLE" in out and "alone needs" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--option", "alpha=-1"), "alpha must be >= 0"),
        (("--option", "act_kb="), "is empty"),
        (("--method", "milp"), "unknown method 'milp'"),
    ],
)
def test_bad_partition_input_is_one_line(
    capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], message: str
) -> None:
    argv = ["solve", "partition", "--workload", "random:7:3", "--hardware", "cocco-simba-separate", *extra]
    if "--method" not in extra:
        argv += ["--method", "greedy"]
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out


def test_bad_solution_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    code, _, err = run(capsys, "evaluate", "partition", *INSTANCE, "--solution", str(missing))
    assert code == 2 and "cannot read solution file" in err
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    code, _, err = run(capsys, "evaluate", "partition", *INSTANCE, "--solution", str(broken))
    assert code == 2 and "not JSON" in err
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"subgraphs": [["L0"]], "act_capacity_bytes": 65536, "weight_capacity_bytes": 16384}))
    code, _, err = run(capsys, "evaluate", "partition", *INSTANCE, "--solution", str(wrong))
    assert code == 1 and "in no subgraph" in err
    code, _, err = run(capsys, "evaluate", "partition", *INSTANCE)
    assert code == 2 and "--solution" in err


CO_EXPLORATION = ("--workload", "random:7:3", "--hardware", "cocco-simba-shared", "--option", "capacities=cocco",
                  "--option", "metric=energy")  # fmt: skip
DECOMPOSED = ("--decompose-above", "0")
"""The exact models decompose even this small instance's complete table."""


def test_solve_resumes_from_a_pair_ledger(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``--ledger`` reaches the capacity decomposition: the first run writes the pairs it solved, the second
    starts from them and solves none again, at the same (checked) optimum."""
    ledger = tmp_path / "ledger.json"
    argv = ("solve", "partition", *CO_EXPLORATION, *DECOMPOSED, "--method", "milp-highs", "--ledger", str(ledger),
            "--json")  # fmt: skip
    code, out, _ = run(capsys, *argv)
    assert code == 0 and ledger.exists()
    first = json.loads(out)
    assert first["status"] == "OPTIMAL" and "started from no pairs" in first["stats"]["native_status"]
    code, out, _ = run(capsys, *argv)
    again = json.loads(out)
    assert code == 0 and again["status"] == "OPTIMAL" and again["objective"] == first["objective"]
    assert "and its incumbent" in again["stats"]["native_status"]
    assert "capacity decomposition: 0 of" in again["stats"]["native_status"]


def test_solve_given_pairs_solves_only_those_into_its_ledger(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--pairs`` gives the run its share of a divided proof: it solves those pairs alone (said in the
    note) and records only them in its ledger."""
    ledger = tmp_path / "ledger.json"
    argv = ("solve", "partition", *CO_EXPLORATION, "--method", "milp-highs", "--ledger", str(ledger), "--json")
    code, out, _ = run(capsys, *argv, *DECOMPOSED, "--pairs", "192/0, 3072/0")
    assert code == 0
    note = json.loads(out)["stats"]["native_status"]
    assert "this run solves only the pairs given (KB: 192/0, 3072/0)" in note
    recorded = {(entry["act_bytes"], entry["weight_bytes"]) for entry in json.loads(ledger.read_text())["pairs"]}
    assert recorded and recorded <= {(192 * 1024, 0), (3072 * 1024, 0)}
    whole = ("--decompose-above", "10000")  # small enough to be solved whole: said so
    code, out, _ = run(capsys, *argv, *whole, "--pairs", "192/0")
    result = json.loads(out)
    assert code == 0 and result["status"] == "OPTIMAL"
    assert "solved whole, not pair by pair as the pairs given ask" in result["stats"]["native_status"]


def test_solve_verbose_logs_the_pairs_as_they_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    """``--verbose`` shows a long proof's progress: each pair's start and end, with timestamps, on
    stderr; stdout keeps the result alone, and the package's logger is as it was afterwards."""
    logger = logging.getLogger("accelsched")
    before = (logger.level, list(logger.handlers))
    argv = ("solve", "partition", *CO_EXPLORATION, *DECOMPOSED, "--method", "milp-highs", "--json")
    code, out, err = run(capsys, *argv, "--verbose")
    assert code == 0 and json.loads(out)["status"] == "OPTIMAL"
    lines = err.splitlines()
    starts = [line for line in lines if "partition.capacity: pair " in line and " starts: " in line]
    assert starts and re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ", starts[0]), lines
    assert (logger.level, list(logger.handlers)) == before
    code, out, err = run(capsys, *argv)
    assert code == 0 and not err


@pytest.mark.parametrize(("verbose", "shown"), [(1, ["info"]), (2, ["debug", "info"]), (0, [])])
def test_verbose_once_shows_the_info_records_and_twice_the_debug_records_too(
    capsys: pytest.CaptureFixture[str], verbose: int, shown: list[str]
) -> None:
    logger = logging.getLogger("accelsched.formulations.partition.colgen")
    with cli._progress(verbose):
        logger.debug("debug")
        logger.info("info")
    assert [line.rsplit(": ", 1)[1] for line in capsys.readouterr().err.splitlines()] == shown
    logger.info("after")  # the package's logger is as it was
    assert capsys.readouterr().err == ""


def test_minus_vv_is_verbose_twice() -> None:
    parser = cli._parser()
    assert (
        parser.parse_args(
            ["solve", "partition", "--workload", "vgg16", "--hardware", "x", "--method", "dp", "-vv"]
        ).verbose
        == 2
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--pairs", "192/0"), "--pairs gives a run its share of a proof divided between runs"),
        (("--ledger", "LEDGER", "--pairs", "192-0"), "bad pair '192-0'"),
        (("--ledger", "LEDGER", "--pairs", "100/0"), "pair 100/0 KB (102400/0 B) is not a pair of candidates"),
        (("--ledger", "LEDGER", "--pairs", "192/64"), "the shared candidates are 128, 192,"),
    ],
)
def test_pairs_a_run_cannot_solve_are_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: tuple[str, ...], message: str
) -> None:
    ledger = tmp_path / "ledger.json"
    extra = tuple(str(ledger) if arg == "LEDGER" else arg for arg in extra)
    code, out, err = run(capsys, "solve", "partition", *CO_EXPLORATION, "--method", "milp-highs", *extra)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out
    assert not ledger.exists()


@pytest.mark.parametrize(
    ("method", "options", "message"),
    [
        ("ga", CO_EXPLORATION, "method 'ga' (partition) takes no pair ledger"),
        ("milp-highs", INSTANCE, "this instance has fixed capacities"),
    ],
)
def test_a_ledger_a_run_cannot_use_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, method: str, options: tuple[str, ...], message: str
) -> None:
    ledger = tmp_path / "ledger.json"
    code, out, err = run(capsys, "solve", "partition", *options, "--method", method, "--ledger", str(ledger))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out
    assert not ledger.exists()
    if method == "ga":
        takers = err.split("use it with ", 1)[1].split(", or leave", 1)[0]
        assert sorted(takers.split(", ")) == ["cpsat", "milp-cbc", "milp-highs", "milp-pyomo"], err


def test_a_ledger_another_run_uses_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Refused before the warm start and the solve: a second run would overwrite the first one's pairs."""
    ledger = tmp_path / "ledger.json"
    argv = ("solve", "partition", *CO_EXPLORATION, "--method", "milp-highs", "--ledger", str(ledger))
    with held_elsewhere(ledger):
        code, out, err = run(capsys, *argv, "--warm-start", "ga")
    assert code == 2 and len(err.strip().splitlines()) == 1 and not out and not ledger.exists()
    assert f"pair ledger {ledger}" in err and "another process is using it" in err and "merge" in err


def test_a_ledger_of_another_instance_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.json"
    argv = ("solve", "partition", *CO_EXPLORATION, *DECOMPOSED, "--method", "milp-highs", "--ledger", str(ledger))
    code, _, _ = run(capsys, *argv)
    assert code == 0
    written = ledger.read_text()
    other = [arg.replace("random:7:3", "random:7:4") for arg in CO_EXPLORATION]
    missing = tmp_path / "missing.json"  # a warm start read first would fail on it
    again = ("solve", "partition", *other, "--method", "cpsat", "--warm-start", str(missing), "--ledger", str(ledger))
    code, out, err = run(capsys, *again)
    assert code == 2 and "another instance" in err and len(err.strip().splitlines()) == 1 and not out
    assert str(missing) not in err, "the ledger is checked before the warm start is read"
    assert ledger.read_text() == written
