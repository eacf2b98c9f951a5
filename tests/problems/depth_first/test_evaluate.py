"""The depth-first evaluator: cache sizes, top levels, LBL/SL extremes and DeFiNES' qualitative findings."""

from __future__ import annotations

import pytest

from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.fused_stack import DRAM
from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.models.registry import load_workload
from accelsched.problems.depth_first import (
    DepthFirstInstance,
    OverlapMode,
    Strategy,
    check,
    evaluate_solution,
    single_stack_solution,
    stack_cost,
)

META = "defines-meta-proto-df"


@pytest.fixture(scope="module")
def fsrcnn() -> DepthFirstInstance:
    return DepthFirstInstance(load_workload("fsrcnn"), load_accelerator(META))


def test_whole_output_tile_is_layer_by_layer_and_the_modes_coincide(fsrcnn: DepthFirstInstance) -> None:
    last = fsrcnn.workload[fsrcnn.order[-1]]
    reports = [
        evaluate_solution(fsrcnn, single_stack_solution(fsrcnn.order, Strategy(last.OX, last.OY, m))).report
        for m in OverlapMode
    ]
    assert reports[0] == reports[1] == reports[2]
    cost = stack_cost(fsrcnn, fsrcnn.order, Strategy(last.OX, last.OY, OverlapMode.FULLY_CACHED))
    assert cost.n_tiles == cost.n_tile_types == 1


def test_a_single_layer_stack_with_everything_in_dram_is_the_primitive_plus_its_copies() -> None:
    """A layer too large for any level: the evaluator prices it exactly as the DRAM-to-DRAM primitive."""
    instance = DepthFirstInstance(load_workload("fsrcnn"), load_accelerator(META))
    layer = instance.workload["conv1"]  # 56 x 970 x 550 input: far above 1 MB
    cost = stack_cost(instance, ("conv1",), Strategy(layer.OX, layer.OY, OverlapMode.FULLY_CACHED))
    assert cost.tops[0]["conv1"]["I"] == DRAM
    assert cost.tops[0]["conv1"]["O"] == DRAM
    primitive = layer_cost(layer, instance.core, instance.accelerator.offchip, {"W": cost.tops[0]["conv1"]["W"]})
    weights_in = layer.weight_bytes * (
        instance.accelerator.offchip.read_energy_pj_per_byte
        + instance.core.memory(cost.weight_home).write_energy_pj_per_byte
    )
    home_to_top = 0.0
    if cost.tops[0]["conv1"]["W"] != cost.weight_home:
        home_to_top = layer.weight_bytes * (
            instance.core.memory(cost.weight_home).read_energy_pj_per_byte
            + instance.core.memory(cost.tops[0]["conv1"]["W"]).write_energy_pj_per_byte
        )
    assert cost.energy_pj == pytest.approx(primitive.energy_pj + weights_in + home_to_top, rel=1e-9)


def test_weights_come_from_dram_once_when_the_stack_holds_them(fsrcnn: DepthFirstInstance) -> None:
    strategy = Strategy(60, 72, OverlapMode.FULLY_CACHED)
    cost = stack_cost(fsrcnn, fsrcnn.order, strategy)
    weights = sum(layer.weight_bytes for layer in fsrcnn.workload)
    assert cost.weight_home != DRAM
    # DRAM bytes: the input once, the output once, the weights once (fully-cached fetches nothing twice)
    first, last = fsrcnn.workload[fsrcnn.order[0]], fsrcnn.workload[fsrcnn.order[-1]]
    assert cost.dram_bytes == pytest.approx(first.input_bytes + last.output_bytes + weights)


def test_energy_breakdowns_add_up(fsrcnn: DepthFirstInstance) -> None:
    evaluation = evaluate_solution(fsrcnn, single_stack_solution(fsrcnn.order, Strategy(16, 16, OverlapMode.H_CACHED)))
    report = evaluation.report
    assert sum(report.energy_breakdown_pj.values()) == pytest.approx(report.energy_pj)
    assert sum(evaluation.energy_by_operand_pj.values()) == pytest.approx(report.energy_pj)
    assert set(evaluation.energy_by_operand_pj) == {"mac", "I", "O", "W"}
    assert 0 < report.utilization <= 1


def test_small_grid_has_an_interior_optimum_and_caching_never_costs_energy(fsrcnn: DepthFirstInstance) -> None:
    """DeFiNES case study 1 on a 3 x 3 grid: 1 x 1 and whole-output tiles lose to a middle one."""
    energy = {}
    for tile in ((1, 1), (16, 18), (960, 540)):
        for mode in OverlapMode:
            strategy = Strategy(*tile, mode)
            check(fsrcnn, single_stack_solution(fsrcnn.order, strategy))
            energy[tile, mode] = stack_cost(fsrcnn, fsrcnn.order, strategy).energy_pj
    for mode in OverlapMode:
        assert energy[(16, 18), mode] < energy[(1, 1), mode]
        assert energy[(16, 18), mode] < energy[(960, 540), mode]
    for tile in ((1, 1), (16, 18), (960, 540)):
        cached = energy[tile, OverlapMode.FULLY_CACHED]
        h_cached = energy[tile, OverlapMode.H_CACHED]
        recompute = energy[tile, OverlapMode.FULLY_RECOMPUTE]
        assert cached <= h_cached * (1 + 1e-12)
        assert h_cached <= recompute * (1 + 1e-12)
