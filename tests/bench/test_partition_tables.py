"""Cocco's Fig. 11 and co-exploration tables, on small random workloads: checked rows, merging, rendering."""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from accelsched.bench import partition_ledgers, partition_tables
from accelsched.errors import InputError
from accelsched.formulations.partition.ledger import Ledger, open_ledger
from accelsched.formulations.partition.proof_params import ProofParams
from accelsched.hardware import load_accelerator
from accelsched.models.registry import load_workload
from accelsched.problems.partition import evaluate, make_instance, objective
from accelsched.solvers import SolveOptions, Status
from tests.test_filelock import held_elsewhere, release

OPTIONS = SolveOptions(time_limit_s=20, seed=0)
COCCO_ENERGY = {"capacities": "cocco", "metric": "energy"}
DECOMPOSED = ProofParams(decompose_columns=0)
"""The MILP decomposes every co-exploration table, however few its columns."""


@pytest.fixture(scope="module")
def two_workloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Fig. 11 table of random:5:1 and random:6:2, run once for the tests that merge into it or render it."""
    out = tmp_path_factory.mktemp("fig11")
    partition_tables.fig11(["random:5:1", "random:6:2"], OPTIONS, out)
    return out


def copied(table: Path, tmp_path: Path) -> Path:
    """A test's own copy of a table directory (the tests change it)."""
    return Path(shutil.copytree(table, tmp_path / "tables"))


def test_fig11_rows_are_checked_and_the_exact_row_proves_its_bound(tmp_path: Path) -> None:
    rows = partition_tables.fig11(["random:7:1"], OPTIONS, tmp_path)
    by = {r.method: r for r in rows}
    assert set(by) == {*partition_tables.HEURISTICS, partition_tables.EXACT}
    exact = by[partition_tables.EXACT]
    assert exact.status == "OPTIMAL" and exact.objective is not None
    assert all(r.objective is not None and r.objective >= exact.objective * (1 - 1e-9) for r in rows)
    text = (tmp_path / "partition_fig11.md").read_text()
    assert "| random:7:1 | 7 |" in text and "| optimum |" in text


def test_merge_replaces_only_the_workloads_run(two_workloads: Path, tmp_path: Path) -> None:
    out = copied(two_workloads, tmp_path)
    before = json.loads((out / "partition_fig11.json").read_text())["rows"]
    partition_tables.fig11(["random:6:2", "random:4:3"], OPTIONS, out, merge=True)
    after = json.loads((out / "partition_fig11.json").read_text())["rows"]
    workloads = list(dict.fromkeys(r["workload"] for r in after))
    assert workloads == ["random:5:1", "random:6:2", "random:4:3"]  # in place, new ones last
    assert [r for r in after if r["workload"] == "random:5:1"] == [r for r in before if r["workload"] == "random:5:1"]
    assert len(after) == 3 * len(before) // 2


def test_merge_refuses_another_seed_before_running(
    two_workloads: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = copied(two_workloads, tmp_path)
    table = (out / "partition_fig11.json").read_text()
    with pytest.raises(SystemExit) as stop:
        partition_tables.main(["fig11", "--workloads", "random:4:1", "--merge", "--seed", "3",
                               "--out-dir", str(out)])  # fmt: skip
    assert stop.value.code != 0
    assert "was made with seed 0, this run uses seed 3" in capsys.readouterr().err
    assert (out / "partition_fig11.json").read_text() == table


def test_a_merged_row_with_another_time_limit_is_stated(two_workloads: Path, tmp_path: Path) -> None:
    out = copied(two_workloads, tmp_path)
    partition_tables.fig11(["random:6:2"], SolveOptions(time_limit_s=7, seed=0), out, merge=True)
    text = (out / "partition_fig11.md").read_text()
    assert "time limit 20 s (random:6:2: 7 s)" in text


@pytest.mark.parametrize(
    "source",
    ["forced traffic", "compulsory traffic", "column generation's bound", "the capacity decomposition's bound"],
)
def test_render_names_where_a_bound_comes_from(two_workloads: Path, tmp_path: Path, source: str) -> None:
    out = copied(two_workloads, tmp_path)
    path = out / "partition_fig11.json"
    payload = json.loads(path.read_text())
    for row in payload["rows"]:
        if row["method"] == partition_tables.EXACT:
            row["status"] = "FEASIBLE"
            row["detail"]["native_status"] = f"column budget reached: optimality not proven, bound = {source}"
    path.write_text(json.dumps(payload))
    partition_tables.render(path)
    shown = {
        "column generation's bound": "column generation",
        "the capacity decomposition's bound": "capacity decomposition",
    }
    shown_source = shown.get(source, source)
    text = (out / "partition_fig11.md").read_text()
    assert f"| {shown_source} |" in text
    assert ("older rows: the compulsory traffic" in text) == (source == "compulsory traffic")  # caption: only if used


def test_coexplore_table_states_the_bound_of_an_unproven_exact_row() -> None:
    def row(method: str, status: str, objective: float, bound: float | None, native: str) -> partition_tables.Row:
        detail = {"native_status": native, "capacity_kb": (64, 72), "time_limit_s": 20}
        return partition_tables.Row("coexplore", "w", "shared", method, status, objective, bound, 3.0, detail)

    rows = [
        row("milp-highs", "FEASIBLE", 2.0e6, 1.6e6, "kOptimal; budget: optimality not proven, bound = forced traffic"),
        row("cpsat", "OPTIMAL", 1.9e6, 1.9e6, "OPTIMAL"),
        row("ga", "FEASIBLE", 2.1e6, None, "20 generations"),
    ]
    text = partition_tables._coexplore_markdown(rows, OPTIONS)
    assert "w/shared milp-highs: FEASIBLE in 3 s (bound 1.600, forced traffic)" in text
    assert text.rstrip().endswith("w/shared cpsat: OPTIMAL in 3 s")  # a proof needs no bound
    assert "| w | shared | 2.000 (5.26%; 64/72) | 1.900 (0.00%; 64/72) | 2.100 (10.53%; 64/72) |" in text


def test_merge_keeps_each_buffer_design_in_place(tmp_path: Path) -> None:
    def row(workload: str, design: str, objective: float) -> partition_tables.Row:
        return partition_tables.Row("coexplore", workload, design, "ga", "FEASIBLE", objective, None, 1.0, {})

    stem = tmp_path / "partition_coexplore"
    old = [row("a", "shared", 1), row("b", "shared", 2), row("a", "separate", 3), row("b", "separate", 4)]
    partition_tables._write(old, stem, "", OPTIONS)
    merged = partition_tables._merged([row("b", "shared", 5), row("b", "separate", 6), row("c", "shared", 7)], stem)
    assert [(r.workload, r.design, r.objective) for r in merged] == [
        ("a", "shared", 1), ("b", "shared", 5), ("a", "separate", 3), ("b", "separate", 6), ("c", "shared", 7)
    ]  # fmt: skip


def test_a_table_merged_while_another_process_writes_the_results_file_keeps_its_rows(tmp_path: Path) -> None:
    """The results file is read for the merge only once the other process has let it go, so that
    the rows it wrote meanwhile stay."""

    def row(workload: str, objective: float) -> partition_tables.Row:
        return partition_tables.Row("coexplore", workload, "shared", "ga", "FEASIBLE", objective, None, 1.0, {})

    stem = tmp_path / "partition_coexplore"
    partition_tables._write([row("a", 1)], stem, "", OPTIONS)
    with held_elsewhere(stem.with_suffix(".json")) as child:
        merging = threading.Thread(target=partition_tables._publish,
                                   args=([row("b", 2)], stem, lambda rows: "", OPTIONS, True))  # fmt: skip
        merging.start()
        time.sleep(0.5)
        assert merging.is_alive()  # waiting for the file
        partition_tables._write([row("a", 1), row("c", 3)], stem, "", OPTIONS)  # the other process's rows
        release(child)
        merging.join(timeout=60)
    rows = json.loads(stem.with_suffix(".json").read_text())["rows"]
    assert [(r["workload"], r["objective"]) for r in rows] == [("a", 1), ("c", 3), ("b", 2)]


def test_a_table_gives_up_on_a_results_file_held_too_long(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stem = tmp_path / "partition_coexplore"
    row = partition_tables.Row("coexplore", "a", "shared", "ga", "FEASIBLE", 1.0, None, 1.0, {})
    with held_elsewhere(stem.with_suffix(".json")), pytest.raises(InputError) as caught:
        partition_tables._publish([row], stem, lambda rows: "", OPTIONS, True, wait_s=0.2)
    assert caught.value.what == "another process is using it (waited 0.2 s)"
    assert caught.value.where == f"results file {stem.with_suffix('.json')}" and "--out-dir" in caught.value.fix
    assert not stem.with_suffix(".json").exists() and not capsys.readouterr().out


def test_coexplore_rows_are_checked_and_the_exact_rows_start_from_the_best_heuristic(tmp_path: Path) -> None:
    rows = partition_tables.coexplore(["random:3:1"], SolveOptions(time_limit_s=60, seed=0),
                                      SolveOptions(time_limit_s=0.2, seed=0), tmp_path)  # fmt: skip
    assert {r.design for r in rows} == {"shared", "separate"}
    for design in ("shared", "separate"):
        by = {r.method: r for r in rows if r.design == design}
        assert set(by) == {*partition_tables.COEXPLORE_EXACT, "ga", "sa", "fixed-S", "fixed-M", "fixed-L",
                           "grid+GA", "random+GA"}  # fmt: skip
        values = [r.objective for r in by.values() if r.objective is not None]
        for method in partition_tables.COEXPLORE_EXACT:
            exact = by[method]
            assert exact.status == "OPTIMAL" and exact.objective is not None
            assert "warm start given" in exact.detail["native_status"]
            assert exact.objective <= min(values) * (1 + 1e-9)
    assert "| random:3:1 | separate |" in (tmp_path / "partition_coexplore.md").read_text()


def test_the_warm_start_is_the_least_objective_with_a_solution() -> None:
    a, b = object(), object()
    assert partition_tables._best_of([(3.0, a), (None, b), (2.0, None), (2.5, b)]) is b  # type: ignore[list-item]
    assert partition_tables._best_of([(1.0, None)]) is None


def test_an_exact_row_keeps_its_pair_ledger_for_the_next_run(tmp_path: Path) -> None:
    """The exact rows pass their ledger to the method: it writes the decomposition's incumbent (and
    pairs, none here: the least capacity holds this small workload), and a second run starts from it.
    The MILP's table is decomposed here whatever its size; the pairs' part, and CP-SAT's (which
    decomposes incomplete tables only), are tested in test_ledger."""
    method = "milp-highs"
    instance = make_instance(load_workload("random:6:2"), load_accelerator("cocco-simba-shared"), COCCO_ENERGY)
    path = tmp_path / partition_ledgers.ledger_name("random:6:2", "shared")
    assert path.name == "partition_coexplore_random-6-2_shared.json"
    first = partition_tables._run(instance, method, OPTIONS, None, path, DECOMPOSED)
    assert first.status is Status.OPTIMAL
    recorded = json.loads(path.read_text())
    assert recorded["incumbent"] is not None and "started from no pairs and no incumbent" in first.stats.native_status
    second = partition_tables._run(instance, method, OPTIONS, None, path, DECOMPOSED)
    assert second.status is Status.OPTIMAL and second.objective == first.objective
    assert f"pair ledger {path}: started from" in second.stats.native_status
    assert "and its incumbent (objective" in second.stats.native_status


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--designs", "shared,huge"], "--designs: unknown ['huge']"),
        (["--threads", "0"], "--threads: 0"),
    ],
)
def test_coexplore_refuses_bad_designs_and_threads(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        partition_tables.main(["coexplore", *argv])
    assert caught.value.code == 2 and message in capsys.readouterr().err


def test_coexplore_refuses_a_ledger_of_another_instance_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledgers = tmp_path / "ledgers"
    ledgers.mkdir()
    (ledgers / "partition_coexplore_random-4-2_shared.json").write_text('{"kind": "something else"}')
    argv = ["coexplore", "--workloads", "random:4:2", "--designs", "shared", "--out-dir", str(tmp_path)]
    with pytest.raises(SystemExit) as caught:
        partition_tables.main([*argv, "--ledger-dir", str(ledgers)])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and "not a pair ledger" in err and "Traceback" not in err
    assert not (tmp_path / "partition_coexplore.json").exists()  # nothing written


def test_the_ledger_table_shows_where_each_pair_stands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bound recorded at one pair holds at the pairs within it (shown there too), not above it; the pair
    shows the time spent on it, the subgraphs kept and the open pairs within it (itself and the smaller
    ones); its ceiling (the LP value of its master over the subgraphs kept) holds at the pairs above it,
    not within it; without an incumbent every pair is open."""
    workload = "random:8:1"
    instance = make_instance(load_workload(workload), load_accelerator("cocco-simba-shared"), COCCO_ENERGY)
    path = tmp_path / partition_ledgers.ledger_name(workload, "shared")
    ledger = Ledger(path, instance)
    candidates = instance.act_candidates_bytes
    middle = candidates[len(candidates) // 2]
    ledger.record(middle, 0, 1e12, 12.4, "abc", ((0,), (1,)))
    ledger.save()
    argv = ["ledger", "--ledger-dir", str(tmp_path), "--workloads", f"{workload},random:8:2", "--designs", "shared"]
    assert partition_tables.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{workload} (shared): no incumbent, bound ")
    assert lines[0].endswith(f", {len(candidates)} of {len(candidates)} pairs open, 12 s of pair solves")
    rows = {line.split()[0]: line.split() for line in lines[2 : 2 + len(candidates)]}
    within = str(candidates.index(middle) + 1)
    row = rows[f"{middle // 1024}/0"]
    assert row[2:5] + row[6:] == ["1e+12", "inf", "-", "12", "2", within, "open"]
    ceiling = row[5]
    assert all((float(row[2]) == 1e12) == (int(key.split("/")[0]) * 1024 <= middle) for key, row in rows.items())
    assert all((row[5] == ceiling) == (int(key.split("/")[0]) * 1024 >= middle) for key, row in rows.items())
    assert 0 < float(ceiling) < float("inf")
    assert lines[-1] == f"random:8:2 (shared): no ledger at {tmp_path / 'partition_coexplore_random-8-2_shared.json'}"


def test_the_ledger_table_says_when_every_pair_is_settled(tmp_path: Path) -> None:
    """A solve that proves its optimum leaves a ledger the table calls proven, stating how far the bound
    (the least settled floor) lies below the incumbent and the tolerance that gap is within; a ledger
    whose incumbent leaves pairs open (the same subgraphs at the largest capacities) is not called so."""
    workload = "random:6:2"
    instance = make_instance(load_workload(workload), load_accelerator("cocco-simba-separate"), COCCO_ENERGY)
    path = tmp_path / partition_ledgers.ledger_name(workload, "separate")
    assert partition_tables._run(instance, "milp-highs", OPTIONS, None, path, DECOMPOSED).status is Status.OPTIMAL
    head = partition_ledgers.ledger_report([workload], ["separate"], tmp_path).splitlines()[0]
    assert ", 0 of " in head and "; proven optimal (every pair settled): the bound is " in head
    below, tolerance = (float(text) for text in re.findall(r"([0-9.]+)%", head))
    assert 0 <= below <= tolerance and tolerance > 0
    optimum = open_ledger(path, instance)
    assert optimum is not None and optimum.incumbent is not None
    worse = replace(
        optimum.incumbent,
        act_capacity_bytes=max(instance.act_candidates_bytes),
        weight_capacity_bytes=max(instance.weight_candidates_bytes),
    )
    path.unlink()
    ledger = Ledger(path, instance)
    ledger.offer(worse, objective(instance, worse, evaluate(instance, worse)))
    ledger.save()
    head = partition_ledgers.ledger_report([workload], ["separate"], tmp_path).splitlines()[0]
    assert "proven" not in head and " of 961 pairs open" in head and ", 0 of " not in head


def test_the_ledger_table_needs_a_directory_and_a_ledger_it_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        partition_tables.main(["ledger", "--workloads", "random:4:2"])
    assert caught.value.code == 2 and "ledger needs --ledger-dir" in capsys.readouterr().err
    (tmp_path / "partition_coexplore_random-4-2_shared.json").write_text('{"kind": "something else"}')
    with pytest.raises(SystemExit) as caught:
        partition_tables.main(["ledger", "--ledger-dir", str(tmp_path), "--workloads", "random:4:2"])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and "not a pair ledger" in err and "Traceback" not in err


def test_merge_puts_the_pairs_another_run_solved_into_the_ledger(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The pairs a run from a copy of the base solved go into the ledger (the base's untouched ones are
    not taken again); a workload without a ledger in the other directory is said so; merging a ledger
    into itself, or a base the other run did not start from, exits 2 without a traceback, writing nothing."""
    workload = "random:8:1"
    instance = make_instance(load_workload(workload), load_accelerator("cocco-simba-shared"), COCCO_ENERGY)
    name = partition_ledgers.ledger_name(workload, "shared")
    small, middle, large = (instance.act_candidates_bytes[i] for i in (0, 2, -1))
    dirs = {key: tmp_path / key for key in ("base", "mine", "theirs", "ahead")}
    for key, seconds in (("base", 3.0), ("mine", 3.0), ("theirs", 3.0), ("ahead", 8.0)):
        ledger = Ledger(dirs[key] / name, instance)
        ledger.record(small, 0, 5e11, seconds, "abc")
        if key in ("mine", "theirs"):
            ledger.record(middle if key == "mine" else large, 0, 1e12, 10.0, key)
        ledger.save()
    argv = ["merge", "--ledger-dir", str(dirs["mine"]), "--designs", "shared", "--workloads", f"{workload},random:8:2"]
    assert partition_tables.main([*argv, "--from-dir", str(dirs["theirs"]), "--base-dir", str(dirs["base"])]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        f"{workload} (shared): 1 pair taken from {dirs['theirs'] / name} (KB: {large // 1024}/0); incumbent inf"
    )
    assert lines[1].startswith("random:8:2 (shared): no ledger at ") and lines[1].endswith("nothing merged")
    merged = Ledger(dirs["mine"] / name, instance).pairs
    assert {key: (pair.lower, pair.seconds) for key, pair in merged.items()} == {
        (small, 0): (5e11, 3.0),
        (middle, 0): (1e12, 10.0),
        (large, 0): (1e12, 10.0),
    }
    written = (dirs["mine"] / name).read_text()
    for bad, message in (
        (["--from-dir", str(dirs["mine"])], "cannot merge a ledger into itself"),
        (["--from-dir", str(dirs["theirs"]), "--base-dir", str(dirs["ahead"])], "less than"),
        ([], "merge needs --ledger-dir (merged into) and --from-dir (merged from)"),
    ):
        with pytest.raises(SystemExit) as caught:
            partition_tables.main([*argv, *bad])
        err = capsys.readouterr().err
        assert caught.value.code == 2 and message in err and "Traceback" not in err
    assert (dirs["mine"] / name).read_text() == written


def test_a_merge_of_a_ledger_a_run_still_writes_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A proof still running holds its ledger: merging from it (or into it) exits 2 without a
    traceback and writes nothing."""
    workload = "random:8:1"
    instance = make_instance(load_workload(workload), load_accelerator("cocco-simba-shared"), COCCO_ENERGY)
    name = partition_ledgers.ledger_name(workload, "shared")
    for key, act in (("mine", instance.act_candidates_bytes[0]), ("theirs", instance.act_candidates_bytes[-1])):
        ledger = Ledger(tmp_path / key / name, instance)
        ledger.record(act, 0, 5e11, 3.0, key)
        ledger.save()
    written = (tmp_path / "mine" / name).read_text()
    argv = ["merge", "--ledger-dir", str(tmp_path / "mine"), "--from-dir", str(tmp_path / "theirs"),
            "--designs", "shared", "--workloads", workload]  # fmt: skip
    for held in ("theirs", "mine"):
        with held_elsewhere(tmp_path / held / name), pytest.raises(SystemExit) as caught:
            partition_tables.main(argv)
        err = capsys.readouterr().err
        assert caught.value.code == 2 and "Traceback" not in err
        assert f"pair ledger {tmp_path / held / name}" in err and "another process is using it" in err
    assert (tmp_path / "mine" / name).read_text() == written
    assert partition_tables.main(argv) == 0  # once the runs are done
    assert (tmp_path / "mine" / name).read_text() != written
