"""The validity rules of an RA tree, each named with its node."""

from __future__ import annotations

from dataclasses import replace

import pytest

from accelsched.errors import InfeasibleSolution
from accelsched.hardware import load_accelerator
from accelsched.hardware.spec import Mesh
from accelsched.models.registry import load_workload
from accelsched.problems.ra_tree import (
    Cut,
    CutKind,
    Leaf,
    RATree,
    RATreeInstance,
    check,
    evaluate_tree,
    min_tiles,
    parse_tree,
    sequential_tree,
    set_ls_tree,
    tile_buffer_bytes,
)
from tests.problems.ra_tree.instances import diamond, instance


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("S 8/1\n\ta 8\n\tb 8\n\tc 8\n\td 8\n", "the root must be a T-Cut, got an S-Cut (S 8/1)"),
        ("T 4/1\n\ta 4\n\tb 4\n\tc 4\n\td 4\n", "the root must process the total batch 8, got 4 (T 4/1)"),
        ("T 8/3\n\ta 2\n\tb 2\n\tc 2\n\td 2\n", "root (T 8/3): batch 8 is not a multiple of its sub-batch number 3"),
        ("T 8/1\n\ta 8\n\tS 8/4\n\t\tb 2\n\t\tc 4\n\t\td 2\n", "root/1/1 (c 4): batch 4 differs from its parent's"),
        ("T 8/1\n\ta 8\n\tb 8\n\tc 8\n\te 8\n", "leaf 3 names unknown layer 'e' (workload 'diamond')"),
        ("T 8/1\n\ta 8\n\tb 8\n\tc 8\n\tb 8\n", "layer 'b' has two leaves (1 and 3)"),
        ("T 8/1\n\ta 8\n\tb 8\n\tc 8\n", "layer 'd' has no leaf (1 layers missing)"),
        ("T 8/1\n\ta 8\n\td 8\n\tc 8\n\tb 8\n", "leaves out of topological order: 'd' (leaf 1) comes before its"),
    ],
)
def test_each_rule_is_named(text: str, message: str) -> None:
    with pytest.raises(InfeasibleSolution) as info:
        check(instance(), parse_tree(text))
    assert str(info.value).startswith(message)


def test_s_cut_children_need_disjoint_tiles() -> None:
    workload = diamond(1)
    acc = load_accelerator("set-edge-4x4")
    wide = RATree(Cut(CutKind.T, 1, 1, (Cut(CutKind.S, 1, 1, tuple(Leaf(n, 1) for n in workload.names)),)))
    assert min_tiles(wide.root) == 4
    check(RATreeInstance(workload, acc), wide)
    assert isinstance(acc.interconnect, Mesh)
    mesh = replace(acc.interconnect, rows=1, cols=2, dram_nodes=((0, 0),))
    tiny = replace(acc, name="mesh-1x2", cores=acc.cores[:2], interconnect=mesh)
    with pytest.raises(InfeasibleSolution, match=r"root/0 \(S 1/1\): its children need 4 disjoint tiles"):
        check(RATreeInstance(workload, tiny), wide)


def test_one_sub_batch_segment_streams_its_weights_and_more_sub_batches_keep_them() -> None:
    """SET's ``wgt_shift``: with one sub-batch a T-Cut segment holds two layers' weights at a time, so the
    whole ResNet-50 on one segment is feasible (it was rejected, 2.9 MB per tile, when every weight stayed);
    with two sub-batches the weights are reused and must all stay, which overflows."""
    acc = load_accelerator("set-edge-4x4")
    streamed = load_workload("set-resnet50")
    one_segment = parse_tree("T 1/1\n\tT 1/1\n" + "".join(f"\t\t{name} 1\n" for name in streamed.names))
    check(RATreeInstance(streamed, acc), one_segment)
    reused = load_workload("set-resnet50", batch=2)
    two = parse_tree("T 2/1\n\tT 2/2\n" + "".join(f"\t\t{name} 1\n" for name in reused.names))
    with pytest.raises(InfeasibleSolution, match=r"^root/0: tile \d+ needs \d+ B \(SET's buffer rules"):
        check(RATreeInstance(reused, acc), two)
    assert tile_buffer_bytes(acc) == 1024 * 1024


def test_inputs_waiting_for_every_sub_batch_of_a_t_cut_are_counted() -> None:
    """A T-Cut below an S-Cut receives the inputs of all its sub-batches (SET: ``ifm_usage.multiple``):
    64 samples of conv1's and pool1's inputs on 15 tiles overflow, which a per-layer working set missed."""
    workload = load_workload("set-resnet50", batch=64)
    rest = "".join(f"\t{name} 64\n" for name in workload.names[3:])
    text = "T 64/1\n\tS 64/1\n\t\tT 64/64\n\t\t\tconv1 1\n\t\t\tpool1 1\n\t\tconv_2_0_a 64\n" + rest
    with pytest.raises(InfeasibleSolution, match=r"^root/0: tile \d+ needs \d+ B"):
        check(RATreeInstance(workload, load_accelerator("set-edge-4x4")), parse_tree(text))


def test_sets_ls_and_a_set_like_tree_of_resnet50_pass_and_are_priced() -> None:
    """SET's program prints LS and SET trees with ``conv_2_0_a``-style names that it accepts and scores:
    its LS (leaf batch halved until valid) and a SET-like tree (residual blocks as S-Cut segments, the
    last stage one T-Cut segment streaming 15 MB of weights through 1 MB tiles) must pass and be priced."""
    acc = load_accelerator("set-edge-4x4")
    workload = load_workload("set-resnet50")
    instance = RATreeInstance(workload, acc, 2, 1)
    ls = set_ls_tree(instance)
    assert ls == sequential_tree(workload)
    names = workload.names
    blocks: list[list[str]] = [[names[0], names[1]]]
    for name in names[2:]:
        stage_block = name.split("_")[1:3] if name.startswith("conv_") else [name]
        previous = blocks[-1][-1].split("_")[1:3] if blocks[-1][-1].startswith("conv_") else None
        if stage_block == previous or (name.endswith("_br") and previous and previous[0] == stage_block[0]):
            blocks[-1].append(name)
        else:
            blocks.append([name])
    last_stage = [n for n in names if n.startswith("conv_5_") or n in ("pool5", "fc")]
    lines = ["T 1/1"]
    for block in blocks:
        if block[0] in last_stage:
            continue
        lines += ["\tS 1/1", *(f"\t\t{n} 1" for n in block)] if len(block) > 1 else [f"\t{block[0]} 1"]
    lines += ["\tT 1/1", *(f"\t\t{n} 1" for n in last_stage)]
    set_like = parse_tree("\n".join(lines) + "\n")
    check(instance, set_like)
    cost = evaluate_tree(instance, set_like)
    streamed = cost.segments[-1]
    weights = sum(workload[n].weight_bytes for n in last_stage)
    assert weights > 10 * tile_buffer_bytes(acc)
    assert streamed.dram_bytes >= weights  # every weight read once
    assert max(streamed.tile_buffer_bytes.values()) <= tile_buffer_bytes(acc)
    assert cost.report.energy_pj < evaluate_tree(instance, ls).report.energy_pj


def test_sets_ls_halves_the_leaf_batch_until_it_fits_and_reads_weights_per_sub_batch() -> None:
    acc = load_accelerator("set-edge-4x4")
    workload = load_workload("set-resnet50", batch=64)
    instance = RATreeInstance(workload, acc, 2, 1)
    ls = set_ls_tree(instance)
    assert (ls.root.subbatches, ls.leaves()[0].batch) == (8, 8)
    with pytest.raises(InfeasibleSolution, match=r"tile \d+ needs"):
        check(instance, sequential_tree(workload))
    cost = evaluate_tree(instance, ls)
    weights = sum(layer.weight_bytes for layer in workload)
    written = sum(layer.output_bytes for layer in workload)
    read = sum(workload[p].output_bytes for p, _ in workload.edges)
    read += sum(layer.input_bytes for layer in workload if not list(workload.predecessors(layer.name)))
    assert cost.report.dram_bytes == pytest.approx(8 * weights + written + read)
