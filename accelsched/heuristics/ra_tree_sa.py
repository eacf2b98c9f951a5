"""SET's simulated annealing over RA trees (methods ``sa``, ``sa-ls``, ``sa-lp``).

Protocol (the SET paper's): each chain starts from SET's layer-sequential tree (the
leaf batch halved until it passes ``check``; :func:`~accelsched.problems.ra_tree.set_ls_tree`) or the
warm start, draws one operator of :mod:`accelsched.heuristics.ra_tree_moves` per
iteration, evaluates the tree with the shared cost model, and accepts a worse tree
with probability ``exp(-(dC / C) / T)``, ``T_n = T0 (1 - n/N) / (1 + alpha n/N)`` with
``T0 = 0.07``, ``alpha = 8`` and ``N = 100 x layers`` iterations. For the last 10 % of
its iterations a chain restarts from the best tree it has seen. Several chains run
with independent seeds (chain ``i`` has the ``i``-th seed spawned from the run's seed)
and the best tree is returned: four at SET's ``T0``, as in SET's reference
implementation, and four *hot* chains at ``T0 = 2`` (a deviation, below). The chains run
in ``SolveOptions.threads`` processes, each process over its own cache of evaluated
trees; without a time limit the result does not depend on the number of processes.
Every number here is a field of :class:`RATreeSAParams`.

An iteration is a proposed neighbour: an operator that cannot apply to the current
tree (no two independent adjacent leaves to swap, no cut to delete, ...) is drawn
again, as in SET's reference implementation, instead of spending an iteration on
nothing. Operators are drawn with weights: ``group``, the only one that builds new
cuts, three times as often as each of the others.

Deviation from the paper: ``sa`` draws ``flip`` besides SET's six operators (a cut
below the root turns from S to T or back; ``sa-ls`` and ``sa-lp`` do not draw it,
every flip would leave their subspace). In SET's reference implementation a cut's kind
follows from its parent's (S below T and T below S, but for the root's children), and
deleting or grouping retypes the cuts they move; here, as in the problem's space
(:mod:`accelsched.formulations.ra_tree_enumerate` counts S and T labels freely), kinds
are free labels, and SET's six can change one only by deleting the cut and grouping
its children again, through a tree that can be much worse (``T 2/2 [a, b]`` to
``S 2/2 [a, b]`` inside a segment passes through ``[a, b, ...]`` ungrouped).
``python -m accelsched.bench.ra_tree rate``, with and without ``--six``, measures the
share of random instances on which the method reaches the enumeration optimum.

Deviation from the paper: the hot chains. On a small network one move changes the
cost by a large fraction of it, so SET's ``T0`` rarely accepts the climbs out of the
operators' local minima; a hotter ``T0`` alone spends the budget badly on large
networks, whose moves change the cost by a much smaller fraction. The two miss
different instances, so ``sa`` runs both: four chains at SET's ``T0`` (their seeds are
those of a run without hot chains, so the result is never worse than SET's four chains
with the same seed) and four at ``T0 = 2``. ``hot_chains = 0`` gives SET's protocol.
The measurements behind these choices are in ``docs/notes/ra-tree-notes.md``.

A tree that breaks a rule of the problem costs infinity (never accepted), and so does
one with an S-Cut whose tile allocation is unbalanced: the work of its children over
the cut's tiles times the bottleneck, ``sum_i NPT_i / (C max_i NPT_i / f_i)``, below
0.75 (SET's rule). ``sa-ls`` and ``sa-lp`` restrict the chains to the LS and LP
subspaces of :mod:`accelsched.formulations.ra_tree_dp` (moves leaving them are
rejected), as in the paper's comparison.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from functools import partial
from multiprocessing import get_context

import numpy as np

from accelsched.errors import InfeasibleSolution
from accelsched.heuristics.anneal import HyperbolicSchedule, anneal
from accelsched.heuristics.ra_tree_moves import EXTRA_OPERATORS, OPERATORS, neighbour
from accelsched.heuristics.stopping import AnyOf, MaxIterations, MaxRuntime, StoppingCriterion
from accelsched.problems.base import MethodSpec
from accelsched.problems.ra_tree import (
    PROBLEM,
    RATreeInstance,
    TreeAnalysis,
    buffer_overflow,
    check_structure,
    evaluate_tree,
    set_ls_tree,
)
from accelsched.problems.ra_tree.tree import Cut, CutKind, Leaf, RATree, sequential_tree
from accelsched.problems.result import Result
from accelsched.processes import can_spawn, exit_with_parent
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["METHODS", "SA_OPERATORS", "RATreeSAParams", "in_subspace", "solve_sa"]

SA_OPERATORS = (*OPERATORS, "flip")
"""The operators of ``sa``: SET's six and ``flip`` (module docstring)."""

@dataclass(frozen=True)
class RATreeSAParams:
    """Parameters of the RA-tree SA, validated at construction.

    Parameters
    ----------
    rounds_per_layer
        Iterations per chain per layer (SET: 100).
    chains
        Independent chains at SET's initial temperature ``t0``, >= 1 (SET's reference
        implementation: 4).
    t0, alpha
        SET's schedule.
    hot_chains
        Further chains at the initial temperature ``hot_t0``, >= 0 (module docstring:
        SET's ``t0`` is too cold for the coarse cost landscapes of small networks).
    hot_t0
        Initial temperature of the hot chains, > 0.
    restart_fraction
        Share of the iterations at the end of a chain that restart from its best tree.
    min_balance
        Least S-Cut balance accepted (SET: 0.75).
    subspace
        None (every tree), ``CutKind.T`` (LS) or ``CutKind.S`` (LP).
    operators
        The operators drawn (default :data:`SA_OPERATORS`: SET's six and ``flip``;
        :data:`accelsched.heuristics.ra_tree_moves.OPERATORS` for SET's six only).
    operator_weights
        ``(operator, weight)`` pairs: relative weights of the draw; an operator not
        named weighs 1 (default: ``group`` weighs 3).
    max_draws
        Draws of an operator per iteration before the iteration is given up (no
        operator applies), >= 1.
    """

    rounds_per_layer: int = 100
    chains: int = 4
    t0: float = 0.07
    alpha: float = 8.0
    hot_chains: int = 4
    hot_t0: float = 2.0
    restart_fraction: float = 0.1
    min_balance: float = 0.75
    subspace: CutKind | None = None
    operators: tuple[str, ...] = SA_OPERATORS
    operator_weights: tuple[tuple[str, float], ...] = (("group", 3.0),)
    max_draws: int = 64

    def __post_init__(self) -> None:
        unknown = sorted(set(self.operators) - set(OPERATORS) - set(EXTRA_OPERATORS))
        if not self.operators or unknown:
            raise ValueError(f"RATreeSAParams: field operators must name operators of ra_tree_moves, got {unknown}")
        for entry in self.operator_weights:
            if (
                not isinstance(entry, tuple)
                or len(entry) != 2
                or entry[0] not in OPERATORS + EXTRA_OPERATORS
                or isinstance(entry[1], bool)
                or not isinstance(entry[1], int | float)
                or not 0 < entry[1] < math.inf
            ):
                raise ValueError(
                    f"RATreeSAParams: field operator_weights must hold (operator, weight > 0) pairs, got {entry!r}"
                )
        for name, least in (("rounds_per_layer", 1), ("chains", 1), ("hot_chains", 0), ("max_draws", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"RATreeSAParams: field {name} must be an integer >= {least}, got {value!r}")
        for name, low, high in (("t0", 0, math.inf), ("hot_t0", 0, math.inf), ("alpha", 0, math.inf),
                                ("restart_fraction", 0, 1), ("min_balance", 0, 1)):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
                raise ValueError(f"RATreeSAParams: field {name} must be in [{low}, {high}], got {value!r}")
        for name in ("t0", "hot_t0"):
            if getattr(self, name) == 0:
                raise ValueError(f"RATreeSAParams: field {name} must be > 0, got 0")


def in_subspace(tree: RATree, kind: CutKind) -> bool:
    """Whether ``tree`` is in the LS (``T``) or LP (``S``) subspace: root segments of leaves or one-level cuts."""
    if tree.root.subbatches != 1:
        return False
    for segment in tree.root.children:
        if isinstance(segment, Cut) and (
            segment.kind is not kind or not all(isinstance(c, Leaf) for c in segment.children)
        ):
            return False
    return True


def balanced(analysis: TreeAnalysis, min_balance: float) -> bool:
    """Whether every S-Cut keeps its tiles busy: ``sum_i NPT_i / (C max_i NPT_i / f_i) >= min_balance``."""
    for info in analysis.nodes.values():
        if isinstance(info.node, Cut) and info.node.kind is CutKind.S:
            children = [analysis.nodes[f"{info.path}/{k}"] for k in range(len(info.node.children))]
            bottleneck = max(c.npt_cycles / len(c.tiles) for c in children)
            work = sum(c.npt_cycles for c in children)
            if work < min_balance * len(info.tiles) * bottleneck:
                return False
    return True


class _Chain:
    """The cost function of the chains, with a cache of the trees already evaluated."""

    def __init__(self, instance: RATreeInstance, params: RATreeSAParams) -> None:
        self.instance = instance
        self.params = params
        self.edges = frozenset(instance.workload.edges)
        self.cache: dict[str, float] = {}
        self.evaluations = 0
        self.weights = dict(params.operator_weights)

    def cost(self, tree: RATree) -> float:
        key = tree.to_text()
        found = self.cache.get(key)
        if found is None:
            found = self._cost(tree)
            self.cache[key] = found
        return found

    def _cost(self, tree: RATree) -> float:
        if self.params.subspace is not None and not in_subspace(tree, self.params.subspace):
            return math.inf
        try:
            check_structure(self.instance, tree)
        except InfeasibleSolution:
            return math.inf
        self.evaluations += 1
        cost = evaluate_tree(self.instance, tree)
        if buffer_overflow(self.instance, cost.segments) or not balanced(cost.analysis, self.params.min_balance):
            return math.inf
        return PROBLEM.objective(self.instance, tree, cost.report)

    def move(self, tree: RATree, rng: np.random.Generator) -> RATree | None:
        """A neighbour of ``tree``: operators are drawn until one applies (None after ``max_draws`` draws)."""
        for _ in range(self.params.max_draws):
            moved = neighbour(tree, self.edges, rng, operators=self.params.operators, weights=self.weights)
            if moved is not None:
                return moved
        return None


def _start_tree(instance: RATreeInstance) -> RATree:
    """Where a chain starts without a warm start: SET's LS tree (:func:`set_ls_tree`: every layer a leaf of the
    root T-Cut, at the largest leaf batch ``B, B/2, ...`` that passes ``check``), which is the
    layer-sequential tree whenever that one passes; the layer-sequential tree when no leaf batch passes."""
    try:
        return set_ls_tree(instance)
    except InfeasibleSolution:
        return sequential_tree(instance.workload)


def solve_sa(
    instance: RATreeInstance,
    options: SolveOptions | None = None,
    warm_start: RATree | None = None,
    params: RATreeSAParams | None = None,
    name: str = "sa",
    *,
    can_start_processes: Callable[[], bool] = can_spawn,
) -> Result[RATree]:
    """Anneal RA trees (module docstring).

    The chains run in ``options.threads`` processes (one process: in this one, over a
    cache shared by every chain). Without a time limit the result does not depend on
    the number of processes: chain ``i`` always has the ``i``-th seed spawned from
    ``options.seed`` and its own temperature, and the best tree is that of the first
    chain reaching the least cost. With a time limit it can: the limit stops every
    chain at the same moment, and chains run at once get more of it than chains run in
    turn.

    Parameters
    ----------
    instance, options, warm_start
        As for every method; ``options.threads`` is the number of processes.
    params
        The SA's parameters (default ``RATreeSAParams()``).
    name
        The method's name in the result.
    can_start_processes
        Whether worker processes can start from here (default
        :func:`accelsched.processes.can_spawn`); when it says no, the chains run in this
        process and the result says so. A hook for embedders that know better, and for
        tests of that fallback.

    Returns
    -------
    Result
        FEASIBLE with the best tree, or INFEASIBLE when not even the start tree is valid.
    """
    options = options or SolveOptions()
    chosen = params or RATreeSAParams()
    origin = time.time()
    chain = _Chain(instance, chosen)
    initial = warm_start if warm_start is not None else _start_tree(instance)
    initial_cost = chain.cost(initial)
    if not math.isfinite(initial_cost):
        reason = "the warm start" if warm_start is not None else "SET's layer-sequential tree"
        return Result.no_solution(
            Status.INFEASIBLE,
            PROBLEM.name,
            name,
            f"{reason} breaks a rule or is unbalanced",
        )
    count = chosen.chains + chosen.hot_chains
    seeds = np.random.SeedSequence(options.seed).spawn(count)
    temperatures = [chosen.t0] * chosen.chains + [chosen.hot_t0] * chosen.hot_chains
    workers = min(options.threads, count)
    plans = [
        _ChainPlan(instance, chosen, initial, tuple((i, seeds[i], temperatures[i]) for i in range(w, count, workers)),
                   origin, options.time_limit_s)
        for w in range(workers)
    ]  # fmt: skip
    ran = _in_processes(plans, can_start_processes) if workers > 1 else None
    if ran is None:  # one process, or the worker processes could not start
        every = tuple(sorted((c for plan in plans for c in plan.chains), key=lambda c: c[0]))
        outcomes, evaluations = _run_plan(replace(plans[0], chains=every), chain)
    else:
        outcomes = [outcome for part, _ in ran for outcome in part]
        evaluations = chain.evaluations + sum(evaluated for _, evaluated in ran)
    outcomes.sort(key=lambda outcome: outcome.index)
    best, best_cost = initial, initial_cost
    for outcome in outcomes:
        if outcome.best_cost < best_cost:
            best, best_cost = outcome.best, outcome.best_cost
    iterations = sum(outcome.iterations for outcome in outcomes)
    trace = [(0.0, initial_cost)]
    for point in sorted(point for outcome in outcomes for point in outcome.trace):
        if point[1] < trace[-1][1]:
            trace.append(point)
    total = chosen.rounds_per_layer * len(instance.workload)
    note = f"{chosen.chains} chains at T0 = {chosen.t0:g}"
    if chosen.hot_chains:
        note += f" and {chosen.hot_chains} at T0 = {chosen.hot_t0:g}"
    note += f", {total} iterations each, {evaluations} trees evaluated"
    if ran is not None:
        note += f", {workers} processes"
    elif workers > 1:
        note += f", in one process (the {workers} worker processes could not start)"
    if iterations < count * total:
        note += f"; stopped by the time limit after {iterations} iterations"
    return Result(
        Status.FEASIBLE,
        PROBLEM.name,
        name,
        solution=best,
        objective=best_cost,
        seed=options.seed,
        stats=SolveStats(iterations=iterations, trace=tuple(trace), native_status=note),
    )


@dataclass(frozen=True)
class _ChainPlan:
    """The chains one process runs, one after the other over one cache.

    ``chains`` holds ``(index, seed, T0)`` per chain; times count from ``origin``
    (``time.time()`` at the solve's start: wall clock, the one clock processes share).
    """

    instance: RATreeInstance
    params: RATreeSAParams
    initial: RATree
    chains: tuple[tuple[int, np.random.SeedSequence, float], ...]
    origin: float
    time_limit_s: float | None


@dataclass(frozen=True)
class _ChainOutcome:
    """What one chain found: its best tree, iterations and trace (times from the solve's start)."""

    index: int
    best: RATree
    best_cost: float
    iterations: int
    trace: tuple[tuple[float, float], ...]


def _run_plan(plan: _ChainPlan, chain: _Chain | None = None) -> tuple[list[_ChainOutcome], int]:
    """Run the chains of ``plan``: their outcomes and the number of trees this process evaluated."""
    chain = chain or _Chain(plan.instance, plan.params)
    before = chain.evaluations
    start = time.perf_counter() - (time.time() - plan.origin)  # the solve's start on this process's clock
    total = plan.params.rounds_per_layer * len(plan.instance.workload)
    restart_at = max(1, round(total * (1 - plan.params.restart_fraction)))
    outcomes = []
    for index, seed, t0 in plan.chains:
        rng = np.random.default_rng(seed)
        schedule = HyperbolicSchedule(t0, plan.params.alpha, total)
        current, iterations = plan.initial, 0
        best, best_cost = current, chain.cost(current)
        trace: list[tuple[float, float]] = []
        for first, budget in ((0, restart_at), (restart_at, total - restart_at)):
            if budget <= 0 or _expired(plan.time_limit_s, start):
                continue
            outcome = anneal(
                current,
                chain.cost,
                chain.move,
                lambda n, first=first, schedule=schedule: schedule(first + n),
                _stop(plan.time_limit_s, budget, start),
                rng,
                start_time=start,
            )
            iterations += outcome.iterations
            trace.extend(outcome.trace)
            if outcome.best_cost < best_cost:
                best, best_cost = outcome.best, outcome.best_cost
            current = outcome.best  # the last phase restarts from the chain's best tree
        outcomes.append(_ChainOutcome(index, best, best_cost, iterations, tuple(trace)))
    return outcomes, chain.evaluations - before


def _in_processes(
    plans: Sequence[_ChainPlan], can_start: Callable[[], bool] = can_spawn
) -> list[tuple[list[_ChainOutcome], int]] | None:
    """Run each plan in a spawned process; None when the processes cannot start.

    Spawned processes import the caller's main module again, which fails when it has no
    file (a script piped to ``python -``), and a daemonic process (a ``multiprocessing.Pool``
    or Dask worker) may not start any (``can_start`` says whether they can): the chains
    then run in this process.
    """
    if not can_start():
        return None
    try:
        with ProcessPoolExecutor(
            max_workers=len(plans),
            mp_context=get_context("spawn"),
            initializer=exit_with_parent,
            initargs=(os.getpid(),),
        ) as pool:
            return list(pool.map(_run_plan, plans))
    except BrokenProcessPool:
        return None


def _expired(time_limit_s: float | None, start: float) -> bool:
    return time_limit_s is not None and time.perf_counter() - start >= time_limit_s


def _stop(time_limit_s: float | None, budget: int, start: float) -> StoppingCriterion:
    criterion: StoppingCriterion = MaxIterations(budget)
    if time_limit_s is not None:
        criterion = AnyOf(criterion, MaxRuntime(time_limit_s, start=start))
    return criterion


def _method(name: str, params: RATreeSAParams, description: str) -> MethodSpec:
    return MethodSpec(name, PROBLEM.name, "heuristic", partial(_run, params=params, name=name), description)


def _run(
    instance: RATreeInstance, options: SolveOptions, warm_start: RATree | None, *, params: RATreeSAParams, name: str
) -> Result[RATree]:
    return solve_sa(instance, options, warm_start, params, name)


METHODS: tuple[MethodSpec, ...] = (
    _method("sa", RATreeSAParams(), "SET's SA over RA trees: six operators and flip, 100 x layers iterations a chain"),
    _method(
        "sa-ls",
        RATreeSAParams(subspace=CutKind.T, operators=OPERATORS),
        "SET's SA restricted to the layer-sequential subspace",
    ),
    _method(
        "sa-lp",
        RATreeSAParams(subspace=CutKind.S, operators=OPERATORS),
        "SET's SA restricted to the layer-pipelined subspace",
    ),
)
"""The RA-tree SA methods."""
