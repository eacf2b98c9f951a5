"""SET's operators on RA trees: every legal neighbour they should reach, none wrongly refused."""

from __future__ import annotations

import numpy as np
import pytest

from accelsched.heuristics.ra_tree_moves import OPERATORS, neighbour
from accelsched.heuristics.ra_tree_sa import RATreeSAParams, _Chain
from accelsched.models.builder import NetBuilder
from accelsched.problems.ra_tree import (
    Cut,
    Leaf,
    RATree,
    RATreeInstance,
    check_structure,
    parse_tree,
    sequential_tree,
)
from tests.problems.test_ra_tree import TEXT, instance

PIPELINED = "T 8/1\n\ta 8\n\tS 8/8\n\t\tb 1\n\t\tc 1\n\td 8\n"
"""The diamond with b and c pipelined in 8 sub-batches of one sample."""


def _all(tree: RATree, operator: str, draws: int = 300) -> set[str]:
    edges = frozenset(instance().workload.edges)
    out = set()
    for seed in range(draws):
        moved = neighbour(tree, edges, np.random.default_rng(seed), operator)
        assert moved is not None, (operator, seed)
        out.add(moved.to_text())
    return out


def test_move_also_takes_a_leaf_out_of_its_cut() -> None:
    """T [a, S [b, c, d]]: a joins the S-Cut, or b or d leaves it (SET's move; only the first was reached)."""
    assert _all(parse_tree(TEXT), "move", 60) == {
        "T 8/1\n\tS 8/4\n\t\ta 2\n\t\tb 2\n\t\tc 2\n\t\td 2\n",
        "T 8/1\n\ta 8\n\tb 8\n\tS 8/4\n\t\tc 2\n\t\td 2\n",
        "T 8/1\n\ta 8\n\tS 8/4\n\t\tb 2\n\t\tc 2\n\td 8\n",
    }


def test_multiply_takes_the_factor_from_a_sub_batched_cut_below() -> None:
    """Multiplying the root's sub-batches by 2 halves the S-Cut's, whose leaves keep one sample (was: no move)."""
    inst = instance()
    (moved,) = _all(parse_tree(PIPELINED), "multiply", 20)
    assert moved == "T 8/2\n\ta 4\n\tS 4/4\n\t\tb 1\n\t\tc 1\n\td 4\n"
    check_structure(inst, parse_tree(moved))


def test_group_never_leaves_a_sub_batch_number_that_does_not_divide_its_batch() -> None:
    """Grouping the S-Cut into a sub-batched cut is a legal neighbour (was: None for 2, 4 and 8 sub-batches)."""
    inst = instance()
    found = _all(parse_tree(PIPELINED), "group")
    for text in found:
        tree = parse_tree(text)
        check_structure(inst, tree)
        assert all(leaf.batch == 1 for leaf in tree.leaves() if leaf.layer in ("b", "c"))
    assert "T 8/1\n\tT 8/4\n\t\ta 2\n\t\tS 2/2\n\t\t\tb 1\n\t\t\tc 1\n\td 8\n" in found


def test_weights_choose_the_operator() -> None:
    edges = frozenset(instance().workload.edges)
    tree = parse_tree(TEXT)
    only_divide = {op: 0.0 for op in OPERATORS if op != "divide"}
    for seed in range(20):
        moved = neighbour(tree, edges, np.random.default_rng(seed), weights=only_divide)
        assert moved is not None and isinstance(cut := moved.root.children[1], Cut)
        assert cut == Cut(cut.kind, 8, 2, (Leaf("b", 4), Leaf("c", 4), Leaf("d", 4)))


def test_an_iteration_of_the_sa_always_proposes_a_neighbour_when_one_exists() -> None:
    """On a chain network's layer-sequential tree only group and multiply apply: the SA draws again."""
    net = NetBuilder("chain", 4, 8, 8, batch=2)
    net.conv(net.conv(net.conv(net.input, 8, 3, pad=1, name="a"), 8, 3, pad=1, name="b"), 8, 1, name="c")
    workload = net.build()
    chain = _Chain(RATreeInstance(workload, instance().accelerator, 2, 1), RATreeSAParams())
    start = sequential_tree(workload)
    edges = frozenset(workload.edges)
    refused = sum(neighbour(start, edges, np.random.default_rng(seed)) is None for seed in range(100))
    assert refused > 30  # one draw: swap, move, delete and divide cannot apply
    assert all(chain.move(start, np.random.default_rng(seed)) is not None for seed in range(100))


@pytest.mark.parametrize("weights", [(("group", 0.0),), (("spin", 1.0),), (("group", True),), ("group",)])
def test_bad_operator_weights_are_rejected(weights: object) -> None:
    with pytest.raises(ValueError, match=r"field operator_weights must hold \(operator, weight > 0\) pairs"):
        RATreeSAParams(operator_weights=weights)  # type: ignore[arg-type]
