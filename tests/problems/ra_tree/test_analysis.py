"""The RA-tree analysis: serpentine placement, tile allocation, NPTs and pipeline stages."""

from __future__ import annotations

import itertools
import random

import pytest

from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.hardware.spec import Mesh
from accelsched.models.registry import load_workload
from accelsched.problems.ra_tree import (
    RATreeInstance,
    analyze,
    balance_tiles,
    best_run,
    check,
    evaluate_tree,
    parse_tree,
    sequential_tree,
    serpentine_order,
)
from tests.problems.ra_tree.instances import TEXT, diamond, edge_instance


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
    npt = {layer.name: layer_cost(layer, acc.cores[0], acc.offchip).compute_cycles for layer in single}
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


def test_routes_follow_sets_rules() -> None:
    workload = diamond(8)
    nested = parse_tree("T 8/1\n\tT 8/1\n\t\ta 8\n\t\tb 8\n\t\tc 8\n\t\td 8\n")
    routes = evaluate_tree(edge_instance(workload), nested).routes
    # adjacent children of a T-Cut: over the mesh; a child skipped: through DRAM
    assert routes == {("a", "b"): "noc", ("a", "c"): "dram", ("b", "d"): "dram", ("c", "d"): "noc"}
    piped = evaluate_tree(edge_instance(workload), parse_tree(TEXT)).routes
    # different children of the root: DRAM; consecutive pipeline stages: mesh
    assert piped == {("a", "b"): "dram", ("a", "c"): "dram", ("b", "d"): "noc", ("c", "d"): "noc"}


def test_a_leaf_npt_is_the_time_the_evaluator_gives_its_run_on_one_tile() -> None:
    """SET's unit time is compute only; a roofline NPT (with DRAM time) made fc 62.6x its run's time."""
    workload = load_workload("set-resnet50")
    acc = load_accelerator("set-edge-4x4")
    info = analyze(RATreeInstance(workload, acc), sequential_tree(workload))
    core, offchip = acc.cores[0], acc.offchip
    for layer in workload.with_batch(1):
        one_tile = best_run(layer, (0,), 1, core, offchip)
        assert info.leaf(layer.name).npt_cycles == pytest.approx(one_tile.latency_cycles), layer.name
    fc = layer_cost(workload.with_batch(1)["fc"], core, offchip)
    assert info.leaf("fc").npt_cycles == fc.compute_cycles < fc.latency_cycles / 10
