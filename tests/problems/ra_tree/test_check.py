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
    min_tiles,
    parse_tree,
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


def test_a_tile_buffer_must_hold_its_weights_for_the_whole_segment() -> None:
    workload = load_workload("set-resnet50")
    one_segment = parse_tree("T 1/1\n\tT 1/1\n" + "".join(f"\t\t{name} 1\n" for name in workload.names))
    with pytest.raises(InfeasibleSolution, match=r"^root/0: tile \d+ needs \d+ B \(the weights of its layers"):
        check(RATreeInstance(workload, load_accelerator("set-edge-4x4")), one_segment)
    assert tile_buffer_bytes(load_accelerator("set-edge-4x4")) == 1024 * 1024
