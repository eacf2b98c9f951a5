"""The layer-parallel baselines of the atomic problem (``ls``, ``cnn-p``, ``il-pipe``): valid, their own atom sizes,
and the structure each one states."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest

from accelsched.hardware import load_accelerator
from accelsched.heuristics.atomic_cnnp import cnnp_configs, cnnp_schedule
from accelsched.heuristics.atomic_ilpipe import (
    IlPipeParams,
    first_tile_bytes,
    ilpipe_plan,
    ilpipe_schedule,
    segment_hbm_bytes,
    solve_ilpipe,
)
from accelsched.heuristics.atomic_ls import ls_schedule
from accelsched.models.builder import NetBuilder
from accelsched.models.registry import load_workload
from accelsched.models.workload import Workload
from accelsched.problems.atomic import PROBLEM, AtomDag, AtomicInstance, RoundSchedule, make_instance, serpentine
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions, Status
from tests.problems.atomic.helpers import with_buffer

KC = load_accelerator("atomic-8x8-kc")
OPTIONS = SolveOptions(time_limit_s=60)


def instance(batch: int = 1) -> AtomicInstance:
    return make_instance(load_workload("random:5:2", batch=batch), KC, {"engines": "8"})


@pytest.mark.parametrize("method", ["ls", "cnn-p", "il-pipe"])
@pytest.mark.parametrize("batch", [1, 4])
def test_baselines_are_valid_and_bring_their_own_atom_sizes(method: str, batch: int) -> None:
    inst = instance(batch)
    result = run_method(PROBLEM, inst, get_method("atomic", method), OPTIONS)  # checked, objective == evaluator
    assert result.status is Status.FEASIBLE and result.solution is not None and result.cost is not None
    assert result.solution.sizes is not None and result.solution.engines is not None
    assert result.objective == result.cost.latency_cycles


def layers_of(dag: AtomDag, members: tuple[int, ...]) -> set[str]:
    return {dag.atoms[a].layer for a in members}


def test_layer_sequential_runs_one_layer_at_a_time_and_loads_each_weight_block_once_per_engine() -> None:
    # on 2 engines a layer's blocks fill the engines, so the samples follow one another on them and share weights
    inst = make_instance(load_workload("random:5:2", batch=4), KC, {"engines": "2"})
    result = run_method(PROBLEM, inst, get_method("atomic", "ls"), OPTIONS)
    assert result.solution is not None and result.solution.engines is not None
    dag = inst.dag_for(result.solution)
    assert all(len(layers_of(dag, r)) == 1 for r in result.solution.rounds)
    runs: dict[int, list[tuple[str, tuple[int, int], tuple[int, int]]]] = {}
    for members in result.solution.rounds:
        for a in members:
            keys = runs.setdefault(result.solution.engines[a], [])
            if not keys or keys[-1] != dag.atoms[a].weight_key:
                keys.append(dag.atoms[a].weight_key)
    # batch-enhanced: an engine's blocks change only between blocks, never back to one it had (one load each)
    assert all(len(keys) == len(set(keys)) for keys in runs.values())
    assert sum(len(keys) for keys in runs.values()) < sum(1 for a in dag.atoms if a.weight_bytes)


def test_cnn_partition_pipelines_disjoint_clusters_over_the_batch() -> None:
    inst = instance(8)
    order = serpentine(inst)
    for config in cnnp_configs(inst):
        schedule = cnnp_schedule(inst, config)
        dag = inst.dag_for(schedule)
        assert schedule.engines is not None and sum(config.engines) <= inst.n_engines
        assert len(schedule.rounds) == math.ceil(8 / config.mini_batch) + len(config.segments) - 1
        start = 0
        for segment, count in zip(config.segments, config.engines, strict=True):
            names = {dag.atoms[a].layer for a in range(len(dag.atoms))} & {list(inst.workload)[i].name  # type: ignore[arg-type]
                                                                              for i in segment}  # fmt: skip
            used = {schedule.engines[a] for a in range(len(dag.atoms)) if dag.atoms[a].layer in names}
            assert used <= set(order[start : start + count])  # the cluster: a consecutive run of the serpentine
            start += count


def test_inter_layer_pipelining_ticks_one_atom_per_engine_with_producers_in_earlier_ticks() -> None:
    inst = instance(2)
    plan = ilpipe_plan(inst, 4)
    schedule = ilpipe_schedule(inst, plan)
    dag = inst.dag_for(schedule)
    assert schedule.engines is not None
    where = schedule.round_of(len(dag.atoms))
    for members in schedule.rounds:
        assert len({schedule.engines[a] for a in members}) == len(members)
    assert all(where[a] < where[b] for a, b, _ in dag.edges)
    for segment in plan.segments:  # the layers of a segment run on disjoint regions
        homes = [{schedule.engines[a] for a in range(len(dag.atoms))
                  if dag.atoms[a].layer == list(inst.workload)[i].name} for i in segment]  # type: ignore[arg-type]  # fmt: skip
        assert all(not (x & y) for x, y in itertools.combinations(homes, 2))


def test_baselines_refuse_an_abstract_instance_with_a_reason() -> None:
    abstract = AtomicInstance(AtomDag.random(5, 0), 2)
    for method in ("ls", "cnn-p", "il-pipe"):
        result = run_method(PROBLEM, abstract, get_method("atomic", method), OPTIONS)
        assert result.status is Status.ERROR and "needs a workload" in result.stats.native_status
    assert RoundSchedule((), sizes=None).sizes is None


def test_every_method_reports_a_buffer_its_atoms_cannot_fit_as_infeasible() -> None:
    b = NetBuilder("small", 32, 4, 4)
    x = b.conv(b.input, 32, 3, pad=1, name="a")
    b.conv(x, 32, 3, pad=1, name="b")
    # 2 KB hold no atom of these layers (the baselines' sizes fall back to the least working set); the round methods
    # schedule one whole-layer atom per layer
    inst = make_instance(b.build(), with_buffer(KC, 2048), {"engines": "4", "atom": "4,4,32,32"})
    for method in ("cpsat-rounds", "cpsat-jobshop", "dp", "ls", "cnn-p", "il-pipe"):
        result = run_method(PROBLEM, inst, get_method("atomic", method), SolveOptions(time_limit_s=60))
        assert result.status is Status.INFEASIBLE and "the round's own atoms do not fit" in result.stats.native_status


def test_the_pipelining_parameters_choose_the_tilings_tried() -> None:
    result = solve_ilpipe(instance(2), OPTIONS, params=IlPipeParams(tiles=(4,)))
    assert result.status is Status.FEASIBLE and "4 row tiles" in result.stats.native_status
    assert "1 of 1 tilings priced" in result.stats.native_status
    with pytest.raises(ValueError, match="field tiles"):
        IlPipeParams(tiles=())


def feature_map_atoms(dag: AtomDag) -> set[int]:
    """Atoms whose output another layer reads."""
    return {a for a, b, _ in dag.edges if dag.atoms[a].layer != dag.atoms[b].layer}


def test_cnn_partition_at_batch_one_is_the_layer_sequential_mapping_with_its_feature_maps_off_chip() -> None:
    inst = instance(1)
    result = run_method(PROBLEM, inst, get_method("atomic", "cnn-p"), OPTIONS)
    assert result.solution is not None and "batch 1" in result.stats.native_status
    ls = ls_schedule(inst)
    assert (result.solution.rounds, result.solution.engines, result.solution.sizes) == (ls.rounds, ls.engines, ls.sizes)
    assert feature_map_atoms(inst.dag_for(result.solution)) <= result.solution.write_back


def test_cnn_partition_clusters_read_and_write_their_feature_maps_off_chip() -> None:
    inst = instance(8)
    for config in cnnp_configs(inst):
        schedule = cnnp_schedule(inst, config)
        dag = inst.dag_for(schedule)
        assert schedule.write_back == feature_map_atoms(dag)  # partial sums stay on their engine


def stack() -> Workload:
    """Six 1x1 convolutions of 16 channels on 32x32: 256 B of weights and 16 KB of outputs each."""
    b = NetBuilder("stack", 16, 32, 32)
    x = b.input
    for i in range(6):
        x = b.conv(x, 16, 1, name=f"c{i}")
    return b.build()


def test_a_segment_pays_hbm_for_its_weights_and_what_crosses_its_boundary() -> None:
    w = stack()
    weights, fmap = w["c0"].weight_bytes, w["c0"].output_bytes
    assert segment_hbm_bytes(w, 0, 1) == weights + 2 * fmap  # the network input in, its output out
    assert segment_hbm_bytes(w, 2, 4) == 2 * weights + 2 * fmap
    assert segment_hbm_bytes(w, 0, 6) == 6 * weights + 2 * fmap


def test_a_segment_pays_its_first_tiles_loads_before_it_computes() -> None:
    """The first tile of a segment cannot compute before its share of the input is in its buffer (what the previous
    segment writes back is in HBM only at the segment's start), nor, in the network's first segment, before its
    weights are: those bytes are exposed; a later segment's weights are prefetched."""
    w = stack()
    weights, fmap = w["c0"].weight_bytes, w["c0"].output_bytes
    assert first_tile_bytes(w, 0, 4) == weights + math.ceil(w["c0"].activation_input_bytes / 4)
    assert first_tile_bytes(w, 2, 4) == fmap // 4
    assert first_tile_bytes(w, 2, 1) == fmap


@pytest.mark.parametrize(("hbm", "segments"), [(256, [1] * 6), (16, [6])])
def test_inter_layer_pipelining_cascades_layers_when_their_feature_maps_would_cost_more_off_chip(
    hbm: int, segments: list[int]
) -> None:
    """At 256 B/cycle the feature maps' HBM round trips hide under the computation and the pipeline's fill and
    drain would cost more: one layer per segment; at 16 B/cycle the segments' HBM traffic dominates and the six
    layers cascade on proportional regions. What crosses a segment boundary is written back."""
    acc = KC.replace(offchip=dataclasses.replace(KC.offchip, bandwidth_bytes_per_cycle=hbm))
    inst = make_instance(stack(), acc, {"engines": "8"})
    plan = ilpipe_plan(inst, 4)
    assert [len(s) for s in plan.segments] == segments
    schedule = ilpipe_schedule(inst, plan)
    dag = inst.dag_for(schedule)
    crossing = feature_map_atoms(dag) if len(segments) > 1 else set()
    assert schedule.write_back == crossing
    result = run_method(PROBLEM, inst, get_method("atomic", "il-pipe"), OPTIONS)
    assert result.status is Status.FEASIBLE and f"{len(segments)} segments" in result.stats.native_status
