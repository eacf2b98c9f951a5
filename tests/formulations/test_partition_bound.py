"""The forced-traffic bound of the partition objective: by hand, against brute force, and in the
exact models' results when the column set is incomplete."""

from __future__ import annotations

import math

import pytest

from accelsched.formulations.partition_bound import forced_traffic_bound
from accelsched.formulations.partition_common import VariantTable, compulsory_bound
from accelsched.formulations.partition_milp import solve_milp
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PROBLEM, Metric, PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import enumerate_columns
from accelsched.registry import run_method
from accelsched.solvers import Result, SolveOptions
from tests.formulations.partition_helpers import chain3, run
from tests.problems.partition_oracle import brute_force, small_instance

CONFIGS = [
    pytest.param({}, id="fixed-separate-ema"),
    pytest.param({"shared": True, "act_kb": (5,)}, id="fixed-shared-ema"),
    pytest.param({"act_kb": (3,), "weight_kb": (1,), "metric": Metric.ENERGY}, id="fixed-separate-energy"),
    pytest.param({"act_kb": (2, 4, 8), "weight_kb": (1, 2)}, id="co-separate-ema"),
    pytest.param({"shared": True, "act_kb": (3, 5, 8), "metric": Metric.ENERGY}, id="co-shared-energy"),
]


def _table(instance: PartitionInstance) -> VariantTable:
    return VariantTable(instance, enumerate_columns(instance))


def _bound(instance: PartitionInstance) -> float:
    forced = forced_traffic_bound(_table(instance))
    assert forced is not None
    return forced.value


@pytest.mark.parametrize(
    ("act", "weight", "optimum"),
    [
        (384, 1024, 744),  # everything fits: nothing is forced, the compulsory traffic is the optimum
        (200, 1024, 1768),  # only single layers fit: both tensors are cut
        (384, 100, 1768),  # L1 and L2 stream their weights alone (no extra traffic): both tensors cut
        (200, 100, 456 + 2 * (656 + 3 * 256)),  # L1, L2 alone in 4 weight blocks: their input read 3 more times
    ],
)
def test_the_bound_is_the_optimum_of_the_chain_when_only_forced_cuts_are_made(
    act: int, weight: int, optimum: int
) -> None:
    instance = chain3((act,), (weight,))
    assert _bound(instance) == optimum == run("enumerate", instance).objective


def test_a_cut_that_is_not_forced_is_not_counted() -> None:
    # L0+L1 (256 B) fits 320 B, the three (384 B) do not: the optimum cuts one tensor, the bound none
    instance = chain3((320,), (1024,))
    assert _bound(instance) == 744 < 1768 - 2 * 256 == run("enumerate", instance).objective


def test_co_exploration_takes_the_least_pair_of_candidates() -> None:
    # capacity is dear: at 200 B every tensor is cut (1768 B), at 320 and 384 B none is forced
    instance = chain3((200, 320, 384), (1024,), alpha=0.1)
    table = _table(instance)
    forced = forced_traffic_bound(table)
    assert forced is not None and forced.act_index == 0 and forced.cut_tensors == 2
    assert forced.value == pytest.approx(200 + 1024 + 0.1 * 1768) == run("enumerate", instance).objective
    assert forced.value > compulsory_bound(table) == pytest.approx(200 + 1024 + 0.1 * 744)


def test_no_pair_holding_every_layer_gives_none() -> None:
    columns = enumerate_columns(chain3((384,), (1024,)))
    assert forced_traffic_bound(VariantTable(chain3((100,), (1024,)), columns)) is None


@pytest.mark.parametrize("config", CONFIGS)
def test_the_bound_lies_between_the_compulsory_traffic_and_the_optimum(config: dict) -> None:
    raised = 0
    for seed in range(8):
        instance = small_instance(7, seed, **config)
        best, _ = brute_force(instance)
        table = _table(instance)
        forced = forced_traffic_bound(table)
        # the single layers always partition the network: None exactly when one of them fits nothing
        assert (forced is None) == (best == math.inf), f"seed {seed}"
        if forced is None:
            continue
        compulsory = compulsory_bound(table)
        assert compulsory <= forced.value + 1e-9 * abs(compulsory)
        assert forced.value <= best + 1e-9 * abs(best), f"seed {seed}"
        raised += forced.value > compulsory * (1 + 1e-9)
    assert raised >= 2, "the tight buffers of these instances force some cuts"


def test_an_incomplete_column_set_reports_the_forced_traffic_bound() -> None:
    instance = small_instance(10, 2, act_kb=(2,), weight_kb=(1,))
    best = run("enumerate", instance).objective
    forced = _bound(instance)
    assert best is not None and forced > compulsory_bound(_table(instance))

    def solver(i: PartitionInstance, o: SolveOptions, w: PartitionSolution | None) -> Result:
        return solve_milp(i, o, w, backend="highs", method="milp-highs", budget=12, rounds=1)

    result: Result = run_method(PROBLEM, instance, MethodSpec("budgeted", "partition", "exact", solver), SolveOptions())
    assert result.bound is not None and result.objective is not None
    assert forced <= result.bound + 1e-9 * forced and result.bound <= best <= result.objective
    assert "optimality not proven, bound = forced traffic" in result.stats.native_status
