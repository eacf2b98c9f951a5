"""Small instances with independently computed optima, shared by the solver tests.

Each instance has a brute-force reference here (no solver involved) and two models:
one written once on :class:`LinearModel` (solved by every linear backend) and one in
CP-SAT.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from accelsched.solvers import LinearModel, LinExpr, Var, quicksum

# -- 0-1 knapsack ---------------------------------------------------------------------

KNAPSACK_WEIGHTS = (12, 7, 11, 8, 9, 6, 13, 5, 10, 4, 14, 3)
KNAPSACK_VALUES = (24, 13, 23, 15, 16, 11, 25, 9, 19, 7, 26, 4)
KNAPSACK_CAPACITY = 38  # greedy by value density gets 72, the optimum is 75


def knapsack_brute_force(weights: tuple[int, ...], values: tuple[int, ...], capacity: int) -> int:
    """Best value over all 2^n subsets."""
    n = len(weights)
    best = 0
    for mask in range(1 << n):
        chosen = [i for i in range(n) if mask >> i & 1]
        if sum(weights[i] for i in chosen) <= capacity:
            best = max(best, sum(values[i] for i in chosen))
    return best


def knapsack_greedy(weights: tuple[int, ...], values: tuple[int, ...], capacity: int) -> list[int]:
    """Items in order of value per weight while they fit: feasible, not always optimal."""
    chosen, load = [], 0
    for i in sorted(range(len(weights)), key=lambda i: -values[i] / weights[i]):
        if load + weights[i] <= capacity:
            chosen.append(i)
            load += weights[i]
    return chosen


@dataclass
class KnapsackMilp:
    """The knapsack on a LinearModel."""

    model: LinearModel
    x: list[Var]


def knapsack_milp(
    weights: tuple[int, ...] = KNAPSACK_WEIGHTS,
    values: tuple[int, ...] = KNAPSACK_VALUES,
    capacity: int = KNAPSACK_CAPACITY,
) -> KnapsackMilp:
    """max sum v_i x_i  s.t.  sum w_i x_i <= C,  x binary."""
    m = LinearModel("knapsack")
    x = [m.add_binary(f"take[{i}]") for i in range(len(weights))]
    m.add(quicksum(w * xi for w, xi in zip(weights, x, strict=True)) <= capacity, name="capacity")
    m.maximize(quicksum(v * xi for v, xi in zip(values, x, strict=True)))
    return KnapsackMilp(m, x)


def knapsack_cpsat(
    weights: tuple[int, ...] = KNAPSACK_WEIGHTS,
    values: tuple[int, ...] = KNAPSACK_VALUES,
    capacity: int = KNAPSACK_CAPACITY,
) -> tuple[cp_model.CpModel, list[cp_model.IntVar]]:
    """The same knapsack in CP-SAT."""
    m = cp_model.CpModel()
    x = [m.new_bool_var(f"take[{i}]") for i in range(len(weights))]
    m.add(sum(w * xi for w, xi in zip(weights, x, strict=True)) <= capacity)
    m.maximize(sum(v * xi for v, xi in zip(values, x, strict=True)))
    return m, x


# -- job shop -------------------------------------------------------------------------

# (machine, duration) of each job's operations, in order: the 3 x 3 example of the
# OR-Tools job-shop guide with a third operation added to job 2.
JOBSHOP = (
    ((0, 3), (1, 2), (2, 2)),
    ((0, 2), (2, 1), (1, 4)),
    ((1, 4), (2, 3), (0, 1)),
)


def jobshop_brute_force(jobs: tuple[tuple[tuple[int, int], ...], ...]) -> int:
    """Optimal makespan: every machine sequence, each scheduled as early as possible.

    For fixed machine sequences the earliest schedule is the longest path in the DAG
    of job and machine precedences; sequences that make a cycle are infeasible.
    """
    ops = [(j, k) for j, job in enumerate(jobs) for k in range(len(job))]
    machines = sorted({mach for job in jobs for mach, _ in job})
    on_machine = {mach: [op for op in ops if jobs[op[0]][op[1]][0] == mach] for mach in machines}
    best = None
    for orders in itertools.product(*(itertools.permutations(on_machine[mach]) for mach in machines)):
        preds: dict[tuple[int, int], list[tuple[int, int]]] = {op: [] for op in ops}
        for j, k in ops:
            if k:
                preds[(j, k)].append((j, k - 1))
        for order in orders:
            for a, b in itertools.pairwise(order):
                preds[b].append(a)
        finish: dict[tuple[int, int], int] = {}
        progress = True
        while progress and len(finish) < len(ops):
            progress = False
            for op in ops:
                if op not in finish and all(p in finish for p in preds[op]):
                    start = max((finish[p] for p in preds[op]), default=0)
                    finish[op] = start + jobs[op[0]][op[1]][1]
                    progress = True
        if len(finish) < len(ops):
            continue  # cyclic sequences
        makespan = max(finish.values())
        best = makespan if best is None else min(best, makespan)
    assert best is not None
    return best


@dataclass
class JobShopMilp:
    """The job shop on a LinearModel."""

    model: LinearModel
    start: dict[tuple[int, int], Var]
    makespan: Var


def jobshop_milp(jobs: tuple[tuple[tuple[int, int], ...], ...] = JOBSHOP) -> JobShopMilp:
    """Disjunctive big-M MILP: start times, one order binary per pair of operations on a machine."""
    m = LinearModel("jobshop")
    horizon = sum(d for job in jobs for _, d in job)
    start = {(j, k): m.add_var(f"s[{j},{k}]", 0.0, horizon) for j, job in enumerate(jobs) for k in range(len(job))}
    makespan = m.add_var("makespan", 0.0, horizon)
    for j, job in enumerate(jobs):
        for k in range(len(job) - 1):
            m.add(start[j, k + 1] >= start[j, k] + job[k][1], name=f"prec[{j},{k}]")
        m.add(makespan >= start[j, len(job) - 1] + job[-1][1], name=f"end[{j}]")
    for a, b in itertools.combinations(start, 2):
        (ma, da), (mb, db) = jobs[a[0]][a[1]], jobs[b[0]][b[1]]
        if ma != mb or a[0] == b[0]:
            continue
        first = m.add_binary(f"before[{a},{b}]")
        m.add(start[a] + da <= start[b] + horizon * (1 - first), name=f"ab[{a},{b}]")
        m.add(start[b] + db <= start[a] + horizon * first, name=f"ba[{a},{b}]")
    m.minimize(makespan)
    return JobShopMilp(m, start, makespan)


def jobshop_cpsat(
    jobs: tuple[tuple[tuple[int, int], ...], ...] = JOBSHOP,
) -> tuple[cp_model.CpModel, dict[tuple[int, int], cp_model.IntVar], cp_model.IntVar]:
    """Intervals per operation, NoOverlap per machine, makespan = max of job ends."""
    m = cp_model.CpModel()
    horizon = sum(d for job in jobs for _, d in job)
    start, end = {}, {}
    by_machine: dict[int, list[cp_model.IntervalVar]] = {}
    for j, job in enumerate(jobs):
        for k, (mach, dur) in enumerate(job):
            s = m.new_int_var(0, horizon, f"s[{j},{k}]")
            e = m.new_int_var(0, horizon, f"e[{j},{k}]")
            by_machine.setdefault(mach, []).append(m.new_interval_var(s, dur, e, f"op[{j},{k}]"))
            start[j, k], end[j, k] = s, e
            if k:
                m.add(s >= end[j, k - 1])
    for intervals in by_machine.values():
        m.add_no_overlap(intervals)
    makespan = m.new_int_var(0, horizon, "makespan")
    m.add_max_equality(makespan, [end[j, len(job) - 1] for j, job in enumerate(jobs)])
    m.minimize(makespan)
    return m, start, makespan


def jobshop_schedule_ok(jobs: tuple[tuple[tuple[int, int], ...], ...], start: dict[tuple[int, int], float]) -> bool:
    """Independent check of a schedule: job order and no overlap on a machine."""
    for j, job in enumerate(jobs):
        for k in range(len(job) - 1):
            if start[j, k + 1] < start[j, k] + job[k][1] - 1e-6:
                return False
    for a, b in itertools.combinations(start, 2):
        (ma, da), (mb, db) = jobs[a[0]][a[1]], jobs[b[0]][b[1]]
        if ma == mb and start[a] + da > start[b] + 1e-6 and start[b] + db > start[a] + 1e-6:
            return False
    return True


# -- planted market split: hard to solve, trivial to start from ------------------------


@dataclass
class Planted:
    """``min c.x  s.t.  A x = A x*``, x binary, with the hidden feasible point x*.

    Market-split equalities: branch-and-bound finds no feasible point in a fraction of
    a second, but x* given as a warm start is one.
    """

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    hidden: np.ndarray

    @property
    def hidden_objective(self) -> float:
        """Objective of the hidden point."""
        return float(self.c @ self.hidden)


def planted(rows: int = 5, cols: int = 40, seed: int = 3) -> Planted:
    """A seeded planted market-split instance."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 100, size=(rows, cols))
    hidden = rng.integers(0, 2, size=cols)
    return Planted(a, a @ hidden, rng.integers(1, 20, size=cols), hidden)


def planted_milp(p: Planted) -> tuple[LinearModel, list[Var]]:
    """The planted instance on a LinearModel."""
    m = LinearModel("planted")
    x = [m.add_binary(f"x{j}") for j in range(p.a.shape[1])]
    for i, row in enumerate(p.a):
        m.add(LinExpr.from_terms(x, row) == int(p.b[i]), name=f"split{i}")
    m.minimize(LinExpr.from_terms(x, p.c))
    return m, x


def planted_cpsat(p: Planted) -> tuple[cp_model.CpModel, list[cp_model.IntVar]]:
    """The planted instance in CP-SAT."""
    m = cp_model.CpModel()
    x = [m.new_bool_var(f"x{j}") for j in range(p.a.shape[1])]
    for i, row in enumerate(p.a):
        m.add(sum(int(c) * xi for c, xi in zip(row, x, strict=True)) == int(p.b[i]))
    m.minimize(sum(int(c) * xi for c, xi in zip(p.c, x, strict=True)))
    return m, x
