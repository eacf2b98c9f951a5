r"""Brute force for the multicore problem: every allocation, each with an exact schedule (method ``enumerate``).

The independent oracle of :mod:`accelsched.formulations.multicore_cpsat`: it shares
only the problem's rules and the cost primitives with it, and no solver.

Space
-----
The CP-SAT model's: every schedule the checker accepts in which each non-streamed
layer's weights are loaded once, before its first CN, and stay resident until its last
CN ends. For an allocation the activities are fixed by the rules of
:mod:`accelsched.problems.multicore` (CNs, transfers, spills, fetches, input loads,
output stores, weight loads), and so is the energy; only the start times remain.

Schedule of one allocation
--------------------------
A depth-first branch and bound that posts precedences (disjunctive scheduling):

* a node is a set of precedences ``start_j >= start_i + lag`` (the rules' order, the
  stack barriers, and those posted by branching); its earliest-start schedule is the
  longest path from time 0 (a cycle closes the node);
* a conflict of that schedule is either two activities overlapping on a unary
  resource (a core, the bus, the DRAM port), branched as ``a`` before ``b`` or ``b``
  before ``a``, or a set of resident layers whose weights exceed a core's weight
  memory at some cycle, branched on every ordered pair ``(i, j)`` of the set as ``i``'s
  last CN ends before ``j``'s load starts (intervals on a line that pairwise overlap
  share a point, so a feasible schedule separates some pair);
* a node without conflict is a feasible schedule. Every feasible schedule satisfies
  the precedences of some leaf, whose earliest-start schedule is no later anywhere,
  so the best leaf has the least makespan;
* lower bound: the larger of the earliest-start makespan and, per unary resource and
  set of its activities, their least earliest start plus their durations plus their
  least tail (the time from an end to the end of the schedule).

Latency is the best makespan over all allocations (one incumbent shared by them, the
allocations tried by increasing root bound); energy is the evaluator's energy of any
schedule of the allocation (a function of the allocation in this space); EDP is, per
allocation, its energy times its least makespan. Instances with more than
``max_activities`` activities for some allocation or more than ``max_allocations``
allocations (:class:`EnumerateParams`) are refused (TIME_LIMIT_NO_SOLUTION with the
reason), and a time limit or the node limit ``max_nodes`` returns the best schedule
found so far (FEASIBLE).
"""

from __future__ import annotations

import itertools
import math
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from accelsched.problems.base import MethodSpec
from accelsched.problems.multicore import (
    PROBLEM,
    MulticoreInstance,
    MulticoreSolution,
    OffChipAccess,
    Transfer,
    cn_cost,
    offchip_cycles,
    transfer_cycles,
)
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["METHODS", "EnumerateParams", "Project", "build_project", "enumerate_method", "schedule_allocation",
           "solve_enumerate"]  # fmt: skip


@dataclass(frozen=True)
class EnumerateParams:
    """Limits of the brute force, validated at construction.

    Parameters
    ----------
    max_activities
        Largest number of activities of one allocation the method schedules exactly (>= 1).
    max_allocations
        Largest number of allocations the method enumerates (>= 1).
    max_nodes
        Branch-and-bound nodes over all allocations after which the search stops with the best schedule so far
        (>= 1), or None for no limit.
    """

    max_activities: int = 16
    max_allocations: int = 256
    max_nodes: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_activities", "max_allocations", "max_nodes"):
            value = getattr(self, name)
            if value is None and name == "max_nodes":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"EnumerateParams: field {name} must be an integer >= 1, got {value!r}")


class _TimeUp(Exception):
    """The deadline or the node limit passed during a search."""


@dataclass(frozen=True)
class Activity:
    """One activity: ``kind`` (cn, transfer, input, weights, output, spill, fetch), its CN, core, duration and
    unary resource (``core <id>``, ``bus``, ``dram``)."""

    kind: str
    cn: int
    core: int
    duration: int
    resource: str


@dataclass
class Project:
    """The activities of one allocation, their precedences and the weight-memory residencies.

    Attributes
    ----------
    activities
        Every activity.
    arcs
        ``(i, j, lag)``: activity ``j`` starts at least ``lag`` cycles after ``i`` starts.
    residencies
        Per core, ``(load activity, CN activities served, bytes)`` of each layer loaded once.
    capacity
        Weight-memory bytes per core.
    """

    activities: list[Activity] = field(default_factory=list)
    arcs: list[tuple[int, int, int]] = field(default_factory=list)
    residencies: dict[int, list[tuple[int, tuple[int, ...], int]]] = field(default_factory=dict)
    capacity: dict[int, int] = field(default_factory=dict)

    def add(self, kind: str, cn: int, core: int, duration: int, resource: str) -> int:
        """Append an activity and return its index."""
        self.activities.append(Activity(kind, cn, core, duration, resource))
        return len(self.activities) - 1

    def after(self, i: int, j: int) -> None:
        """``j`` starts after ``i`` ends."""
        self.arcs.append((i, j, self.activities[i].duration))


def build_project(instance: MulticoreInstance, allocation: Mapping[str, int]) -> Project:
    """The activities and precedences the rules of the problem give ``allocation`` (one load per kept layer)."""
    graph, workload = instance.graph, instance.workload
    core_of = [allocation[cn.layer] for cn in graph.cns]
    pr = Project()
    cn = [pr.add("cn", k, core_of[k], cn_cost(instance, k, core_of[k]).duration_cycles, f"core {core_of[k]}")
          for k in range(len(graph.cns))]  # fmt: skip
    delivery: dict[tuple[int, int], int] = {}  # (producer CN, consumer core) -> transfer or fetch activity
    for p in range(len(graph.cns)):
        dests = sorted({core_of[q] for q in graph.successors[p]})
        if instance.spills(graph.cns[p].layer, core_of[p]):
            spill = pr.add("spill", p, core_of[p], offchip_cycles(instance, "spill", p), "dram")
            pr.after(cn[p], spill)
            for dest in dests:
                delivery[p, dest] = pr.add("fetch", p, dest, offchip_cycles(instance, "fetch", p), "dram")
                pr.after(spill, delivery[p, dest])
            continue
        for dest in dests:
            if dest != core_of[p]:
                delivery[p, dest] = pr.add("transfer", p, dest, transfer_cycles(instance, p), "bus")
                pr.after(cn[p], delivery[p, dest])
    for p, q in graph.edges:
        pr.after(delivery.get((p, core_of[q]), cn[p]), cn[q])
    for j in range(len(graph.cns)):
        if graph.input_bytes(j) > 0:
            load = pr.add("input", j, core_of[j], offchip_cycles(instance, "input", j), "dram")
            for q in graph.input_readers[j]:
                pr.after(load, cn[q])
        if graph.cns[j].layer in workload.sinks:
            pr.after(cn[j], pr.add("output", j, core_of[j], offchip_cycles(instance, "output", j), "dram"))
    for name in workload.names:
        layer, members, core = workload[name], graph.by_layer[name], allocation[name]
        if not (layer.kind.has_parameters and layer.weight_bytes > 0):
            continue
        duration = offchip_cycles(instance, "weights", members[0])
        if instance.streams_weights(name, core):
            for k in members:
                pr.after(pr.add("weights", k, core, duration, "dram"), cn[k])
            continue
        load = pr.add("weights", members[0], core, duration, "dram")
        for k in members:
            pr.after(load, cn[k])
        pr.residencies.setdefault(core, []).append((load, tuple(cn[k] for k in members), layer.weight_bytes))
        pr.capacity[core] = instance.weight_capacity_bytes(instance.accelerator.core(core))
    stacks = sorted({c.stack for c in graph.cns})
    for before, after in itertools.pairwise(stacks):
        for a in (k for k in range(len(graph.cns)) if graph.cns[k].stack == before):
            for b in (k for k in range(len(graph.cns)) if graph.cns[k].stack == after):
                pr.after(cn[a], cn[b])
    return pr


class _Search:
    """Branch and bound over posted precedences for one project (see the module docstring)."""

    def __init__(self, project: Project, deadline: float | None) -> None:
        self.pr = project
        self.n = len(project.activities)
        self.d = [a.duration for a in project.activities]
        self.deadline = deadline
        self.node_limit: int | None = None
        self.nodes = 0
        by_resource: dict[str, list[int]] = defaultdict(list)
        for i, a in enumerate(project.activities):
            by_resource[a.resource].append(i)
        self.unary = [members for members in by_resource.values() if len(members) > 1]

    def longest(self, arcs: list[tuple[int, int, int]]) -> tuple[list[int], list[int]] | None:
        """Earliest starts and tails (least time from a start to the end) under ``arcs``; None on a cycle."""
        succ: list[list[tuple[int, int]]] = [[] for _ in range(self.n)]
        indegree = [0] * self.n
        for i, j, lag in arcs:
            succ[i].append((j, lag))
            indegree[j] += 1
        order = [i for i in range(self.n) if indegree[i] == 0]
        es = [0] * self.n
        for i in order:
            for j, lag in succ[i]:
                es[j] = max(es[j], es[i] + lag)
                indegree[j] -= 1
                if indegree[j] == 0:
                    order.append(j)
        if len(order) < self.n:
            return None
        tail = list(self.d)
        for i in reversed(order):
            for j, lag in succ[i]:
                tail[i] = max(tail[i], lag + tail[j])
        return es, tail

    def bound(self, es: list[int], tail: list[int]) -> int:
        """The lower bound of every schedule of the node."""
        best = max(s + t for s, t in zip(es, tail, strict=True))
        d = self.d
        for members in self.unary:
            for head in {es[i] for i in members}:
                later = sorted((tail[i] - d[i], d[i]) for i in members if es[i] >= head)
                work = 0
                for after, length in reversed(later):
                    work += length
                    best = max(best, head + work + after)
        return best

    def conflict(self, es: list[int]) -> list[list[tuple[int, int, int]]] | None:
        """The branches resolving the earliest conflict of ``es``, or None when it is feasible."""
        first: tuple[int, list[list[tuple[int, int, int]]]] | None = None
        for members in self.unary:
            ordered = sorted(members, key=lambda i: (es[i], i))
            for a, b in itertools.pairwise(ordered):
                if es[b] < es[a] + self.d[a]:
                    if first is None or es[b] < first[0]:
                        first = (es[b], [[(a, b, self.d[a])], [(b, a, self.d[b])]])
                    break
        for core, items in self.pr.residencies.items():
            spans = [(es[load], max(es[k] + self.d[k] for k in cns), b, n) for n, (load, cns, b) in enumerate(items)]
            for t in sorted({s for s, _, _, _ in spans}):
                alive = [span for span in spans if span[0] <= t < span[1]]
                if sum(b for _, _, b, _ in alive) > self.pr.capacity[core]:
                    if first is None or t < first[0]:
                        alive.sort(key=lambda span: span[1])
                        first = (t, [[(k, items[j][0], self.d[k]) for k in items[i][1]]
                                     for (_, _, _, i), (_, _, _, j) in itertools.permutations(alive, 2)])  # fmt: skip
                    break
        return None if first is None else first[1]

    def run(self, prune_at: float, first_leaf: bool = False) -> tuple[int, list[int]] | None:
        """The least makespan below ``prune_at`` with its starts (the first feasible one if ``first_leaf``)."""
        self.best: tuple[int, list[int]] | None = None
        self.prune_at = prune_at
        self.first_leaf = first_leaf
        self.seen: set[frozenset[tuple[int, int, int]]] = set()
        self._node(list(self.pr.arcs), frozenset())
        return self.best

    def root_bound(self) -> float:
        """The lower bound of the root node (infinite if its precedences have a cycle)."""
        found = self.longest(self.pr.arcs)
        return math.inf if found is None else self.bound(*found)

    def _node(self, arcs: list[tuple[int, int, int]], posted: frozenset[tuple[int, int, int]]) -> bool:
        """Explore a node; True asks the caller to stop (first leaf found)."""
        self.nodes += 1
        if self.node_limit is not None and self.nodes > self.node_limit:
            raise _TimeUp
        if self.deadline is not None and self.nodes % 256 == 0 and time.perf_counter() > self.deadline:
            raise _TimeUp
        if posted in self.seen:
            return False
        self.seen.add(posted)
        found = self.longest(arcs)
        if found is None:
            return False
        es, tail = found
        if self.bound(es, tail) >= self.prune_at:
            return False
        branches = self.conflict(es)
        if branches is None:
            makespan = max(s + d for s, d in zip(es, self.d, strict=True))
            self.best, self.prune_at = (makespan, es), makespan
            return self.first_leaf
        return any(self._node(arcs + branch, posted | frozenset(branch)) for branch in branches)


def _solution(
    instance: MulticoreInstance, allocation: Mapping[str, int], pr: Project, es: list[int]
) -> MulticoreSolution:
    names = [cn.name for cn in instance.graph.cns]
    starts, transfers, offchip = {}, [], []
    for a, s in zip(pr.activities, es, strict=True):
        if a.kind == "cn":
            starts[names[a.cn]] = s
        elif a.kind == "transfer":
            transfers.append(Transfer(names[a.cn], a.core, s))
        else:
            offchip.append(OffChipAccess(a.kind, names[a.cn], a.core, s))
    return MulticoreSolution(allocation, starts, tuple(transfers), tuple(offchip))


def schedule_allocation(
    instance: MulticoreInstance, allocation: Mapping[str, int], deadline: float | None = None
) -> tuple[int, MulticoreSolution]:
    """The least makespan of ``allocation`` in the space (module docstring) and a schedule reaching it.

    Raises
    ------
    TimeoutError
        ``deadline`` (a ``time.perf_counter()`` value) passed first.
    """
    pr = build_project(instance, allocation)
    try:
        found = _Search(pr, deadline).run(math.inf)
    except _TimeUp:
        raise TimeoutError("schedule_allocation: deadline reached") from None
    assert found is not None, "every allocation has a serial schedule"
    return found[0], _solution(instance, allocation, pr, found[1])


def solve_enumerate(
    instance: MulticoreInstance,
    options: SolveOptions,
    warm_start: object = None,
    params: EnumerateParams | None = None,
) -> Result[MulticoreSolution]:
    """The optimum over every allocation, each with an exact schedule (the warm start is not used).

    ``params`` gives the size and node limits (default :class:`EnumerateParams`).

    Returns
    -------
    Result
        OPTIMAL (bound = objective); TIME_LIMIT_NO_SOLUTION when the instance is too large (the reason says which
        limit) or the time or node limit ran out before any schedule; FEASIBLE with the best so far after a time
        or node limit; ERROR for the ``memory`` objective.
    """
    start = time.perf_counter()
    limits = params or EnumerateParams()
    max_activities, max_allocations = limits.max_activities, limits.max_allocations
    metric = instance.objective
    if metric not in ("latency", "energy", "edp"):
        return _none(Status.ERROR, f"objective {metric!r} is not supported by enumerate; supported: latency, "
                     "energy, edp", 0)  # fmt: skip
    names = instance.workload.names
    count = math.prod(len(instance.allowed_cores[n]) for n in names)
    if count > max_allocations:
        return _none(Status.TIME_LIMIT_NO_SOLUTION, f"too large for enumeration ({count} allocations > "
                     f"{max_allocations})", 0)  # fmt: skip
    allocations = [dict(zip(names, cores, strict=True))
                   for cores in itertools.product(*(instance.allowed_cores[n] for n in names))]  # fmt: skip
    searches = []
    for allocation in allocations:
        pr = build_project(instance, allocation)
        if len(pr.activities) > max_activities:
            return _none(Status.TIME_LIMIT_NO_SOLUTION, f"too large for enumeration ({len(pr.activities)} activities"
                         f" for one allocation > {max_activities})", 0)  # fmt: skip
        searches.append((allocation, pr, _Search(pr, None)))
    deadline = None if options.time_limit_s is None else start + options.time_limit_s
    searches.sort(key=lambda item: item[2].root_bound())
    best: tuple[float, float, MulticoreSolution] | None = None  # (objective, makespan, solution)
    nodes, status = 0, Status.OPTIMAL
    try:
        for allocation, pr, search in searches:
            search.deadline = deadline
            search.node_limit = None if limits.max_nodes is None else limits.max_nodes - nodes
            found = _best_of(instance, metric, allocation, search, best[0] if best else math.inf)
            nodes += search.nodes
            if found is not None:
                value, makespan, es = found
                best = (value, makespan, _solution(instance, allocation, pr, es))
    except _TimeUp:
        status = Status.FEASIBLE
    if best is None:
        return _none(Status.TIME_LIMIT_NO_SOLUTION, "time or node limit reached before a schedule was found", nodes)
    value, _, solution = best
    return Result(status, PROBLEM.name, "enumerate", solution=solution, objective=value,
                  bound=value if status is Status.OPTIMAL else None,
                  stats=SolveStats(iterations=len(searches), nodes=nodes, native_status=(
                      f"{len(searches)} allocations, {nodes} branch-and-bound nodes")))  # fmt: skip


def _best_of(
    instance: MulticoreInstance, metric: str, allocation: Mapping[str, int], search: _Search, incumbent: float
) -> tuple[float, int, list[int]] | None:
    """``(objective, makespan, starts)`` of the allocation's best schedule if better than ``incumbent``."""
    if metric == "latency":
        found = search.run(incumbent)
        return None if found is None else (float(found[0]), found[0], found[1])
    feasible = search.run(math.inf, first_leaf=True)
    assert feasible is not None, "every allocation has a serial schedule"
    energy = PROBLEM.evaluate(instance, _solution(instance, allocation, search.pr, feasible[1])).energy_pj
    if metric == "energy":
        return (energy, feasible[0], feasible[1]) if energy < incumbent else None
    found = search.run(incumbent / energy if energy > 0 else math.inf)
    return None if found is None else (energy * found[0], found[0], found[1])


def _none(status: Status, reason: str, nodes: int) -> Result[MulticoreSolution]:
    return Result.no_solution(status, PROBLEM.name, "enumerate", reason, iterations=nodes)


def enumerate_method(params: EnumerateParams, name: str = "enumerate") -> MethodSpec:
    """A method spec ``name`` running the brute force with ``params`` (for other limits than the default)."""
    return MethodSpec(
        name,
        PROBLEM.name,
        "exact",
        lambda instance, options, warm_start: replace(
            solve_enumerate(instance, options, warm_start, params), method=name
        ),
        "every allocation x an exact branch-and-bound schedule (one weight load per kept layer), tiny instances",
    )


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "enumerate",
        PROBLEM.name,
        "exact",
        solve_enumerate,
        "every allocation x an exact branch-and-bound schedule (one weight load per kept layer), tiny instances",
    ),
)
"""The brute-force method: ``enumerate``."""
