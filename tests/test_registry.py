"""The solve entry point checks and re-evaluates every solution."""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.hardware import load_accelerator
from accelsched.hardware.cost import CostReport, layer_cost
from accelsched.hardware.spec import Accelerator
from accelsched.models.random_dag import random_workload
from accelsched.models.workload import Workload
from accelsched.problems.base import Hint, InstanceStep, MethodSpec, ProblemSpec
from accelsched.problems.result import ObjectiveMismatch, Result
from accelsched.registry import (
    get_method,
    get_problem,
    make_instance,
    methods,
    register_method,
    register_problem,
    register_step,
    run_method,
)
from accelsched.solvers import SolveOptions, Status


@dataclass(frozen=True)
class Instance:
    workload: Workload
    acc: Accelerator


def check(instance: Instance, solution: Mapping[str, int]) -> None:
    for layer in instance.workload:
        if solution.get(layer.name) not in range(instance.acc.n_cores):
            raise InfeasibleSolution(f"layer {layer.name!r} has no valid core")


def evaluate(instance: Instance, solution: Mapping[str, int]) -> CostReport:
    acc = instance.acc
    costs = [layer_cost(layer, acc.core(solution[layer.name]), acc.offchip) for layer in instance.workload]
    busy = [0.0] * acc.n_cores
    for layer, cost in zip(instance.workload, costs, strict=True):
        busy[solution[layer.name]] += cost.latency_cycles
    latency = max(busy)
    return CostReport(
        energy_pj=sum(c.energy_pj for c in costs),
        latency_cycles=latency,
        dram_bytes=sum(c.dram_bytes for c in costs),
        noc_byte_hops=0.0,
        peak_memory_bytes=0.0,
        utilization=instance.workload.macs / (acc.n_macs * latency),
        macs=instance.workload.macs,
        energy_breakdown_pj={"all": sum(c.energy_pj for c in costs)},
    )


PROBLEM = ProblemSpec(
    "toy-core-balance",
    "assign layers to cores, ignoring dependencies, minimizing the busiest core's time",
    lambda w, a, o: Instance(w, a),
    check,
    evaluate,
    lambda inst, sol, rep: rep.latency_cycles,
    dict,
)


def exhaustive(instance: Instance, options: SolveOptions, warm: Any) -> Result[dict[str, int]]:
    names = instance.workload.names
    best = min(
        (dict(zip(names, cores, strict=True)) for cores in itertools.product(range(2), repeat=len(names))),
        key=lambda s: evaluate(instance, s).latency_cycles,
    )
    value = evaluate(instance, best).latency_cycles
    return Result(Status.OPTIMAL, PROBLEM.name, "exhaustive", best, value, bound=value)


def wrong_objective(instance: Instance, options: SolveOptions, warm: Any) -> Result[dict[str, int]]:
    solution = dict.fromkeys(instance.workload.names, 0)
    return Result(Status.FEASIBLE, PROBLEM.name, "wrong", solution, 1.0)


def infeasible(instance: Instance, options: SolveOptions, warm: Any) -> Result[dict[str, int]]:
    return Result(Status.FEASIBLE, PROBLEM.name, "bad", {"nope": 0}, 1.0)


def no_solution(instance: Instance, options: SolveOptions, warm: Any) -> Result[dict[str, int]]:
    return Result(Status.TIME_LIMIT_NO_SOLUTION, PROBLEM.name, "slow")


register_problem(PROBLEM)
for name, fn in (("exhaustive", exhaustive), ("wrong", wrong_objective), ("bad", infeasible), ("slow", no_solution)):
    register_method(MethodSpec(name, PROBLEM.name, "exact" if name == "exhaustive" else "heuristic", fn))


@pytest.fixture
def instance() -> Instance:
    return Instance(random_workload(5, 1), load_accelerator("set-edge-4x4"))


def test_result_gets_the_evaluators_cost(instance: Instance) -> None:
    result = run_method(PROBLEM, instance, get_method(PROBLEM.name, "exhaustive"))
    assert result.status is Status.OPTIMAL
    assert result.cost is not None
    assert result.objective == pytest.approx(result.cost.latency_cycles)


def test_objective_mismatch_is_a_bug(instance: Instance) -> None:
    with pytest.raises(ObjectiveMismatch):
        run_method(PROBLEM, instance, get_method(PROBLEM.name, "wrong"))


def test_infeasible_solution_is_caught(instance: Instance) -> None:
    with pytest.raises(InfeasibleSolution, match="has no valid core"):
        run_method(PROBLEM, instance, get_method(PROBLEM.name, "bad"))


def test_no_solution_is_a_status(instance: Instance) -> None:
    result = run_method(PROBLEM, instance, get_method(PROBLEM.name, "slow"))
    assert result.status is Status.TIME_LIMIT_NO_SOLUTION and result.cost is None


def test_lookup_errors() -> None:
    assert set(methods(PROBLEM.name)) == {"exhaustive", "wrong", "bad", "slow"}
    assert get_problem(PROBLEM.name) is PROBLEM
    with pytest.raises(InputError, match="did you mean toy-core-balance"):
        get_problem("toy-core-balanse")
    with pytest.raises(InputError, match="methods: bad, exhaustive, slow, wrong"):
        get_method(PROBLEM.name, "nope")
    with pytest.raises(ValueError, match="registered twice"):
        register_problem(ProblemSpec(PROBLEM.name, "", PROBLEM.make_instance, check, evaluate, PROBLEM.objective, dict))


def test_cli_solve_and_gap(capsys: pytest.CaptureFixture[str]) -> None:
    from accelsched.cli import main

    base = ["--workload", "random:4:3", "--hardware", "set-edge-4x4"]
    assert main(["solve", PROBLEM.name, *base, "--method", "exhaustive", "--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "OPTIMAL" and data["problem"] == PROBLEM.name
    assert data["objective"] == pytest.approx(data["cost"]["latency_cycles"])
    assert main(["gap", PROBLEM.name, *base, "--methods", "exhaustive,slow"]) == 0
    out = capsys.readouterr().out
    assert "exhaustive" in out and "TIME_LIMIT_NO_SOLUTION" in out


# A second toy problem for the registry's own mechanisms: instance steps, default hints, method order, timing.
BUILT: list[Mapping[str, str]] = []
RECEIVED: list[Any] = []


def build(workload: Workload, acc: Accelerator, options: Mapping[str, str]) -> Instance:
    BUILT.append(dict(options))
    return Instance(workload, acc)


STEPPED = ProblemSpec("toy-steps", "the registry's steps and hints", build, check, evaluate,
                      lambda inst, sol, rep: rep.latency_cycles, dict)  # fmt: skip


def all_on_core_0(instance: Instance, options: SolveOptions, warm: Any) -> Result[dict[str, int]]:
    solution = dict.fromkeys(instance.workload.names, 0)
    return Result(Status.FEASIBLE, STEPPED.name, "core0", solution, evaluate(instance, solution).latency_cycles)


def hinted(instance: Instance, options: SolveOptions, warm: Any) -> Result[dict[str, int]]:
    RECEIVED.append(warm)
    time.sleep(0.02)
    solution = dict.fromkeys(instance.workload.names, 0)
    value = evaluate(instance, solution).latency_cycles
    return Result(Status.FEASIBLE, STEPPED.name, "hinted", solution, value, runtime_s=1e6)


def chosen_cores(workload: Workload, acc: Accelerator, options: Mapping[str, str]) -> Mapping[str, str]:
    return {**{k: v for k, v in options.items() if k != "cores"}, "cores": "2", "chosen": "by the step"}


register_problem(STEPPED)
register_method(MethodSpec("core0", STEPPED.name, "baseline", all_on_core_0))
register_method(MethodSpec("hinted", STEPPED.name, "heuristic", hinted, default_hint="core0"))
register_method(MethodSpec("exact-too", STEPPED.name, "exact", exhaustive))
register_step(InstanceStep(STEPPED.name, "cores", "auto", chosen_cores))


def test_a_step_makes_the_choice_before_the_instance_is_built(instance: Instance) -> None:
    BUILT.clear()
    make_instance(STEPPED, instance.workload, instance.acc, {"cores": "auto", "other": "x"})
    assert BUILT == [{"other": "x", "cores": "2", "chosen": "by the step"}]
    make_instance(STEPPED, instance.workload, instance.acc, {"cores": "3"})  # no step for this value
    assert BUILT[-1] == {"cores": "3"}


def test_steps_are_registered_once_for_a_known_problem() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        register_step(InstanceStep(STEPPED.name, "cores", "auto", lambda w, a, o: o))
    with pytest.raises(ValueError, match="not registered"):
        register_step(InstanceStep("no-such-problem", "cores", "auto", chosen_cores))


def test_a_default_hint_reaches_the_method_as_a_hint_and_a_warm_start_as_itself(instance: Instance) -> None:
    RECEIVED.clear()
    run_method(STEPPED, instance, get_method(STEPPED.name, "hinted"))
    (hint,) = RECEIVED
    assert isinstance(hint, Hint) and hint.solution == dict.fromkeys(instance.workload.names, 0)
    warm = dict.fromkeys(instance.workload.names, 1)
    run_method(STEPPED, instance, get_method(STEPPED.name, "hinted"), warm_start=warm)
    assert RECEIVED[-1] is warm  # the caller's warm start is handed as it is, and the hint method does not run


def test_run_method_times_every_method_itself(instance: Instance) -> None:
    result = run_method(STEPPED, instance, get_method(STEPPED.name, "hinted"))
    assert 0.02 <= result.runtime_s < 1e6  # the method's own figure is replaced by the registry's clock


def test_exact_methods_are_listed_first_then_heuristics_then_baselines() -> None:
    assert list(methods(STEPPED.name)) == ["exact-too", "hinted", "core0"]
