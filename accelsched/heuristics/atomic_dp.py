"""Round scheduling by dynamic programming over the untraversed sub-DAG (method ``dp`` of the atomic problem).

After the structure of Atomic Dataflow's Algorithm 2: the state is the set of
atoms already scheduled (equivalently the untraversed sub-DAG); the value of a
state is the least latency of the remaining rounds; the next round is chosen among
candidates that priority rules build from the ready atoms (those whose producers
are all scheduled), each candidate taking the first ``N`` ready atoms in its
rule's order:

1. *critical path*: longest remaining path (the atom's cycles plus its longest
   chain of consumers) first;
2. *balance*: longest atom first, so that a round's atoms take similar time;
3. *layer order*: earliest layer (topological index) first, which finishes
   layers and frees their buffers;
4. *unlocking*: most consumers first.

Rule 2 also offers every run of 1..``N`` consecutive atoms in its order (rounds of
similar length, and rounds that leave engines idle rather than pair a long atom
with short ones). With these candidates the DP reached the optimum on all 120
random DAGs of 5-10 atoms of the tests.

A memo table maps each visited state to its value, so a state reached by
different round sequences is solved once. The exact DP over all subsets of ready
atoms is the brute force of the tests; here the branching is limited to the rule
candidates and, once ``max_states`` states are stored, to rule 1 alone (greedy),
which bounds the work on large DAGs. The DP is a heuristic: its latency is never
below the optimum (tested against ``cpsat-rounds``). The paper's exact rule
definitions are not reproduced verbatim; this module states the ones used. On a mesh
the rounds' atoms are placed by :func:`accelsched.formulations.atomic_mapping.assign_engines`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from accelsched.formulations.atomic_mapping import assign_engines
from accelsched.problems.atomic import PROBLEM, AtomicInstance, RoundSchedule
from accelsched.problems.base import MethodSpec
from accelsched.solvers import Result, SolveOptions, SolveStats, Status

__all__ = ["METHODS", "RULES", "DPParams", "dp_rounds", "solve_dp"]


@dataclasses.dataclass(frozen=True)
class DPParams:
    """``max_states``: memo entries after which the DP stops branching (rule 1 only)."""

    max_states: int = 20000

    def __post_init__(self) -> None:
        if self.max_states < 1:
            raise ValueError(f"DPParams: field max_states must be >= 1, got {self.max_states}")


RULES: tuple[str, ...] = ("critical-path", "balance", "layer-order", "unlocking")
"""The priority rules, in the order candidates are tried."""


def _keys(instance: AtomicInstance) -> list[Callable[[int], tuple[float, int]]]:
    dag = instance.dag
    succ: list[list[int]] = [[] for _ in dag.atoms]
    for a, b, _ in dag.edges:
        succ[a].append(b)
    tail = [0] * len(dag.atoms)
    for a in reversed(dag.topological_order):
        tail[a] = dag.durations[a] + max((tail[b] for b in succ[a]), default=0)
    rank = {a: i for i, a in enumerate(dag.topological_order)}
    return [
        lambda a: (-tail[a], a),
        lambda a: (-dag.durations[a], a),
        lambda a: (rank[a], a),
        lambda a: (-len(succ[a]), a),
    ]


def dp_rounds(instance: AtomicInstance, params: DPParams | None = None) -> tuple[RoundSchedule, int]:
    """The DP's schedule and the number of states it stored."""
    params = params or DPParams()
    dag, n, engines = instance.dag, len(instance.dag.atoms), instance.n_engines
    need = [sum(1 << p for p in dag.predecessors[a]) for a in range(n)]
    keys = _keys(instance)
    full = (1 << n) - 1
    memo: dict[int, tuple[int, int]] = {full: (0, 0)}  # state -> (latency of the rest, next round's mask)

    def value(done: int) -> int:
        stack = [done]
        while stack:  # iterative post-order: children first, so deep DAGs do not hit the recursion limit
            state = stack[-1]
            if state in memo:
                stack.pop()
                continue
            ready = [a for a in range(n) if not state >> a & 1 and need[a] & state == need[a]]
            rules = keys if len(memo) < params.max_states else keys[:1]
            masks = [sum(1 << a for a in sorted(ready, key=k)[:engines]) for k in rules]
            if len(rules) > 1:  # rule 2's runs of 1..N consecutive atoms
                longest = sorted(ready, key=rules[1])
                masks += [sum(1 << a for a in longest[i : i + size])
                          for size in range(1, engines + 1) for i in range(len(ready) - size + 1)]  # fmt: skip
            candidates = list(dict.fromkeys(masks))
            missing = [state | c for c in candidates if state | c not in memo]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            memo[state] = min((max(dag.durations[a] for a in range(n) if c >> a & 1) + memo[state | c][0], c)
                              for c in candidates)  # fmt: skip
        return memo[done][0]

    value(0)
    rounds, state = [], 0
    while state != full:
        chosen = memo[state][1]
        rounds.append(tuple(a for a in range(n) if chosen >> a & 1))
        state |= chosen
    return RoundSchedule(tuple(rounds)), len(memo)


def solve_dp(
    instance: AtomicInstance, options: SolveOptions, warm_start: object = None, params: DPParams | None = None
) -> Result[RoundSchedule]:
    """Run the DP (latency objective; the warm start and the time limit are not used: the DP is bounded by
    ``max_states``)."""
    start = time.perf_counter()
    if instance.objective != "latency":
        return Result.no_solution(Status.ERROR, PROBLEM.name, "dp",
                                  f"objective {instance.objective!r}: the DP minimizes latency")  # fmt: skip
    schedule, states = dp_rounds(instance, params)
    if instance.mesh is not None:
        schedule = assign_engines(instance, schedule)
    latency = float(sum(max(instance.dag.durations[a] for a in r) for r in schedule.rounds))
    return Result(Status.FEASIBLE, PROBLEM.name, "dp", solution=schedule, objective=latency,
                  runtime_s=time.perf_counter() - start,
                  stats=SolveStats(iterations=states, native_status=f"{states} memo states"))  # fmt: skip


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "dp",
        PROBLEM.name,
        "heuristic",
        solve_dp,
        "DP over the untraversed sub-DAG, next rounds from four priority rules, memo table",
    ),
)
"""The DP method: ``dp``."""
