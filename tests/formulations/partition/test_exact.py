"""The exact partition models (MILP on three backends, CP-SAT, enumeration): optima known by hand,
agreement with the brute-force oracle, warm starts, the column budget, infeasibility, limits."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from accelsched.formulations.partition import cpsat as partition_cpsat
from accelsched.formulations.partition import enumeration as partition_enumerate
from accelsched.formulations.partition import milp as partition_milp
from accelsched.formulations.partition.bound import compulsory_bound
from accelsched.formulations.partition.common import VariantTable
from accelsched.formulations.partition.cpsat import PartitionCpSat, objective_scale, solve_cpsat_partition
from accelsched.formulations.partition.enumeration import solve_enumerate
from accelsched.formulations.partition.milp import solve_milp
from accelsched.formulations.partition.milp_model import PartitionMilp
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PROBLEM, Metric, PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import enumerate_columns
from accelsched.problems.result import Result
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions, Status, solve_cpsat
from tests.formulations.partition.helpers import EXACT, SOLVERS, chain3, crossed, run, same, singletons
from tests.problems.partition_oracle import brute_force, small_instance

ALL = sorted(EXACT)

CONFIGS = [
    pytest.param({}, id="fixed-separate-ema"),
    pytest.param({"shared": True, "act_kb": (5,)}, id="fixed-shared-ema"),
    pytest.param({"metric": Metric.ENERGY}, id="fixed-separate-energy"),
    pytest.param({"act_kb": (2, 4, 8), "weight_kb": (1, 2)}, id="co-separate-ema"),
    pytest.param({"act_kb": (3, 6, 12), "weight_kb": (1, 2), "metric": Metric.ENERGY}, id="co-separate-energy"),
    pytest.param({"shared": True, "act_kb": (4, 8, 16), "alpha": 0.5}, id="co-shared-ema"),
    pytest.param({"shared": True, "act_kb": (3, 5, 8), "metric": Metric.ENERGY}, id="co-shared-energy"),
]


def test_methods_are_exported_with_their_names() -> None:
    names = [m.name for mod in (partition_milp, partition_cpsat, partition_enumerate) for m in mod.METHODS]
    assert names == ["milp-highs", "milp-cbc", "milp-pyomo", "cpsat", "enumerate"]
    assert {m.problem for m in EXACT.values()} == {"partition"} and {m.kind for m in EXACT.values()} == {"exact"}


# ---------------------------------------------------------------- by hand
@pytest.mark.parametrize("method", ALL)
@pytest.mark.parametrize(
    ("act", "weight", "optimum", "subgraphs"),
    [
        (384, 1024, 744, (("L0", "L1", "L2"),)),  # everything fits: fuse the chain
        (200, 1024, 1768, (("L0",), ("L1",), ("L2",))),  # only single layers fit
        (384, 100, 1768, (("L0",), ("L1",), ("L2",))),  # L1, L2 stream their weights (no extra traffic)
        (200, 100, 456 + 2 * (656 + 3 * 256), (("L0",), ("L1",), ("L2",))),  # L1, L2 in 4 weight blocks
    ],
)
def test_three_layer_chain_by_hand(method: str, act: int, weight: int, optimum: int, subgraphs: tuple) -> None:
    result = run(method, chain3((act,), (weight,)))
    assert result.status is Status.OPTIMAL
    assert result.objective == optimum
    assert result.solution is not None and result.solution.subgraphs == subgraphs
    assert result.bound is not None and same(result.bound, optimum)


@pytest.mark.parametrize("method", ALL)
def test_a_pair_is_fused_when_the_three_do_not_fit(method: str) -> None:
    result = run(method, chain3((320,), (1024,)))
    assert result.objective == 1768 - 2 * 256
    assert result.solution is not None and len(result.solution.subgraphs) == 2


@pytest.mark.parametrize("method", ALL)
@pytest.mark.parametrize(
    ("alpha", "act", "objective"),
    [
        (1.0, 384, 384 + 1024 + 744),  # capacity is cheap against traffic: fuse all
        (0.1, 200, 200 + 1024 + 0.1 * 1768),  # capacity is dear: smallest buffer, no fusion
    ],
)
def test_co_exploration_by_hand(method: str, alpha: float, act: int, objective: float) -> None:
    result = run(method, chain3((200, 320, 384), (1024,), alpha=alpha))
    assert result.status is Status.OPTIMAL
    assert result.solution is not None and result.solution.act_capacity_bytes == act
    assert same(result.objective, objective)


@pytest.mark.parametrize("method", ALL)
def test_order_forbids_a_cycle_of_fused_subgraphs(method: str) -> None:
    result = run(method, crossed(560))
    assert result.status is Status.OPTIMAL and result.objective == 4672
    assert result.solution is not None
    assert sorted(map(len, result.solution.subgraphs)) == [1, 1, 2]  # one conv fused with one add


# ------------------------------------------------------- brute-force oracle
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("seed", range(4))
def test_every_method_reaches_the_brute_force_optimum(config: dict, seed: int) -> None:
    instance = small_instance(6 + seed % 3, seed, **config)
    best, _ = brute_force(instance)
    for method in ALL:
        result = run(method, instance)
        assert result.status is Status.OPTIMAL, (method, result.stats.native_status)
        assert same(result.objective, best), (method, result.objective, best)
        assert result.bound is not None and result.bound <= best + 1e-6 * abs(best)


# ------------------------------------------------------------ warm starts
@pytest.mark.parametrize("method", SOLVERS)
@pytest.mark.parametrize("seed", range(3))
def test_warm_start_is_given_and_never_worse(method: str, seed: int) -> None:
    instance = small_instance(10, seed, act_kb=(2, 4, 8), weight_kb=(1, 2))
    warm = singletons(instance)
    optimum = run("enumerate", instance).objective
    assert optimum is not None
    cold = run(method, instance)
    hot = run(method, instance, warm)
    assert "warm start given" in hot.stats.native_status
    assert "warm start" not in cold.stats.native_status
    assert hot.status is Status.OPTIMAL and same(hot.objective, optimum) and same(cold.objective, optimum)
    limited = run(method, instance, warm, time_limit_s=1e-3)
    assert limited.objective is not None and limited.solution is not None
    assert limited.objective <= PROBLEM.objective(instance, warm, PROBLEM.evaluate(instance, warm)) + 1e-9


@pytest.fixture(scope="module")
def ga_run() -> tuple[PartitionInstance, Result[PartitionSolution]]:
    """A co-exploration instance of 12 layers and the GA's checked result on it."""
    instance = small_instance(12, 7, act_kb=(2, 4, 8), weight_kb=(1, 2))
    return instance, run_method(PROBLEM, instance, get_method(PROBLEM.name, "ga"), SolveOptions(time_limit_s=1, seed=3))


@pytest.mark.parametrize("method", ["milp-highs", "cpsat"])
@pytest.mark.parametrize("limit", [1e-3, None])
def test_the_gas_solution_is_accepted_and_never_beaten_by_a_worse_answer(
    method: str, limit: float | None, ga_run: tuple[PartitionInstance, Result[PartitionSolution]]
) -> None:
    """Must-hold 4: the GA's own solution as the warm start, with a spent and with no time limit."""
    instance, ga = ga_run
    assert ga.solution is not None and ga.objective is not None
    result = run(method, instance, ga.solution, time_limit_s=limit)
    assert "warm start given" in result.stats.native_status
    assert result.objective is not None and result.objective <= ga.objective + 1e-9 * ga.objective
    if limit is None:
        assert result.status is Status.OPTIMAL


@pytest.mark.parametrize("seed", range(4))
def test_the_warm_start_is_a_feasible_point_of_both_models(seed: int) -> None:
    instance = small_instance(9, seed, act_kb=(2, 4, 8), weight_kb=(1, 2))
    warm = run("enumerate", instance).solution
    assert warm is not None
    table = VariantTable(instance, enumerate_columns(instance))
    assignment = table.assignment(warm)
    milp = PartitionMilp(table)
    start = milp.start(assignment)
    assert milp.model.max_violation(start) == 0.0
    complete = {var: start[var] for var in milp.model.variables}
    assert milp.model.objective().value(complete) == pytest.approx(table.objective(assignment))
    cpsat = PartitionCpSat(table)
    for var, value in cpsat.hints(assignment).items():
        cpsat.model.add(var == value)
    answer = solve_cpsat(cpsat.model, SolveOptions(time_limit_s=10))
    assert answer.status is Status.OPTIMAL
    assert table.solution(cpsat.decode(answer)) == warm


@pytest.mark.parametrize("method", ["milp-highs", "cpsat"])
def test_an_invalid_warm_start_is_rejected_and_said(method: str) -> None:
    instance = small_instance(7, 1)
    warm = singletons(instance)
    bad = PartitionSolution(tuple(reversed(warm.subgraphs)), warm.act_capacity_bytes, warm.weight_capacity_bytes)
    result = run(method, instance, bad)
    assert result.status is Status.OPTIMAL
    assert "warm start rejected: edge" in result.stats.native_status


# ------------------------------------------------------- linear relaxation
def _lp_value(milp: PartitionMilp) -> float:
    """The optimum of the model's linear relaxation (integrality dropped), by HiGHS."""
    import highspy

    mat = milp.model.to_matrix()
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = mat.num_cols, mat.num_rows
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = mat.col_cost, mat.col_lower, mat.col_upper
    lp.row_lower_, lp.row_upper_ = mat.row_lower, mat.row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = mat.a_start, mat.a_index, mat.a_value
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.passModel(lp)
    highs.run()
    assert highs.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return highs.getInfo().objective_function_value + mat.offset


def _per_variant_lp_value(table: VariantTable) -> float:
    """The relaxation with one capacity row per variant, ``x_j <= sum of y_k for k >= a_j``, and
    no order rows: the textbook rows, written here independently of the model."""
    import highspy

    n_var, n_act = len(table.variants), len(table.act_bytes)
    n_weight = 0 if table.instance.shared else len(table.weight_bytes)
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    costs = [table.variant_coefficient(j) for j in range(n_var)]
    costs += [table.act_coefficient(k) for k in range(n_act)] + [table.weight_coefficient(m) for m in range(n_weight)]
    for cost in costs:
        highs.addVar(0.0, 1.0)
        highs.changeColCost(highs.getNumCol() - 1, cost)

    def row(lower: float, upper: float, terms: list[tuple[int, float]]) -> None:
        highs.addRow(lower, upper, len(terms), [c for c, _ in terms], [v for _, v in terms])

    for variants in table.covering:
        row(1.0, 1.0, [(j, 1.0) for j in variants])
    row(1.0, 1.0, [(n_var + k, 1.0) for k in range(n_act)])
    if n_weight:
        row(1.0, 1.0, [(n_var + n_act + m, 1.0) for m in range(n_weight)])
    for j, variant in enumerate(table.variants):
        needs = ((variant.act_index, n_var, n_act), (variant.weight_index, n_var + n_act, n_weight))
        for level, offset, count in needs:
            if level > 0:
                row(-highspy.kHighsInf, 0.0, [(j, 1.0)] + [(offset + k, -1.0) for k in range(level, count)])
    highs.run()
    return highs.getInfo().objective_function_value


def test_level_rows_are_at_least_as_tight_as_the_rows_per_variant() -> None:
    """The capacity rows per layer and level: a relaxation between the textbook one and the optimum,
    and strictly tighter on co-exploration instances where half-chosen covers share a large buffer."""
    configs: list[dict[str, Any]] = [
        {"act_kb": (2, 4, 8), "weight_kb": (1, 2)},
        {"shared": True, "act_kb": (3, 5, 8), "metric": Metric.ENERGY, "alpha": 0.01},
        {"shared": True, "act_kb": (4, 8, 16), "alpha": 0.5},
    ]
    tighter = 0
    for seed in range(9):
        instance = small_instance(8 + seed % 4, seed, **configs[seed % 3])
        table = VariantTable(instance, enumerate_columns(instance))
        optimum = run("enumerate", instance).objective
        assert optimum is not None
        textbook, levels = _per_variant_lp_value(table), _lp_value(PartitionMilp(table))
        assert textbook <= levels * (1 + 1e-9) + 1e-6
        assert levels <= optimum * (1 + 1e-9) + 1e-6
        tighter += levels > textbook * (1 + 1e-3)
    assert tighter >= 3


# -------------------------------------------------------- column budget
@pytest.mark.parametrize(
    "solver",
    [
        lambda i, o, w: solve_milp(i, o, w, backend="highs", method="milp-highs", budget=12),
        lambda i, o, w: solve_milp(i, o, w, backend="pulp-cbc", method="milp-cbc", budget=12),
        lambda i, o, w: solve_cpsat_partition(i, o, w, budget=12),
    ],
    ids=["milp-highs", "milp-cbc", "cpsat"],
)
def test_column_budget_hands_over_to_column_generation(solver: Callable[..., Result]) -> None:
    """Beyond the budget, column generation lists the columns an optimum needs: still a proof."""
    instance = small_instance(10, 2, act_kb=(64,), weight_kb=(64,))
    result: Result = run_method(PROBLEM, instance, MethodSpec("budgeted", "partition", "exact", solver), SolveOptions())
    assert result.status is Status.OPTIMAL
    assert "column budget reached (12 sets evaluated); column generation:" in result.stats.native_status
    assert same(result.objective, run("enumerate", instance).objective or math.nan)


@pytest.mark.parametrize(
    "solver",
    [
        lambda i, o, w: solve_milp(i, o, w, backend="highs", method="milp-highs", budget=12, rounds=1),
        lambda i, o, w: solve_cpsat_partition(i, o, w, budget=12, rounds=1),
    ],
    ids=["milp-highs", "cpsat"],
)
def test_column_budget_and_a_round_limit_give_a_solution_without_a_proof(solver: Callable[..., Result]) -> None:
    instance = small_instance(10, 2, act_kb=(64,), weight_kb=(64,))
    result: Result = run_method(PROBLEM, instance, MethodSpec("budgeted", "partition", "exact", solver), SolveOptions())
    assert result.status is Status.FEASIBLE
    assert "column generation stopped after 1 rounds: optimality not proven" in result.stats.native_status
    best = run("enumerate", instance).objective
    assert best is not None and result.objective is not None and result.objective >= best
    compulsory = compulsory_bound(VariantTable(instance, enumerate_columns(instance)))
    assert result.bound is not None and compulsory <= result.bound <= best


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("seed", range(3))
def test_compulsory_bound_is_below_the_optimum(config: dict, seed: int) -> None:
    instance = small_instance(7, seed, **config)
    best, _ = brute_force(instance)
    assert compulsory_bound(VariantTable(instance, enumerate_columns(instance))) <= best + 1e-9 * abs(best)


def test_compulsory_bound_is_the_optimum_when_everything_fuses() -> None:
    instance = chain3((384,), (1024,))
    assert (
        compulsory_bound(VariantTable(instance, enumerate_columns(instance))) == 744 == run("cpsat", instance).objective
    )


def test_enumeration_needs_every_column() -> None:
    instance = small_instance(10, 2, act_kb=(64,), weight_kb=(64,))
    result = solve_enumerate(instance, SolveOptions(), budget=12)
    assert result.status is Status.TIME_LIMIT_NO_SOLUTION and result.solution is None
    assert result.stats.native_status.startswith("too large for exhaustive enumeration (10 layers)")
    assert result.stats.native_status.endswith("column budget reached (12 sets evaluated)")


def test_enumeration_gives_up_beyond_its_down_sets() -> None:
    instance = small_instance(10, 2, act_kb=(64,), weight_kb=(64,))
    result = solve_enumerate(instance, SolveOptions(), max_states=5)
    assert result.status is Status.TIME_LIMIT_NO_SOLUTION
    assert result.stats.native_status == "too large for exhaustive enumeration (10 layers, more than 5 down-sets)"


# ---------------------------------------------------------- infeasibility
@pytest.mark.parametrize("method", ALL)
def test_a_layer_larger_than_every_buffer_is_infeasible(method: str) -> None:
    result = run(method, chain3((150,), (1024,)))
    assert result.status is Status.INFEASIBLE and result.solution is None
    assert result.stats.native_status.startswith("layer 'L1' alone needs")


# ----------------------------------------------------------- time limits
@pytest.mark.parametrize("method", ALL)
def test_a_spent_time_limit_never_claims_optimality(method: str) -> None:
    instance = small_instance(12, 5, act_kb=(16, 32, 64), weight_kb=(8, 16))
    result = run(method, instance, time_limit_s=1e-6)
    assert result.status in (Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION)
    assert "time limit reached" in result.stats.native_status
    if method == "enumerate":
        assert result.status is Status.TIME_LIMIT_NO_SOLUTION


# --------------------------------------------------------- CP-SAT scaling
def test_objective_scale_is_exact_where_it_can_be() -> None:
    assert objective_scale([3.0, 5.0, 1e9], 0.002) == 1.0
    assert objective_scale([0.002 * 12345, 1024.0], 0.002) == 500.0
    scale = objective_scale([0.1, 2.5e6, 1e-3], 0.002)
    assert scale == 2.0 ** math.floor(math.log2(2.0**50 / (0.1 + 2.5e6 + 1e-3)))


def test_cpsat_bound_is_valid_for_energy() -> None:
    instance = small_instance(8, 3, metric=Metric.ENERGY, act_kb=(3, 6, 12), weight_kb=(1, 2))
    best, _ = brute_force(instance)
    result = run("cpsat", instance)
    assert same(result.objective, best)
    assert result.bound is not None and result.bound <= best


def test_instances_exercise_fusion_modes_and_capacities() -> None:
    """The random instances are not trivial: optima fuse layers, stream weights and pick inner capacities."""
    fused = streamed = inner = 0
    for seed in range(12):
        instance: PartitionInstance = small_instance(8, seed, act_kb=(2, 4, 8), weight_kb=(1, 2))
        result = run("enumerate", instance)
        assert result.solution is not None
        subgraphs = result.solution.indices(instance)
        fused += any(len(s) > 1 for s in subgraphs)
        act, weight = result.solution.act_capacity_bytes, result.solution.weight_capacity_bytes
        modes = [instance.cost_model.subgraph(s).mode_for(False, act, weight) for s in subgraphs]
        streamed += any(m is not None and m.name != "resident" for m in modes)
        inner += (act, weight) != instance.capacity_pairs()[-1]
    assert fused >= 6 and streamed >= 2 and inner >= 6, (fused, streamed, inner)


@pytest.mark.parametrize("method", SOLVERS)
def test_objective_is_the_evaluators(method: str) -> None:
    instance = small_instance(9, 4, metric=Metric.ENERGY, act_kb=(3, 6, 12), weight_kb=(1, 2))
    result = EXACT[method].run(instance, SolveOptions(), None)
    assert result.solution is not None and result.objective is not None
    value = PROBLEM.objective(instance, result.solution, PROBLEM.evaluate(instance, result.solution))
    assert math.isclose(result.objective, value, rel_tol=1e-9)
