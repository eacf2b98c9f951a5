"""The RA-tree evaluator: DRAM and mesh traffic, segment times, leaf splits, incremental T-Cut segments."""

from __future__ import annotations

import itertools

import pytest

from accelsched.hardware import load_accelerator
from accelsched.hardware.spec import Mesh
from accelsched.models.registry import load_workload
from accelsched.problems.ra_tree import (
    Cut,
    CutKind,
    Leaf,
    RATreeCost,
    RATreeInstance,
    TCutSegments,
    check,
    evaluate_tree,
    parse_tree,
    segment_cost,
    sequential_tree,
    tile_buffer_bytes,
)
from tests.problems.ra_tree.instances import TEXT, diamond, edge_instance


def test_layer_sequential_dram_traffic_by_hand() -> None:
    workload = diamond(8)
    cost = evaluate_tree(edge_instance(workload), sequential_tree(workload))
    single = {layer.name: layer for layer in workload.with_batch(1)}
    weights = sum(layer.weight_bytes for layer in single.values())
    reads = single["a"].input_bytes + sum(single[p].output_bytes for p, _ in workload.edges)
    writes = sum(layer.output_bytes for layer in single.values())
    assert cost.report.dram_bytes == pytest.approx(weights + 8 * (reads + writes))
    assert cost.report.macs == workload.macs
    assert len(cost.segments) == 4 and all(set(r.values()) == {"dram"} for r in [cost.routes])


def test_pipelining_keeps_the_pipelined_tensors_off_dram() -> None:
    workload = diamond(8)
    single = {layer.name: layer for layer in workload.with_batch(1)}
    sequential = evaluate_tree(edge_instance(workload), sequential_tree(workload)).report
    piped = evaluate_tree(edge_instance(workload), parse_tree(TEXT)).report
    saved = 2 * 8 * (single["b"].output_bytes + single["c"].output_bytes)  # written, then read back
    assert sequential.dram_bytes - piped.dram_bytes == pytest.approx(saved)
    assert piped.noc_byte_hops > 0 and piped.macs == sequential.macs


def test_segment_time_is_bounded_by_dram_and_the_busiest_link() -> None:
    workload = load_workload("set-resnet50", batch=2)
    instance = edge_instance(workload)
    cost = evaluate_tree(instance, sequential_tree(workload))
    acc = instance.accelerator
    assert isinstance(acc.interconnect, Mesh)
    for segment in cost.segments:
        assert segment.latency_cycles >= segment.tree_cycles
        assert segment.latency_cycles >= segment.dram_bytes / acc.offchip.bandwidth_bytes_per_cycle - 1e-6
        assert segment.latency_cycles >= segment.busiest_link_bytes / acc.interconnect.link_bandwidth_bytes_per_cycle
    assert cost.report.latency_cycles == pytest.approx(sum(s.latency_cycles for s in cost.segments))
    total = sum(sum(s.energy_breakdown_pj.values()) for s in cost.segments)
    assert cost.report.energy_pj == pytest.approx(total)


def test_a_batch_cut_runs_every_leaf_batch_over_sub_batch_times() -> None:
    workload = diamond(8)
    tree = parse_tree("T 8/1\n\tT 8/4\n\t\ta 2\n\t\tb 2\n\t\tc 2\n\t\td 2\n")
    cost = evaluate_tree(edge_instance(workload), tree)
    assert {run.runs for run in cost.leaves.values()} == {4}
    assert cost.segments[0].tree_cycles == pytest.approx(4 * sum(r.latency_cycles for r in cost.leaves.values()))
    assert cost.report.macs == workload.macs


def test_segments_cost_the_same_alone_as_in_their_tree() -> None:
    workload = diamond(8)
    instance = edge_instance(workload)
    tree = parse_tree(TEXT)
    whole = evaluate_tree(instance, tree)
    for segment, child in zip(whole.segments, tree.root.children, strict=True):
        alone = segment_cost(instance, child)
        assert alone.latency_cycles == pytest.approx(segment.latency_cycles)
        assert alone.dram_bytes == pytest.approx(segment.dram_bytes)
        assert alone.energy_breakdown_pj == pytest.approx(segment.energy_breakdown_pj)
    with pytest.raises(ValueError, match="a segment processes the total batch 8, got 2"):
        segment_cost(instance, tree.root.children[1].children[0])  # type: ignore[union-attr]


def test_root_sub_batches_repeat_every_segment_and_its_weights() -> None:
    workload = diamond(8)
    once = evaluate_tree(edge_instance(workload), parse_tree("T 8/1\n\ta 8\n\tb 8\n\tc 8\n\td 8\n"))
    twice = evaluate_tree(edge_instance(workload), parse_tree("T 8/2\n\ta 4\n\tb 4\n\tc 4\n\td 4\n"))
    weights = sum(layer.weight_bytes for layer in workload.with_batch(1))
    assert twice.report.dram_bytes - once.report.dram_bytes == pytest.approx(weights)
    for a, b in zip(once.segments, twice.segments, strict=True):
        assert b.tree_cycles == pytest.approx(2 * _half_batch_run(twice, a.path))


def _half_batch_run(cost: RATreeCost, path: str) -> float:
    """One run of the segment's single leaf at the half batch."""
    layer = cost.analysis.nodes[path].layers[0]
    return cost.leaves[layer].latency_cycles


def test_leaf_splits_prefer_parts_that_fit_a_tile_buffer() -> None:
    """Transformer FFN weights (2.4 MB) fit 16 tiles of 1 MB only when split by output channel."""
    workload = load_workload("transformer_base")
    instance = edge_instance(workload)
    cost = evaluate_tree(instance, sequential_tree(workload))
    big = max(workload, key=lambda layer: layer.weight_bytes)
    assert big.weight_bytes > tile_buffer_bytes(instance.accelerator)
    assert cost.leaves[big.name].split_dim in ("K", "G")
    check(instance, sequential_tree(workload))


@pytest.mark.parametrize(
    ("workload", "hardware", "batch"),
    [("googlenet", "set-edge-4x4", 1), ("set-resnet50", "set-cloud-12x12", 4), ("random:9:3", "set-edge-4x4", 2)],
)
def test_incremental_t_cut_segments_cost_what_the_evaluator_says(workload: str, hardware: str, batch: int) -> None:
    instance = RATreeInstance(load_workload(workload, batch=batch), load_accelerator(hardware), 2, 1)
    names = instance.workload.names
    for subbatches in (s for s in range(1, batch + 1) if batch % s == 0):
        priced = TCutSegments(instance, subbatches)
        for start in sorted({0, 3, len(names) - 4}):
            ends = []
            for end, cost in itertools.islice(priced.grow(start), 8):
                leaves = tuple(Leaf(name, batch // subbatches) for name in names[start:end])
                expected = segment_cost(instance, Cut(CutKind.T, batch, subbatches, leaves))
                for field in ("tree_cycles", "dram_bytes", "busiest_link_bytes", "latency_cycles", "noc_byte_hops"):
                    assert getattr(cost, field) == pytest.approx(getattr(expected, field), rel=1e-12), field
                assert cost.energy_breakdown_pj == pytest.approx(expected.energy_breakdown_pj, rel=1e-12)
                assert cost.tile_buffer_bytes == pytest.approx(expected.tile_buffer_bytes, rel=1e-12)
                ends.append(end)
            assert ends == list(range(start + 2, min(start + 10, len(names) + 1)))


def test_incremental_t_cut_segments_need_a_divisor_of_the_batch() -> None:
    instance = RATreeInstance(load_workload("random:4:1", batch=4), load_accelerator("set-edge-4x4"), 2, 1)
    with pytest.raises(ValueError, match="3 does not divide the batch 4"):
        TCutSegments(instance, 3)
