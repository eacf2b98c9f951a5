"""What the exact models over a column table share: their constraint families, built in one order.

The MILP (:class:`~accelsched.formulations.partition.milp_model.PartitionMilp`) and the CP-SAT model
(:class:`~accelsched.formulations.partition.cpsat.PartitionCpSat`) state the same families over the
variants of a :class:`~accelsched.formulations.partition.common.VariantTable`, each in its solver's
terms: every layer covered once, one candidate per buffer, capacities that hold the chosen modes,
an order of the subgraphs along the edges, and the objective.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

__all__ = ["TableModel"]


class TableModel(ABC):
    """A model over a column table, one method per constraint family (:meth:`build` states them all)."""

    def build(self) -> None:
        """State every family: cover, one capacity, capacities that hold, order, objective."""
        self.cover()
        self.one_capacity()
        self.capacity_holds()
        self.order()
        self.objective()

    @abstractmethod
    def cover(self) -> None:
        """Every layer is in exactly one chosen variant."""

    @abstractmethod
    def one_capacity(self) -> None:
        """Exactly one candidate per buffer."""

    @abstractmethod
    def capacity_holds(self) -> None:
        """A layer's subgraph is chosen only under capacities that hold its mode."""

    @abstractmethod
    def order(self) -> None:
        """The chosen subgraphs are ordered along the edges between them."""

    @abstractmethod
    def objective(self) -> None:
        """Capacity bytes plus alpha times the metric (co-exploration), or the metric (fixed capacities)."""
