"""Multicore (Stream) evaluator, checker and list scheduler."""

from __future__ import annotations

import dataclasses
import math

import pytest

from accelsched.errors import InfeasibleSolution
from accelsched.hardware.cost.cn_graph import Granularity
from accelsched.models.builder import NetBuilder
from accelsched.models.random_dag import random_workload
from accelsched.models.workload import Workload
from accelsched.problems.multicore import (
    PROBLEM,
    MulticoreInstance,
    MulticoreSolution,
    OffChipAccess,
    Priority,
    Transfer,
    check,
    cn_cost,
    evaluate_schedule,
    list_schedule,
)
from tests.hardware.cost.helpers import multicore


def _chain(n: int = 2, height: int = 8) -> Workload:
    b = NetBuilder("chain", 4, height, 8)
    x = b.input
    for i in range(n):
        x = b.conv(x, 8, 3, pad=1, name="abcdefgh"[i])
    return b.build()


def _instance(workload: Workload | None = None, **kwargs) -> MulticoreInstance:  # type: ignore[no-untyped-def]
    hw = {k: kwargs.pop(k) for k in ("weight_bytes", "activation_bytes") if k in kwargs}
    return MulticoreInstance(workload or _chain(), multicore(**hw), **kwargs)


def test_two_layers_on_two_cores_by_hand() -> None:
    inst = _instance()
    sol = list_schedule(inst, {"a": 0, "b": 1})
    da, db = cn_cost(inst, 0, 0).duration_cycles, cn_cost(inst, 1, 1).duration_cycles
    # DRAM port (4 B/cycle): input of a (4x8x8 = 256 B) [0, 64), weights of a (288 B) [64, 136),
    # weights of b (576 B) [136, 280); a on core 0 from 136; its output (512 B) over the bus (8 B/cycle)
    assert sol.starts["a:0"] == 136
    assert sol.transfers == (Transfer("a:0", 1, 136 + da),)
    b_start = max(136 + da + 64, 280)
    assert sol.starts["b:0"] == b_start
    kinds = sorted((a.kind, a.cn, a.start) for a in sol.offchip)
    assert kinds == [
        ("input", "a:0", 0),
        ("output", "b:0", b_start + db),
        ("weights", "a:0", 64),
        ("weights", "b:0", 136),
    ]
    ev = evaluate_schedule(inst, sol)
    r = ev.report
    assert r.latency_cycles == b_start + db + 128
    assert r.dram_bytes == 256 + 288 + 576 + 512 and r.noc_byte_hops == 512
    cn_energy = cn_cost(inst, 0, 0).energy_pj + cn_cost(inst, 1, 1).energy_pj
    moved = 512 * (0.5 + 1.5 + 2.5) + 256 * (10 + 2.5) + (288 + 576) * (10 + 2.0) + 512 * (1.5 + 10)
    assert r.energy_pj == pytest.approx(cn_energy + moved)
    assert r.energy_breakdown_pj["bus"] == pytest.approx(256.0)
    assert r.macs == sum(inst.workload[n].macs for n in "ab")
    # memory: a's output lives on core 0 until the transfer ends, then on core 1 until b ends
    assert ev.peak_memory_by_core[1] >= 512
    assert PROBLEM.objective(inst, sol, r) == r.latency_cycles


def test_same_core_needs_no_transfer_and_runs_back_to_back() -> None:
    inst = _instance()
    sol = list_schedule(inst, {"a": 0, "b": 0})
    assert sol.transfers == ()
    assert sol.starts["b:0"] == max(sol.starts["a:0"] + cn_cost(inst, 0, 0).duration_cycles, 280)


def _broken(sol: MulticoreSolution, **changes) -> MulticoreSolution:  # type: ignore[no-untyped-def]
    return dataclasses.replace(sol, **changes)


def test_check_names_each_violated_rule() -> None:
    inst = _instance()
    sol = list_schedule(inst, {"a": 0, "b": 1})
    check(inst, sol)
    starts = dict(sol.starts)
    cases = [
        (_broken(sol, allocation={"a": 0, "b": 2}), "rule 1: layer 'b' is on core 2"),
        (_broken(sol, allocation={"a": 0}), "rule 1: layer 'b' has no core"),
        (_broken(sol, starts={**starts, "b:0": -1}), "rule 2: CN b:0 starts at -1"),
        (_broken(sol, starts={"a:0": starts["a:0"]}), "rule 2: CN b:0 has no start"),
        (_broken(sol, starts={**starts, "z:0": 0}), "rule 2: the CN starts names unknown CN 'z:0'"),
        (_broken(sol, transfers=()), "rule 3: CN b:0 on core 1 reads a:0 .* no transfer brings it"),
        (_broken(sol, starts={**starts, "b:0": starts["b:0"] - 1}), "rule 3: CN b:0 starts at .* before the transfer"),
        (_broken(sol, transfers=sol.transfers * 2), "rule 3: the output of a:0 is sent to core 1 twice"),
        (_broken(sol, transfers=(Transfer("a:0", 1, 0),)), "rule 3: transfer of a:0 starts at 0, before the CN ends"),
        (_broken(sol, transfers=(Transfer("b:0", 0, 10**6),)), "rule 3: transfer of b:0 to core 0: no consumer"),
        (
            _broken(sol, offchip=tuple(a for a in sol.offchip if a.kind != "input")),
            "rule 4: CN a:0 reads network-input",
        ),
        (_broken(sol, offchip=tuple(a for a in sol.offchip if a.kind != "output")), "rule 4: the output of b:0"),
        (
            _broken(sol, offchip=tuple(a for a in sol.offchip if (a.kind, a.cn) != ("weights", "b:0"))),
            "rule 5: CN b:0 starts at .* with no weights of 'b' loaded",
        ),
        (
            _broken(sol, offchip=(*sol.offchip, OffChipAccess("input", "b:0", 1, 10**6))),
            "rule 4: input loaded for b:0, which reads no new network-input rows",
        ),
        (
            _broken(sol, offchip=(*sol.offchip, OffChipAccess("output", "a:0", 0, 10**6))),
            "rule 4: output of a:0 stored off-chip, but it is not a CN of a sink layer",
        ),
    ]
    for bad, message in cases:
        with pytest.raises(InfeasibleSolution, match=message):
            check(inst, bad)
    both = list_schedule(inst, {"a": 0, "b": 0})
    with pytest.raises(InfeasibleSolution, match=r"rule 2: CN a:0 .* and CN b:0 .* overlap on core 0"):
        check(inst, _broken(both, starts={"a:0": both.starts["a:0"], "b:0": both.starts["a:0"] + 1}))
    early = tuple(dataclasses.replace(a, start=a.start - 1) if a.kind == "weights" and a.cn == "b:0" else a
                  for a in sol.offchip)  # fmt: skip
    with pytest.raises(InfeasibleSolution, match=r"rule 2: .* overlap on the DRAM port"):
        check(inst, _broken(sol, offchip=early))


def test_weights_are_evicted_first_in_first_out_and_capacity_is_checked() -> None:
    # 600 B of weight memory: a (288 B) and b (576 B) never fit together
    inst = _instance(_chain(3), weight_bytes=600)
    sol = list_schedule(inst, {"a": 0, "b": 0, "c": 0})
    loads = [(a.cn, a.start) for a in sol.offchip if a.kind == "weights"]
    assert [cn for cn, _ in loads] == ["a:0", "b:0", "c:0"]
    end_a = sol.starts["a:0"] + cn_cost(inst, 0, 0).duration_cycles
    assert dict(loads)["b:0"] >= end_a  # b's load evicts a: it waits for a to finish
    check(inst, sol)
    moved = tuple(dataclasses.replace(a, start=end_a - 1) if a.kind == "weights" and a.cn == "b:0" else a
                  for a in sol.offchip)  # fmt: skip
    with pytest.raises(InfeasibleSolution, match=r"rule 5: core 0 holds 864 B of weights .* 600 B weight memory"):
        check(inst, _broken(sol, offchip=moved))


def test_weights_larger_than_the_memory_are_one_cn_streamed_once() -> None:
    """A fused layer whose weights exceed every allowed core's weight memory is one CN: its weights cross the
    DRAM port once (cut into rows, each CN streamed them again: 3 loads for 3 CNs)."""
    inst = _instance(_chain(2), weight_bytes=500, granularity=Granularity.FUSED, rows_per_cn=3)
    assert inst.streams_weights("b", 0) and not inst.streams_weights("a", 0)
    assert inst.whole_layers == {"b"}
    assert len(inst.graph.by_layer["a"]) == 3 and len(inst.graph.by_layer["b"]) == 1
    sol = list_schedule(inst, {"a": 0, "b": 1})
    b_loads = sorted(a.cn for a in sol.offchip if a.kind == "weights" and a.cn.startswith("b"))
    assert b_loads == ["b:0"]
    weights = sum(act.nbytes for act in evaluate_schedule(inst, sol).activities if act.kind == "weights")
    assert weights == 288 + 576  # a's and b's weights, each once
    fewer = tuple(a for a in sol.offchip if (a.kind, a.cn) != ("weights", "b:0"))
    with pytest.raises(InfeasibleSolution, match=r"rule 5: the weights of 'b' do not fit .* CN b:0 has 0 loads"):
        check(inst, _broken(sol, offchip=fewer))


def test_outputs_larger_than_the_activation_memory_are_spilled_and_fetched() -> None:
    inst = _instance(activation_bytes=256)  # a's output is 512 B
    assert inst.spills("a", 0) and not inst.spills("b", 1)  # b is a sink: its output is stored anyway
    sol = list_schedule(inst, {"a": 0, "b": 1})
    kinds = {(a.kind, a.cn, a.core) for a in sol.offchip}
    assert {("spill", "a:0", 0), ("fetch", "a:0", 1)} <= kinds and sol.transfers == ()
    r = evaluate_schedule(inst, sol).report
    assert r.dram_bytes == 256 + 288 + 576 + 512 + 2 * 512 and r.noc_byte_hops == 0
    no_fetch = tuple(a for a in sol.offchip if a.kind != "fetch")
    with pytest.raises(InfeasibleSolution, match="rule 4: CN b:0 on core 1 reads a:0, which is spilled"):
        check(inst, _broken(sol, offchip=no_fetch))
    with pytest.raises(InfeasibleSolution, match="rule 3: the output of a:0 is spilled"):
        check(inst, _broken(sol, transfers=(Transfer("a:0", 1, 10**6),)))
    # fused in one stack, the same outputs stay on chip
    fused = _instance(activation_bytes=256, granularity=Granularity.FUSED, rows_per_cn=2)
    assert not fused.spills("a", 0)


def test_stacks_are_barriers() -> None:
    bld = NetBuilder("fork", 4, 8, 8)
    a = bld.conv(bld.input, 8, 3, pad=1, name="a")
    b = bld.conv(bld.input, 8, 3, pad=1, name="b")
    bld.add(a, b, name="c")
    inst = _instance(bld.build(), granularity=Granularity.FUSED, rows_per_cn=2, stacks=(("a",), ("b", "c")))
    sol = list_schedule(inst, {"a": 0, "b": 1, "c": 2})
    end_a = sol.starts["a:0"] + cn_cost(inst, inst.graph.names["a:0"], 0).duration_cycles
    assert min(sol.starts[f"b:{k}"] for k in range(4)) >= end_a  # b does not read a, but waits for its stack
    early = {**sol.starts, "b:0": end_a - 1}
    with pytest.raises(InfeasibleSolution, match="rule 6: CN b:0 of stack 1 starts at"):
        check(inst, _broken(sol, starts=early))


def test_fused_rows_overlap_producer_and_consumer() -> None:
    inst = _instance(_chain(2, height=16), granularity=Granularity.FUSED, rows_per_cn=2)
    sol = list_schedule(inst, {"a": 0, "b": 1})
    check(inst, sol)
    a_last = max(sol.starts[f"a:{k}"] for k in range(8))
    assert sol.starts["b:0"] < a_last  # b starts before a has finished all its rows


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("granularity", list(Granularity))
def test_list_schedules_of_random_allocations_pass_the_checker(seed: int, granularity: Granularity) -> None:
    import random

    rng = random.Random(seed)
    w = random_workload(7, seed, height=12, width=12, channels=(8, 16, 24))
    inst = MulticoreInstance(
        w,
        multicore(weight_bytes=rng.choice([2000, 8000, 1 << 20]), activation_bytes=rng.choice([1500, 1 << 20])),
        granularity,
        rows_per_cn=rng.choice([1, 2, 4]),
        priority=rng.choice(list(Priority)),
    )
    allocation = {name: rng.choice(inst.allowed_cores[name]) for name in w.names}
    sol = list_schedule(inst, allocation)
    ev = evaluate_schedule(inst, sol)
    r = ev.report
    busy: dict[int, int] = {}
    for cn in inst.graph.cns:
        core = allocation[cn.layer]
        busy[core] = busy.get(core, 0) + cn_cost(inst, cn.index, core).duration_cycles
    assert r.latency_cycles >= max(busy.values())
    assert r.energy_pj == pytest.approx(sum(r.energy_breakdown_pj.values()))
    inputs = sum(inst.graph.input_bytes(k) for k in range(len(inst.graph.cns)))
    outputs = sum(w[n].output_bytes for n in w.sinks)
    assert r.dram_bytes >= inputs + w.weight_bytes + outputs  # every weight loaded at least once
    peaks = ev.peak_memory_by_core.values()
    assert max(peaks) <= r.peak_memory_bytes <= sum(peaks)
    assert math.isclose(PROBLEM.objective(inst, sol, r), r.latency_cycles)


def test_solution_round_trips_through_json() -> None:
    inst = _instance(activation_bytes=256)
    sol = list_schedule(inst, {"a": 0, "b": 1})
    again = MulticoreSolution.from_dict(sol.to_dict())
    assert again == sol
    check(inst, again)
    with pytest.raises(ValueError, match="expected an object with allocation, cns"):
        MulticoreSolution.from_dict({"cns": {}})
    with pytest.raises(ValueError, match="off-chip access kind must be one of"):
        MulticoreSolution.from_dict({**sol.to_dict(), "offchip": [["dma", "a:0", 0, 0]]})
