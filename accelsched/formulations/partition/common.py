"""What the exact partition models share: the variants of the columns, their objective
coefficients, the objective at a solution, decoding an order, warm starts and the Result.

A *variant* is a column held on chip in one of its modes (:class:`Mode`). Its
requirement is the index of the smallest candidate capacity that holds it, per
buffer list; a mode that needs at least the candidates an earlier (cheaper) mode
needs is never the one :meth:`SubgraphCost.mode_for` picks and is left out. The
objective coefficients come from the cost model: a variant costs ``w * metric``
(``w = alpha`` in co-exploration, 1 with fixed capacities) and a capacity
candidate costs its bytes in co-exploration (0 otherwise). At a solution, every
subgraph takes the cheapest mode its capacities hold, which is exactly what the
evaluator does, so the models' objective at a decoded solution is the evaluator's.
"""

from __future__ import annotations

import bisect
import dataclasses
import heapq
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from accelsched.errors import InfeasibleSolution
from accelsched.formulations.partition.bound import compulsory_bound, forced_traffic_bound
from accelsched.formulations.partition.rules import PairRule
from accelsched.hardware.cost.partition import Mode
from accelsched.problems.partition import PROBLEM, Metric, PartitionInstance, PartitionSolution, check
from accelsched.problems.partition_columns import Column, ColumnSet, mask_of
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = [
    "Assignment",
    "InnerPoint",
    "OpenNode",
    "Prepared",
    "TreeState",
    "Variant",
    "VariantTable",
    "checked_warm_start",
    "execution_order",
    "infeasible_result",
    "partition_result",
]


@dataclass(frozen=True)
class Variant:
    """A column in one mode.

    Attributes
    ----------
    column
        Index of the column in :attr:`VariantTable.columns`.
    mode
        The mode.
    metric
        The metric of the column in this mode (bytes or pJ).
    act_index
        Index of the smallest activation (or shared) candidate that holds the mode.
    weight_index
        Index of the smallest weight candidate that holds it (0 with a shared buffer).
    """

    column: int
    mode: Mode
    metric: float
    act_index: int
    weight_index: int


@dataclass(frozen=True)
class Assignment:
    """A partition in the models' terms.

    Attributes
    ----------
    variants
        The chosen variants, in execution order.
    act_index, weight_index
        The chosen candidates (``weight_index`` is 0 with a shared buffer).
    """

    variants: tuple[int, ...]
    act_index: int
    weight_index: int


class VariantTable:
    """The columns of an instance, their variants, and the objective coefficients.

    Parameters
    ----------
    instance
        The partition instance.
    columns
        Its enumerated columns.
    extra
        Subgraphs (layer indices) to add as columns when the set lacks them (the
        subgraphs of a warm start). Every single layer is added too when missing (an
        incomplete set may lack some), so that a partition always exists.
    """

    def __init__(self, instance: PartitionInstance, columns: ColumnSet, extra: Sequence[Sequence[int]] = ()) -> None:
        self.instance = instance
        self.complete = columns.complete
        self.column_set = columns
        self.act_bytes = instance.act_candidates_bytes
        self.weight_bytes = instance.weight_candidates_bytes or (0,)
        self.metric_weight = instance.alpha if instance.co_exploration else 1.0
        self.capacity_weight = 1.0 if instance.co_exploration else 0.0
        succs = instance.cost_model.succs
        self.edges = sorted({(u, v) for u, vs in enumerate(succs) for v in vs})
        self.columns: list[Column] = []
        self._column_of: dict[int, int] = {}
        self.variants: list[Variant] = []
        self._variant_of: dict[tuple[int, str], int] = {}
        self.covering: list[list[int]] = [[] for _ in range(instance.n_layers)]
        self.together: dict[tuple[int, int], list[int]] = {edge: [] for edge in self.edges}
        for column in columns.columns:
            self._append(column)
        for members in [*extra, *((i,) for i in range(instance.n_layers))]:
            self.add(members)

    def add(self, members: Sequence[int]) -> list[int]:
        """Add a subgraph as a column unless it is one already; the indices of its new variants."""
        if mask_of(members) in self._column_of:
            return []
        cost = self.instance.cost_model.subgraph(members)
        return self._append(Column(cost.members, cost))

    def has(self, members: Sequence[int]) -> bool:
        """Whether a subgraph is a column of the table."""
        return mask_of(members) in self._column_of

    def column_of(self, members: Sequence[int]) -> int:
        """The index of a subgraph's column, added first when it is not one yet."""
        self.add(members)
        return self._column_of[mask_of(members)]

    def _append(self, column: Column) -> list[int]:
        """Index a column, its variants and the layers and edges they hold."""
        k = len(self.columns)
        self._column_of[mask_of(column.members)] = k
        self.columns.append(column)
        first = len(self.variants)
        self._add_variants(k, column)
        succs = self.instance.cost_model.succs
        inside = set(column.members)
        for j in range(first, len(self.variants)):
            for u in column.members:
                self.covering[u].append(j)
                for v in succs[u]:
                    if v in inside:
                        self.together[u, v].append(j)
        return list(range(first, len(self.variants)))

    def _add_variants(self, k: int, column: Column) -> None:
        """The modes of a column that fit the largest candidates and are not dominated by a cheaper one."""
        kept: list[tuple[int, int]] = []
        for mode in column.cost.modes:
            need = self._requirement(mode)
            if need is None or any(a <= need[0] and w <= need[1] for a, w in kept):
                continue
            kept.append(need)
            self._variant_of[k, mode.name] = len(self.variants)
            metric = self.instance.metric_of(column.cost, mode)
            self.variants.append(Variant(k, mode, metric, need[0], need[1]))

    def _requirement(self, mode: Mode) -> tuple[int, int] | None:
        """(activation or shared index, weight index) of the smallest candidates holding ``mode``."""
        if self.instance.shared:
            a = bisect.bisect_left(self.act_bytes, mode.act_bytes + mode.weight_bytes)
            return (a, 0) if a < len(self.act_bytes) else None
        a = bisect.bisect_left(self.act_bytes, mode.act_bytes)
        w = bisect.bisect_left(self.weight_bytes, mode.weight_bytes)
        return (a, w) if a < len(self.act_bytes) and w < len(self.weight_bytes) else None

    def levels(self, weights: bool = False) -> dict[int, list[tuple[int, list[int]]]]:
        """The levels each layer's variants need, for the capacity rows of the models.

        For every layer ``i``: ``(k, the variants covering i that need level exactly k)``
        for every level ``k > 0`` some of them need, by increasing ``k`` (layers whose
        variants all fit the smallest candidate are left out). Levels index the
        activation (or shared) candidates, or the weight candidates when ``weights``.
        """
        out: dict[int, list[tuple[int, list[int]]]] = {}
        for i, variants in enumerate(self.covering):
            by_level: dict[int, list[int]] = {}
            for j in variants:
                level = self.variants[j].weight_index if weights else self.variants[j].act_index
                if level:
                    by_level.setdefault(level, []).append(j)
            if by_level:
                out[i] = sorted(by_level.items())
        return out

    # ------------------------------------------------------------ coefficients
    def variant_coefficient(self, j: int) -> float:
        """Objective coefficient of variant ``j``: ``alpha * metric`` or ``metric``."""
        return self.metric_weight * self.variants[j].metric

    def act_coefficient(self, k: int) -> float:
        """Objective coefficient of activation (or shared) candidate ``k``."""
        return self.capacity_weight * self.act_bytes[k]

    def weight_coefficient(self, k: int) -> float:
        """Objective coefficient of weight candidate ``k`` (0 with a shared buffer)."""
        return self.capacity_weight * self.weight_bytes[k]

    def needs(self, assignment: Assignment, weights: bool = False) -> dict[tuple[int, int], int]:
        """The values of the models' level variables at an assignment: 1 when layer ``i``'s
        subgraph needs level ``k`` or more (keys as in :meth:`levels`)."""
        level = {}
        for j in assignment.variants:
            variant = self.variants[j]
            for i in self.members(j):
                level[i] = variant.weight_index if weights else variant.act_index
        return {(i, k): int(level[i] >= k) for i, steps in self.levels(weights).items() for k, _ in steps}

    @property
    def objective_step(self) -> float:
        """The objective's granularity: 1 when every partition's objective is a whole number (external
        memory access in bytes, and an integral alpha in co-exploration), else 0.

        A bound above ``U - 1`` then proves that no partition beats an objective ``U``."""
        instance = self.instance
        whole = instance.metric is Metric.EMA and float(self.metric_weight).is_integer()
        return 1.0 if whole else 0.0

    def objective(self, assignment: Assignment) -> float:
        """The models' objective at an assignment, from the coefficients above."""
        total = self.act_coefficient(assignment.act_index) + self.weight_coefficient(assignment.weight_index)
        return total + math.fsum(self.variant_coefficient(j) for j in assignment.variants)

    # ---------------------------------------------------------- solutions
    def members(self, j: int) -> tuple[int, ...]:
        """Layers of variant ``j``."""
        return self.columns[self.variants[j].column].members

    def settle(self, chosen: Sequence[int], priority: Sequence[float], act_index: int, weight_index: int) -> Assignment:
        """The assignment of chosen variants under chosen capacities, in execution order.

        Every chosen column takes the cheapest mode the capacities hold (a solver may
        return a costlier one that also fits: it is never better), and the columns are
        ordered topologically, ties broken by ``priority`` (the models' order values).
        """
        act, weight = self.act_bytes[act_index], self.weight_bytes[weight_index]
        settled = []
        for j in chosen:
            column = self.variants[j].column
            mode = self.columns[column].cost.mode_for(self.instance.shared, act, weight)
            if mode is None:
                raise ValueError(f"variant {j} does not fit the chosen capacities {act} B / {weight} B")
            settled.append(self._variant_of[column, mode.name])
        order = execution_order(self.instance, [self.members(j) for j in settled], priority)
        return Assignment(tuple(settled[k] for k in order), act_index, weight_index)

    def solution(self, assignment: Assignment) -> PartitionSolution:
        """The partition solution of an assignment."""
        return PartitionSolution.from_indices(
            self.instance,
            [self.members(j) for j in assignment.variants],
            self.act_bytes[assignment.act_index],
            self.weight_bytes[assignment.weight_index],
        )

    def assignment(self, solution: PartitionSolution) -> Assignment:
        """The assignment of a checked solution whose subgraphs are all columns of the table."""
        act_index = self.act_bytes.index(solution.act_capacity_bytes)
        weight_index = self.weight_bytes.index(solution.weight_capacity_bytes)
        chosen = [self._column_of[mask_of(members)] for members in solution.indices(self.instance)]
        variants = []
        for column in chosen:
            mode = self.columns[column].cost.mode_for(
                self.instance.shared, solution.act_capacity_bytes, solution.weight_capacity_bytes
            )
            if mode is None:
                raise ValueError(f"subgraph {self.columns[column].members} does not fit the solution's capacities")
            variants.append(self._variant_of[column, mode.name])
        return Assignment(tuple(variants), act_index, weight_index)


def execution_order(
    instance: PartitionInstance, blocks: Sequence[Sequence[int]], priority: Sequence[float]
) -> list[int]:
    """Indices of ``blocks`` in a topological order of the block graph, smallest priority first.

    Raises
    ------
    ValueError
        If the blocks do not partition the layers or their graph has a cycle.
    """
    where = {i: k for k, block in enumerate(blocks) for i in block}
    if len(where) != instance.n_layers or sum(map(len, blocks)) != instance.n_layers:
        raise ValueError("the chosen subgraphs do not partition the layers")
    successors: list[set[int]] = [set() for _ in blocks]
    for v, preds in enumerate(instance.cost_model.preds):
        for p in preds:
            if where[p] != where[v]:
                successors[where[p]].add(where[v])
    indegree = [0] * len(blocks)
    for succ in successors:
        for k in succ:
            indegree[k] += 1
    ready = [(priority[k], min(blocks[k]), k) for k in range(len(blocks)) if not indegree[k]]
    heapq.heapify(ready)
    order = []
    while ready:
        _, _, k = heapq.heappop(ready)
        order.append(k)
        for s in successors[k]:
            indegree[s] -= 1
            if not indegree[s]:
                heapq.heappush(ready, (priority[s], min(blocks[s]), s))
    if len(order) != len(blocks):
        raise ValueError("the chosen subgraphs form a cycle")
    return order


def checked_warm_start(
    instance: PartitionInstance, warm_start: PartitionSolution | None
) -> tuple[PartitionSolution | None, str]:
    """The warm start if it passes the problem's check, and a note for the stats."""
    if warm_start is None:
        return None, ""
    try:
        check(instance, warm_start)
    except InfeasibleSolution as exc:
        return None, f"warm start rejected: {exc}"
    return warm_start, "warm start given"


@dataclass(frozen=True)
class InnerPoint:
    """Cover duals at which column generation proved every missing column's reduced cost non-negative
    (its inner point, :mod:`~accelsched.formulations.partition.colgen`), and the bound they prove.

    With fixed capacities such a point, proven for one pair of capacities, is one for every pair
    within it too: a smaller pair's subgraphs are some of the larger's, a single layer's modes
    under it cost at least its cheapest mode under the larger, and its least metric is at least
    the larger's, so the bound holds there as well. A pair's solve may start from the inner point
    of any pair containing it (:mod:`~accelsched.formulations.partition.capacity`, kept across
    runs by :mod:`~accelsched.formulations.partition.ledger`).

    Attributes
    ----------
    duals
        One per layer.
    bound
        The lower bound of the objective they prove.
    """

    duals: tuple[float, ...]
    bound: float


@dataclass(frozen=True)
class OpenNode:
    """A node of a fixed-capacity instance's branch-and-price tree that a run left open
    (:mod:`~accelsched.formulations.partition.branch`).

    Attributes
    ----------
    rules
        The pair rules its partitions keep.
    inner
        The cover duals its column generation starts from, proven an inner point under its rules,
        and its bound (the least objective of its partitions).
    exact
        Whether its column generation must run until the master is optimal (it was to be priced
        again after an integral vertex that did not settle it).
    cut_rounds
        The rounds of subset-row cuts it has had, so that a resumed node does not get more than its
        ``subset_row_rounds`` (:class:`~accelsched.formulations.partition.proof_params.BranchParams`).
    """

    rules: frozenset[PairRule]
    inner: InnerPoint
    exact: bool = False
    cut_rounds: int = 0


@dataclass(frozen=True)
class TreeState:
    """What a run's branch-and-price tree leaves for the next run of the same instance: its open
    nodes, whose partitions are every partition not in a node it closed.

    Resumed from its open nodes, the tree proves what it would have proven had it run on: the
    partitions of the nodes it closed are none below :attr:`level`, or one of objective at least
    :attr:`closed` that was offered to the incumbent. So a resume is exact when the incumbent's
    prune level is at most :attr:`level` (a lower incumbent prunes more; a higher one would reopen
    closed nodes), and its bound is at most :attr:`closed`.

    Attributes
    ----------
    nodes
        The open nodes.
    closed
        The least bound of the nodes closed so far (inf when none was).
    level
        The prune level (:meth:`~accelsched.formulations.partition.colgen.ColumnGeneration.prune_level`)
        at the end of the run: the least any node was closed at (the incumbent only falls).
    cycles
        The cycles cut from the master (each its subgraphs: no partition holds them all, as they
        cannot be ordered), so that a resumed node does not find and cut them again.
    cuts
        The subset-row cuts of the master (layer triples, :mod:`~accelsched.formulations.partition.cuts`),
        in their order: a node's inner point holds the cover duals, then the duals of the first of
        these (zeros for the rest).
    """

    nodes: tuple[OpenNode, ...]
    closed: float
    level: float
    cycles: tuple[tuple[tuple[int, ...], ...], ...] = ()
    cuts: tuple[tuple[int, int, int], ...] = ()

    @property
    def bound(self) -> float:
        """The bound the tree proves: the least over its open nodes and :attr:`closed`."""
        return min([*(node.inner.bound for node in self.nodes), self.closed])


def keep_last_tree(trees: dict[tuple[int, int], TreeState], key: tuple[int, int], tree: TreeState | None) -> None:
    """Store ``tree`` as ``trees[key]``, or drop the entry when the last solve left no tree."""
    if tree is None:
        trees.pop(key, None)
    else:
        trees[key] = tree


def keep_better_inner(
    points: dict[tuple[int, int], InnerPoint], key: tuple[int, int], point: InnerPoint | None
) -> None:
    """Store ``point`` as ``points[key]`` when there is none yet or it proves a higher bound."""
    if point is not None and (key not in points or point.bound > points[key].bound):
        points[key] = point


@dataclass(frozen=True)
class Prepared:
    """What a model-based method builds before its solver runs.

    Attributes
    ----------
    table
        Columns (with the warm start's subgraphs) and variants.
    warm
        The warm start as an assignment, or None.
    notes
        What the stats say about the warm start.
    deadline
        The :func:`time.perf_counter` value of the time limit, or None.
    generated
        Whether ``warm`` is column generation's partition (better than the warm start, or
        found without one) rather than the warm start.
    inner
        The root column generation's inner point (fixed capacities), or None.
    tree
        The open nodes of its branch-and-price tree when the tree stopped short of the proof
        (:attr:`Outcome.left <accelsched.formulations.partition.colgen_core.Outcome>`), or None.
    proven_bound
        The best bound proven over every column (fixed capacities), by the root's column
        generation or the branch-and-price tree, or None (neither ran, or neither proved one). It
        may pass a cutoff, past which the final model's bound over :attr:`table` says nothing.
    proof_deadline
        The :func:`time.perf_counter` value the capacity decomposition's pairs were solved until
        (:attr:`Decomposition.deadline
        <accelsched.formulations.partition.capacity_points.Decomposition>`: all but the final share of
        the limit), or None (no limit, or no decomposition ran).
    """

    table: VariantTable
    warm: Assignment | None
    notes: tuple[str, ...]
    deadline: float | None
    generated: bool = False
    inner: InnerPoint | None = None
    tree: TreeState | None = None
    proven_bound: float | None = None
    proof_deadline: float | None = None

    @property
    def start_label(self) -> str:
        """What the solvers' start is, for the stats."""
        return "column generation's partition" if self.generated else "the warm start"

    def solver_options(self, options: SolveOptions) -> SolveOptions:
        """The options for the solver: presolve off, and the time left."""
        options = dataclasses.replace(options, presolve=False)
        if self.deadline is None:
            return options
        return dataclasses.replace(options, time_limit_s=max(self.deadline - time.perf_counter(), 1e-3))


def infeasible_result(instance: PartitionInstance, method: str, backend: str) -> Result[PartitionSolution] | None:
    """INFEASIBLE with the instance's reason when some layer fits no candidate, else None."""
    reason = instance.infeasibility
    if reason is None:
        return None
    return Result.no_solution(Status.INFEASIBLE, PROBLEM.name, method, reason, backend=backend)


def partition_result(
    table: VariantTable,
    *,
    method: str,
    backend: str,
    status: Status,
    found: Assignment | None,
    bound: float | None,
    warm: Assignment | None,
    seed: int,
    stats: SolveStats,
    notes: Sequence[str] = (),
    start_label: str = "the warm start",
    runtime_s: float = 0.0,
) -> Result[PartitionSolution]:
    """The Result of an exact model from what its solver found.

    The objective is :meth:`VariantTable.objective` at the returned assignment. The
    start (``warm``: the warm start, or column generation's partition, named by
    ``start_label``) is returned instead of a worse (or, after a limit, missing)
    solution, so a result is never worse than its warm start. With an incomplete column
    set the status is at best FEASIBLE, and the solver's bound (valid only for the
    listed columns) is replaced by the larger of the forced-traffic bound
    (:func:`~accelsched.formulations.partition.bound.forced_traffic_bound`, at least
    :func:`~accelsched.formulations.partition.bound.compulsory_bound`) and the bound column
    generation (in co-exploration: the capacity decomposition) proved, and the native status says
    which. ``runtime_s`` may be left at 0: :func:`~accelsched.registry.run_method` times every
    method and overwrites it.
    """
    if warm is not None and status in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION):
        value = table.objective(warm)
        if found is None or value < table.objective(found) - 1e-9 * max(1.0, abs(value)):
            found = warm
            notes = (*notes, f"{start_label} is returned: the solver found nothing better")
            if not status.has_solution:
                status = Status.FEASIBLE
    if not table.complete:
        forced = forced_traffic_bound(table)
        if forced is None:
            bound, name = compulsory_bound(table), "compulsory traffic"
        else:
            bound, name = forced.value, "forced traffic"
        proven = table.column_set.bound
        if proven is not None and proven > bound:
            bound, name = (
                proven,
                "the capacity decomposition's bound" if table.instance.co_exploration else "column generation's bound",
            )
        notes = (*notes, f"{table.column_set.stopped}: optimality not proven, bound = {name}")
        if status is Status.OPTIMAL:
            status = Status.FEASIBLE
    objective = None if found is None else table.objective(found)
    if objective is not None and bound is not None:
        bound = min(bound, objective)
    native = "; ".join([stats.native_status, *notes])
    return Result(
        status,
        PROBLEM.name,
        method,
        solution=None if found is None else table.solution(found),
        objective=objective,
        bound=bound if status.has_solution or status is Status.TIME_LIMIT_NO_SOLUTION else None,
        runtime_s=runtime_s,
        backend=backend,
        seed=seed,
        stats=SolveStats(stats.iterations, stats.nodes, stats.trace, native),
    )
