"""The RA-tree analyzer: serpentine placement, tile allocation, NPTs and pipeline stages."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.hardware.cost.ra_tree import (
    RATreeCost,
    TCutSegments,
    analyze,
    balance_tiles,
    evaluate,
    segment_cost,
    serpentine_order,
    timeline,
)
from accelsched.hardware.spec import Mesh
from accelsched.models.registry import load_workload
from accelsched.models.workload import Workload
from accelsched.problems.ra_tree import (
    Cut,
    CutKind,
    Leaf,
    RATreeInstance,
    check,
    parse_tree,
    sequential_tree,
    tile_buffer_bytes,
)
from tests.problems.test_ra_tree import TEXT, diamond


def mesh(rows: int, cols: int) -> Mesh:
    return Mesh(rows, cols, hop_energy_pj_per_byte=1.0, link_bandwidth_bytes_per_cycle=1, dram_nodes=((0, 0),))


def test_serpentine_order_on_4x4_by_hand() -> None:
    #  0  1 |  2  3      stripe 0 (columns 0-1) top-down, stripe 1 (columns 2-3) bottom-up,
    #  4  5 |  6  7      rows alternating direction inside a stripe
    #  8  9 | 10 11
    # 12 13 | 14 15
    assert serpentine_order(mesh(4, 4)) == (0, 1, 5, 4, 8, 9, 13, 12, 14, 15, 11, 10, 6, 7, 3, 2)
    assert serpentine_order(mesh(4, 4), 4) == (0, 1, 2, 3, 7, 6, 5, 4, 8, 9, 10, 11, 15, 14, 13, 12)


@pytest.mark.parametrize(("rows", "cols", "stripe"), [(4, 4, 1), (4, 4, 3), (12, 12, None), (3, 5, 2), (1, 6, 6)])
def test_serpentine_order_is_a_permutation_walking_between_neighbours(rows: int, cols: int, stripe: int | None) -> None:
    m = mesh(rows, cols)
    order = serpentine_order(m, stripe)
    assert sorted(order) == list(range(rows * cols))
    width = max(1, cols // 2) if stripe is None else stripe
    for a, b in itertools.pairwise(order):
        if a % cols // width == b % cols // width:  # same stripe
            (ra, ca), (rb, cb) = divmod(a, cols), divmod(b, cols)
            assert abs(ra - rb) + abs(ca - cb) == 1, (a, b)


def test_serpentine_order_rejects_a_bad_stripe() -> None:
    with pytest.raises(ValueError, match=r"stripe_cols must be an integer in 1\.\.4, got 5"):
        serpentine_order(mesh(4, 4), 5)


def brute_force(npt: list[float], tiles: int, minimum: list[int]) -> float:
    best = float("inf")
    for counts in itertools.product(*(range(m, tiles + 1) for m in minimum)):
        if sum(counts) <= tiles:
            best = min(best, max(t / f for t, f in zip(npt, counts, strict=True)))
    return best


@pytest.mark.parametrize("seed", range(150))
def test_allocation_reaches_the_least_bottleneck(seed: int) -> None:
    rng = random.Random(seed)
    k = rng.randint(1, 4)
    minimum = [rng.choice([1, 1, 1, 2, 3]) for _ in range(k)]
    tiles = rng.randint(sum(minimum), sum(minimum) + 6)
    npt = [rng.uniform(0.1, 10.0) for _ in range(k)]
    counts = balance_tiles(npt, tiles, minimum)
    assert sum(counts) == tiles and all(f >= m for f, m in zip(counts, minimum, strict=True))
    assert max(t / f for t, f in zip(npt, counts, strict=True)) == pytest.approx(brute_force(npt, tiles, minimum))


def test_allocation_by_hand_and_errors() -> None:
    assert balance_tiles([3.0, 1.0], 4) == (3, 1)
    assert balance_tiles([1.0, 1.0, 1.0], 4) in {(2, 1, 1), (1, 2, 1), (1, 1, 2)}
    assert balance_tiles([10.0, 1.0], 4, [1, 3]) == (1, 3)
    with pytest.raises(ValueError, match="need 5 tiles at least, there are 4"):
        balance_tiles([1.0, 1.0], 4, [2, 3])
    with pytest.raises(ValueError, match="NPTs must be positive"):
        balance_tiles([1.0, 0.0], 4)


def test_diamond_tree_by_hand() -> None:
    workload = diamond(8)
    acc = load_accelerator("set-edge-4x4")
    instance = RATreeInstance(workload, acc)
    tree = parse_tree(TEXT)
    check(instance, tree)
    info = analyze(instance, tree)
    single = workload.with_batch(1)
    npt = {layer.name: layer_cost(layer, acc.cores[0], acc.offchip).latency_cycles for layer in single}
    s_cut = info.nodes["root/1"]
    assert s_cut.stages == (0, 0, 1)  # b and c read a (outside the cut), d reads both
    assert s_cut.npt_cycles == pytest.approx((npt["b"] + npt["c"] + npt["d"]) * (4 + 1) / 4)
    assert info.root.npt_cycles == pytest.approx(npt["a"] + s_cut.npt_cycles)
    assert info.root.tiles == serpentine_order(acc.interconnect) == s_cut.tiles
    assert info.leaf("a").tiles == info.root.tiles
    groups = [info.nodes[f"root/1/{k}"].tiles for k in range(3)]
    assert sum(groups, ()) == s_cut.tiles  # contiguous ranges, in order, covering the cut's tiles
    counts = balance_tiles([npt["b"], npt["c"], npt["d"]], 16)
    assert tuple(map(len, groups)) == counts
    assert info.leaf("d").layers == ("d",) and s_cut.layers == ("b", "c", "d") and s_cut.n_stages == 1


def test_a_chain_in_one_s_cut_is_a_pipeline_of_one_stage_per_layer() -> None:
    workload = load_workload("set-resnet50")
    names = workload.names[:4]  # conv1, pool1, conv_2_0_a, conv_2_0_b: a chain
    rest = "".join(f"\t{name} 1\n" for name in workload.names[4:])
    text = "T 1/1\n\tS 1/1\n" + "".join(f"\t\t{name} 1\n" for name in names) + rest
    instance = RATreeInstance(workload, load_accelerator("set-edge-4x4"))
    tree = parse_tree(text)
    check(instance, tree)
    assert analyze(instance, tree).nodes["root/0"].stages == (0, 1, 2, 3)


def test_sequential_tree_uses_every_tile_for_every_layer() -> None:
    workload = load_workload("set-resnet50", batch=2)
    instance = RATreeInstance(workload, load_accelerator("set-cloud-12x12"))
    info = analyze(instance, sequential_tree(workload))
    assert len(info.root.tiles) == 144
    assert all(len(info.leaf(name).tiles) == 144 for name in workload.names)
    assert info.root.npt_cycles == pytest.approx(sum(info.leaf(name).npt_cycles for name in workload.names))


# ---------------------------------------------------------------- evaluator
def edge_instance(workload: Workload) -> RATreeInstance:
    return RATreeInstance(workload, load_accelerator("set-edge-4x4"), 2, 1)


def test_routes_follow_sets_rules() -> None:
    workload = diamond(8)
    nested = parse_tree("T 8/1\n\tT 8/1\n\t\ta 8\n\t\tb 8\n\t\tc 8\n\t\td 8\n")
    routes = evaluate(edge_instance(workload), nested).routes
    # adjacent children of a T-Cut: over the mesh; a child skipped: through DRAM
    assert routes == {("a", "b"): "noc", ("a", "c"): "dram", ("b", "d"): "dram", ("c", "d"): "noc"}
    piped = evaluate(edge_instance(workload), parse_tree(TEXT)).routes
    # different children of the root: DRAM; consecutive pipeline stages: mesh
    assert piped == {("a", "b"): "dram", ("a", "c"): "dram", ("b", "d"): "noc", ("c", "d"): "noc"}


def test_layer_sequential_dram_traffic_by_hand() -> None:
    workload = diamond(8)
    cost = evaluate(edge_instance(workload), sequential_tree(workload))
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
    sequential = evaluate(edge_instance(workload), sequential_tree(workload)).report
    piped = evaluate(edge_instance(workload), parse_tree(TEXT)).report
    saved = 2 * 8 * (single["b"].output_bytes + single["c"].output_bytes)  # written, then read back
    assert sequential.dram_bytes - piped.dram_bytes == pytest.approx(saved)
    assert piped.noc_byte_hops > 0 and piped.macs == sequential.macs


def test_segment_time_is_bounded_by_dram_and_the_busiest_link() -> None:
    workload = load_workload("set-resnet50", batch=2)
    instance = edge_instance(workload)
    cost = evaluate(instance, sequential_tree(workload))
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
    cost = evaluate(edge_instance(workload), tree)
    assert {run.runs for run in cost.leaves.values()} == {4}
    assert cost.segments[0].tree_cycles == pytest.approx(4 * sum(r.latency_cycles for r in cost.leaves.values()))
    assert cost.report.macs == workload.macs


def test_segments_cost_the_same_alone_as_in_their_tree() -> None:
    workload = diamond(8)
    instance = edge_instance(workload)
    tree = parse_tree(TEXT)
    whole = evaluate(instance, tree)
    for segment, child in zip(whole.segments, tree.root.children, strict=True):
        alone = segment_cost(instance, child)
        assert alone.latency_cycles == pytest.approx(segment.latency_cycles)
        assert alone.dram_bytes == pytest.approx(segment.dram_bytes)
        assert alone.energy_breakdown_pj == pytest.approx(segment.energy_breakdown_pj)
    with pytest.raises(ValueError, match="a segment processes the total batch 8, got 2"):
        segment_cost(instance, tree.root.children[1].children[0])  # type: ignore[union-attr]


def test_root_sub_batches_repeat_every_segment_and_its_weights() -> None:
    workload = diamond(8)
    once = evaluate(edge_instance(workload), parse_tree("T 8/1\n\ta 8\n\tb 8\n\tc 8\n\td 8\n"))
    twice = evaluate(edge_instance(workload), parse_tree("T 8/2\n\ta 4\n\tb 4\n\tc 4\n\td 4\n"))
    weights = sum(layer.weight_bytes for layer in workload.with_batch(1))
    assert twice.report.dram_bytes - once.report.dram_bytes == pytest.approx(weights)
    for a, b in zip(once.segments, twice.segments, strict=True):
        assert b.tree_cycles == pytest.approx(2 * _half_batch_run(twice, a.path))


def _half_batch_run(cost: RATreeCost, path: str) -> float:
    """One run of the segment's single leaf at the half batch."""
    layer = cost.analysis.nodes[path].layers[0]
    return cost.leaves[layer].latency_cycles


def test_timeline_has_one_box_per_run_inside_the_schedule() -> None:
    workload = diamond(8)
    instance = edge_instance(workload)
    tree = parse_tree(TEXT)  # a alone, then b, c, d pipelined over 4 sub-batches
    cost = evaluate(instance, tree)
    boxes = timeline(cost, tree)
    assert len(boxes) == sum(run.runs for run in cost.leaves.values()) == 1 + 3 * 4
    assert all(b.start_cycles >= 0 and b.start_cycles + b.duration_cycles <= cost.report.latency_cycles + 1e-6
               for b in boxes)  # fmt: skip
    slot = max(cost.leaves[x].latency_cycles for x in "bcd")
    segment_start = cost.segments[0].latency_cycles
    d_starts = sorted(b.start_cycles for b in boxes if b.layer == "d")
    assert d_starts == pytest.approx([segment_start + (k + 1) * slot for k in range(4)])  # stage 1 of the pipeline
    tiles = {b.layer: (b.first_tile, b.n_tiles) for b in boxes}
    assert tiles["a"] == (0, 16) and sum(tiles[x][1] for x in "bcd") == 16


def test_s_t_graph_is_written(tmp_path: Path) -> None:
    from accelsched.bench.ra_tree import main

    tree = tmp_path / "tree.txt"
    tree.write_text("T 2/1\n\tS 2/2\n" + "".join(f"\t\t{n} 1\n" for n in ("a", "b", "c", "d")))
    out = tmp_path / "st.png"
    assert main(["plot", "--tree", str(tree), "--workload", str(_save(tmp_path)), "--batch", "2",
                 "--out", str(out)]) == 0  # fmt: skip
    assert out.read_bytes()[:4] == b"\x89PNG"


def _save(tmp_path: Path) -> Path:
    path = tmp_path / "diamond.json"
    diamond(1).save_json(path)
    return path


def test_leaf_splits_prefer_parts_that_fit_a_tile_buffer() -> None:
    """Transformer FFN weights (2.4 MB) fit 16 tiles of 1 MB only when split by output channel."""
    workload = load_workload("transformer_base")
    instance = edge_instance(workload)
    cost = evaluate(instance, sequential_tree(workload))
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
