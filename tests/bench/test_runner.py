"""Sweeps: records of checked results, resume after a crash or Ctrl-C, ERROR records, executors."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from accelsched.bench import runner
from accelsched.bench.cells import Cell, run_cell
from accelsched.bench.records import load_records, result_from_record
from accelsched.bench.runner import RESULTS_FILE, plan, run_sweep
from accelsched.bench.suites import InstanceSpec, MethodPlan, ProblemSuites, Suite
from accelsched.errors import InfeasibleSolution, InputError
from accelsched.hardware import load_accelerator
from accelsched.models.registry import load_workload
from accelsched.registry import get_problem, make_instance

_LAYER = (("granularity", "layer"),)
_SUITE = Suite(
    (InstanceSpec("random:4:1", "stream-mc-homtpu", 1, _LAYER),),
    (MethodPlan("enumerate"), MethodPlan("manual"), MethodPlan("ga", seeded=True)),
    time_limit_s=20,
    seeds=2,
)
TABLE = (ProblemSuites("multicore", _SUITE, _SUITE, _SUITE),)


def _sweep() -> runner.Sweep:
    return plan("tiny", table=TABLE)


def _objectives(records: Any) -> dict[tuple[Any, ...], Any]:
    return {tuple(r["key"].values()): r["result"]["objective"] for r in records}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, runner.SweepOutcome]:
    out = tmp_path_factory.mktemp("sweep")
    return out, run_sweep(_sweep(), out, workers=0, stream=None)


def test_a_sweep_writes_one_checked_line_per_cell(finished: tuple[Path, runner.SweepOutcome]) -> None:
    out, outcome = finished
    sweep = _sweep()
    assert len(sweep.cells) == 4 and outcome.ran == 4 and outcome.resumed == 0 and not outcome.interrupted
    loaded = load_records(out / RESULTS_FILE)
    assert len(loaded.records) == 4 and loaded.bad_lines == 0 and not loaded.partial_tail
    problem = get_problem("multicore")
    instance = make_instance(problem, load_workload("random:4:1"), load_accelerator("stream-mc-homtpu"), dict(_LAYER))
    for record in loaded.records:
        assert record["result"]["status"] in ("OPTIMAL", "FEASIBLE")
        assert record["result"]["cost"]["latency_cycles"] > 0
        result = result_from_record(record)
        problem.check(instance, result.solution)  # the stored solution is the checked one
        value = problem.objective(instance, result.solution, problem.evaluate(instance, result.solution))
        assert value == pytest.approx(result.objective, rel=1e-9)
    optimum = next(r for r in loaded.records if r["key"]["method"] == "enumerate")["result"]["objective"]
    assert all(r["result"]["objective"] >= optimum * (1 - 1e-9) for r in loaded.records)
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["cells"] == 4 and meta["invocations"][0]["ran"] == 4


def test_rerun_of_a_finished_sweep_runs_nothing(finished: tuple[Path, runner.SweepOutcome], tmp_path: Path) -> None:
    out, first = finished
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / RESULTS_FILE).write_bytes((out / RESULTS_FILE).read_bytes())
    again = run_sweep(_sweep(), copy, workers=0, stream=None)
    assert again.ran == 0 and again.resumed == 4
    assert _objectives(again.records) == _objectives(first.records)


def test_crash_midway_then_rerun_computes_only_the_missing_cells(
    finished: tuple[Path, runner.SweepOutcome], tmp_path: Path
) -> None:
    out, first = finished
    lines = (out / RESULTS_FILE).read_bytes().splitlines(keepends=True)
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    # two finished lines and the third cut in the middle of its write
    (crashed / RESULTS_FILE).write_bytes(lines[0] + lines[1] + lines[2][: len(lines[2]) // 2])
    assert load_records(crashed / RESULTS_FILE).partial_tail
    ran: list[Cell] = []
    again = run_sweep(_sweep(), crashed, workers=0, stream=None, on_cell=lambda cell, _: ran.append(cell))
    kept = {tuple(json.loads(line)["key"].values()) for line in lines[:2]}
    assert {tuple(c.key) for c in ran} == {tuple(c.key) for c in _sweep().cells} - kept
    assert again.ran == 2 and again.resumed == 2
    loaded = load_records(crashed / RESULTS_FILE)
    assert len(loaded.records) == 4 and loaded.bad_lines == 0 and not loaded.partial_tail
    assert _objectives(loaded.records) == _objectives(first.records)  # seeded: the same numbers


def test_ctrl_c_keeps_finished_cells_and_the_rerun_resumes(tmp_path: Path) -> None:
    def stop(cell: Cell, record: dict[str, Any]) -> None:
        raise KeyboardInterrupt

    stopped = run_sweep(_sweep(), tmp_path, workers=0, stream=None, on_cell=stop)
    assert stopped.interrupted and stopped.ran == 1 and len(stopped.records) == 1
    again = run_sweep(_sweep(), tmp_path, workers=0, stream=None)
    assert again.ran == 3 and again.resumed == 1 and not again.interrupted
    assert len(load_records(tmp_path / RESULTS_FILE).records) == 4


def test_a_failed_check_is_an_error_record_without_numbers(tmp_path: Path) -> None:
    def infeasible(*args: Any, **kwargs: Any) -> Any:
        raise InfeasibleSolution("rule 3: CN 'x' starts before its input arrives")

    def failing(cells: Sequence[Cell]) -> Iterator[tuple[Cell, dict[str, Any]]]:
        for cell in cells:
            yield cell, run_cell(cell, run_method=infeasible)

    outcome = run_sweep(_sweep(), tmp_path, workers=0, stream=None, executor=failing)
    for record in outcome.records:
        assert record["result"]["status"] == "ERROR"
        assert record["result"]["objective"] is None and record["result"]["cost"] is None
        assert record["error"].startswith("InfeasibleSolution: rule 3")
    # --retry-errors runs them again; without it they count as finished
    assert run_sweep(_sweep(), tmp_path, workers=0, stream=None).ran == 0
    retried = run_sweep(_sweep(), tmp_path, workers=0, stream=None, retry_errors=True)
    assert retried.ran == 4 and all(r["result"]["status"] != "ERROR" for r in retried.records)


def test_a_bad_instance_is_an_error_record(tmp_path: Path) -> None:
    suite = Suite((InstanceSpec("random:4:1", "no-such-preset"),), (MethodPlan("manual"),), 5)
    sweep = plan("tiny", table=(ProblemSuites("multicore", suite, suite, suite),))
    (record,) = run_sweep(sweep, tmp_path, workers=0, stream=None).records
    assert record["result"]["status"] == "ERROR" and "no-such-preset" in record["error"]


def test_a_cell_lost_with_its_worker_stays_unfinished(tmp_path: Path) -> None:
    def lose_first(cells: Sequence[Cell]) -> Iterator[tuple[Cell, dict[str, Any] | None]]:
        for k, cell in enumerate(cells):
            yield cell, (None if k == 0 else run_cell(cell))

    outcome = run_sweep(_sweep(), tmp_path, workers=0, stream=None, executor=lose_first)
    assert outcome.lost == 1 and outcome.ran == 3 and len(load_records(tmp_path / RESULTS_FILE).records) == 3
    assert run_sweep(_sweep(), tmp_path, workers=0, stream=None).ran == 1


def test_progress_line(tmp_path: Path) -> None:
    import io

    stream = io.StringIO()
    run_sweep(_sweep(), tmp_path, workers=0, stream=stream)
    last = stream.getvalue().strip().splitlines()[-1]
    assert last.startswith("bench tiny: 4/4 cells") and "elapsed" in last and "left" in last


def test_local_processes_give_the_same_objectives(finished: tuple[Path, runner.SweepOutcome], tmp_path: Path) -> None:
    _, first = finished
    outcome = run_sweep(_sweep(), tmp_path, workers=2, stream=None)
    assert outcome.ran == 4 and _objectives(outcome.records) == _objectives(first.records)
    assert len({r["worker"] for r in outcome.records} - {first.records[0]["worker"]}) >= 1


def test_dask_local_cluster_gives_the_same_objectives(
    finished: tuple[Path, runner.SweepOutcome], tmp_path: Path
) -> None:
    pytest.importorskip("distributed")
    _, first = finished
    outcome = run_sweep(_sweep(), tmp_path, workers=2, dask="local", stream=None)
    assert outcome.ran == 4 and _objectives(outcome.records) == _objectives(first.records)
    meta = json.loads((tmp_path / "sweep.json").read_text())
    assert meta["invocations"][-1]["executor"] == "dask local (2 workers)"


def test_dask_missing_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(InputError, match=r"pip install 'accelsched\[dask\]'"):
        run_sweep(_sweep(), tmp_path, dask="local", stream=None)
    assert not (tmp_path / RESULTS_FILE).exists()


def test_bad_dask_address_and_workers(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="bad Dask address"):
        run_sweep(_sweep(), tmp_path, dask="somewhere", stream=None)
    with pytest.raises(InputError, match="workers"):
        run_sweep(_sweep(), tmp_path, workers=-1, stream=None)
