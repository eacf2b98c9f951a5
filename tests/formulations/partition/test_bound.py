"""The forced-traffic bound of the partition objective: by hand, against brute force, as cover duals
(column generation's first inner point), and in the exact models' results when the column set is
incomplete."""

from __future__ import annotations

import math

import pytest

from accelsched.formulations.partition.bound import compulsory_bound, forced_duals, forced_traffic_bound
from accelsched.formulations.partition.colgen import ColumnGeneration
from accelsched.formulations.partition.common import InnerPoint, VariantTable
from accelsched.formulations.partition.milp import solve_milp
from accelsched.hardware import load_accelerator
from accelsched.models.workload import Workload
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PROBLEM, BufferDesign, Metric, PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import enumerate_columns
from accelsched.problems.result import Result
from accelsched.registry import run_method
from accelsched.solvers import SolveOptions
from tests.formulations.partition.helpers import chain3, conv, run
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


FIXED_CONFIGS = [
    pytest.param({}, id="separate-ema"),
    pytest.param({"act_kb": (2,), "weight_kb": (1,)}, id="separate-ema-tight"),
    pytest.param({"shared": True, "act_kb": (3,)}, id="shared-ema"),
    pytest.param({"act_kb": (3,), "weight_kb": (1,), "metric": Metric.ENERGY}, id="separate-energy"),
    pytest.param({"shared": True, "act_kb": (4,), "metric": Metric.ENERGY}, id="shared-energy"),
]


@pytest.mark.parametrize("config", FIXED_CONFIGS)
def test_the_forced_duals_leave_every_reduced_cost_non_negative(config: dict) -> None:
    """Every variant of every subgraph that fits (the complete enumeration) costs at least the forced
    duals of its layers, so their sum is a bound; it is the forced traffic less the reads no single
    layer pays, and the duals carry forced reads in some of these tight instances."""
    carried = exact = 0
    for seed in range(12):
        instance = small_instance(6 + seed % 3, seed, **config)
        table = _table(instance)
        assert table.complete
        duals = forced_duals(table)
        forced = forced_traffic_bound(table)
        assert (duals is None) == (forced is None), f"seed {seed}"
        if duals is None or forced is None:
            continue
        for j, variant in enumerate(table.variants):
            members = table.members(j)
            paid = math.fsum(duals[i] for i in members)
            assert table.variant_coefficient(j) >= paid - 1e-9 * abs(paid), (seed, members, variant.mode.name)
        total = math.fsum(duals)
        assert total <= forced.value + 1e-9 * forced.value, f"seed {seed}"
        best, _ = brute_force(instance)
        assert total <= best + 1e-9 * best, f"seed {seed}"
        compulsory = compulsory_bound(table)
        carried += total > compulsory * (1 + 1e-9)
        exact += forced.value > compulsory * (1 + 1e-9) and total == pytest.approx(forced.value, rel=1e-12)
    assert carried >= 2, "the tight buffers of these instances force some cuts"
    assert exact >= 1, "in some instance every forced read is paid by a layer"


def test_a_read_that_no_layer_pays_stays_out_of_the_duals() -> None:
    """L0 feeds L1 and L2; each fits beside it under 256 B, the three do not. L0's output is written
    and read once whatever the partition (the bound's 1512 B, the optimum), but either reader may
    share L0's subgraph and skip the read: the duals carry the write alone (1256 B), and every
    subgraph costs at least its layers' duals."""
    workload = Workload("fork3", (conv("L0", 2, 4), conv("L1", 4, 4, ("L0",)), conv("L2", 4, 4, ("L0",))))
    instance = PartitionInstance(
        workload, load_accelerator("cocco-simba-separate"), BufferDesign.SEPARATE, (256,), (1024,), Metric.EMA, 0.002
    )
    table = _table(instance)
    duals = forced_duals(table)
    assert duals is not None and _bound(instance) == 1512 == run("enumerate", instance).objective
    assert duals == (456, 656 - 256, 656 - 256) and sum(duals) == 1512 - 256  # L0 pays its write, no reader a read
    for j in range(len(table.variants)):
        assert table.variant_coefficient(j) >= sum(duals[i] for i in table.members(j))


def test_column_generation_starts_from_the_forced_duals() -> None:
    """With fixed capacities the forced traffic's duals are the first inner point, and their sum the
    bound before any pricing, unless a given inner point proves more; in co-exploration there is none
    (one pair's duals are not the LP's)."""
    instance = small_instance(10, 2, act_kb=(2,), weight_kb=(1,))
    table = VariantTable(instance, enumerate_columns(instance, budget=12))
    duals = forced_duals(table)
    generation = ColumnGeneration(table, None)
    assert duals is not None and generation.inner == duals
    assert generation.bound == generation.inner_bound == math.fsum(duals) > compulsory_bound(table)
    lower, higher = InnerPoint((0.0,) * len(duals), 1.0), InnerPoint(duals, math.fsum(duals) + 1.0)
    assert ColumnGeneration(table, None, start=lower).inner_point == InnerPoint(duals, math.fsum(duals))
    assert ColumnGeneration(table, None, start=higher).inner_point == higher
    with pytest.raises(ValueError, match="9 duals for 10 layers"):
        ColumnGeneration(table, None, start=InnerPoint(duals[1:], 1.0))
    co = small_instance(10, 2, act_kb=(2, 4), weight_kb=(1,))
    co_table = VariantTable(co, enumerate_columns(co, budget=12))
    assert ColumnGeneration(co_table, None).inner is None
    with pytest.raises(ValueError, match="needs fixed capacities"):
        ColumnGeneration(co_table, None, start=higher)
    with pytest.raises(ValueError, match="one candidate per buffer"):
        forced_duals(_table(co))
