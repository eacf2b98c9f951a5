r"""Subset-row cuts of the partition models' branch-and-price (Cocco).

For three layers :math:`R = \{a, b, c\}`, no partition holds two subgraphs that each
contain two of them (they would share a layer), so every partition keeps

.. math::

    \textstyle\sum_j \lfloor |S_j \cap R| / 2 \rfloor\, x_j \le 1,

the subset-row inequality of Jepsen et al. (2008) (a rank-1 Chvátal-Gomory cut of three
cover rows). Its coefficient is 1 for a subgraph holding at least two of the three
layers, 0 otherwise. An LP solution with three subgraphs at 1/3 over
:math:`\{a, b\}, \{b, c\}, \{a, c\}` (and the rest of their layers), plus one at 1/3
holding all three, gives it 4/3: the odd structure column generation's LP is full of
on the large co-exploration pairs.

The cuts are valid for every partition, so they stay in the master for every node of the
tree (:class:`SubsetRows`, shared by the master, the pricing MILP and the local search). A
column's reduced cost gains :math:`-\sigma_R \ge 0` for each cut it hits (the cut's dual
:math:`\sigma_R \le 0`): the duals of column generation are the cover duals followed by
the cuts', in the order the cuts were added, and a shorter vector (an inner point proven
before a cut existed) stands for zeros on the later ones, at which its bound still holds.
The pricing MILP (:class:`~accelsched.formulations.partition.pricing.PricingModel`)
charges a cut with one variable :math:`y_R \ge t_a + t_b - 1` per pair of its layers.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

__all__ = ["SUBSET_ROWS_PER_LAYER", "SubsetRows", "violated_subset_rows"]

SUBSET_ROWS_PER_LAYER = 2
"""Default of the most cuts of one separation round through a layer (the most violated first;
``per_layer`` of :func:`violated_subset_rows`): cuts spread over
the layers cut more of the LP's fractional columns than as many of the most violated ones, many of
which cut the same columns."""

_VIOLATION = 1e-3
"""Least violation of a cut worth adding."""


class SubsetRows:
    """The subset-row cuts of a column generation, in the order they were added.

    Parameters
    ----------
    n_layers
        Layers of the instance (the cover rows, whose duals come first).
    """

    def __init__(self, n_layers: int) -> None:
        self.n = n_layers
        self.triples: list[tuple[int, int, int]] = []
        self._through: list[list[int]] = [[] for _ in range(n_layers)]
        self._known: set[tuple[int, int, int]] = set()

    def __len__(self) -> int:
        return len(self.triples)

    def add(self, triples: Sequence[Sequence[int]]) -> int:
        """Add the cuts on these layer triples that are new; how many were."""
        added = 0
        for triple in triples:
            a, b, c = sorted(int(i) for i in triple) if len(triple) == 3 else (0, 0, 0)
            if not 0 <= a < b < c < self.n:
                raise ValueError(f"a subset-row cut needs three distinct layers of {self.n}, got {tuple(triple)}")
            key = (a, b, c)
            if key in self._known:
                continue
            s = len(self.triples)
            self.triples.append(key)
            self._known.add(key)
            for i in key:
                self._through[i].append(s)
            added += 1
        return added

    def hits(self, members: Sequence[int] | frozenset[int]) -> list[int]:
        """The cuts whose coefficient is 1 for a subgraph: those holding two of its layers or three."""
        if not self.triples:  # the local search prices many sets, mostly before any cut exists
            return []
        counts = Counter(s for i in members for s in self._through[i])
        return [s for s, count in counts.items() if count >= 2]

    def charge(self, members: Sequence[int] | frozenset[int], duals: Sequence[float]) -> float:
        """The cuts' part of a subgraph's dual price: the sum of the duals (after the cover duals)
        of the cuts it hits; a cut beyond ``duals`` counts 0."""
        return math.fsum(duals[self.n + s] for s in self.hits(members) if self.n + s < len(duals))

    def padded(self, duals: Sequence[float]) -> tuple[float, ...]:
        """Duals for the cover rows and every cut: ``duals`` with zeros for the cuts it lacks."""
        if not self.n <= len(duals) <= self.n + len(self.triples):
            raise ValueError(f"{len(duals)} duals for {self.n} layers and {len(self.triples)} subset-row cuts")
        return (*duals, *([0.0] * (self.n + len(self.triples) - len(duals))))


def violated_subset_rows(
    members: Sequence[Sequence[int]],
    values: Sequence[float],
    n_layers: int,
    limit: int,
    *,
    per_layer: int = SUBSET_ROWS_PER_LAYER,
) -> list[tuple[int, int, int]]:
    """Triples of layers whose subset-row cut an LP solution violates, most violated first.

    Parameters
    ----------
    members
        The layers of the columns with a fractional value (those at 1 cannot take part: a
        column at 1 covers its layers alone).
    values
        Their values.
    n_layers
        Layers of the instance.
    limit
        Most triples returned.
    per_layer
        Most triples returned through one layer (default :data:`SUBSET_ROWS_PER_LAYER`).
    """
    if per_layer < 1:
        raise ValueError(f"per_layer must be at least 1, got {per_layer}")
    if not members:
        return []
    incidence = np.zeros((len(members), n_layers), dtype=np.int8)
    for row, subgraph in enumerate(members):
        incidence[row, list(subgraph)] = 1
    weight = np.asarray(values, dtype=np.float64)
    layers = np.flatnonzero(incidence.sum(axis=0) >= 2)  # a layer of a violated triple is in two columns
    found: list[tuple[float, tuple[int, int, int]]] = []
    for first, second in itertools.combinations(range(len(layers)), 2):
        a, b = int(layers[first]), int(layers[second])
        rest = layers[second + 1 :]
        if not len(rest):
            continue
        pair = incidence[:, a] + incidence[:, b]
        counts = pair[:, None] + incidence[:, rest]
        violation = ((counts >= 2) * weight[:, None]).sum(axis=0)
        for k in np.flatnonzero(violation > 1.0 + _VIOLATION):
            found.append((float(violation[k]), (a, b, int(rest[k]))))
    found.sort(key=lambda item: (-item[0], item[1]))
    chosen: list[tuple[int, int, int]] = []
    used: Counter[int] = Counter()
    for _, triple in found:
        if all(used[i] < per_layer for i in triple):
            chosen.append(triple)
            used.update(triple)
            if len(chosen) >= limit:
                break
    return chosen
