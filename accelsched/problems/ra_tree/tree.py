"""The RA tree of SET (ISCA'23): its nodes, its text and JSON forms, and counts over its space.

An *RA tree* states when, where and on how many samples every layer runs:

* a **leaf** is one layer run on ``batch`` samples;
* a **T-Cut** (temporal) runs its children one after the other, on all of its tiles;
* an **S-Cut** (spatial) runs its children at the same time on disjoint groups of its
  tiles, pipelined over sub-batches.

Every cut has a ``batch`` (the samples it processes) and a sub-batch number ``n``: it
processes its batch as ``n`` sub-batches of ``batch / n`` samples, so every child
has ``batch / n`` samples. The root is a T-Cut over all layers, all tiles and the
total batch; its children are the *segments* whose inputs and outputs go through
DRAM.

Text form
---------
Trees are read and written in the tab-indented form printed by the SET reference
implementation: a cut is ``S b/n`` or ``T b/n``, a leaf ``<layer> b``, and a child
is indented by one more tab than its parent::

    T 8/1
    \tS 8/4
    \t\tconv1 2
    \t\tpool1 2
    \tfc 8

A layer may be called ``S`` or ``T``: a line is a cut exactly when its second token
holds a ``/``. Indentation by a fixed number of spaces is accepted too (the unit is
the first indented line's).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from accelsched.models.workload import Workload

__all__ = [
    "Cut",
    "CutKind",
    "Leaf",
    "RANode",
    "RATree",
    "min_tiles",
    "parse_tree",
    "sequential_tree",
    "tree_space_size",
]


class CutKind(enum.Enum):
    """The two kinds of cut."""

    S = "S"
    """Spatial: children at the same time on disjoint tile groups, pipelined over sub-batches."""
    T = "T"
    """Temporal: children one after the other on all of the cut's tiles."""


@dataclass(frozen=True)
class Leaf:
    """One layer run on ``batch`` samples.

    Attributes
    ----------
    layer
        The layer's name in the workload.
    batch
        Samples per run (the parent cut's sub-batch size).
    """

    layer: str
    batch: int

    def __post_init__(self) -> None:
        if not isinstance(self.layer, str) or not self.layer or any(c.isspace() for c in self.layer):
            raise ValueError(f"leaf: layer must be a non-empty name without spaces, got {self.layer!r}")
        _positive_int("leaf", "batch", self.batch)

    def to_text(self) -> str:
        """``<layer> <batch>``."""
        return f"{self.layer} {self.batch}"


@dataclass(frozen=True)
class Cut:
    """A cut over its children.

    Attributes
    ----------
    kind
        S (spatial) or T (temporal).
    batch
        Samples the cut processes.
    subbatches
        ``n``: the batch is processed as ``n`` sub-batches of ``batch / n`` samples.
    children
        The children, left to right (at least one).
    """

    kind: CutKind
    batch: int
    subbatches: int
    children: tuple[RANode, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.kind, CutKind):
            raise ValueError(f"cut: kind must be CutKind.S or CutKind.T, got {self.kind!r}")
        _positive_int("cut", "batch", self.batch)
        _positive_int("cut", "subbatches", self.subbatches)
        if not isinstance(self.children, tuple) or not self.children:
            raise ValueError(f"cut: children must be a non-empty tuple, got {self.children!r}")
        if not all(isinstance(child, Leaf | Cut) for child in self.children):
            raise ValueError("cut: every child must be a Leaf or a Cut")

    @property
    def child_batch(self) -> int:
        """Samples of every child: ``batch / subbatches`` (``check`` rejects a remainder)."""
        return self.batch // self.subbatches

    def to_text(self) -> str:
        """``S b/n`` or ``T b/n``."""
        return f"{self.kind.value} {self.batch}/{self.subbatches}"


RANode = Leaf | Cut
"""A node of an RA tree."""


@dataclass(frozen=True)
class RATree:
    """An RA tree, the solution of the problem.

    Attributes
    ----------
    root
        The root cut (:func:`check` requires a T-Cut over the total batch).
    """

    root: Cut

    def __post_init__(self) -> None:
        if not isinstance(self.root, Cut):
            raise ValueError(f"RA tree: the root must be a Cut, got {type(self.root).__name__}")

    def walk(self) -> Iterator[tuple[str, RANode]]:
        """Every node with its path (``root``, ``root/0``, ``root/0/2``, ...), depth first, left to right."""
        stack: list[tuple[str, RANode]] = [("root", self.root)]
        while stack:
            path, node = stack.pop()
            yield path, node
            if isinstance(node, Cut):
                stack.extend((f"{path}/{k}", child) for k, child in reversed(list(enumerate(node.children))))

    def leaves(self) -> tuple[Leaf, ...]:
        """The leaves, left to right."""
        return tuple(node for _, node in self.walk() if isinstance(node, Leaf))

    def to_text(self) -> str:
        """The tab-indented text form (SET's), one node per line, ending with a newline."""
        lines: list[str] = []
        for path, node in self.walk():
            lines.append("\t" * path.count("/") + node.to_text())
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """Plain data: ``{"kind", "batch", "subbatches", "children"}`` for cuts, ``{"layer", "batch"}`` for leaves."""
        return _node_dict(self.root)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RATree:
        """Inverse of :meth:`to_dict`; ``ValueError`` naming the path of a bad node."""
        root = _node_from_dict(data, "root")
        if not isinstance(root, Cut):
            raise ValueError("RA tree root: a cut needs 'kind', 'batch', 'subbatches' and 'children'")
        return cls(root)

    @classmethod
    def from_text(cls, text: str) -> RATree:
        """Parse the text form; see :func:`parse_tree`."""
        return parse_tree(text)


def min_tiles(node: RANode) -> int:
    """Fewest tiles a node can run on: 1 for a leaf, the sum over an S-Cut's children, the max over a T-Cut's."""
    if isinstance(node, Leaf):
        return 1
    counts = [min_tiles(child) for child in node.children]
    return sum(counts) if node.kind is CutKind.S else max(counts)


def sequential_tree(workload: Workload) -> RATree:
    """The layer-sequential (LS) schedule: the root T-Cut runs every layer on all tiles, whole batch, in order."""
    batch = workload.batch
    return RATree(Cut(CutKind.T, batch, 1, tuple(Leaf(name, batch) for name in workload.names)))


# ------------------------------------------------------------------ text form
def parse_tree(text: str, source: str = "tree") -> RATree:
    """Parse the tab-indented text form (module docstring).

    Parameters
    ----------
    text
        The tree.
    source
        Name of the file or string in error messages.

    Raises
    ------
    ValueError
        Naming ``source``, the line number and what is wrong with the line.
    """
    entries = [(number, line.rstrip()) for number, line in enumerate(text.splitlines(), start=1)]
    entries = [(number, line) for number, line in entries if line.strip() and not line.lstrip().startswith("#")]
    if not entries:
        raise ValueError(f"{source}: no RA tree (the text is empty)")
    unit = next((line[: len(line) - len(line.lstrip())] for _, line in entries if line[:1].isspace()), "\t")
    if len(set(unit)) > 1:
        raise ValueError(f"{source}: indent with tabs or with spaces, not both")
    unit = unit[:1] if unit.startswith("\t") else unit  # one tab per level; for spaces, the first indent
    parsed: list[tuple[int, int, Leaf | tuple[CutKind, int, int]]] = []
    for number, line in entries:
        depth, rest = _indent_depth(line, unit, source, number)
        parsed.append((number, depth, _parse_line(rest, source, number)))
    root, end = _build(parsed, 0, 0, source)
    if end != len(parsed):
        number = parsed[end][0]
        raise ValueError(f"{source}, line {number}: a second root (only one node may have no indentation)")
    if not isinstance(root, Cut):
        raise ValueError(f"{source}, line {parsed[0][0]}: the root must be a cut ('T b/n'), got a leaf")
    return RATree(root)


def _indent_depth(line: str, unit: str, source: str, number: int) -> tuple[int, str]:
    rest = line.lstrip()
    indent = line[: len(line) - len(rest)]
    depth, remainder = divmod(len(indent), len(unit))
    if remainder or indent != unit * depth:
        raise ValueError(
            f"{source}, line {number}: indentation is not a whole number of {unit!r} (the first indented line's)"
        )
    return depth, rest


def _parse_line(rest: str, source: str, number: int) -> Leaf | tuple[CutKind, int, int]:
    """A leaf, or a cut header ``(kind, batch, subbatches)`` whose children come later."""
    tokens = rest.split()
    where = f"{source}, line {number}"
    if len(tokens) != 2:
        raise ValueError(f"{where}: expected 'S b/n', 'T b/n' or '<layer> b', got {rest!r}")
    name, count = tokens
    if "/" in count:
        if name not in ("S", "T"):
            raise ValueError(f"{where}: a cut is 'S b/n' or 'T b/n', got {rest!r}")
        batch_text, _, groups_text = count.partition("/")
        batch, groups = _int(batch_text, where, "batch"), _int(groups_text, where, "sub-batch number")
        return (CutKind(name), batch, groups)
    try:
        return Leaf(name, _int(count, where, "batch"))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _int(text: str, where: str, what: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{where}: the {what} must be a positive integer, got {text!r}")
    return int(text)


def _build(
    parsed: list[tuple[int, int, Leaf | tuple[CutKind, int, int]]], start: int, depth: int, source: str
) -> tuple[RANode, int]:
    """The node starting at ``parsed[start]`` (at ``depth``) with its children; the index after it."""
    number, line_depth, item = parsed[start]
    if line_depth != depth:
        raise ValueError(f"{source}, line {number}: indented {line_depth} levels, expected {depth}")
    if isinstance(item, Leaf):
        return item, start + 1
    kind, batch, groups = item
    children: list[RANode] = []
    k = start + 1
    while k < len(parsed) and parsed[k][1] > depth:
        child, k = _build(parsed, k, depth + 1, source)
        children.append(child)
    if not children:
        raise ValueError(f"{source}, line {number}: the cut '{kind.value} {batch}/{groups}' has no children")
    return Cut(kind, batch, groups, tuple(children)), k


# ------------------------------------------------------------------ dict form
def _node_dict(node: RANode) -> dict[str, Any]:
    if isinstance(node, Leaf):
        return {"layer": node.layer, "batch": node.batch}
    return {
        "kind": node.kind.value,
        "batch": node.batch,
        "subbatches": node.subbatches,
        "children": [_node_dict(child) for child in node.children],
    }


def _node_from_dict(data: object, path: str) -> RANode:
    if not isinstance(data, Mapping):
        raise ValueError(f"RA tree {path}: a node must be an object, got {type(data).__name__}")
    try:
        if "layer" in data:
            extra = set(data) - {"layer", "batch"}
            if extra:
                raise ValueError(f"unknown keys {sorted(extra)} for a leaf")
            return Leaf(data["layer"], data["batch"])
        extra = set(data) - {"kind", "batch", "subbatches", "children"}
        if extra:
            raise ValueError(f"unknown keys {sorted(extra)} for a cut")
        kind = data["kind"]
        if kind not in ("S", "T"):
            raise ValueError(f"kind must be 'S' or 'T', got {kind!r}")
        children = data["children"]
        if not isinstance(children, list | tuple):
            raise ValueError(f"children must be a list, got {type(children).__name__}")
        nodes = tuple(_node_from_dict(child, f"{path}/{k}") for k, child in enumerate(children))
        return Cut(CutKind(kind), data["batch"], data["subbatches"], nodes)
    except KeyError as exc:
        raise ValueError(f"RA tree {path}: missing key {exc.args[0]!r}") from None
    except ValueError as exc:
        if str(exc).startswith("RA tree "):
            raise
        raise ValueError(f"RA tree {path}: {exc}") from None


def _positive_int(what: str, field: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what}: {field} must be a positive integer, got {value!r}")


def tree_space_size(n_leaves: int) -> int:
    """Number of tree shapes over ``n`` leaves in a fixed order, each inner node an S or a T cut.

    Ordered trees whose inner nodes have at least two children, two labels per inner
    node: 1, 2, 10, 62, 430, 3194, ... (the SET space-size count for a fixed leaf
    order). Computed by the recurrence over the number of children of the root:
    ``a(1) = 1``; ``a(n) = 2 * sum over compositions of n into k >= 2 parts of the
    product of a(part)``.
    """
    if isinstance(n_leaves, bool) or not isinstance(n_leaves, int) or n_leaves < 1:
        raise ValueError(f"tree_space_size: n_leaves must be a positive integer, got {n_leaves!r}")
    a = [0, 1]
    for n in range(2, n_leaves + 1):
        # forests[m] = number of ordered sequences of >= 1 trees over m leaves
        forests = [0] * n
        forests[0] = 1  # empty sequence, used to build the others
        for m in range(1, n):
            forests[m] = sum(a[first] * forests[m - first] for first in range(1, m + 1))
        # sequences of >= 2 trees over n leaves: a first tree over j < n leaves, then >= 1 trees
        a.append(2 * sum(a[j] * forests[n - j] for j in range(1, n)))
    return a[n_leaves]
