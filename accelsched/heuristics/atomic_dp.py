r"""Round scheduling by dynamic programming over the untraversed sub-DAG (method ``dp`` of the atomic problem).

After the structure of Atomic Dataflow's Algorithm 2: the state is the set of atoms
already scheduled (equivalently the untraversed sub-DAG); the value of a state is
the least latency of the remaining rounds; the next round is chosen among
candidates that priority rules build from the ready atoms (those whose producers
are all scheduled), each candidate taking the first ``N`` ready atoms in its rule's
order:

1. *critical path*: longest remaining path (the atom's cycles plus its longest
   chain of consumers) first;
2. *balance*: longest atom first, so that a round's atoms take similar time;
3. *layer order*: earliest sample, then earliest atom in topological order first,
   which finishes layers and frees their buffers;
4. *unlocking*: most consumers first;
5. *weight blocks* (only in the full search with rounds valued by their HBM
   weights, below): by weight block, so that a round takes the atoms that share one.

Ties go to the earlier sample (then the lower atom index): the copies of an atom
in the samples of a batch share their remaining path, and taking them sample by
sample runs the batch as a wavefront (the first sample ahead, later ones filling
the engines it leaves) instead of a layer across the whole batch, whose outputs
would all wait in the buffers.

Rule 2 also offers runs of consecutive atoms in its order: on small rounds (``N``
times the ready atoms at most 64) every run of 1..``N`` atoms, otherwise the run
of ``N`` atoms from the start of each class of equal duration and the prefix up
to it (rounds of similar length, and rounds that leave engines idle rather than
pair a long atom with short ones). The rolling horizon keeps the first
``max_candidates`` candidates of a state; the full search keeps them all.

Full search (DAGs of at most ``full_atoms`` atoms)
    A memo table maps each visited state to its value, so a state reached by
    different round sequences is solved once; once ``max_states`` states are
    stored, states branch on rule 1 alone (greedy), or, with rounds valued by
    their HBM weights, on the cheapest of the rules' first rounds.
Rolling horizon (larger DAGs)
    At each round the DP looks ``horizon`` rounds ahead over the same candidates
    (memo keyed by the atoms chosen within the horizon), values what is left by a
    lower bound, and commits the first round of the best sequence (ties: the fuller
    round). The bound is the larger of the *round bound* of the unscheduled atoms
    (the sum of every ``N``-th longest duration: the rounds they still fill) and a
    *path bound*: with the ready atoms ``a_1, a_2, ...`` taken by remaining path
    ``p``, the first ``k`` start in at least ``ceil(k / N)`` rounds, all but the
    last lasting at least the shortest of them, so the rest takes at least
    ``(ceil(k / N) - 1) min_{i <= k} t_(a_i) + p(a_k)``. The longest remaining path
    alone would not do: the atoms of a layer share it, so it stays flat until the
    whole layer has run, and a lookahead against a flat bound prefers the shortest
    round, however few atoms it holds. The search also runs its base policy, the
    rule-1 greedy (one candidate per state), and keeps the better schedule, so it is
    never worse than list scheduling by critical path. The rules'
    orders are fixed per atom, so the ready atoms sit in one heap per rule and a
    state's candidates come from the heads of the heaps.

On a batch the rolling horizon may admit only ``in_flight`` samples at a time (the
next when one finishes); the method tries a few limits (:func:`solve_dp`).

The DP minimizes the rounds' latency, a round valued at its slowest atom (the
compute latency) or, with :attr:`DPParams.hbm_bytes_per_cycle`, at the larger of
that and the HBM time of its weights, :math:`\sum_k w_k / \beta` over the distinct
weight blocks ``k`` of the round (read once and multicast to the engines that need
them, as the evaluator does; double-buffered under the computation): the paper's
round cost counts communication, and on a network whose small atoms need large
weight blocks this keeps the atoms that share a block in one round. Placement on
engines and Algorithm 3's write-backs follow
(:func:`accelsched.problems.atomic.placement.place_and_buffer`) and the result's
objective is the round evaluator's, transfers included. It is a heuristic: never
below the optimum (tested against ``cpsat-rounds``). The paper's exact rule
definitions are not reproduced verbatim; this module states the ones used.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import time
from collections.abc import Sequence

from accelsched.heuristics.atomic_search import search_schedules
from accelsched.problems.atomic import PROBLEM, AtomDag, AtomicInstance, RoundSchedule, place_and_buffer
from accelsched.problems.base import MethodSpec
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["METHODS", "RULES", "DPParams", "DPStats", "dp_rounds", "solve_dp"]


@dataclasses.dataclass(frozen=True)
class DPParams:
    """Parameters of the DP, validated at construction.

    Parameters
    ----------
    max_states
        Memo entries of the full search after which states branch on rule 1 only.
    full_atoms
        Largest DAG searched in full; larger ones use the rolling horizon.
    horizon
        Rounds of lookahead of the rolling horizon, >= 1.
    max_candidates
        Candidate rounds per state, >= 1.
    in_flight
        Samples whose atoms the rolling horizon may schedule at once (the next is admitted when one finishes),
        >= 1; None: every sample.
    hbm_bytes_per_cycle
        None: a round is valued at its slowest atom; a bandwidth > 0: at the larger of that and its distinct
        weight blocks' bytes over the bandwidth (module docstring).
    """

    max_states: int = 20000
    full_atoms: int = 200
    horizon: int = 1
    max_candidates: int = 12
    in_flight: int | None = None
    hbm_bytes_per_cycle: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_states", "horizon", "max_candidates"):
            if getattr(self, name) < 1:
                raise ValueError(f"DPParams: field {name} must be >= 1, got {getattr(self, name)}")
        if self.in_flight is not None and self.in_flight < 1:
            raise ValueError(f"DPParams: field in_flight must be >= 1 or None, got {self.in_flight}")
        if self.full_atoms < 0:
            raise ValueError(f"DPParams: field full_atoms must be >= 0, got {self.full_atoms}")
        if self.hbm_bytes_per_cycle is not None and not self.hbm_bytes_per_cycle > 0:
            raise ValueError(f"DPParams: field hbm_bytes_per_cycle must be > 0 or None, got {self.hbm_bytes_per_cycle}")


@dataclasses.dataclass(frozen=True)
class DPStats:
    """What one DP run did: the mode, the states it valued, the rounds it made and its compute latency."""

    mode: str
    states: int
    rounds: int
    compute_latency_cycles: int


RULES: tuple[str, ...] = ("critical-path", "balance", "layer-order", "unlocking", "weight-blocks")
"""The priority rules, in the order candidates are tried (the last only in the full search with rounds valued by
their HBM weights)."""


class _Graph:
    """Durations, consumers and the rules' ranks of every atom (rank 0 first)."""

    def __init__(self, dag: AtomDag, hbm_bytes_per_cycle: float | None = None, blocks: bool = False) -> None:
        n = len(dag.atoms)
        self.n = n
        self.durations = list(dag.durations)
        self.bandwidth = hbm_bytes_per_cycle
        ids: dict[tuple[str, tuple[int, int], tuple[int, int]], int] = {}
        self.key = [ids.setdefault(a.weight_key, len(ids)) for a in dag.atoms]
        self.weight = [a.weight_bytes for a in dag.atoms]
        self.succ = [list(s) for s in dag.successors]
        self.preds = dag.predecessors
        tail = [0] * n
        for a in reversed(dag.topological_order):
            tail[a] = self.durations[a] + max((tail[b] for b in self.succ[a]), default=0)
        self.tail = tail
        topo = {a: i for i, a in enumerate(dag.topological_order)}
        sample = [atom.sample for atom in dag.atoms]
        self.sample = sample
        keys = [
            lambda a: (-tail[a], sample[a], a),
            lambda a: (-self.durations[a], sample[a], a),
            lambda a: (sample[a], topo[a], a),
            lambda a: (-len(self.succ[a]), sample[a], a),
        ]
        if blocks:
            keys.append(lambda a: (sample[a], self.key[a], a))
        self.rank: list[list[int]] = []
        for key in keys:
            rank = [0] * n
            for i, a in enumerate(sorted(range(n), key=key)):
                rank[a] = i
            self.rank.append(rank)


def _cost(graph: _Graph, members: Sequence[int]) -> float:
    """A round's value (module docstring): its slowest atom, or the HBM time of its weights when longer."""
    compute = max(graph.durations[a] for a in members)
    if graph.bandwidth is None:
        return compute
    blocks = {graph.key[a]: graph.weight[a] for a in members}
    return max(compute, sum(blocks.values()) / graph.bandwidth)


def _runs(order: Sequence[int], durations: Sequence[int], engines: int) -> list[tuple[int, ...]]:
    """Rule 2's runs of consecutive atoms (module docstring) in the balance order ``order``."""
    if engines * len(order) <= 64:
        return [tuple(order[i : i + size]) for size in range(1, engines + 1) for i in range(len(order) - size + 1)]
    runs = []
    for i in range(1, len(order)):
        if durations[order[i]] != durations[order[i - 1]]:
            runs.append(tuple(order[:i][:engines]))
            runs.append(tuple(order[i : i + engines]))
    return runs


def _candidates(
    graph: _Graph, orders: Sequence[Sequence[int]], engines: int, limit: int | None
) -> list[tuple[int, ...]]:  # fmt: skip
    """Candidate rounds from the rules' orders of the ready atoms (distinct, at most ``limit`` if given)."""
    found = [tuple(order[:engines]) for order in orders]
    found += _runs(orders[1], graph.durations, engines)
    unique = list(dict.fromkeys(tuple(sorted(c)) for c in found if c))
    return unique if limit is None else unique[:limit]


def _full(graph: _Graph, engines: int, params: DPParams) -> tuple[list[tuple[int, ...]], int]:
    """The full memo search (module docstring): the rounds and the number of states stored."""
    n = graph.n
    need = [sum(1 << p for p in graph.preds[a]) for a in range(n)]
    full = (1 << n) - 1
    memo: dict[int, tuple[float, int]] = {full: (0, 0)}  # state -> (latency of the rest, next round's mask)
    stack = [0]
    while stack:  # iterative post-order: children first, so deep DAGs do not hit the recursion limit
        state = stack[-1]
        if state in memo:
            stack.pop()
            continue
        ready = [a for a in range(n) if not state >> a & 1 and need[a] & state == need[a]]
        orders = [sorted(ready, key=rank.__getitem__) for rank in graph.rank]
        if len(memo) < params.max_states:
            rounds = _candidates(graph, orders, engines, None)
        elif graph.bandwidth is None:
            rounds = [tuple(orders[0][:engines])]
        else:  # valued with HBM weights: the rules' first rounds, the cheapest kept (ties: rule 1)
            rounds = [min((tuple(order[:engines]) for order in orders), key=lambda c: _cost(graph, c))]
        masks = [sum(1 << a for a in c) for c in rounds]
        missing = [state | c for c in masks if state | c not in memo]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        memo[state] = min((_cost(graph, rounds[i]) + memo[state | c][0], c) for i, c in enumerate(masks))
    chosen, state = [], 0
    while state != full:
        mask = memo[state][1]
        chosen.append(tuple(a for a in range(n) if mask >> a & 1))
        state |= mask
    return chosen, len(memo)


class _Rolling:
    """The rolling-horizon DP (module docstring)."""

    def __init__(self, graph: _Graph, engines: int, params: DPParams) -> None:
        self.graph, self.engines, self.params = graph, engines, params
        self.waiting = [len(p) for p in graph.preds]
        self.ready = bytearray(graph.n)
        self.heaps: list[list[tuple[int, int]]] = [[] for _ in graph.rank]
        self.left: dict[int, int] = {}  # duration -> unscheduled atoms of that duration
        for d in graph.durations:
            self.left[d] = self.left.get(d, 0) + 1
        self.values = sorted(self.left, reverse=True)
        self.states = 0
        samples = max(graph.sample, default=0) + 1
        self.unscheduled = [0] * samples
        for s in graph.sample:
            self.unscheduled[s] += 1
        self.admitted = samples if params.in_flight is None else min(samples, params.in_flight)
        self.pending: dict[int, list[int]] = {}
        for a in range(graph.n):
            if not self.waiting[a]:
                self._push(a)

    def _push(self, a: int) -> None:
        """Make ``a`` ready, or hold it until its sample is admitted."""
        if self.graph.sample[a] >= self.admitted:
            self.pending.setdefault(self.graph.sample[a], []).append(a)
            return
        self.ready[a] = 1
        for heap, rank in zip(self.heaps, self.graph.rank, strict=True):
            heapq.heappush(heap, (rank[a], a))

    def _finish(self, a: int) -> None:
        """Count ``a`` as scheduled; a finished sample admits the next one."""
        s = self.graph.sample[a]
        self.unscheduled[s] -= 1
        while not self.unscheduled[s] and self.admitted < len(self.unscheduled):
            s, self.admitted = self.admitted, self.admitted + 1
            for b in self.pending.pop(s, ()):
                self._push(b)

    def _heads(self, count: int) -> list[list[int]]:
        """The first ``count`` ready atoms of every rule (popped and pushed back)."""
        heads = []
        for heap in self.heaps:
            taken: list[tuple[int, int]] = []
            while heap and len(taken) < count:
                item = heapq.heappop(heap)
                if self.ready[item[1]] and (not taken or taken[-1] != item):
                    taken.append(item)
            for item in taken:
                heapq.heappush(heap, item)
            heads.append([a for _, a in taken])
        return heads

    def _released(self, after: frozenset[int], candidate: Sequence[int]) -> list[int]:
        """Consumers of ``candidate`` whose uncommitted producers are all in ``after`` (the atoms chosen beyond the
        committed rounds, ``candidate`` included)."""
        out, seen = [], set()
        for a in candidate:
            for b in self.graph.succ[a]:
                if b in seen or b in after:
                    continue
                seen.add(b)
                admitted = self.graph.sample[b] < self.admitted
                if admitted and sum(1 for p in self.graph.preds[b] if p in after) == self.waiting[b]:
                    out.append(b)
        return out

    def _orders(self, heads: list[list[int]], chosen: frozenset[int], released: list[int]) -> list[list[int]]:
        orders = []
        for rank, head in zip(self.graph.rank, heads, strict=True):
            merged = heapq.merge([a for a in head if a not in chosen], sorted(released, key=rank.__getitem__),
                                 key=rank.__getitem__)  # fmt: skip
            orders.append(list(itertools.islice(merged, len(head))))
        return orders

    def _estimate(self, orders: list[list[int]], chosen: frozenset[int]) -> float:
        """The larger of two lower bounds of the rest (module docstring): the round bound of the unscheduled
        durations, and the path bound over the ready atoms taken by remaining path."""
        durations, tail, n = self.graph.durations, self.graph.tail, self.engines
        taken: dict[int, int] = {}
        for a in chosen:
            taken[durations[a]] = taken.get(durations[a], 0) + 1
        rounds, position = 0, 0
        for d in self.values:
            count = self.left[d] - taken.get(d, 0)
            if count:
                rounds += d * (-(-(position + count) // n) - (-(-position // n)))
                position += count
        paths, shortest = 0, None
        for k, a in enumerate(orders[0], start=1):
            shortest = durations[a] if shortest is None else min(shortest, durations[a])
            paths = max(paths, (-(-k // n) - 1) * shortest + tail[a])
        return max(rounds, paths)

    def _value(
        self, heads: list[list[int]], chosen: frozenset[int], released: list[int], depth: int,
        memo: dict[tuple[frozenset[int], int], float],
    ) -> float:  # fmt: skip
        key = (chosen, depth)
        if key in memo:
            return memo[key]
        self.states += 1
        orders = self._orders(heads, chosen, released)
        if not orders[0]:
            value = 0.0
        elif depth == 0:
            value = self._estimate(orders, chosen)
        else:
            value = min(self._child(heads, chosen, released, depth, c, memo)
                        for c in _candidates(self.graph, orders, self.engines, self.params.max_candidates))  # fmt: skip
        memo[key] = value
        return value

    def _child(
        self, heads: list[list[int]], chosen: frozenset[int], released: list[int], depth: int,
        candidate: tuple[int, ...], memo: dict[tuple[frozenset[int], int], float],
    ) -> float:  # fmt: skip
        after = chosen | frozenset(candidate)
        more = [a for a in released if a not in after] + self._released(after, candidate)
        return _cost(self.graph, candidate) + self._value(heads, after, more, depth - 1, memo)

    def run(self) -> list[tuple[int, ...]]:
        graph, engines = self.graph, self.engines
        rounds: list[tuple[int, ...]] = []
        while True:
            heads = self._heads((self.params.horizon + 1) * engines)
            if not heads[0]:
                return rounds
            memo: dict[tuple[frozenset[int], int], float] = {}
            root = frozenset[int]()
            orders = self._orders(heads, root, [])
            options = _candidates(graph, orders, engines, self.params.max_candidates)
            best = min(options, key=lambda c: (self._child(heads, root, [], self.params.horizon, c, memo), -len(c)))
            rounds.append(best)
            for a in best:
                self.ready[a] = 0
                self.left[graph.durations[a]] -= 1
                self._finish(a)
            for a in best:
                for b in graph.succ[a]:
                    self.waiting[b] -= 1
                    if not self.waiting[b]:
                        self._push(b)


def dp_rounds(instance: AtomicInstance, params: DPParams | None = None) -> tuple[RoundSchedule, DPStats]:
    """The DP's rounds of the instance's DAG (not yet placed) and what the run did."""
    params = params or DPParams()
    full = len(instance.dag.atoms) <= params.full_atoms
    graph = _Graph(instance.dag, params.hbm_bytes_per_cycle, full and params.hbm_bytes_per_cycle is not None)
    if full:
        rounds, states = _full(graph, instance.n_engines, params)
        mode = "full"
    else:
        rolling = _Rolling(graph, instance.n_engines, params)
        rounds, states = rolling.run(), rolling.states
        mode = f"rolling horizon {params.horizon}"
        base = _Rolling(graph, instance.n_engines, dataclasses.replace(params, max_candidates=1))
        greedy = base.run()
        states += base.states
        if _total(graph, greedy) < _total(graph, rounds):
            rounds, mode = greedy, f"{mode} (its rule-1 greedy was better)"
    return RoundSchedule(tuple(rounds)), DPStats(mode, states, len(rounds), _latency(graph, rounds))


def _latency(graph: _Graph, rounds: Sequence[Sequence[int]]) -> int:
    return sum(max(graph.durations[a] for a in r) for r in rounds)


def _total(graph: _Graph, rounds: Sequence[Sequence[int]]) -> float:
    return sum(_cost(graph, r) for r in rounds)


IN_FLIGHT: tuple[int | None, ...] = (None, 4, 2, 1)
"""Samples in flight the method tries on a batch (None: all), best evaluated latency kept."""


def solve_dp(
    instance: AtomicInstance, options: SolveOptions, warm_start: object = None, params: DPParams | None = None
) -> Result[RoundSchedule]:
    """Run the DP, place and buffer its rounds, and price them with the round evaluator (latency objective; the
    warm start is not used). On a batch without explicit ``params`` the DP runs with every limit of samples in
    flight of :data:`IN_FLIGHT` up to the batch (fewer samples at once hold fewer outputs in the buffers and write
    fewer back); on an accelerator, without explicit ``params``, it also runs with rounds valued by compute and HBM
    weights (:attr:`DPParams.hbm_bytes_per_cycle`); the best evaluated schedule is kept, and the time limit stops
    the search after the first."""
    start = time.perf_counter()  # the time limit of the search over samples in flight
    if instance.objective != "latency":
        return Result.no_solution(Status.ERROR, PROBLEM.name, "dp",
                                  f"objective {instance.objective!r}: the DP minimizes latency")  # fmt: skip
    if params is not None or instance.batch == 1:
        tries = [params or DPParams()]
    else:
        limits = dict.fromkeys(f if f is None or f < instance.batch else None for f in IN_FLIGHT)
        tries = [DPParams(in_flight=f) for f in limits]
    if params is None and instance.accelerator is not None:
        tries.append(DPParams(hbm_bytes_per_cycle=instance.accelerator.offchip.bandwidth_bytes_per_cycle))
    runs: dict[int, DPStats] = {}

    def build(choice: DPParams) -> RoundSchedule:
        rounds, runs[id(choice)] = dp_rounds(instance, choice)
        return place_and_buffer(instance, rounds)

    found = search_schedules(instance, tries, build, options, start)
    states = sum(s.states for s in runs.values())
    if found.choice is None or found.schedule is None or found.value is None:
        return Result.no_solution(Status.INFEASIBLE, PROBLEM.name, "dp", str(found.failure), iterations=states)
    stats = runs[id(found.choice)]
    flight = "all" if found.choice.in_flight is None else found.choice.in_flight
    valued = "compute only" if found.choice.hbm_bytes_per_cycle is None else "compute and HBM weights"
    note = (f"{stats.mode}; samples in flight {flight}; rounds valued by {valued}; {stats.states} states; compute "
            f"latency {stats.compute_latency_cycles} cycles")  # fmt: skip
    return Result(Status.FEASIBLE, PROBLEM.name, "dp", solution=found.schedule, objective=found.value,
                  stats=SolveStats(iterations=states, native_status=note))  # fmt: skip


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "dp",
        PROBLEM.name,
        "heuristic",
        solve_dp,
        "DP over the untraversed sub-DAG, next rounds from four priority rules, memo table (rolling horizon on "
        "large DAGs)",
    ),
)
"""The DP method: ``dp``."""
