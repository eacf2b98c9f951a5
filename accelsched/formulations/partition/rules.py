"""Ryan-Foster branching rules of the partition models' branch-and-price (Cocco).

In a partition, two layers are either in the same subgraph or in different ones. A
node of the branch-and-price (:mod:`accelsched.formulations.partition.branch`) keeps a
set of such rules; the master holds the columns that break one at 0
(:class:`~accelsched.formulations.partition.master.RestrictedMaster`), and the pricing
MILP admits only the sets that keep them
(:meth:`~accelsched.formulations.partition.pricing.PricingModel.impose`). Ryan and
Foster (1981): when the master's LP solution is fractional, some pair of layers is
together with a weight strictly between 0 and 1, and the two rules on that pair cut it
off while every partition keeps one of them.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

__all__ = ["PairRule"]


@dataclass(frozen=True, order=True)
class PairRule:
    """A Ryan-Foster branching rule: two layers in the same subgraph, or in different ones.

    Attributes
    ----------
    first, second
        The layers (``first < second``).
    together
        Whether they share a subgraph (else they are apart).
    """

    first: int
    second: int
    together: bool

    def __post_init__(self) -> None:
        if not 0 <= self.first < self.second:
            raise ValueError(f"a pair rule needs two layers first < second, got ({self.first}, {self.second})")

    def admits(self, members: Collection[int]) -> bool:
        """Whether a subgraph (its layers) may be chosen under the rule."""
        first, second = self.first in members, self.second in members
        return first == second if self.together else not (first and second)

    def __str__(self) -> str:
        return f"{self.first}{'+' if self.together else '|'}{self.second}"
