"""The benchmark suites: every planned method is registered, validation names the bad field."""

from __future__ import annotations

import pytest

from accelsched.bench.runner import plan
from accelsched.bench.suites import PROBLEM_SUITES, SUITE_NAMES, InstanceSpec, MethodPlan, Suite, select
from accelsched.errors import InputError
from accelsched.registry import methods, problems


@pytest.mark.parametrize("suite", SUITE_NAMES)
def test_every_suite_plans_with_registered_methods(suite: str) -> None:
    sweep = plan(suite)
    assert set(sweep.problems) == {entry.problem for entry in PROBLEM_SUITES}
    assert len({cell.key for cell in sweep.cells}) == len(sweep.cells)
    for cell in sweep.cells:
        assert cell.method in methods(cell.problem)
        assert cell.seed == 0 or cell.seeded


def test_every_landed_problem_has_suites() -> None:
    assert {"partition", "ra-tree", "depth-first", "multicore"} <= {e.problem for e in PROBLEM_SUITES}
    assert {e.problem for e in PROBLEM_SUITES} <= set(problems())


def test_small_suites_have_an_exact_method_on_every_instance_with_few_layers() -> None:
    """The small suites measure heuristics against proven optima: an exact method runs on each instance."""
    for entry in PROBLEM_SUITES:
        kinds = methods(entry.problem)
        for instance in entry.small.instances:
            names = [m.name for m in entry.small.methods_of(instance)]
            proving = [n for n in names if kinds[n].kind == "exact" or n in ("dp-ls", "dp-lp")]
            assert proving, (entry.problem, instance.id)


def test_seeded_methods_run_once_per_seed_and_overrides_apply() -> None:
    sweep = plan("tiny", ["multicore"], time_limit_s=7, seeds=3)
    ga = [c for c in sweep.cells if c.method == "ga"]
    assert {c.seed for c in ga} == {0, 1, 2}
    assert {c.time_limit_s for c in sweep.cells} == {7.0}
    assert all(c.seed == 0 for c in sweep.cells if c.method != "ga")


def test_instance_id_and_dict() -> None:
    options = {"granularity": "fused", "rows": "8"}  # a mapping is accepted and stored as pairs
    spec = InstanceSpec("random:4:1", "stream-mc-hetero", 2, options)  # type: ignore[arg-type]
    assert spec.id == "random:4:1@stream-mc-hetero/b2/granularity=fused,rows=8"
    assert spec.to_dict()["options"] == {"granularity": "fused", "rows": "8"}
    assert InstanceSpec("w", "h", name="mine").id == "mine"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"workload": ""}, "field workload"),
        ({"batch": 0}, "field batch"),
        ({"options": (("a", "1"), ("a", "2"))}, "repeats a key"),
        ({"options": (("a=b", "1"),)}, "field options"),
        ({"methods": ()}, "field methods"),
    ],
)
def test_bad_instance_spec(kwargs: dict[str, object], message: str) -> None:
    fields: dict[str, object] = {"workload": "random:4:1", "hardware": "stream-mc-hetero", **kwargs}
    with pytest.raises(ValueError, match=message):
        InstanceSpec(**fields)  # type: ignore[arg-type]


def test_bad_suite() -> None:
    spec = InstanceSpec("random:4:1", "stream-mc-hetero")
    with pytest.raises(ValueError, match="repeats an id"):
        Suite((spec, spec), (MethodPlan("ga"),), 10)
    with pytest.raises(ValueError, match="names method 'cpsat'"):
        Suite((InstanceSpec("w", "h", methods=("cpsat",)),), (MethodPlan("ga"),), 10)
    with pytest.raises(ValueError, match="time_limit_s"):
        Suite((spec,), (MethodPlan("ga"),), 0)
    with pytest.raises(ValueError, match="seeds"):
        Suite((spec,), (MethodPlan("ga"),), 1, seeds=0)


def test_select_errors() -> None:
    with pytest.raises(InputError, match="unknown suite 'huge'"):
        select("huge")
    with pytest.raises(InputError, match="no benchmark suites for problem 'nope'"):
        select("tiny", ["nope"])
    with pytest.raises(InputError, match="named twice"):
        select("tiny", ["multicore", "multicore"])
    with pytest.raises(InputError, match="time limit"):
        plan("tiny", time_limit_s=-1)
    with pytest.raises(InputError, match="seeds"):
        plan("tiny", seeds=0)
