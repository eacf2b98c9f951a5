"""SET's six operators on RA trees, for simulated annealing.

Every operator keeps the leaves in a topological order and the batches consistent:

1. **swap**: exchange two leaves adjacent in the left-to-right order that have no
   edge between them (the order stays topological);
2. **move**: take a leaf out of its cut and put it into the next cut on its left or
   right that shares its parent or grandparent, at the end nearest to where it was,
   or, when it is the first or last of three or more children, out of its cut into
   the cut's parent, next to the cut (so the left-to-right order does not change);
3. **group**: wrap two or more consecutive children of a cut (not all of them, except
   at the root, whose children may all become one segment) into a new cut of either
   kind and any sub-batch number dividing its batch (a pipeline without sub-batches is
   rarely good, and the SA could not otherwise cross the valley to it);
4. **delete**: remove a cut below the root, its children taking its place;
5. **multiply** a cut's sub-batch number by a prime factor of its sub-batch size;
6. **divide** a cut's sub-batch number by one of its prime factors;

and one more, not SET's (:data:`EXTRA_OPERATORS`):

7. **flip** a cut below the root from S to T or back (SET's reference code never
   needs it: there a cut's kind follows from its parent's, so deleting and grouping
   retype the cuts they touch; here kinds are free labels, and without flip a kind
   changes only by a delete and a group, through a tree that is often far worse;
   :mod:`accelsched.heuristics.ra_tree_sa` says what it changes in the search).

A cut left with a single child is replaced by that child. Batches are recomputed
from the root down after every move (a child's batch is its parent's sub-batch size).
A cut whose batch changes keeps its *sub-batch size* when that size divides its new
batch, so the leaves below it keep their batches; otherwise it keeps the largest
sub-batch number that divides the new batch. This is what SET's reference
implementation does with its batch operators and its delete: multiplying a cut's
sub-batch number takes the factor from the cuts below ("batch up"), dividing it
pushes the factor down to them ("batch down"), and a deleted cut's sub-batching
passes to its child cuts. So dividing undoes multiplying:
``T 2/1 [S 2/2 [a 1, b 1]]`` multiplied at the root is ``T 2/2 [S 1/1 [a 1, b 1]]``,
and divided back it is the same tree again (multiplying is not one-to-one:
``T 2/1 [S 2/1 [a 2, b 2]]`` also becomes ``T 2/2 [S 1/1 [a 1, b 1]]``, and dividing
returns the pipelined tree). A move that cannot apply returns None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from accelsched.problems.ra_tree import Cut, CutKind, Leaf, RANode, RATree

__all__ = ["EXTRA_OPERATORS", "OPERATORS", "neighbour"]

OPERATORS = ("swap", "move", "group", "delete", "multiply", "divide")
"""SET's six operators, drawn uniformly by default."""

EXTRA_OPERATORS = ("flip",)
"""Operators beyond SET's: ``flip`` turns an S-Cut below the root into a T-Cut or back."""


@dataclass
class _Node:
    """A mutable tree node used while a move edits the tree."""

    layer: str | None
    kind: CutKind | None = None
    subbatches: int = 1
    children: list[_Node] = field(default_factory=list)
    batch: int = 0

    @property
    def is_cut(self) -> bool:
        return self.layer is None


def _thaw(node: RANode) -> _Node:
    if isinstance(node, Leaf):
        return _Node(node.layer, batch=node.batch)
    return _Node(None, node.kind, node.subbatches, [_thaw(c) for c in node.children], node.batch)


def _freeze(node: _Node, batch: int) -> RANode:
    """The immutable node over ``batch`` samples, keeping a cut's sub-batch size when it divides ``batch``.

    A cut whose sub-batch size does not divide ``batch`` keeps the largest sub-batch
    number that does (``gcd``); a new cut (``group``) comes with its batch set, so its
    sub-batch number stays as drawn.
    """
    if not node.is_cut:
        assert node.layer is not None
        return Leaf(node.layer, batch)
    assert node.kind is not None
    size = node.batch // node.subbatches
    subbatches = batch // size if size >= 1 and batch % size == 0 else math.gcd(node.subbatches, batch)
    return Cut(node.kind, batch, subbatches, tuple(_freeze(c, batch // subbatches) for c in node.children))


def _walk(node: _Node, parent: _Node | None = None) -> list[tuple[_Node, _Node | None]]:
    out = [(node, parent)]
    for child in node.children:
        out.extend(_walk(child, node))
    return out


def _collapse(parent: _Node | None, node: _Node) -> None:
    """Replace a non-root cut left with one child by that child; remove one left with none."""
    if parent is None or not node.is_cut or len(node.children) > 1:
        return
    k = parent.children.index(node)
    parent.children[k : k + 1] = node.children


def _primes(value: int) -> list[int]:
    out, p = [], 2
    while p * p <= value:
        while value % p == 0:
            out.append(p)
            value //= p
        p += 1
    if value > 1:
        out.append(value)
    return sorted(set(out))


def neighbour(
    tree: RATree,
    edges: frozenset[tuple[str, str]],
    rng: np.random.Generator,
    operator: str | None = None,
    operators: tuple[str, ...] = OPERATORS,
    weights: Mapping[str, float] | None = None,
) -> RATree | None:
    """One random move from ``tree``; None when it cannot apply.

    Parameters
    ----------
    tree, edges
        The tree and the workload's edges (producer, consumer).
    rng
        The source of randomness.
    operator
        The operator to apply; None draws one from ``operators``.
    operators
        The operators drawn from.
    weights
        Relative weight of an operator in the draw (an operator not named weighs 1);
        None draws them uniformly.
    """
    op = operator or _draw(operators, weights, rng)
    root = _thaw(tree.root)
    nodes = _walk(root)
    applied = {
        "swap": _swap,
        "move": _move,
        "group": _group,
        "delete": _delete,
        "multiply": _multiply,
        "divide": _divide,
        "flip": _flip,
    }[op](root, nodes, edges, rng)
    if not applied:
        return None
    frozen = _freeze(root, tree.root.batch)
    if not isinstance(frozen, Cut) or frozen.kind is not CutKind.T:  # pragma: no cover - no operator changes the root
        return None
    return RATree(frozen)


def _draw(operators: tuple[str, ...], weights: Mapping[str, float] | None, rng: np.random.Generator) -> str:
    if not weights:
        return operators[int(rng.integers(len(operators)))]
    mass = np.array([weights.get(op, 1.0) for op in operators], dtype=float)
    return operators[int(rng.choice(len(operators), p=mass / mass.sum()))]


def _swap(root: _Node, nodes: list[tuple[_Node, _Node | None]], edges: frozenset, rng: np.random.Generator) -> bool:
    leaves = [n for n, _ in nodes if not n.is_cut]
    pairs = [k for k in range(len(leaves) - 1) if (leaves[k].layer, leaves[k + 1].layer) not in edges]
    if not pairs:
        return False
    k = pairs[int(rng.integers(len(pairs)))]
    leaves[k].layer, leaves[k + 1].layer = leaves[k + 1].layer, leaves[k].layer
    return True


def _move(root: _Node, nodes: list[tuple[_Node, _Node | None]], edges: frozenset, rng: np.random.Generator) -> bool:
    parent_of = {id(n): p for n, p in nodes}
    options: list[tuple[_Node, _Node, _Node, int]] = []  # (leaf, its parent, target cut, index in the target)
    for leaf, parent in nodes:
        if leaf.is_cut or parent is None:
            continue
        k = parent.children.index(leaf)
        siblings = parent.children
        if k + 1 < len(siblings) and siblings[k + 1].is_cut:
            options.append((leaf, parent, siblings[k + 1], 0))
        if k > 0 and siblings[k - 1].is_cut:
            options.append((leaf, parent, siblings[k - 1], len(siblings[k - 1].children)))
        grand = parent_of[id(parent)]
        if grand is None:
            continue
        j = grand.children.index(parent)
        first, last = k == 0, k == len(siblings) - 1
        if (first or last) and len(siblings) > 2:  # out of its cut (with two children it would be a delete)
            options.append((leaf, parent, grand, j + 1 if last else j))
        if last and j + 1 < len(grand.children) and grand.children[j + 1].is_cut:
            options.append((leaf, parent, grand.children[j + 1], 0))
        if first and j > 0 and grand.children[j - 1].is_cut:
            options.append((leaf, parent, grand.children[j - 1], len(grand.children[j - 1].children)))
    if not options:
        return False
    leaf, parent, target, index = options[int(rng.integers(len(options)))]
    if target is parent_of[id(parent)]:  # out of its cut: the index is counted before the leaf leaves
        target.children.insert(index, leaf)
        parent.children.remove(leaf)
        return True
    parent.children.remove(leaf)
    target.children.insert(index, leaf)
    _collapse(parent_of[id(parent)], parent)
    return True


def _group(root: _Node, nodes: list[tuple[_Node, _Node | None]], edges: frozenset, rng: np.random.Generator) -> bool:
    # the root may wrap all of its children (they become one segment); another cut only a part of them
    cuts = [n for n, _ in nodes if n.is_cut and len(n.children) >= (2 if n is root else 3)]
    if not cuts:
        return False
    cut = cuts[int(rng.integers(len(cuts)))]
    size = int(rng.integers(2, len(cut.children) + (1 if cut is root else 0)))
    first = int(rng.integers(len(cut.children) - size + 1))
    kind = CutKind.S if rng.random() < 0.5 else CutKind.T
    batch = cut.batch // cut.subbatches
    divisors = [d for d in range(1, batch + 1) if batch % d == 0]
    group = _Node(None, kind, divisors[int(rng.integers(len(divisors)))], cut.children[first : first + size], batch)
    cut.children[first : first + size] = [group]
    return True


def _delete(root: _Node, nodes: list[tuple[_Node, _Node | None]], edges: frozenset, rng: np.random.Generator) -> bool:
    cuts = [(n, p) for n, p in nodes if n.is_cut and p is not None]
    if not cuts:
        return False
    cut, parent = cuts[int(rng.integers(len(cuts)))]
    k = parent.children.index(cut)
    parent.children[k : k + 1] = cut.children
    return True


def _multiply(root: _Node, nodes: list[tuple[_Node, _Node | None]], edges: frozenset, rng: np.random.Generator) -> bool:
    options = [(n, p) for n, _ in nodes if n.is_cut for p in _primes(n.batch // n.subbatches)]
    if not options:
        return False
    cut, p = options[int(rng.integers(len(options)))]
    cut.subbatches *= p
    return True


def _divide(root: _Node, nodes: list[tuple[_Node, _Node | None]], edges: frozenset, rng: np.random.Generator) -> bool:
    options = [(n, p) for n, _ in nodes if n.is_cut for p in _primes(n.subbatches)]
    if not options:
        return False
    cut, p = options[int(rng.integers(len(options)))]
    cut.subbatches //= p
    return True


def _flip(root: _Node, nodes: list[tuple[_Node, _Node | None]], edges: frozenset, rng: np.random.Generator) -> bool:
    cuts = [n for n, p in nodes if n.is_cut and p is not None]
    if not cuts:
        return False
    cut = cuts[int(rng.integers(len(cuts)))]
    cut.kind = CutKind.T if cut.kind is CutKind.S else CutKind.S
    return True
