"""The multicore (Stream) problem: instance validation, options, stacks, the manual baseline."""

from __future__ import annotations

import pytest

from accelsched.errors import InputError
from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.cn_graph import Granularity
from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.hardware.spec import Bus, Mesh
from accelsched.heuristics.multicore_manual import METHODS, manual_allocation
from accelsched.models.builder import NetBuilder
from accelsched.models.layer import OpKind
from accelsched.models.random_dag import random_workload
from accelsched.models.registry import load_workload
from accelsched.problems.depth_first import cut_points
from accelsched.problems.multicore import (
    PROBLEM,
    MulticoreInstance,
    Priority,
    auto_stacks,
    cn_cost,
    evaluate_schedule,
    list_schedule,
    make_instance,
)
from accelsched.registry import get_method, get_problem, run_method
from accelsched.solvers import SolveOptions, Status
from tests.hardware.cost.helpers import multicore


def _pooled():  # type: ignore[no-untyped-def]
    b = NetBuilder("pooled", 4, 8, 8)
    x = b.conv(b.input, 8, 3, pad=1, name="a")
    x = b.pool(x, 2, name="p")
    b.conv(x, 8, 3, pad=1, name="c")
    return b.build()


def test_allowed_cores_default_to_supported_kinds_and_can_be_narrowed() -> None:
    inst = MulticoreInstance(_pooled(), multicore())
    assert inst.allowed_cores == {"a": (0, 1), "p": (2,), "c": (0, 1)}
    narrow = MulticoreInstance(_pooled(), multicore(), allowed=((OpKind.CONV, (1,)),))
    assert narrow.allowed_cores["a"] == (1,)


def test_clear_errors_for_bad_instances() -> None:
    w = _pooled()
    with pytest.raises(ValueError, match="layer 'p' \\(pool\\) has no allowed core"):
        MulticoreInstance(w, multicore(simd=False))
    with pytest.raises(ValueError, match="core 2 \\(simd\\) does not execute conv layers"):
        MulticoreInstance(w, multicore(), allowed=((OpKind.CONV, (2,)),))
    with pytest.raises(ValueError, match="allowed cores of conv name unknown core 7"):
        MulticoreInstance(w, multicore(), allowed=((OpKind.CONV, (7,)),))
    with pytest.raises(ValueError, match="stack 1 is empty"):
        MulticoreInstance(w, multicore(), stacks=(("a", "p", "c"), ()))
    with pytest.raises(ValueError, match="layer 'c' is in no stack"):
        MulticoreInstance(w, multicore(), stacks=(("a", "p"),))
    with pytest.raises(ValueError, match="layer 'a' is in stacks 0 and 1"):
        MulticoreInstance(w, multicore(), stacks=(("a", "p"), ("a", "c")))
    with pytest.raises(ValueError, match="reads 'p' from a later stack"):
        MulticoreInstance(w, multicore(), stacks=(("a", "c"), ("p",)))
    with pytest.raises(ValueError, match="objective must be one of latency, energy, edp, memory"):
        MulticoreInstance(w, multicore(), objective="area")
    with pytest.raises(ValueError, match="rows_per_cn must be an integer >= 1"):
        MulticoreInstance(w, multicore(), rows_per_cn=0)
    mesh = multicore().replace(interconnect=Mesh(1, 3, 1.0, 8.0))
    with pytest.raises(ValueError, match="must have a bus interconnect, got mesh"):
        MulticoreInstance(w, mesh)
    with pytest.raises(ValueError, match="bandwidth_bytes_per_cycle must be > 0"):
        Bus(0, 0.0)


def test_make_instance_parses_options_and_rejects_bad_ones() -> None:
    acc = multicore()
    options = {"granularity": "fused", "rows": "2", "stacks": "a,p|c", "priority": "memory", "objective": "edp"}
    inst = make_instance(_pooled(), acc, {**options, "allowed": "conv:1;pool:2"})
    assert inst.granularity is Granularity.FUSED and inst.rows_per_cn == 2
    assert inst.stacks == (("a", "p"), ("c",)) and inst.priority is Priority.MEMORY and inst.objective == "edp"
    assert inst.allowed_cores["c"] == (1,)
    bad = [
        ({"tile": "3"}, "unknown multicore option 'tile'"),
        ({"rows": "x"}, "rows must be a positive integer"),
        ({"granularity": "rows"}, "granularity must be one of layer, fused"),
        ({"priority": "speed"}, "priority must be latency or memory"),
        ({"allowed": "conv=1"}, "allowed: expected KIND:ID"),
        ({"stacks": "a,p|"}, "stack 1 is empty"),
    ]
    for options, message in bad:
        with pytest.raises(InputError, match=message):
            make_instance(_pooled(), acc, options)


@pytest.mark.parametrize("name", ["resnet18", "squeezenet", "mobilenet_v2", "tiny_yolo"])
def test_auto_stacks_partition_the_network_along_the_data_flow(name: str) -> None:
    w = load_workload(name)
    acc = load_accelerator("stream-mc-homtpu")
    stacks = auto_stacks(w, acc)
    assert [n for s in stacks for n in s] == list(w.names)
    inst = MulticoreInstance(w, acc, Granularity.FUSED, stacks=stacks)  # validates the data flow
    cuts = set(cut_points(w))
    capacity = sum(c.top_level("W").total_capacity_bytes for c in acc.cores)
    position = {n: i for i, n in enumerate(w.names)}
    for stack in stacks:
        if len(stack) > 1:  # a fused stack ends at a cut point and its resident weights fit on chip
            assert position[stack[-1]] in cuts
            assert sum(w[n].weight_bytes for n in stack if n not in inst.whole_layers) <= capacity
    assert inst.graph.cns  # builds


@pytest.mark.parametrize("preset", ["stream-mc-hetero", "stream-mc-homtpu"])
def test_auto_stacks_fuse_layers_whose_weights_exceed_a_core(preset: str) -> None:
    """Stream fuses layers whose weights exceed a core's weight memory (they are one CN streaming their weights
    once): every layer of ResNet-18 is in a multi-layer stack on the quad-cores."""
    w = load_workload("resnet18")
    acc = load_accelerator(preset)
    stacks = auto_stacks(w, acc)
    fused = sum(len(s) for s in stacks if len(s) > 1)
    assert fused >= 0.9 * len(w.names)
    inst = MulticoreInstance(w, acc, Granularity.FUSED, stacks=stacks)
    big = {n for n in w.names if w[n].weight_bytes > 65536}
    assert big and big <= inst.whole_layers  # the 64 KiB weight memories of the quad-core presets
    assert all(len(inst.graph.by_layer[n]) == 1 for n in big)


def test_spilling_only_where_outputs_leave_a_fused_stack() -> None:
    w = _pooled()
    layer = MulticoreInstance(w, multicore(activation_bytes=256))
    assert layer.unfused_outputs == {"a", "p", "c"}
    assert layer.spills("a", 0) and not layer.spills("c", 0)  # c is a sink: no consumer to spill for
    fused = MulticoreInstance(w, multicore(activation_bytes=256), Granularity.FUSED, stacks=(("a", "p"), ("c",)))
    assert fused.unfused_outputs == {"p", "c"}
    assert not fused.spills("a", 0)


def test_manual_allocation_ping_pong_and_best_fit() -> None:
    w = random_workload(6, 3, channels=(16, 32))
    same = multicore(spatials=((("K", 4), ("C", 4)), (("K", 4), ("C", 4))), simd=True)
    inst = MulticoreInstance(w, same)
    alloc = manual_allocation(inst)
    convs = [n for n in w.names if inst.allowed_cores[n] == (0, 1)]
    assert [alloc[n] for n in convs] == [i % 2 for i in range(len(convs))]  # ping-pong in topological order
    hetero = MulticoreInstance(load_workload("resnet18"), load_accelerator("stream-mc-hetero"))
    alloc = manual_allocation(hetero)
    assert {alloc[n] for n in hetero.workload.names if hetero.workload[n].kind is OpKind.POOL} == {4}
    from accelsched.hardware.cost.layer_cost import layer_cost

    acc = hetero.accelerator
    for name in hetero.workload.names:
        chosen = layer_cost(hetero.workload[name], acc.core(alloc[name]), acc.offchip).spatial_utilization
        best = max(layer_cost(hetero.workload[name], acc.core(c), acc.offchip).spatial_utilization
                   for c in hetero.allowed_cores[name])  # fmt: skip
        assert chosen == best


def test_manual_best_fit_deals_ties_among_identical_cores_in_turn() -> None:
    """Layers whose best fit is any of several identical cores alternate between them (not all on core 0)."""
    hetero = MulticoreInstance(load_workload("resnet18"), load_accelerator("stream-mc-hetero"))
    acc = hetero.accelerator
    alloc = manual_allocation(hetero)
    twins = [c for c in range(len(acc.cores)) if sum(acc.core(d).cost_key() == acc.core(c).cost_key()
                                                      for d in range(len(acc.cores))) > 1]  # fmt: skip
    assert twins, "stream-mc-hetero is expected to hold two identical cores"
    on_twins = [n for n in hetero.workload.names if alloc[n] in twins]
    assert {alloc[n] for n in on_twins} == set(twins)
    counts = [sum(alloc[n] == c for n in on_twins) for c in twins]
    assert max(counts) - min(counts) <= 1


@pytest.mark.parametrize("granularity", ["layer", "fused"])
def test_manual_method_through_the_registry(granularity: str) -> None:
    problem = get_problem("multicore")
    assert problem is PROBLEM and get_method("multicore", "manual") is METHODS[0]
    inst = make_instance(load_workload("squeezenet"), load_accelerator("stream-mc-hetero"),
                         {"granularity": granularity, "stacks": "auto", "objective": "edp"})  # fmt: skip
    result = run_method(PROBLEM, inst, METHODS[0], SolveOptions(seed=0))
    assert result.status is Status.FEASIBLE and result.cost is not None
    assert result.objective == pytest.approx(result.cost.edp)
    assert result.cost.macs == inst.workload.macs


def test_one_fused_stack_streams_each_weight_once() -> None:
    """In one fused stack, a layer too large for a core's weight memory is one CN: every weight crosses the DRAM
    port once and the fused EDP stays below the layer-by-layer one."""
    w = load_workload("resnet18")
    acc = load_accelerator("stream-mc-homtpu")
    reports = {}
    for options in ({"granularity": "layer"}, {"granularity": "fused"}):
        inst = make_instance(w, acc, options)
        ev = evaluate_schedule(inst, list_schedule(inst, manual_allocation(inst)))
        reports[options["granularity"]] = ev.report
        if options["granularity"] == "fused":
            loaded = sum(a.nbytes for a in ev.activities if a.kind == "weights")
            assert loaded == sum(layer.weight_bytes for layer in w)
    assert reports["fused"].edp < reports["layer"].edp


def test_conv1_cost_on_a_tpu_core_is_the_primitive_s_not_the_cn_cut() -> None:
    """ResNet-18's conv1 (C = 3) takes 3.0x its compute cycles on a C32|K32 core, cut into rows or not: the
    primitive re-reads a weight from w_l1 for every MAC (1 B weight register per PE, 32 B/cycle w_l1), so the
    cause is in ``layer_cost``, not in how the CNs are cut or priced."""
    w = load_workload("resnet18")
    acc = load_accelerator("stream-mc-homtpu")
    inst = make_instance(w, acc, {"granularity": "fused", "stacks": "auto"})
    core = acc.core(0)
    tops = {op: core.hierarchy[op][-1] for op in ("I", "W", "O")}
    whole = layer_cost(w["conv1"], core, acc.offchip, tops)
    cns = inst.graph.by_layer["conv1"]
    assert len(cns) == w["conv1"].OY
    summed = sum(cn_cost(inst, k, 0).duration_cycles for k in cns)
    assert summed == pytest.approx(whole.latency_cycles, rel=1e-6)
    assert whole.latency_cycles == pytest.approx(3.0 * whole.compute_cycles, rel=1e-6)
    assert whole.level_read_bytes["w_l1", "W"] == whole.macs
