"""The RA tree: its text and JSON forms, the fewest tiles of a node, the size of the space."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsched.hardware import load_accelerator
from accelsched.models.registry import load_workload
from accelsched.problems.ra_tree import RATreeInstance, check
from accelsched.problems.ra_tree.tree import (
    Cut,
    CutKind,
    Leaf,
    RANode,
    RATree,
    min_tiles,
    parse_tree,
    sequential_tree,
    tree_space_size,
)
from tests.problems.ra_tree.instances import TEXT, instance


def test_text_form_round_trips_and_reads_as_written() -> None:
    tree = parse_tree(TEXT)
    assert tree.to_text() == TEXT
    assert tree.root == Cut(
        CutKind.T, 8, 1, (Leaf("a", 8), Cut(CutKind.S, 8, 4, (Leaf("b", 2), Leaf("c", 2), Leaf("d", 2))))
    )
    assert [leaf.layer for leaf in tree.leaves()] == ["a", "b", "c", "d"]
    assert [path for path, _ in tree.walk()] == ["root", "root/0", "root/1", "root/1/0", "root/1/1", "root/1/2"]
    check(instance(), tree)


def test_spaces_and_comments_are_accepted() -> None:
    text = "# a comment\nT 8/1\n    a 8\n    S 8/4\n        b 2\n\n        c 2\n        d 2\n"
    assert parse_tree(text) == parse_tree(TEXT)


def test_a_layer_named_like_a_cut_is_a_leaf() -> None:
    tree = parse_tree("T 1/1\n\tS 1\n\tT 1\n")
    assert tree.leaves() == (Leaf("S", 1), Leaf("T", 1))


def test_json_form_round_trips() -> None:
    tree = parse_tree(TEXT)
    data = json.loads(json.dumps(tree.to_dict()))
    assert data["children"][1] == {
        "kind": "S",
        "batch": 8,
        "subbatches": 4,
        "children": [{"layer": "b", "batch": 2}, {"layer": "c", "batch": 2}, {"layer": "d", "batch": 2}],
    }
    assert RATree.from_dict(data) == tree


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "tree: no RA tree (the text is empty)"),
        ("a 8\n", "tree, line 1: the root must be a cut ('T b/n'), got a leaf"),
        ("T 8/1\n\ta 8\nT 8/1\n\tb 8\n", "tree, line 3: a second root"),
        ("T 8/1\n\t\ta 8\n", "tree, line 2: indented 2 levels, expected 1"),
        ("T 8/1\n\ta\n", "tree, line 2: expected 'S b/n', 'T b/n' or '<layer> b', got 'a'"),
        ("T 8/1\n\ta 8 extra\n", "expected 'S b/n', 'T b/n' or '<layer> b', got 'a 8 extra'"),
        ("T 8/1\n\tX 8/2\n\t\ta 4\n", "tree, line 2: a cut is 'S b/n' or 'T b/n', got 'X 8/2'"),
        ("T 8/0\n\ta 8\n", "tree, line 1: the sub-batch number must be a positive integer, got '0'"),
        ("T 8/1\n\ta -1\n", "tree, line 2: the batch must be a positive integer, got '-1'"),
        ("T 8/1\n\tS 8/2\n\ta 8\n", "tree, line 2: the cut 'S 8/2' has no children"),
        ("T 8/1\n \ta 8\n", "indent with tabs or with spaces, not both"),
        ("T 8/1\n    a 8\n      b 8\n", "tree, line 3: indentation is not a whole number of '    '"),
    ],
)
def test_bad_text_names_the_line(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_tree(text)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"layer": "a", "batch": 8}, "RA tree root: a cut needs"),
        ({"kind": "T", "batch": 8, "subbatches": 1}, "RA tree root: missing key 'children'"),
        ({"kind": "X", "batch": 8, "subbatches": 1, "children": []}, "RA tree root: kind must be 'S' or 'T'"),
        (
            {"kind": "T", "batch": 8, "subbatches": 1, "children": [{"layer": "a", "batch": 0}]},
            "RA tree root/0: leaf: batch must be a positive integer, got 0",
        ),
        (
            {"kind": "T", "batch": 8, "subbatches": 1, "children": [{"layer": "a", "batch": 8, "tiles": 2}]},
            r"RA tree root/0: unknown keys \['tiles'\] for a leaf",
        ),
        ({"kind": "T", "batch": 8, "subbatches": 1, "children": []}, "RA tree root: cut: children must be a non-empty"),
    ],
)
def test_bad_json_names_the_node(data: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RATree.from_dict(data)


def test_min_tiles_sums_s_cuts_and_maxes_t_cuts() -> None:
    tree = parse_tree("T 8/1\n\tS 8/2\n\t\ta 4\n\t\tT 4/1\n\t\t\tb 4\n\t\t\tS 4/1\n\t\t\t\tc 4\n\t\t\t\td 4\n")
    assert min_tiles(tree.root) == 1 + 2
    assert min_tiles(Leaf("a", 1)) == 1


def test_sequential_tree_of_set_resnet50_is_valid_and_round_trips() -> None:
    workload = load_workload("set-resnet50", batch=8)
    tree = sequential_tree(workload)
    check(RATreeInstance(workload, load_accelerator("set-edge-4x4"), 2, 1), tree)
    assert parse_tree(tree.to_text()) == tree
    assert tree.to_text().splitlines()[:3] == ["T 8/1", "\tconv1 8", "\tpool1 8"]


def test_space_size_matches_the_set_count() -> None:
    assert [tree_space_size(n) for n in range(1, 9)] == [1, 2, 10, 62, 430, 3194, 24850, 199910]
    ratio = tree_space_size(40) / tree_space_size(39)
    assert ratio == pytest.approx(5 + 2 * math.sqrt(6), rel=0.05)
    with pytest.raises(ValueError, match="n_leaves must be a positive integer"):
        tree_space_size(0)


@st.composite
def trees(draw: st.DrawFn, depth: int = 0, batch: int = 8) -> RANode:
    """Random (not necessarily valid) RA subtrees with consistent batches."""
    if depth >= 3 or draw(st.booleans()):
        return Leaf(draw(st.sampled_from(["a", "b", "c", "S", "T", "layer_1"])), batch)
    groups = draw(st.sampled_from([g for g in (1, 2, 4, 8) if batch % g == 0]))
    children = draw(st.lists(trees(depth + 1, batch // groups), min_size=1, max_size=3))
    return Cut(draw(st.sampled_from(list(CutKind))), batch, groups, tuple(children))


@settings(max_examples=60, deadline=None)
@given(st.lists(trees(1, 8), min_size=1, max_size=3))
def test_text_and_json_round_trip_any_tree(children: list[RANode]) -> None:
    tree = RATree(Cut(CutKind.T, 8, 1, tuple(children)))
    assert parse_tree(tree.to_text()) == tree
    assert RATree.from_dict(json.loads(json.dumps(tree.to_dict()))) == tree
