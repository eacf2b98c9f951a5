r"""Exhaustive enumeration of the partitions (Cocco's "enumeration" baseline), by dynamic programming
over the down-sets of the DAG; the exact oracle of the tests on graphs too large for brute force.

A valid partition run in the order :math:`S_1, \ldots, S_m` passes through the
down-sets (sets closed under predecessors) :math:`D_k = S_1 \cup \cdots \cup S_k`,
and :math:`S_{k+1}` is a column (:mod:`accelsched.problems.partition_columns`)
disjoint from :math:`D_k` whose members' predecessors outside it all lie in
:math:`D_k`. Conversely, every chain of such steps from the empty set to all
layers is a valid partition: each block is connected and fits, and every edge into
it comes from an earlier block. So the partitions are the paths of the graph of
down-sets, and the search walks that graph once, down-sets by increasing size.

At every down-set it keeps *labels* :math:`(a, w, c)`: a partial partition whose
modes need at least the :math:`a`-th activation (or shared) candidate and the
:math:`w`-th weight candidate, and whose metric sums to :math:`c`. Every mode of
every column is tried (its requirement raises :math:`a, w` to a maximum, its metric
adds to :math:`c`); a label no better than another in all three is dropped, which is
exact because later steps are monotone in all three. At the full set, the objective
of a label is the cost of the capacities :math:`(a, w)` plus :math:`\alpha c`
(co-exploration) or :math:`c` (fixed capacities); the minimum over labels is the
optimum, attained by an optimal partition with the cheapest modes its capacities
hold.

The number of down-sets grows exponentially with the width of the graph (a chain of
:math:`n` layers has :math:`n + 1`, :math:`n` independent layers :math:`2^n`); the
search gives up, without a solution, beyond ``max_states`` down-sets or when the
column set is incomplete.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import NamedTuple

from accelsched.formulations.partition.common import VariantTable, infeasible_result, partition_result
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PROBLEM, PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import DEFAULT_BUDGET, enumerate_columns, mask_of
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["DEFAULT_MAX_STATES", "METHODS", "DownSetSearch", "solve_enumerate"]

DEFAULT_MAX_STATES = 1_000_000
"""Default largest number of down-sets the search visits."""


class Label(NamedTuple):
    """A partial partition reaching a down-set: requirements, metric, and how it was reached."""

    act_index: int
    weight_index: int
    metric: float
    previous: int
    """The down-set before the last block (-1 for the empty start)."""
    previous_label: int
    variant: int
    """The variant of the last block (-1 for the empty start)."""


@dataclass(frozen=True)
class _Block:
    """A column as a step: its members, the predecessors it needs done, its variants."""

    mask: int
    needs: int
    variants: tuple[int, ...]


class DownSetSearch:
    """The dynamic program over the down-sets of an instance's DAG.

    Parameters
    ----------
    table
        Columns and variants of the instance (a complete column set).
    max_states
        Largest number of down-sets to visit.
    deadline
        A :func:`time.perf_counter` value at which the search stops.
    """

    def __init__(
        self, table: VariantTable, max_states: int = DEFAULT_MAX_STATES, deadline: float | None = None
    ) -> None:
        self.table = table
        self.max_states = max_states
        self.deadline = deadline
        model = table.instance.cost_model
        self.n = table.instance.n_layers
        self.pred_mask = [mask_of(ps) for ps in model.preds]
        by_column: dict[int, list[int]] = {}
        for j, variant in enumerate(table.variants):
            by_column.setdefault(variant.column, []).append(j)
        self.starting_at: list[list[_Block]] = [[] for _ in range(self.n)]
        for k, variants in by_column.items():
            members = table.columns[k].members
            mask = mask_of(members)
            needs = 0
            for i in members:
                needs |= self.pred_mask[i]
            self.starting_at[members[0]].append(_Block(mask, needs & ~mask, tuple(variants)))
        self.labels: dict[int, list[Label]] = {}
        self.stopped = ""

    def run(self) -> tuple[int, int] | None:
        """Walk the down-sets; the (down-set, label) of the optimum at the full set, or None when stopped."""
        full = (1 << self.n) - 1
        buckets: list[list[int]] = [[] for _ in range(self.n + 1)]
        self.labels = {0: [Label(0, 0, 0.0, -1, -1, -1)]}
        buckets[0].append(0)
        for size in range(self.n):
            for done in buckets[size]:
                if len(self.labels) > self.max_states:
                    self.stopped = (
                        f"too large for exhaustive enumeration ({self.n} layers, more than {self.max_states} down-sets)"
                    )
                    return None
                if self.deadline is not None and time.perf_counter() > self.deadline:
                    self.stopped = f"time limit reached after {len(self.labels)} down-sets"
                    return None
                for reached in self._extend(done):
                    buckets[reached.bit_count()].append(reached)
        final = self.labels[full]
        best = min(range(len(final)), key=lambda k: self._value(final[k]))
        return full, best

    def _extend(self, done: int) -> list[int]:
        """Append every block that can run after ``done`` to its labels; the down-sets reached first."""
        table = self.table
        reached = []
        labels = self.labels[done]
        for v in range(self.n):
            if done >> v & 1 or self.pred_mask[v] & ~done:
                continue
            for block in self.starting_at[v]:
                if block.mask & done or block.needs & ~done:
                    continue
                after = done | block.mask
                if after not in self.labels:
                    self.labels[after] = []
                    reached.append(after)
                target = self.labels[after]
                for j in block.variants:
                    variant = table.variants[j]
                    for k, label in enumerate(labels):
                        _insert(
                            target,
                            Label(
                                max(label.act_index, variant.act_index),
                                max(label.weight_index, variant.weight_index),
                                label.metric + variant.metric,
                                done,
                                k,
                                j,
                            ),
                        )
        return reached

    def _value(self, label: Label) -> float:
        table = self.table
        capacity = table.act_coefficient(label.act_index) + table.weight_coefficient(label.weight_index)
        return capacity + table.metric_weight * label.metric

    def path(self, done: int, k: int) -> tuple[list[int], int, int]:
        """The variants (in execution order) and capacity indices of label ``k`` at ``done``."""
        label = self.labels[done][k]
        act_index, weight_index = label.act_index, label.weight_index
        variants = []
        while label.variant >= 0:
            variants.append(label.variant)
            label = self.labels[label.previous][label.previous_label]
        return variants[::-1], act_index, weight_index


def _insert(labels: list[Label], new: Label) -> None:
    """Add ``new`` unless a label is at least as good in all three; drop the labels it beats."""
    for old in labels:
        if old.act_index <= new.act_index and old.weight_index <= new.weight_index and old.metric <= new.metric:
            return
    labels[:] = [
        old
        for old in labels
        if not (new.act_index <= old.act_index and new.weight_index <= old.weight_index and new.metric <= old.metric)
    ]
    labels.append(new)


def solve_enumerate(
    instance: PartitionInstance,
    options: SolveOptions,
    warm_start: PartitionSolution | None = None,
    *,
    budget: int = DEFAULT_BUDGET,
    max_states: int = DEFAULT_MAX_STATES,
) -> Result[PartitionSolution]:
    """The optimum by exhaustive search, or no solution when the graph is too large.

    Parameters
    ----------
    instance, options
        The partition instance, and its limits: the time limit covers the column enumeration and
        the search.
    warm_start
        Not used: the search is exhaustive.
    budget
        Column budget of :func:`enumerate_columns`; an incomplete column set gives no solution.
    max_states
        Largest number of down-sets visited.

    Returns
    -------
    Result
        OPTIMAL (bound = objective), INFEASIBLE, or TIME_LIMIT_NO_SOLUTION with the
        reason (too many down-sets, column budget, time limit) in ``stats.native_status``.
    """
    start = time.perf_counter()
    infeasible = infeasible_result(instance, "enumerate", "")
    if infeasible is not None:
        return infeasible
    deadline = None if options.time_limit_s is None else start + options.time_limit_s
    columns = enumerate_columns(instance, budget, deadline)
    if not columns.complete:
        reason = columns.stopped
        if columns.visited == columns.budget:
            reason = f"too large for exhaustive enumeration ({instance.n_layers} layers): {reason}"
        return _no_solution(reason)
    table = VariantTable(instance, columns)
    search = DownSetSearch(table, max_states, deadline)
    best = search.run()
    if best is None:
        return _no_solution(search.stopped)
    variants, act_index, weight_index = search.path(*best)
    found = table.settle(variants, list(range(len(variants))), act_index, weight_index)
    stats = SolveStats(iterations=len(search.labels), native_status=f"optimal over {len(search.labels)} down-sets")
    return partition_result(
        table,
        method="enumerate",
        backend="",
        status=Status.OPTIMAL,
        found=found,
        bound=table.objective(found),
        warm=None,
        seed=options.seed,
        stats=stats,
    )


def _no_solution(reason: str) -> Result[PartitionSolution]:
    return Result.no_solution(Status.TIME_LIMIT_NO_SOLUTION, PROBLEM.name, "enumerate", reason)


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "enumerate",
        PROBLEM.name,
        "exact",
        solve_enumerate,
        "exhaustive enumeration of the partitions by dynamic programming over the down-sets (small graphs)",
    ),
)
"""The enumeration method: ``enumerate``."""
