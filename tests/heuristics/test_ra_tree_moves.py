"""SET's operators on RA trees: every legal neighbour they should reach, none wrongly refused."""

from __future__ import annotations

import math
from collections import deque
from typing import cast

import numpy as np
import pytest

from accelsched.formulations.ra_tree_enumerate import all_trees
from accelsched.heuristics.ra_tree_moves import OPERATORS, neighbour
from accelsched.heuristics.ra_tree_sa import SA_OPERATORS, RATreeSAParams, _Chain
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
from tests.problems.ra_tree.instances import TEXT, instance, small

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
    """T [a, S [b, c, d]]: a joins the S-Cut, or b or d leaves it (SET's move)."""
    assert _all(parse_tree(TEXT), "move", 60) == {
        "T 8/1\n\tS 8/4\n\t\ta 2\n\t\tb 2\n\t\tc 2\n\t\td 2\n",
        "T 8/1\n\ta 8\n\tb 8\n\tS 8/4\n\t\tc 2\n\t\td 2\n",
        "T 8/1\n\ta 8\n\tS 8/4\n\t\tb 2\n\t\tc 2\n\td 8\n",
    }


def test_multiply_takes_the_factor_from_a_sub_batched_cut_below() -> None:
    """Multiplying the root's sub-batches by 2 halves the S-Cut's, whose leaves keep one sample."""
    inst = instance()
    (moved,) = _all(parse_tree(PIPELINED), "multiply", 20)
    assert moved == "T 8/2\n\ta 4\n\tS 4/4\n\t\tb 1\n\t\tc 1\n\td 4\n"
    check_structure(inst, parse_tree(moved))


def test_group_never_leaves_a_sub_batch_number_that_does_not_divide_its_batch() -> None:
    """Grouping the S-Cut into a sub-batched cut is a legal neighbour."""
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


class _Choices:
    """Stands for the random generator and makes every choice in turn: each call of
    :func:`_every_neighbour` replays a prefix of choices and takes the first option after it."""

    def __init__(self, prefix: list[int]) -> None:
        self.made = list(prefix)
        self.options: list[int] = []

    def _pick(self, options: int) -> int:
        if len(self.options) == len(self.made):
            self.made.append(0)
        self.options.append(options)
        return self.made[len(self.options) - 1]

    def integers(self, low: int, high: int | None = None) -> int:
        return self._pick(low) if high is None else low + self._pick(high - low)

    def random(self) -> float:
        return 0.25 if self._pick(2) == 0 else 0.75


def _every_neighbour(tree: RATree, edges: frozenset[tuple[str, str]], operators: tuple[str, ...]) -> set[str]:
    """Every tree one move of ``operators`` away (each sequence of the operators' random choices)."""
    out = set()
    for operator in operators:
        pending: list[list[int]] = [[]]
        while pending:
            prefix = pending.pop()
            choices = _Choices(prefix)
            moved = neighbour(tree, edges, cast(np.random.Generator, choices), operator)
            for k in range(len(prefix), len(choices.made)):
                pending.extend([*choices.made[:k], other] for other in range(1, choices.options[k]))
            if moved is not None:
                out.add(moved.to_text())
    return out


def test_set_six_operators_reach_every_tree_the_enumeration_accepts() -> None:
    """From the layer-sequential tree, through trees the SA accepts (finite cost), the six
    operators reach every tree of the enumeration the SA accepts, and never leave the
    enumeration's space (the diamond, two topological orders, batch 2: 820 trees)."""
    inst = instance(batch=2)
    edges = frozenset(inst.workload.edges)
    chain = _Chain(inst, RATreeSAParams())
    space = {tree.to_text(): tree for tree in all_trees(inst)}
    valid = {text for text, tree in space.items() if math.isfinite(chain.cost(tree))}
    start = sequential_tree(inst.workload).to_text()
    seen, queue = {start}, deque([start])
    while queue:
        for text in _every_neighbour(space[queue.popleft()], edges, OPERATORS):
            assert text in space, text
            if text in valid and text not in seen:
                seen.add(text)
                queue.append(text)
    assert len(space) == 820 and len(valid) > 800 and seen == valid


def test_divide_pushes_the_sub_batches_down_and_undoes_multiply() -> None:
    """SET's batch down: the S-Cut below takes the factor back (was: ``S 8/4 [b 2, c 2]``, the pipelining lost)."""
    multiplied = parse_tree("T 8/2\n\ta 4\n\tS 4/4\n\t\tb 1\n\t\tc 1\n\td 4\n")
    assert _all(multiplied, "divide", 40) == {PIPELINED, "T 8/2\n\ta 4\n\tS 4/2\n\t\tb 2\n\t\tc 2\n\td 4\n"}
    assert "T 8/2\n\ta 4\n\tS 4/4\n\t\tb 1\n\t\tc 1\n\td 4\n" in _all(parse_tree(PIPELINED), "multiply", 40)


def test_multiply_keeps_the_sub_batch_size_of_the_cut_below() -> None:
    """SET's batch up: ``S 8/2 [b 4, c 4]`` under a root halved is ``S 4/1 [b 4, c 4]`` (was: ``S 4/2 [b 2, c 2]``)."""
    inst = instance()
    found = _all(parse_tree("T 8/1\n\ta 8\n\tS 8/2\n\t\tb 4\n\t\tc 4\n\td 8\n"), "multiply", 40)
    assert found == {
        "T 8/2\n\ta 4\n\tS 4/1\n\t\tb 4\n\t\tc 4\n\td 4\n",
        "T 8/1\n\ta 8\n\tS 8/4\n\t\tb 2\n\t\tc 2\n\td 8\n",
    }
    for text in found:
        check_structure(inst, parse_tree(text))


def test_delete_passes_the_sub_batches_of_the_deleted_cut_down() -> None:
    """Deleting ``T 8/4`` leaves its S-Cut pipelined in 8 sub-batches of 1 (was: ``S 8/2 [b 4, c 4]``)."""
    inst = instance()
    tree = parse_tree("T 8/1\n\tT 8/4\n\t\ta 2\n\t\tS 2/2\n\t\t\tb 1\n\t\t\tc 1\n\td 8\n")
    found = _all(tree, "delete", 40)
    assert found == {PIPELINED, "T 8/1\n\tT 8/4\n\t\ta 2\n\t\tb 2\n\t\tc 2\n\td 8\n"}
    for text in found:
        check_structure(inst, parse_tree(text))


def test_flip_changes_a_kind_in_one_move_where_the_six_need_a_worse_tree_between() -> None:
    """``T 2/2 [a, b]`` to ``S 2/2 [a, b]``: one flip; without it a delete and a group, through ``T [a, b, ...]``."""
    inst = small(4, 3, batch=2)
    edges = frozenset(inst.workload.edges)
    a, b, c, d = inst.workload.names
    timed = parse_tree(f"T 2/1\n\tT 2/1\n\t\tT 2/2\n\t\t\t{a} 1\n\t\t\t{b} 1\n\t\t{c} 2\n\t\t{d} 2\n")
    spatial = f"T 2/1\n\tT 2/1\n\t\tS 2/2\n\t\t\t{a} 1\n\t\t\t{b} 1\n\t\t{c} 2\n\t\t{d} 2\n"
    assert spatial not in _every_neighbour(timed, edges, OPERATORS)
    assert spatial in _every_neighbour(timed, edges, SA_OPERATORS)
    check_structure(inst, parse_tree(spatial))
