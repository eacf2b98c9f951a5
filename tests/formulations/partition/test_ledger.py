"""The pair ledger: a run resumed from it reaches the enumeration's optimum without solving settled pairs
again, and a ledger for another instance, of another cost model or not a ledger at all is refused."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from accelsched.errors import InputError
from accelsched.formulations.partition.capacity import CapacityDecomposition
from accelsched.formulations.partition.common import InnerPoint, OpenNode, TreeState, VariantTable
from accelsched.formulations.partition.cpsat import solve_cpsat_partition
from accelsched.formulations.partition.fixed_capacity import master_columns
from accelsched.formulations.partition.ledger import LEDGER_KIND, Ledger, instance_digest, keep_final, open_ledger
from accelsched.formulations.partition.milp import solve_milp
from accelsched.formulations.partition.pair_solver import PairOutcome, PairTask, master_value
from accelsched.formulations.partition.proof_params import BranchParams, ProofParams, ProofSettings
from accelsched.formulations.partition.rules import PairRule
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PROBLEM, PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import enumerate_columns, mask_of
from accelsched.problems.result import Result
from accelsched.registry import run_method
from accelsched.solvers import SolveOptions, Status
from tests.formulations.partition.helpers import BUDGET, run, same, singletons
from tests.formulations.partition.test_capacity import instance_of
from tests.test_filelock import held_elsewhere


def decomposition(
    instance: PartitionInstance,
    ledger: Ledger | None,
    rounds: int = 100,
    pairs: frozenset[tuple[int, int]] | None = None,
) -> CapacityDecomposition:
    """The decomposition of an instance whose enumeration stops at the small budget (solving only
    ``pairs`` when given)."""
    columns = enumerate_columns(instance, BUDGET)
    settings = ProofSettings(BUDGET, rounds, pairs=pairs)
    return CapacityDecomposition(instance, None, SolveOptions(), columns, settings, ledger)


@pytest.mark.parametrize("seed", [1, 2, 3, 7, 8, 9])
def test_a_run_stopped_early_goes_on_from_its_ledger_to_the_enumeration_optimum(seed: int, tmp_path: Path) -> None:
    instance = instance_of(seed)
    reference = run("enumerate", instance).objective
    assert reference is not None
    path = tmp_path / "ledger.json"
    first = decomposition(instance, Ledger(path, instance), rounds=1).run(None)
    assert not first.complete and first.solved >= 1
    written = Ledger(path, instance)
    assert len(written.pairs) == first.solved and written.incumbent is not None
    assert not path.with_name(path.name + ".partial").exists()

    resumed = decomposition(instance, written)
    outcome = resumed.run(None)
    assert outcome.complete and same(outcome.bound, reference)
    finished = Ledger(path, instance)
    assert same(finished.objective, reference)
    again = decomposition(instance, finished)
    assert not again.open_points() and same(again.upper, reference)  # nothing left to solve
    outcome = again.run(None)
    assert outcome.complete and outcome.solved == 0 and same(outcome.bound, reference)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_milp_and_cpsat_methods_share_a_ledger(seed: int, tmp_path: Path) -> None:
    """``milp-highs`` proves the optimum and leaves it in the ledger; CP-SAT then starts from it and
    solves no pair again. Both results are checked and equal to the evaluator's value."""
    instance = instance_of(seed)
    reference = run("enumerate", instance).objective
    assert reference is not None
    path = tmp_path / "ledger.json"

    def solved(name: str, solver: partial[Result[PartitionSolution]]) -> Result[PartitionSolution]:
        spec = MethodSpec(name, PROBLEM.name, "exact", solver)
        return run_method(PROBLEM, instance, spec, SolveOptions())

    milp = solved("milp-highs", partial(solve_milp, backend="highs", budget=BUDGET, ledger=path))
    assert milp.status is Status.OPTIMAL and same(milp.objective, reference)
    assert same(Ledger(path, instance).objective, reference)  # the method's final partition
    assert f"pair ledger {path}: started from no pairs and no incumbent" in milp.stats.native_status
    cpsat = solved("cpsat", partial(solve_cpsat_partition, budget=BUDGET, ledger=path))
    assert cpsat.status is Status.OPTIMAL and same(cpsat.objective, reference)
    assert "and its incumbent" in cpsat.stats.native_status
    assert "capacity decomposition: 0 of" in cpsat.stats.native_status


@pytest.mark.parametrize("method", ["milp-highs", "cpsat"])
def test_a_ledger_another_process_uses_is_refused_before_the_solve(tmp_path: Path, method: str) -> None:
    """A run holds its ledger from its read to its last write: a second one on the same file, which
    would overwrite the first one's pairs, is refused and writes nothing."""
    instance = instance_of(1)
    path = tmp_path / "ledger.json"
    solver: Callable[..., Result[PartitionSolution]] = (
        partial(solve_milp, backend="highs") if method == "milp-highs" else solve_cpsat_partition
    )
    with held_elsewhere(path), pytest.raises(InputError) as caught:
        solver(instance, SolveOptions(), budget=BUDGET, ledger=path)
    assert caught.value.what == "another process is using it" and caught.value.where == f"pair ledger {path}"
    assert "give this run a copy of it and merge the two afterwards" in caught.value.fix
    assert not path.exists()
    result = solver(instance, SolveOptions(), budget=BUDGET, ledger=path)  # released: the run goes on
    assert result.status is Status.OPTIMAL and path.exists()


def written_ledger(tmp_path: Path) -> tuple[PartitionInstance, Path]:
    instance = instance_of(1)
    path = tmp_path / "ledger.json"
    decomposition(instance, Ledger(path, instance)).run(None)
    return instance, path


def test_a_ledger_for_another_instance_is_refused(tmp_path: Path) -> None:
    instance, path = written_ledger(tmp_path)
    other = dataclasses.replace(instance, alpha=instance.alpha * 2 + 0.5)
    with pytest.raises(InputError, match="for another instance") as caught:
        Ledger(path, other)
    assert str(path) in str(caught.value) and instance_digest(other) in str(caught.value)


def test_a_ledger_whose_incumbent_evaluates_otherwise_is_refused(tmp_path: Path) -> None:
    """The cost model is checked through the incumbent: a recorded objective it does not give means
    the bounds were proven under another cost model."""
    instance, path = written_ledger(tmp_path)
    data = json.loads(path.read_text())
    data["incumbent"]["objective"] *= 1.01
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="another cost model"):
        Ledger(path, instance)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "cannot read it as JSON"),
        (json.dumps({"kind": "something else"}), "not a pair ledger"),
        (json.dumps({"kind": LEDGER_KIND, "version": 99}), "version 99"),
    ],
)
def test_a_file_that_is_not_a_ledger_is_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "ledger.json"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        Ledger(path, instance_of(1))


@pytest.mark.parametrize(
    ("field", "value"), [("act_bytes", -1), ("lower", "high"), ("seconds", None), ("ceiling", "low")]
)
def test_a_malformed_pair_is_refused_with_its_field(tmp_path: Path, field: str, value: object) -> None:
    instance, path = written_ledger(tmp_path)
    data = json.loads(path.read_text())
    data["pairs"][0][field] = value
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=field):
        Ledger(path, instance)


def test_a_ledger_needs_a_co_exploration_instance(tmp_path: Path) -> None:
    instance = instance_of(1)
    fixed = dataclasses.replace(instance, act_candidates_bytes=instance.act_candidates_bytes[-1:])
    fixed = dataclasses.replace(fixed, weight_candidates_bytes=fixed.weight_candidates_bytes[-1:])
    assert not fixed.co_exploration
    with pytest.raises(InputError, match="fixed capacities"):
        open_ledger(tmp_path / "ledger.json", fixed)
    assert open_ledger(None, fixed) is None


def test_a_pair_left_open_is_solved_again_from_the_subgraphs_it_generated(tmp_path: Path) -> None:
    """Stopped by its round limit, a pair's generated subgraphs go into the ledger; solved again, it starts
    from them (its task's seeds), and the resumed run still reaches the enumeration optimum."""
    instance = instance_of(7)
    reference = run("enumerate", instance).objective
    path = tmp_path / "ledger.json"
    first = decomposition(instance, Ledger(path, instance), rounds=2)
    first.run(None)
    written = Ledger(path, instance)
    kept = {key: columns for key, columns in written.columns.items() if columns}
    assert kept, "the stopped pair keeps its generated subgraphs"
    assert all(len(members) > 1 for columns in kept.values() for members in columns)
    again = decomposition(instance, written)
    tasks: list[PairTask] = []
    solve = again.solver.solve

    def spy(task: PairTask) -> PairOutcome:  # one pair after another, in this process
        tasks.append(task)
        return solve(task)

    again.solver.solve = spy  # type: ignore[method-assign]
    outcome = again.run(None)
    assert reference is not None and outcome.complete and same(outcome.bound, reference)
    assert [(t.act_bytes, t.weight_bytes, len(t.seeds)) for t in tasks] == [
        (h.act_bytes, h.weight_bytes, h.seeds) for h in again.handed
    ]
    for task in tasks:
        recorded = set(kept.get((task.act_bytes, task.weight_bytes), ()))
        assert recorded <= set(task.seeds)
    assert any((task.act_bytes, task.weight_bytes) in kept for task in tasks)
    settled = Ledger(path, instance)
    assert not any(settled.columns.values()), "settled pairs keep no subgraphs"


def test_a_pair_keeps_the_listed_subgraphs_its_master_did_not_start_from(tmp_path: Path) -> None:
    """When the listing holds more columns than the master starts from (``master_columns``, here 8), a
    pair's column generation also finds listed columns the master lacked: the ledger keeps them for
    the pair's next solve, which would otherwise generate them again, and keeps none the master
    starts from; resumed from it, the run reaches the enumeration optimum."""
    params = ProofParams(branch=BranchParams(master_columns=8))
    instance = instance_of(7)
    reference = run("enumerate", instance).objective
    columns = enumerate_columns(instance, 20)
    path = tmp_path / "ledger.json"
    settings = ProofSettings(20, 2, params=params)
    first = CapacityDecomposition(instance, None, SolveOptions(), columns, settings, Ledger(path, instance))
    first.run(None)
    written = Ledger(path, instance)
    beyond = 0
    for (act, weight), kept in written.columns.items():
        listed = first.pair_columns(first.solver.fixed(act, weight))
        start = {mask_of(column.members) for column in master_columns(listed, 8).columns}
        every = {mask_of(column.members) for column in listed.columns}
        assert len(start) < len(every)
        assert not any(mask_of(members) in start for members in kept)
        beyond += sum(mask_of(members) in every for members in kept)
    assert beyond, "the ledger keeps the listed subgraphs the pair generated"
    settings = ProofSettings(20, params=params)
    resumed = CapacityDecomposition(instance, None, SolveOptions(), columns, settings, written).run(None)
    assert reference is not None and resumed.complete and same(resumed.bound, reference)


def test_a_pair_starts_from_the_subgraphs_generated_for_the_pairs_within_it() -> None:
    """Seeds come from the pairs within a pair (their subgraphs fit it), never from those above it."""
    points = decomposition(instance_of(0), None)
    low = min(points.points, key=lambda p: (p.act_bytes, p.weight_bytes))
    high = max(points.points, key=lambda p: (p.act_bytes, p.weight_bytes))
    assert low.within(high) and not high.within(low)
    points.generated = {(low.act_bytes, low.weight_bytes): ((0, 1),), (high.act_bytes, high.weight_bytes): ((1, 2),)}
    assert sorted(points._seeds(high)) == [(0, 1), (1, 2)]
    assert points._seeds(low) == ((0, 1),)


def test_a_pair_starts_from_the_ledger_subgraphs_of_the_pairs_within_it(tmp_path: Path) -> None:
    """A pair left open by an earlier run seeds the pairs above it too, and its own subgraphs come first;
    a pair above it never seeds it."""
    instance = instance_of(0)
    ledger = Ledger(tmp_path / "ledger.json", instance)
    points = decomposition(instance, ledger)
    ordered = sorted(points.points, key=lambda p: (p.act_bytes, p.weight_bytes))
    low, high = ordered[0], ordered[-1]
    assert low.within(high) and not high.within(low)
    ledger.columns = {(low.act_bytes, low.weight_bytes): ((0, 1),), (high.act_bytes, high.weight_bytes): ((1, 2),)}
    points.generated = {(low.act_bytes, low.weight_bytes): ((2, 3),)}
    assert points._seeds(high) == ((1, 2), (0, 1), (2, 3))
    assert points._seeds(low) == ((0, 1), (2, 3))


def test_a_pair_left_open_is_solved_again_from_its_inner_point(tmp_path: Path) -> None:
    """A solved pair's root inner point goes into the ledger (read back as written); the next run
    starts each pair from the best inner point of the pair or of a pair containing it, and still
    reaches the enumeration optimum."""
    instance = instance_of(7)
    reference = run("enumerate", instance).objective
    path = tmp_path / "ledger.json"
    decomposition(instance, Ledger(path, instance), rounds=2).run(None)
    written = Ledger(path, instance)
    assert written.inner, "the solved pairs keep their inner points"
    again = Ledger(path, instance)
    again.save()
    assert Ledger(path, instance).inner == written.inner
    recorded = dict(written.inner)  # the run adds its own
    resumed = decomposition(instance, written)
    outcome = resumed.run(None)
    assert reference is not None and outcome.complete and same(outcome.bound, reference)
    first = resumed.handed[0]  # the later ones may start from inner points of this run
    above = [inner.bound for (a, w), inner in recorded.items() if a >= first.act_bytes and w >= first.weight_bytes]
    assert first.inner_bound is not None and first.inner_bound == max(above)


def test_a_pair_starts_from_the_inner_points_of_the_pairs_containing_it() -> None:
    """Inner points go down: a pair's columns are some of every pair containing it, never of one within."""
    points = decomposition(instance_of(0), None)
    low = min(points.points, key=lambda p: (p.act_bytes, p.weight_bytes))
    high = max(points.points, key=lambda p: (p.act_bytes, p.weight_bytes))
    n = instance_of(0).n_layers
    weak, strong = InnerPoint((0.0,) * n, 1.0), InnerPoint((1.0,) * n, 2.0)
    points.inner = {(low.act_bytes, low.weight_bytes): strong, (high.act_bytes, high.weight_bytes): weak}
    assert points._inner_point(low) == strong
    assert points._inner_point(high) == weak
    points.inner = {(low.act_bytes, low.weight_bytes): strong}
    assert points._inner_point(high) is None


def test_a_ledger_keeps_the_inner_point_of_higher_bound(tmp_path: Path) -> None:
    """A later solve that proves less (a weaker point) does not replace the pair's recorded point."""
    instance, path = written_ledger(tmp_path)
    ledger = Ledger(path, instance)
    pair = next(iter(ledger.pairs.values()))
    n = instance.n_layers
    weak, strong = InnerPoint((0.0,) * n, pair.lower - 1.0), InnerPoint((1.0,) * n, pair.lower)
    for first, second in [(weak, strong), (strong, weak)]:
        ledger.inner.clear()
        ledger.record(pair.act_bytes, pair.weight_bytes, pair.lower, 0.0, pair.code, (), first)
        ledger.record(pair.act_bytes, pair.weight_bytes, pair.lower, 0.0, pair.code, (), second)
        assert ledger.inner[(pair.act_bytes, pair.weight_bytes)] == strong
    ledger.record(pair.act_bytes, pair.weight_bytes, pair.lower, 0.0, pair.code, (), None)
    assert ledger.inner[(pair.act_bytes, pair.weight_bytes)] == strong


@pytest.mark.parametrize(
    ("inner", "message"),
    [("x", "object with bound and duals"), ({"bound": 1.0, "duals": [1.0]}, "list of"), ({"bound": None}, "duals")],
)
def test_a_ledger_with_a_bad_inner_point_is_refused(tmp_path: Path, inner: object, message: str) -> None:
    instance, path = written_ledger(tmp_path)
    data = json.loads(path.read_text())
    data["pairs"][0]["inner"] = inner
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=message):
        Ledger(path, instance)
    data["pairs"][0]["inner"] = {"bound": float("nan"), "duals": [0.0] * instance.n_layers}
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="not a finite number"):
        Ledger(path, instance)


@pytest.mark.parametrize(("columns", "message"), [([[0, 0]], "not a set"), ([[0, 99]], "not a set"), ("x", "list")])
def test_a_ledger_with_a_bad_subgraph_is_refused(tmp_path: Path, columns: object, message: str) -> None:
    instance, path = written_ledger(tmp_path)
    data = json.loads(path.read_text())
    data["pairs"][0]["columns"] = columns
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=f"columns.*{message}"):
        Ledger(path, instance)


def test_a_ledger_with_a_disconnected_subgraph_is_refused(tmp_path: Path) -> None:
    instance, path = written_ledger(tmp_path)
    succs = instance.cost_model.succs
    preds = instance.cost_model.preds
    apart = next(
        (u, v)
        for u in range(instance.n_layers)
        for v in range(u + 1, instance.n_layers)
        if v not in succs[u] and v not in preds[u]
    )
    data = json.loads(path.read_text())
    data["pairs"][0]["columns"] = [list(apart)]
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="not a weakly connected subgraph"):
        Ledger(path, instance)


DIGEST = """
from accelsched.formulations.partition.ledger import instance_digest
from accelsched.hardware import load_accelerator
from accelsched.models.registry import load_workload
from accelsched.problems.partition import make_instance
options = {"capacities": "cocco", "metric": "energy"}
print(instance_digest(make_instance(load_workload("random:5:1"), load_accelerator("cocco-simba-shared"), options)))
"""


def test_the_instance_digest_is_the_same_in_every_process() -> None:
    """A ledger is reopened by later runs: its digest must not follow ``PYTHONHASHSEED`` (the preset's
    frozenset of layer kinds is listed in another order by each process's ``repr``)."""
    digests = {
        subprocess.run(
            [sys.executable, "-c", DIGEST], env={**os.environ, "PYTHONHASHSEED": str(seed)}, capture_output=True,
            text=True, check=True,
        ).stdout.strip()
        for seed in (1, 2, 3)
    }  # fmt: skip
    assert len(digests) == 1 and len(digests.pop()) == 16


def a_tree(instance: PartitionInstance, closed: float) -> TreeState:
    """Two open nodes on the first layers, as a tree stopped after its root leaves them, with two
    subset-row cuts: one node's duals go on with the first cut's, the other's with none; the first
    had two rounds of cuts, the other none."""
    n = instance.n_layers
    nodes = tuple(
        OpenNode(
            frozenset({PairRule(0, 1, together), PairRule(1, 2, False)}),
            InnerPoint((0.5,) * n + ((-2.0,) if together else ()), 7.0),
            together,
            2 if together else 0,
        )
        for together in (True, False)
    )
    return TreeState(nodes, closed, 9.0, (((0,), (1,)), ((2,), (0,))), ((0, 1, 2), (1, 2, 3)))


def test_a_ledger_keeps_a_pairs_tree_until_a_solve_leaves_none(tmp_path: Path) -> None:
    """A pair's tree is written and read back as recorded (no node closed: ``closed`` inf, written as
    null); the next record without a tree (settled, or stopped before branching) removes it; a ledger
    written before trees were kept (no ``tree`` fields) is read as one without trees."""
    instance, path = written_ledger(tmp_path)
    ledger = Ledger(path, instance)
    pair = next(iter(ledger.pairs.values()))
    key = (pair.act_bytes, pair.weight_bytes)
    for closed in (math.inf, 8.0):
        tree = a_tree(instance, closed)
        ledger.record(pair.act_bytes, pair.weight_bytes, pair.lower, 1.0, pair.code, (), None, tree)
        ledger.save()
        assert Ledger(path, instance).trees == {key: tree}
        assert tree.bound == 7.0
    ledger.record(pair.act_bytes, pair.weight_bytes, pair.lower, 1.0, pair.code, (), None, None)
    ledger.save()
    assert Ledger(path, instance).trees == {}
    data = json.loads(path.read_text())
    for entry in data["pairs"]:
        del entry["tree"]
    path.write_text(json.dumps(data))
    assert Ledger(path, instance).trees == {} and Ledger(path, instance).pairs == ledger.pairs


def test_a_tree_written_before_subset_row_cuts_is_read_without_them(tmp_path: Path) -> None:
    """A tree without ``cuts`` and nodes without ``cut_rounds`` (written before either was kept) is
    read as one without cuts whose nodes had no rounds."""
    instance, path = written_ledger(tmp_path)
    ledger = Ledger(path, instance)
    pair = next(iter(ledger.pairs.values()))
    tree = dataclasses.replace(a_tree(instance, 8.0), cuts=())
    tree = dataclasses.replace(tree, nodes=tuple(
        dataclasses.replace(node, inner=InnerPoint(node.inner.duals[: instance.n_layers], 7.0), cut_rounds=0)
        for node in tree.nodes
    ))  # fmt: skip
    ledger.record(pair.act_bytes, pair.weight_bytes, pair.lower, 1.0, pair.code, (), None, tree)
    ledger.save()
    data = json.loads(path.read_text())
    for entry in data["pairs"]:
        if entry["tree"] is not None:
            del entry["tree"]["cuts"]
            for node in entry["tree"]["nodes"]:
                del node["cut_rounds"]
    path.write_text(json.dumps(data))
    assert Ledger(path, instance).trees == {(pair.act_bytes, pair.weight_bytes): tree}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tree": "x"}, "tree must be an object"),
        ({"level": float("nan")}, "level nan and closed"),
        ({"closed": "low"}, "closed 'low'"),
        ({"rules": [[1, 0, True]]}, r"rule \[1, 0, True\]"),
        ({"rules": [[0, 99, False]]}, r"rule \[0, 99, False\]"),
        ({"rules": [[0, 1]]}, r"rule \[0, 1\]"),
        ({"exact": None}, "each node is an object"),
        ({"duals": [1.0]}, "tree: duals must be a list"),
        ({"cycles": "x"}, "cycles must be a list"),
        ({"cycles": [[[0, 99]]]}, r"\[0, 99\] is not a set of layer indices"),
        ({"cuts": "x"}, "cuts must be a list of layer triples"),
        ({"cuts": [[2, 1, 0]]}, r"cut \[2, 1, 0\] is not \[a, b, c\]"),
        ({"cuts": [[0, 1, 2], [0, 1, 2]]}, "listed twice"),
        ({"duals": [0.5] * 12}, r"then at most one per subset-row cut \(2\)"),
        ({"duals": [0.5] * 7 + [1.0]}, "subset-row cuts must be at most 0"),
        ({"cut_rounds": -1}, "cut_rounds -1 must be a whole number"),
        ({"cut_rounds": 1.5}, "cut_rounds 1.5 must be a whole number"),
        ({"cut_rounds": True}, "cut_rounds True must be a whole number"),
    ],
)
def test_a_ledger_with_a_bad_tree_is_refused(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    instance, path = written_ledger(tmp_path)
    ledger = Ledger(path, instance)
    pair = next(iter(ledger.pairs.values()))
    ledger.record(pair.act_bytes, pair.weight_bytes, pair.lower, 1.0, pair.code, (), None, a_tree(instance, 8.0))
    ledger.save()
    data = json.loads(path.read_text())
    entry = next(e for e in data["pairs"] if e["tree"] is not None)
    if "tree" in change:
        entry["tree"] = change["tree"]
    elif {"level", "closed", "cycles", "cuts"} & change.keys():
        entry["tree"].update(change)
    else:
        entry["tree"]["nodes"][1].update(change)
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=message):
        Ledger(path, instance)


def test_a_pair_resumes_the_tree_its_last_solve_left(tmp_path: Path) -> None:
    """The decomposition hands a pair the tree the ledger kept for it, records the tree its solve
    leaves (in the ledger too), and drops it when the pair is settled."""
    instance = instance_of(7)
    path = tmp_path / "ledger.json"
    points = decomposition(instance, Ledger(path, instance))
    point = points._next(())
    assert point is not None
    key = (point.act_bytes, point.weight_bytes)
    tree = a_tree(instance, 8.0)
    left = PairOutcome(point.lower, False, None, None, 1.0, (), None, "time limit reached", tree)
    points._apply(point, points._task(point, None), left)
    assert points.trees == {key: tree} and Ledger(path, instance).trees == {key: tree}
    again = decomposition(instance, Ledger(path, instance))
    task = again._task(next(p for p in again.points if (p.act_bytes, p.weight_bytes) == key), None)
    assert task.tree == tree
    settled = PairOutcome(point.lower, True, None, None, 1.0, (), None, "", tree)
    again._apply(next(p for p in again.points if (p.act_bytes, p.weight_bytes) == key), task, settled)
    assert again.trees == {} and Ledger(path, instance).trees == {}


def test_a_methods_final_partition_goes_into_the_ledger_when_better(tmp_path: Path) -> None:
    """The models may beat the partition the pairs wrote: ``keep_final`` writes a better one (checked and
    evaluated), and leaves a worse one, an invalid one and none alone."""
    instance, path = written_ledger(tmp_path)
    ledger = Ledger(path, instance)
    best = ledger.incumbent
    assert best is not None
    ledger.incumbent, ledger.objective = None, math.inf  # as if the pairs had written nothing better
    ledger.save()
    ledger = Ledger(path, instance)
    keep_final(ledger, best)
    again = Ledger(path, instance)
    assert again.incumbent == best and same(again.objective, ledger.objective)
    for other in (singletons(instance), None, dataclasses.replace(best, subgraphs=best.subgraphs[1:])):
        keep_final(again, other)
        assert Ledger(path, instance).incumbent == best


def copies(source: Path, *names: str) -> list[Path]:
    """Copies of a ledger file, as the runs of a divided proof start from."""
    paths = [source.with_name(name) for name in names]
    for path in paths:
        shutil.copyfile(source, path)
    return paths


@pytest.mark.parametrize("seed", [1, 2, 13, 14])  # two or three pairs left open by one round
def test_a_proof_divided_between_two_runs_and_merged_goes_on_to_the_enumeration_optimum(
    seed: int, tmp_path: Path
) -> None:
    """Two runs from one ledger, each given half of its open pairs (its share), solve only those; the
    second's ledger merged into the first's keeps every pair's higher bound, counts each run's time once
    and the better incumbent: no pair settled by either is open after the merge, and a run from it
    reaches the optimum."""
    instance = instance_of(seed)
    reference = run("enumerate", instance).objective
    assert reference is not None
    base_path = tmp_path / "base.json"
    decomposition(instance, Ledger(base_path, instance), rounds=1).run(None)
    halves = copies(base_path, "a.json", "b.json")
    keys = [(p.act_bytes, p.weight_bytes) for p in decomposition(instance, Ledger(base_path, instance)).open_points()]
    assert len(keys) >= 2, "the instance leaves pairs to divide"
    shares = [frozenset(keys[half::2]) for half in (0, 1)]
    runs = [
        decomposition(instance, Ledger(path, instance), pairs=share) for path, share in zip(halves, shares, strict=True)
    ]
    for points in runs:
        points.run(None)  # the incumbent one finds may settle the other share's pairs too
    base, first, second = (Ledger(path, instance) for path in (base_path, *halves))
    for points, ledger, share in zip(runs, (first, second), shares, strict=True):
        solved = {
            key for key in keys if any(line.startswith(f"{key[0] // 1024}/{key[1] // 1024} KB:") for line in points.log)
        }
        assert solved and solved <= share, "each run solves pairs of its share alone"
        assert {key for key, pair in ledger.pairs.items() if base.pairs.get(key) != pair} <= share

    into = Ledger(halves[0], instance)
    taken = into.merge(second, base)
    into.save()
    merged = Ledger(halves[0], instance)
    assert set(taken) == {key for key, pair in second.pairs.items() if base.pairs.get(key) != pair}
    for key in {*first.pairs, *second.pairs}:
        bounds = [ledger.pairs[key].lower for ledger in (first, second) if key in ledger.pairs]
        assert merged.pairs[key].lower == max(bounds)

    def spent(ledger: Ledger) -> float:
        return sum(pair.seconds for pair in ledger.pairs.values())

    assert merged.objective == min(first.objective, second.objective)
    assert spent(merged) == pytest.approx(spent(first) + spent(second) - spent(base), abs=0.1 * len(keys))
    opened = [{(p.act_bytes, p.weight_bytes) for p in points.open_points()} for points in runs]
    resumed = decomposition(instance, merged)
    assert {(p.act_bytes, p.weight_bytes) for p in resumed.open_points()} <= opened[0] & opened[1]
    outcome = resumed.run(None)
    assert outcome.complete and same(outcome.bound, reference)


def test_a_pair_solved_by_both_runs_keeps_what_the_higher_bound_came_with(tmp_path: Path) -> None:
    """Merged, a pair both runs solved has the higher bound with that run's subgraphs, tree and code
    (this ledger's on a tie), the better inner point and the time of both; the pairs the other run did
    not solve beyond the base are not taken."""
    instance, base_path = written_ledger(tmp_path)
    base = Ledger(base_path, instance)
    pair = next(iter(base.pairs.values()))
    key, n = (pair.act_bytes, pair.weight_bytes), instance.n_layers
    tree = a_tree(instance, 8.0)
    better, worse = InnerPoint((1.0,) * n, pair.lower + 10), InnerPoint((0.0,) * n, 1.0)
    # the ceiling kept is the lower one, whichever run's bound is higher: mine's, then theirs
    for theirs, their_ceiling, expected_tree, expected_columns, code in (
        (pair.lower + 2, 10.0, None, (), "theirs"),
        (pair.lower + 1, 8.0, tree, ((0,),), "mine"),
    ):
        mine, other = (Ledger(path, instance) for path in copies(base_path, "mine.json", "other.json"))
        mine.record(*key, pair.lower + 1, 10.0, "mine", ((0,),), worse, tree, 9.0)
        other.record(*key, theirs, 4.0, "theirs", (), better, None, their_ceiling)
        assert mine.merge(other, base) == (key,)
        merged = mine.pairs[key]
        assert merged.lower == max(theirs, pair.lower + 1) and merged.seconds == pytest.approx(pair.seconds + 14.0)
        assert merged.ceiling == min(9.0, their_ceiling)
        assert mine.trees.get(key) == expected_tree and mine.columns[key] == expected_columns
        assert mine.inner[key] == better and merged.code == code


def test_a_pair_only_the_other_run_solved_takes_its_tree_and_subgraphs_at_the_same_bound(tmp_path: Path) -> None:
    """A tree that branched without raising its least open bound (the twentieth NasNet shared run)
    is the later state of the pair: merged into a ledger that did not solve the pair beyond the
    base, its nodes and subgraphs replace the base's, and its time is added."""
    instance, base_path = written_ledger(tmp_path)
    base = Ledger(base_path, instance)
    pair = next(iter(base.pairs.values()))
    key = (pair.act_bytes, pair.weight_bytes)
    for path in copies(base_path, "with_tree.json"):
        started = Ledger(path, instance)
        started.record(*key, pair.lower, 0.0, "base", ((0,),), None, a_tree(instance, 8.0))
        started.save()
    base = Ledger(tmp_path / "with_tree.json", instance)
    mine, other = (Ledger(path, instance) for path in copies(tmp_path / "with_tree.json", "mine.json", "other.json"))
    branched = dataclasses.replace(a_tree(instance, 8.0), nodes=a_tree(instance, 8.0).nodes[:1])
    other.record(*key, pair.lower, 5.0, "theirs", ((0,), (1,)), None, branched)
    assert mine.merge(other, base) == (key,)
    merged = mine.pairs[key]
    assert merged.lower == pair.lower and merged.seconds == pytest.approx(base.pairs[key].seconds + 5.0)
    assert mine.trees[key] == branched and mine.columns[key] == ((0,), (1,)) and merged.code == "theirs"


def test_a_ledger_keeps_the_lower_ceiling_and_reads_a_pair_written_without_one(tmp_path: Path) -> None:
    instance, path = written_ledger(tmp_path)
    ledger = Ledger(path, instance)
    pair = next(iter(ledger.pairs.values()))
    key = (pair.act_bytes, pair.weight_bytes)
    for ceiling, kept in ((7.0, 7.0), (9.0, 7.0), (None, 7.0), (5.0, 5.0)):
        ledger.record(*key, pair.lower, 1.0, pair.code, (), None, None, ceiling)
        assert ledger.pairs[key].ceiling == kept
    ledger.save()
    assert Ledger(path, instance).pairs[key].ceiling == 5.0
    data = json.loads(path.read_text())
    for entry in data["pairs"]:
        del entry["ceiling"]
    path.write_text(json.dumps(data))
    assert all(pair.ceiling is None for pair in Ledger(path, instance).pairs.values())


def test_a_run_computes_the_ceiling_of_an_open_pair_whose_ledger_kept_its_subgraphs_without_one(
    tmp_path: Path,
) -> None:
    """A ledger written before ceilings were kept: an open pair's ceiling is the LP value of its master
    over the subgraphs kept (and the single layers), as its solve would have recorded; a settled pair
    gets none."""
    instance = instance_of(7)
    path = tmp_path / "ledger.json"
    decomposition(instance, Ledger(path, instance), rounds=2).run(None)
    data = json.loads(path.read_text())
    recorded = {(entry["act_bytes"], entry["weight_bytes"]): entry.pop("ceiling") for entry in data["pairs"]}
    path.write_text(json.dumps(data))
    assert any(value is not None for value in recorded.values())
    resumed = decomposition(instance, Ledger(path, instance))
    still = {(p.act_bytes, p.weight_bytes) for p in resumed.open_points()}
    kept = {key for key, columns in resumed.ledger.columns.items() if columns} if resumed.ledger else set()
    assert resumed.ceilings.keys() == still & kept and resumed.ceilings
    for key, ceiling in resumed.ceilings.items():
        pair = resumed.solver.fixed(*key)
        lp = master_value(VariantTable(pair, enumerate_columns(pair)))
        assert lp is not None and lp <= ceiling * (1 + 1e-7), key


def test_a_merge_is_refused_for_another_instance_another_base_or_the_same_file(tmp_path: Path) -> None:
    instance, path = written_ledger(tmp_path)
    ledger = Ledger(path, instance)
    with pytest.raises(InputError, match="into itself"):
        ledger.merge(Ledger(path, instance))
    other_instance = dataclasses.replace(instance, alpha=instance.alpha * 2 + 0.5)
    with pytest.raises(InputError, match="for another instance"):
        ledger.merge(Ledger(tmp_path / "other.json", other_instance))
    ahead, elsewhere = (Ledger(copy, instance) for copy in copies(path, "ahead.json", "elsewhere.json"))
    pair = max(ahead.pairs.values(), key=lambda pair: (pair.act_bytes, pair.weight_bytes))
    ahead.record(pair.act_bytes, pair.weight_bytes, pair.lower, 5.0, pair.code)
    smallest = (instance.act_candidates_bytes[0], 0 if instance.shared else instance.weight_candidates_bytes[0])
    assert smallest < (pair.act_bytes, pair.weight_bytes)
    elsewhere.record(*smallest, 1e15, 7.0, "elsewhere")  # merged first, were the merge not checked first
    with pytest.raises(InputError, match="less than") as caught:
        ledger.merge(elsewhere, ahead)
    assert "give as base the ledger that run started from" in caught.value.fix
    assert ledger.pairs == Ledger(path, instance).pairs
