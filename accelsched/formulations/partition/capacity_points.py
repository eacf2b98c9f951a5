"""The pairs of candidates of a co-exploration instance, as the capacity decomposition sees them.

:class:`CapacityPoint` is one pair of candidates and what is known of its fixed-capacity problem,
:class:`PairState` where it stands for a report, :class:`Decomposition` what a run of the
decomposition (:class:`~accelsched.formulations.partition.capacity.CapacityDecomposition`) proved;
:func:`capacity_points` lists the pairs that hold every layer, and :func:`check_share` checks a
run's share of a divided proof against them. The notation (:math:`\\kappa(p)`, :math:`E^*(p)`,
:math:`L(p)`, :math:`c(p)`, :math:`C(p)`) is the decomposition's
(:mod:`~accelsched.formulations.partition.capacity`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from accelsched.errors import InputError
from accelsched.formulations.partition.bound import forced_traffic_per_pair
from accelsched.formulations.partition.common import VariantTable
from accelsched.problems.partition import PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import ColumnSet

__all__ = ["CapacityPoint", "Decomposition", "PairState", "capacity_points", "check_share"]


@dataclass
class CapacityPoint:
    """A pair of candidates and what is known of its fixed-capacity problem.

    Attributes
    ----------
    act_index, weight_index
        The candidates (``weight_index`` 0 with a shared buffer).
    act_bytes, weight_bytes
        Their capacities (``weight_bytes`` 0 with a shared buffer).
    lower
        A lower bound of :math:`E^*(p)`, the least metric of a partition under the pair.
    settled
        Whether the pair's problem was solved: its best partition is the optimum, or none is
        below its cutoff.
    """

    act_index: int
    weight_index: int
    act_bytes: int
    weight_bytes: int
    lower: float
    settled: bool = False

    @property
    def capacity_bytes(self) -> int:
        """:math:`\\kappa(p)`: the bytes of both buffers."""
        return self.act_bytes + self.weight_bytes

    def within(self, other: CapacityPoint) -> bool:
        """Whether both capacities are at most ``other``'s (then :math:`E^*` here is at least there)."""
        return self.act_bytes <= other.act_bytes and self.weight_bytes <= other.weight_bytes


@dataclass(frozen=True)
class PairState:
    r"""Where one pair of candidates stands (:meth:`CapacityDecomposition.states`).

    Attributes
    ----------
    act_bytes, weight_bytes
        The pair's capacities (``weight_bytes`` 0 with a shared buffer).
    floor
        :math:`\kappa(p) + \alpha L(p)`: the least objective a partition under the pair can have.
    lower
        :math:`L(p)`: the best lower bound known of :math:`E^*(p)` (the forced traffic, or a bound
        proven at the pair or at a pair above it).
    cutoff
        :math:`c(p)`: the metric a partition under the pair must beat to improve the incumbent (inf
        without one).
    open
        Whether the pair still has to be solved (its floor is below the incumbent).
    seconds
        Time the ledger's runs spent solving it (0 without a ledger or a solve).
    subgraphs
        Subgraphs the ledger keeps for its next solve.
    within
        Open pairs within it, itself included, that its root may settle by its reach: those whose
        cutoff is below its ceiling (0 when it is settled). A run solves the pair with the most
        first (module docstring, "Running order"); shares of a divided proof are best given such
        pairs.
    ceiling
        :math:`C(p)`: no bound its root's column generation proves passes it (module docstring,
        "Ceilings"; inf when unknown).
    tree_only
        Whether it is open and its ceiling is at or below its cutoff (less the proof's tolerance): its
        root cannot settle it, only its branch-and-price can.
    """

    act_bytes: int
    weight_bytes: int
    floor: float
    lower: float
    cutoff: float
    open: bool
    seconds: float
    subgraphs: int
    within: int
    ceiling: float = math.inf
    tree_only: bool = False


@dataclass(frozen=True)
class Decomposition:
    """What the decomposition proved and found.

    Attributes
    ----------
    complete
        Whether the incumbent is proven optimal (no open pair's bound is below it).
    bound
        A lower bound of the co-exploration objective.
    incumbent
        The best partition found, with its capacities, or None.
    solved
        Pairs whose fixed-capacity problem was solved (or tried, when the time ran out).
    pairs
        Pairs of candidates that hold every single layer.
    unsettled
        Pairs whose bound is still below the incumbent's objective (0 when complete).
    log
        One line per solved pair, in the order they finished: its capacities, cutoff, whether it was
        settled (or why it stopped open), its best partition, bound and time.
    workers
        Pairs solved at once: 1 when one after another in this process.
    deadline
        The :func:`time.perf_counter` value the pairs were solved until
        (:meth:`~accelsched.formulations.partition.capacity.CapacityDecomposition.run`), or None.
    """

    complete: bool
    bound: float
    incumbent: PartitionSolution | None
    solved: int
    pairs: int
    unsettled: int
    log: tuple[str, ...]
    workers: int = 1
    deadline: float | None = None


def capacity_points(instance: PartitionInstance) -> list[CapacityPoint]:
    """The pairs of candidates of a co-exploration instance that hold every single layer, each with
    its forced traffic as its first bound (activation or shared candidates first)."""
    table = VariantTable(instance, ColumnSet((), False, 0, 0))
    return [
        CapacityPoint(
            forced.act_index,
            forced.weight_index,
            table.act_bytes[forced.act_index],
            0 if instance.shared else table.weight_bytes[forced.weight_index],
            forced.metric,
        )
        for forced in forced_traffic_per_pair(table)
    ]


def check_share(
    instance: PartitionInstance, pairs: Collection[tuple[int, int]], points: Sequence[CapacityPoint] | None = None
) -> frozenset[tuple[int, int]]:
    """The pairs a run is given to solve (activation bytes, weight bytes), checked against the
    instance's pairs of candidates (``points``: :func:`capacity_points`, computed when None).

    Raises
    ------
    InputError
        A pair is not one of the instance's pairs of candidates, or some layer fits none of its
        buffers: the error names the pair and the candidates.
    """
    points = capacity_points(instance) if points is None else points
    known = {(point.act_bytes, point.weight_bytes) for point in points}
    for act, weight in sorted(pairs):
        if (act, weight) in known:
            continue
        kb = ", ".join(str(size // 1024) for size in instance.act_candidates_bytes)
        if instance.shared:
            options = f"the shared candidates are {kb} KB, with weight 0"
        else:
            weights = ", ".join(str(size // 1024) for size in instance.weight_candidates_bytes)
            options = f"the activation candidates are {kb} KB and the weight candidates {weights} KB"
        if act in instance.act_candidates_bytes and (
            weight in instance.weight_candidates_bytes or (instance.shared and weight == 0)
        ):
            options = "some layer does not fit its capacities, so no partition runs under it"
        raise InputError(
            f"pair {act // 1024}/{weight // 1024} KB ({act}/{weight} B) is not a pair of candidates of "
            f"{instance.workload.name} that holds every layer: {options}",
            "the pairs to solve (--pairs)",
            "give pairs listed by `python -m accelsched.bench.partition_tables ledger`, as ACT/WEIGHT in KB",
        )
    return frozenset(pairs)
