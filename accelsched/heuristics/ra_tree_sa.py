"""SET's simulated annealing over RA trees (methods ``sa``, ``sa-ls``, ``sa-lp``).

Protocol (the SET paper's): each chain starts from the layer-sequential tree (or the
warm start), draws one operator of :mod:`accelsched.heuristics.ra_tree_moves` per
iteration, evaluates the tree with the shared cost model, and accepts a worse tree
with probability ``exp(-(dC / C) / T)``, ``T_n = T0 (1 - n/N) / (1 + alpha n/N)`` with
``T0 = 0.07``, ``alpha = 8`` and ``N = 100 x layers`` iterations. For the last 10 % of
its iterations a chain restarts from the best tree it has seen. Several chains run
with independent seeds (derived from the run's seed) and the best tree is returned;
SET's reference implementation runs four, ``chains`` defaults to two (with four, the
rates expected from the single-chain shares below are 0.81 on seeds 1000-1049 and
0.84 on seeds 0-49, against 0.75 and 0.80 with two).

An iteration is a proposed neighbour: an operator that cannot apply to the current
tree (no two independent adjacent leaves to swap, no cut to delete, ...) is drawn
again, as in SET's reference implementation, instead of spending an iteration on
nothing (on a chain network a quarter to two fifths of the draws did). Operators are
drawn with weights: ``group``, the only one that builds new cuts, three times as often
as each of the others (measured on 100 random 5-layer instances, it raised the share
of single chains reaching the enumeration optimum from 0.59 to 0.64; on the 50
instances of seeds 1000-1049, not used for that choice, 0.62 against 0.60 for
uniform draws, within the noise).

Deviation from the paper: ``sa`` draws ``flip`` besides SET's six operators (a cut
below the root turns from S to T or back; ``sa-ls`` and ``sa-lp`` do not draw it,
every flip would leave their subspace). In SET's reference implementation a cut's kind
follows from its parent's (S below T and T below S, but for the root's children), and
deleting or grouping retypes the cuts they move; here, as in the problem's space
(:mod:`accelsched.formulations.ra_tree_enumerate` counts S and T labels freely), kinds
are free labels, and SET's six can change one only by deleting the cut and grouping
its children again, through a tree that is often much worse (``T 2/2 [a, b]`` to
``S 2/2 [a, b]`` inside a segment passes through ``[a, b, ...]`` ungrouped, 49 % worse
on the 5-layer instance of seed 32). Measured against enumeration on random 5-layer
instances (batch 2, E^2 D), single chains, 20 seeds per instance: the share reaching
the optimum rises from 0.61 to 0.70 on seeds 1000-1049 and from 0.63 to 0.76 on seeds
0-49 (``python -m accelsched.bench.ra_tree rate``, with and without ``--six``, gives
the method's rate with two chains).

What limits the rate on such small instances (measured on the instances of seeds 0-49
and 1000-1049 that chains miss): the enumeration optimum is always a tree the SA
accepts (balanced, fitting the buffers), the operators never leave the enumeration's
space, and they reach every tree it accepts from the layer-sequential tree through
accepted trees (``tests/heuristics/test_ra_tree_moves.py``), the optimum in 3 to 6
moves. A miss is a chain caught in one of the 75 to 480 local minima of SET's six
operators (30 to 180 with ``flip``); from the worst of them every path to the optimum
climbs 23 % to 160 % above it (5 % to 53 % with ``flip``). SET's temperature is low
for such climbs on small networks: one move changes the E^2 D cost of a 5-layer
network by about 10 % (median ``|dC/C|``) and that of ResNet-50 or GoogLeNet by 0.4 %,
so ``T0 = 0.07`` accepts a median worse move at the first iteration with probability
0.24 on the former and 0.94 on the latter. Neither the budget nor the temperature
alone explains the misses, though: on seeds 1000-1049 ten times the iterations raise
the single-chain share from 0.70 to 0.78 (two chains: 0.75 to 0.82), ``T0 = 2`` to
0.75 (0.83).

A tree that breaks a rule of the problem costs infinity (never accepted), and so does
one with an S-Cut whose tile allocation is unbalanced: the work of its children over
the cut's tiles times the bottleneck, ``sum_i NPT_i / (C max_i NPT_i / f_i)``, below
0.75 (SET's rule). ``sa-ls`` and ``sa-lp`` restrict the chains to the LS and LP
subspaces of :mod:`accelsched.formulations.ra_tree_dp` (moves leaving them are
rejected), as in the paper's comparison.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import partial

import numpy as np

from accelsched.errors import InfeasibleSolution
from accelsched.hardware.cost.ra_tree import TreeAnalysis, evaluate
from accelsched.heuristics.anneal import HyperbolicSchedule, anneal
from accelsched.heuristics.ra_tree_moves import EXTRA_OPERATORS, OPERATORS, neighbour
from accelsched.heuristics.stopping import AnyOf, MaxIterations, MaxRuntime, StoppingCriterion
from accelsched.problems.base import MethodSpec
from accelsched.problems.ra_tree import (
    PROBLEM,
    Cut,
    CutKind,
    Leaf,
    RATree,
    RATreeInstance,
    buffer_overflow,
    check_structure,
    sequential_tree,
)
from accelsched.solvers import Result, SolveOptions, SolveStats, Status

__all__ = ["MAX_DRAWS", "METHODS", "SA_OPERATORS", "RATreeSAParams", "in_subspace", "solve_sa"]

SA_OPERATORS = (*OPERATORS, "flip")
"""The operators of ``sa``: SET's six and ``flip`` (module docstring)."""

MAX_DRAWS = 64
"""Draws of an operator per iteration before the iteration is given up (no operator applies)."""


@dataclass(frozen=True)
class RATreeSAParams:
    """Parameters of the RA-tree SA, validated at construction.

    Parameters
    ----------
    rounds_per_layer
        Iterations per chain per layer (SET: 100).
    chains
        Independent chains, >= 1.
    t0, alpha
        SET's schedule.
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
    """

    rounds_per_layer: int = 100
    chains: int = 2
    t0: float = 0.07
    alpha: float = 8.0
    restart_fraction: float = 0.1
    min_balance: float = 0.75
    subspace: CutKind | None = None
    operators: tuple[str, ...] = SA_OPERATORS
    operator_weights: tuple[tuple[str, float], ...] = (("group", 3.0),)

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
        for name in ("rounds_per_layer", "chains"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"RATreeSAParams: field {name} must be an integer >= 1, got {value!r}")
        for name, low, high in (("t0", 0, math.inf), ("alpha", 0, math.inf), ("restart_fraction", 0, 1),
                                ("min_balance", 0, 1)):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
                raise ValueError(f"RATreeSAParams: field {name} must be in [{low}, {high}], got {value!r}")
        if self.t0 == 0:
            raise ValueError("RATreeSAParams: field t0 must be > 0, got 0")


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
        cost = evaluate(self.instance, tree)
        if buffer_overflow(self.instance, cost.segments) or not balanced(cost.analysis, self.params.min_balance):
            return math.inf
        return PROBLEM.objective(self.instance, tree, cost.report)

    def move(self, tree: RATree, rng: np.random.Generator) -> RATree | None:
        """A neighbour of ``tree``: operators are drawn until one applies (None after ``MAX_DRAWS`` draws)."""
        for _ in range(MAX_DRAWS):
            moved = neighbour(tree, self.edges, rng, operators=self.params.operators, weights=self.weights)
            if moved is not None:
                return moved
        return None


def solve_sa(
    instance: RATreeInstance,
    options: SolveOptions | None = None,
    warm_start: RATree | None = None,
    params: RATreeSAParams | None = None,
    name: str = "sa",
) -> Result[RATree]:
    """Anneal RA trees (module docstring).

    Returns
    -------
    Result
        FEASIBLE with the best tree, or INFEASIBLE when not even the start tree is valid.
    """
    options = options or SolveOptions()
    chosen = params or RATreeSAParams()
    start = time.perf_counter()
    chain = _Chain(instance, chosen)
    initial = warm_start if warm_start is not None else sequential_tree(instance.workload)
    if not math.isfinite(chain.cost(initial)):
        reason = "the warm start" if warm_start is not None else "the layer-sequential tree"
        return Result.no_solution(
            Status.INFEASIBLE,
            PROBLEM.name,
            name,
            f"{reason} breaks a rule or is unbalanced",
            runtime_s=time.perf_counter() - start,
        )
    total = chosen.rounds_per_layer * len(instance.workload)
    restart_at = max(1, round(total * (1 - chosen.restart_fraction)))
    best, best_cost = initial, chain.cost(initial)
    trace: list[tuple[float, float]] = [(0.0, best_cost)]
    iterations = 0
    schedule = HyperbolicSchedule(chosen.t0, chosen.alpha, total)
    seeds = np.random.SeedSequence(options.seed).spawn(chosen.chains)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        current = initial
        for phase, (first, budget) in enumerate(((0, restart_at), (restart_at, total - restart_at))):
            if budget <= 0:
                continue
            outcome = anneal(
                current,
                chain.cost,
                chain.move,
                lambda n, first=first: schedule(first + n),
                _stop(options, budget, start),
                rng,
                start_time=start,
            )
            iterations += outcome.iterations
            for point in outcome.trace:
                if point[1] < trace[-1][1]:
                    trace.append(point)
            if outcome.best_cost < best_cost:
                best, best_cost = outcome.best, outcome.best_cost
            current = outcome.best  # the last phase restarts from the chain's best tree
            if phase == 0 and options.time_limit_s is not None and time.perf_counter() - start >= options.time_limit_s:
                break
    note = f"{chosen.chains} chains x {total} iterations, {chain.evaluations} trees evaluated"
    if iterations < chosen.chains * total:
        note += f"; stopped by the time limit after {iterations} iterations"
    return Result(
        Status.FEASIBLE,
        PROBLEM.name,
        name,
        solution=best,
        objective=best_cost,
        runtime_s=time.perf_counter() - start,
        seed=options.seed,
        stats=SolveStats(iterations=iterations, trace=tuple(sorted(trace)), native_status=note),
    )


def _stop(options: SolveOptions, budget: int, start: float) -> StoppingCriterion:
    criterion: StoppingCriterion = MaxIterations(budget)
    if options.time_limit_s is not None:
        criterion = AnyOf(criterion, MaxRuntime(options.time_limit_s, start=start))
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
