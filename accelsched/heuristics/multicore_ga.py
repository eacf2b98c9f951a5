"""Stream's genetic algorithm for layer-core allocation (method ``ga``): NSGA-II over latency and energy.

Genome: the core of every layer, in the workload's topological order, each among
the layer's allowed cores (``instance.allowed_cores``). Operators, all of which
keep every layer on an allowed core:

* crossover: *uniform* (each layer's core from either parent) or *two-point*
  (a segment of the layer order from the second parent);
* mutation: *bit-flip* (one layer with a choice of cores gets another of its
  allowed cores) or, with probability ``swap_rate``, *swap* (two layers exchange
  their cores when each may run on the other's; bit-flip when no such pair exists).

Fitness: the allocation is scheduled by Stream's list scheduler
(:func:`~accelsched.problems.multicore.scheduler.list_schedule`, the
instance's priority) and priced by the shared evaluator; latency and energy are
the two objectives of the NSGA-II loop of :mod:`accelsched.heuristics.nsga2`, so
the run yields Stream's Pareto front. Evaluations are memoized by genome. The
initial population holds the warm start's allocation (if any), the ``manual``
allocation of :mod:`accelsched.heuristics.multicore_manual` and random ones.

The method returns, of the final front and the best allocation evaluated for the
instance's objective, the one with the lowest objective (ties: lower latency, then
lower energy). For ``latency``, ``energy`` and ``edp`` that is a point of the
front (a point dominating another is also better on these metrics); for
``memory``, which the front does not measure, it may lie off the front. The
answer is never worse than the manual allocation (or the warm start). The front
itself is in :attr:`GARun.front`, also returned by :func:`pareto_front`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from accelsched.heuristics.multicore_manual import manual_allocation
from accelsched.heuristics.nsga2 import GenerationRecord, NSGA2Operators, NSGA2Params, nsga2
from accelsched.heuristics.stopping import AnyOf, MaxRuntime, NoImprovement, StoppingCriterion
from accelsched.problems.base import MethodSpec
from accelsched.problems.multicore import (
    PROBLEM,
    MulticoreInstance,
    MulticoreSolution,
    evaluate_schedule,
    list_schedule,
)
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = [
    "CROSSOVERS",
    "METHODS",
    "AllocationSpace",
    "FrontPoint",
    "GARun",
    "MulticoreGAParams",
    "ga_method",
    "pareto_front",
    "solve_ga",
]

Genome = tuple[int, ...]

CROSSOVERS = ("uniform", "two-point")
"""Crossover operators of :class:`MulticoreGAParams`."""


@dataclass(frozen=True)
class MulticoreGAParams:
    """Parameters of the allocation GA, validated at construction.

    Parameters
    ----------
    nsga2
        The NSGA-II loop (population, generations, crossover and mutation rates).
    crossover
        ``uniform`` or ``two-point``.
    swap_rate
        Probability that a mutation is a swap rather than a bit-flip, in [0, 1].
    stall_generations
        Stop after this many generations without a new non-dominated point (>= 1), or None.
    """

    nsga2: NSGA2Params = field(default_factory=lambda: NSGA2Params(population_size=32, generations=50))
    crossover: str = "uniform"
    swap_rate: float = 0.3
    stall_generations: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.nsga2, NSGA2Params):
            raise ValueError(f"MulticoreGAParams: field nsga2 must be an NSGA2Params, got {type(self.nsga2).__name__}")
        if self.crossover not in CROSSOVERS:
            raise ValueError(f"MulticoreGAParams: field crossover must be one of {', '.join(CROSSOVERS)}, "
                             f"got {self.crossover!r}")  # fmt: skip
        rate = self.swap_rate
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
            raise ValueError(f"MulticoreGAParams: field swap_rate must be a number in [0, 1], got {rate!r}")
        stall = self.stall_generations
        if stall is not None and (isinstance(stall, bool) or not isinstance(stall, int) or stall < 1):
            raise ValueError(f"MulticoreGAParams: field stall_generations must be an integer >= 1 or None, "
                             f"got {stall!r}")  # fmt: skip


@dataclass(frozen=True)
class FrontPoint:
    """One point of the latency-energy Pareto front: an allocation and its cost.

    Attributes
    ----------
    latency_cycles, energy_pj
        The shared evaluator's latency and energy of the allocation's list schedule.
    allocation
        Core id of every layer.
    """

    latency_cycles: float
    energy_pj: float
    allocation: Mapping[str, int]

    def __post_init__(self) -> None:
        object.__setattr__(self, "allocation", MappingProxyType(dict(self.allocation)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form."""
        return {"latency_cycles": self.latency_cycles, "energy_pj": self.energy_pj, "allocation": dict(self.allocation)}


@dataclass(frozen=True)
class GARun:
    """Everything one GA run produced.

    Attributes
    ----------
    result
        The method's result (the allocation chosen for the instance's objective, list-scheduled).
    front
        The non-dominated (latency, energy) points of every allocation evaluated, by increasing latency.
    history
        The NSGA-II convergence trace, one record per generation.
    """

    result: Result[MulticoreSolution]
    front: tuple[FrontPoint, ...]
    history: tuple[GenerationRecord, ...]


class AllocationSpace:
    """The allocation genomes of an instance and the GA's operators on them (see the module docstring).

    Parameters
    ----------
    instance
        The instance (its layers and their allowed cores).
    params
        The crossover kind and the swap rate.
    start
        The time (``time.perf_counter``) the trace counts from; default: construction.

    Attributes
    ----------
    metric
        The instance's objective of every genome evaluated by :meth:`objectives`.
    best
        ``(objective, genome)`` of the best genome evaluated (the first of equals), or None.
    trace
        ``(time_s, objective)`` at every strict improvement of :attr:`best`.
    """

    def __init__(self, instance: MulticoreInstance, params: MulticoreGAParams, start: float | None = None) -> None:
        self.instance = instance
        self.params = params
        self.start = time.perf_counter() if start is None else start
        self.names = instance.workload.names
        self.allowed = [instance.allowed_cores[name] for name in self.names]
        self.flexible = [i for i, cores in enumerate(self.allowed) if len(cores) > 1]
        self.metric: dict[Genome, float] = {}
        self.best: tuple[float, Genome] | None = None
        self.trace: list[tuple[float, float]] = []

    def genome(self, allocation: Mapping[str, int], what: str) -> Genome:
        """The genome of ``allocation``; ``ValueError`` when a layer misses a core or sits on a forbidden one."""
        for name, cores in zip(self.names, self.allowed, strict=True):
            if allocation.get(name) not in cores:
                raise ValueError(f"multicore ga: {what} puts layer {name!r} on core {allocation.get(name)!r}, "
                                 f"allowed: {list(cores)}")  # fmt: skip
        return tuple(allocation[name] for name in self.names)

    def allocation(self, genome: Genome) -> dict[str, int]:
        """The allocation (core of every layer) of ``genome``."""
        return dict(zip(self.names, genome, strict=True))

    def random_genome(self, rng: np.random.Generator) -> Genome:
        """Every layer on one of its allowed cores, uniformly."""
        draws = rng.random(len(self.allowed))
        return tuple(cores[int(u * len(cores))] for u, cores in zip(draws, self.allowed, strict=True))

    def crossover(self, a: Genome, b: Genome, rng: np.random.Generator) -> Genome:
        """Uniform or two-point crossover of ``a`` and ``b`` (one child)."""
        if self.params.crossover == "uniform":
            mask = rng.random(len(a)) < 0.5
            return tuple(x if m else y for x, y, m in zip(a, b, mask, strict=True))
        i, j = sorted(int(x) for x in rng.integers(len(a) + 1, size=2))
        return a[:i] + b[i:j] + a[j:]

    def mutate(self, genome: Genome, rng: np.random.Generator) -> Genome:
        """A swap (probability ``swap_rate``, when a pair allows it) or a bit-flip; ``genome`` if no layer can move."""
        if not self.flexible:
            return genome
        i = self.flexible[int(rng.integers(len(self.flexible)))]
        if rng.random() < self.params.swap_rate:
            partners = [j for j in self.flexible if genome[j] != genome[i] and genome[j] in self.allowed[i]
                        and genome[i] in self.allowed[j]]  # fmt: skip
            if partners:
                j = partners[int(rng.integers(len(partners)))]
                out = list(genome)
                out[i], out[j] = genome[j], genome[i]
                return tuple(out)
        others = [c for c in self.allowed[i] if c != genome[i]]
        return (*genome[:i], others[int(rng.integers(len(others)))], *genome[i + 1 :])

    def objectives(self, genome: Genome) -> tuple[float, float]:
        """Latency and energy of the list schedule; records the instance's objective and the incumbent."""
        report = evaluate_schedule(self.instance, list_schedule(self.instance, self.allocation(genome))).report
        value = report.metric(self.instance.objective)
        self.metric[genome] = value
        if self.best is None or value < self.best[0]:
            self.best = (value, genome)
            if math.isfinite(value):
                now = max(time.perf_counter() - self.start, self.trace[-1][0] if self.trace else 0.0)
                self.trace.append((now, value))
        return report.latency_cycles, report.energy_pj


def _stopping(params: MulticoreGAParams, options: SolveOptions, start: float) -> StoppingCriterion | None:
    rules: list[StoppingCriterion] = []
    if options.time_limit_s is not None:
        rules.append(MaxRuntime(options.time_limit_s, start=start))
    if params.stall_generations is not None:
        rules.append(NoImprovement(params.stall_generations))
    return None if not rules else rules[0] if len(rules) == 1 else AnyOf(*rules)


def solve_ga(
    instance: MulticoreInstance,
    options: SolveOptions | None = None,
    warm_start: MulticoreSolution | None = None,
    params: MulticoreGAParams | None = None,
) -> GARun:
    """Run the allocation GA on ``instance``.

    Parameters
    ----------
    instance
        The multicore instance.
    options
        ``seed`` seeds the generator; ``time_limit_s`` stops the GA after the generation that passes it.
    warm_start
        A solution whose allocation joins the initial population.
    params
        GA parameters (default :class:`MulticoreGAParams`).

    Returns
    -------
    GARun
        The FEASIBLE result, the Pareto front and the convergence trace.

    Raises
    ------
    ValueError
        ``warm_start`` is not a :class:`MulticoreSolution` or puts a layer on a core not allowed for it.
    """
    options = options or SolveOptions()
    chosen = params or MulticoreGAParams()
    start = time.perf_counter()
    space = AllocationSpace(instance, chosen, start)
    seeds = []
    if warm_start is not None:
        if not isinstance(warm_start, MulticoreSolution):
            raise ValueError(f"multicore ga: warm start must be a MulticoreSolution, got {type(warm_start).__name__}")
        seeds.append(space.genome(warm_start.allocation, "the warm start"))
    seeds.append(space.genome(manual_allocation(instance), "the manual allocation"))
    operators = NSGA2Operators(space.random_genome, space.crossover, space.mutate, space.objectives, lambda g: g)
    rng = np.random.default_rng(options.seed)
    outcome = nsga2(operators, chosen.nsga2, rng, stop=_stopping(chosen, options, start), seeds=seeds, start_time=start)
    assert space.best is not None  # the initial population was evaluated
    candidates = [genome for genome, _ in outcome.front] + [space.best[1]]
    costs = {genome: values for genome, values in outcome.front}
    best = min(candidates, key=lambda g: (space.metric[g], *costs.get(g, (math.inf, math.inf))))
    solution = list_schedule(instance, space.allocation(best))
    note = (f"NSGA-II: {outcome.generations} generations x {chosen.nsga2.population_size}, {outcome.evaluations} "
            f"evaluations; (latency, energy) front of {len(outcome.front)} points; {instance.priority.value}-priority "
            f"list schedule")  # fmt: skip
    result = Result(
        Status.FEASIBLE,
        PROBLEM.name,
        "ga",
        solution=solution,
        objective=space.metric[best],
        seed=options.seed,
        stats=SolveStats(iterations=outcome.generations, trace=tuple(space.trace), native_status=note),
    )
    front = tuple(FrontPoint(lat, energy, space.allocation(genome)) for genome, (lat, energy) in outcome.front)
    return GARun(result, front, outcome.history)


def pareto_front(
    instance: MulticoreInstance,
    params: MulticoreGAParams | None = None,
    seed: int = 0,
    *,
    time_limit_s: float | None = None,
    warm_start: MulticoreSolution | None = None,
) -> tuple[FrontPoint, ...]:
    """The latency-energy Pareto front the GA finds on ``instance`` (see :func:`solve_ga`)."""
    return solve_ga(instance, SolveOptions(time_limit_s=time_limit_s, seed=seed), warm_start, params).front


def ga_method(params: MulticoreGAParams, name: str = "ga") -> MethodSpec:
    """A method spec ``name`` running the GA with ``params`` (for other budgets than the default)."""
    size = f"{params.nsga2.generations} generations x {params.nsga2.population_size} genomes"
    return MethodSpec(
        name,
        PROBLEM.name,
        "heuristic",
        lambda instance, options, warm_start: replace(
            solve_ga(instance, options, warm_start, params).result, method=name
        ),
        f"Stream's NSGA-II allocation GA over (latency, energy), list-scheduled: {size}",
    )


METHODS: tuple[MethodSpec, ...] = (ga_method(MulticoreGAParams()),)
"""The allocation GA with the default :class:`MulticoreGAParams` (50 generations x 32 genomes)."""
