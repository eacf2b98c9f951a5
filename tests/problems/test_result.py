"""Result validation, gap, to_dict, SolveStats and verify_objective."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pytest

from accelsched.errors import AccelschedError
from accelsched.hardware.cost.report import CostReport
from accelsched.problems.result import ObjectiveMismatch, Result, verify_objective
from accelsched.solvers import SolveStats, Status


@dataclass(frozen=True)
class Plan:
    order: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"order": list(self.order)}


COST = CostReport(
    energy_pj=10.0,
    latency_cycles=5.0,
    dram_bytes=64.0,
    noc_byte_hops=0.0,
    peak_memory_bytes=128.0,
    utilization=0.5,
    macs=100,
    energy_breakdown_pj={"mac": 4.0, "dram": 6.0},
)


def feasible(**kw: Any) -> Result[Plan]:
    base: dict[str, Any] = {
        "status": Status.FEASIBLE,
        "problem": "toy",
        "method": "milp",
        "solution": Plan((1, 0)),
        "objective": 10.0,
        "bound": 8.0,
    }
    base.update(kw)
    return Result(**base)


def test_gap_is_relative_to_objective() -> None:
    assert feasible().gap == pytest.approx(0.2)
    assert feasible(objective=-10.0, bound=-12.0).gap == pytest.approx(0.2)


def test_gap_zero_when_optimal_and_none_when_missing() -> None:
    assert feasible(status=Status.OPTIMAL, bound=10.0).gap == 0.0
    assert feasible(bound=None).gap is None
    assert Result(Status.TIME_LIMIT_NO_SOLUTION, "toy", "milp", bound=3.0).gap is None


def test_gap_with_zero_objective_is_finite() -> None:
    assert feasible(objective=0.0, bound=0.0).gap == 0.0
    assert feasible(objective=0.0, bound=-1e-9).gap == pytest.approx(1.0)


def test_maximization_bound_is_above() -> None:
    r = feasible(sense="max", objective=8.0, bound=10.0)
    assert r.gap == pytest.approx(0.25)
    with pytest.raises(ValueError, match=re.escape("field bound=7.0 is below objective=8.0 of a max problem")):
        feasible(sense="max", objective=8.0, bound=7.0)


def test_bound_on_wrong_side_rejected() -> None:
    with pytest.raises(ValueError, match=re.escape("field bound=11.0 is above objective=10.0 of a min problem")):
        feasible(bound=11.0)
    feasible(bound=10.0 + 1e-9)  # within tolerance


@pytest.mark.parametrize("status", [Status.OPTIMAL, Status.FEASIBLE])
def test_solution_statuses_need_solution_and_objective(status: Status) -> None:
    with pytest.raises(ValueError, match=f"field solution is required when status is {status.name}"):
        feasible(status=status, solution=None)
    with pytest.raises(ValueError, match=f"field objective is required when status is {status.name}"):
        feasible(status=status, objective=None, bound=None)


@pytest.mark.parametrize("status", [Status.INFEASIBLE, Status.TIME_LIMIT_NO_SOLUTION, Status.ERROR])
def test_other_statuses_carry_no_solution(status: Status) -> None:
    with pytest.raises(ValueError, match=f"field solution must be None when status is {status.name}"):
        Result(status, "toy", "milp", solution=Plan(()), objective=None)
    with pytest.raises(ValueError, match=f"field objective must be None when status is {status.name}"):
        Result(status, "toy", "milp", objective=3.0)
    assert Result(status, "toy", "milp").solution is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"status": "OPTIMAL"}, "field status must be a Status"),
        ({"problem": ""}, "field problem must be a non-empty string"),
        ({"method": None}, "field method must be a non-empty string"),
        ({"sense": "minimize"}, "field sense must be 'min' or 'max', got 'minimize'"),
        ({"objective": float("nan")}, "field objective must be a finite number or None, got nan"),
        ({"bound": float("-inf")}, "field bound must be a finite number or None, got -inf"),
        ({"runtime_s": -1.0}, "field runtime_s must be a finite number >= 0, got -1.0"),
        ({"seed": 1.5}, "field seed must be an integer or None, got 1.5"),
        ({"cost": {"energy_pj": 1}}, "field cost must be a CostReport or None, got dict"),
        ({"stats": {}}, "field stats must be a SolveStats, got dict"),
    ],
)
def test_bad_fields(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        feasible(**kwargs)


def test_frozen() -> None:
    with pytest.raises(AttributeError):
        feasible().objective = 3.0  # type: ignore[misc]


def test_to_dict_has_cli_keys_and_is_json() -> None:
    r = feasible(
        cost=COST,
        runtime_s=1.25,
        backend="highs",
        seed=7,
        stats=SolveStats(iterations=12, nodes=3, trace=((0.1, 12.0), (0.5, 10.0)), native_status="kTimeLimit"),
    )
    d = r.to_dict()
    assert list(d)[:9] == ["problem", "method", "status", "objective", "bound", "gap", "runtime_s", "cost", "solution"]
    assert d["status"] == "FEASIBLE"
    assert d["objective"] == 10.0 and d["bound"] == 8.0 and d["gap"] == pytest.approx(0.2)
    assert d["solution"] == {"order": [1, 0]}
    assert d["cost"]["energy_pj"] == 10.0 and d["cost"]["breakdown"] == {"dram": 6.0, "mac": 4.0}
    assert set(d["cost"]) >= {"energy_pj", "latency_cycles", "dram_bytes", "noc_byte_hops", "peak_memory_bytes"}
    assert d["stats"] == {
        "iterations": 12,
        "nodes": 3,
        "trace": [[0.1, 12.0], [0.5, 10.0]],
        "native_status": "kTimeLimit",
    }
    assert (d["backend"], d["seed"], d["sense"]) == ("highs", 7, "min")
    assert json.loads(json.dumps(d)) == d


def test_to_dict_without_solution_or_cost() -> None:
    d = Result(Status.INFEASIBLE, "toy", "cpsat").to_dict()
    assert d["status"] == "INFEASIBLE"
    assert d["solution"] is None and d["cost"] is None and d["gap"] is None


def test_to_dict_of_plain_solutions() -> None:
    @dataclass
    class Raw:
        cores: list[int]

    assert feasible(solution=Raw([1, 2])).to_dict()["solution"] == {"cores": [1, 2]}
    assert feasible(solution={"a": 1}).to_dict()["solution"] == {"a": 1}
    with pytest.raises(TypeError, match="solution of type object has no to_dict"):
        feasible(solution=object()).to_dict()


def test_solve_stats_validation() -> None:
    with pytest.raises(ValueError, match="SolveStats: field nodes must be a non-negative integer or None, got -1"):
        SolveStats(nodes=-1)
    with pytest.raises(ValueError, match="field trace must be in time order"):
        SolveStats(trace=((1.0, 5.0), (0.5, 4.0)))
    with pytest.raises(ValueError, match=r"field trace\[0\] must be"):
        SolveStats(trace=((0.0, float("nan")),))
    assert SolveStats(trace=[[0, 3]]).trace == ((0.0, 3.0),)  # type: ignore[arg-type]


def test_verify_objective_accepts_within_tolerance() -> None:
    verify_objective(1_000_000.0, 1_000_000.5)
    verify_objective(0.0, 1e-12)
    verify_objective(5.0, 5.0 + 4e-6, rel_tol=1e-6)


def test_verify_objective_mismatch_is_a_bug() -> None:
    with pytest.raises(ObjectiveMismatch) as info:
        verify_objective(100.0, 100.01, what="latency of cocco/milp")
    err = info.value
    assert isinstance(err, AccelschedError)
    assert (err.method_value, err.evaluator_value) == (100.0, 100.01)
    assert "latency of cocco/milp: the method computed 100.0 but the evaluator gives 100.01" in str(err)
    assert "this is a bug" in str(err)
    with pytest.raises(ObjectiveMismatch):
        verify_objective(float("nan"), 1.0)
