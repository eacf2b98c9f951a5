r"""CP-SAT model of the partition problem (Cocco) over the same columns as the MILP.

Variables
---------
A Boolean :math:`x_j` per variant (a column in a mode, see
:mod:`accelsched.formulations.partition.common`), Booleans :math:`y_k` and
:math:`z_m` for the capacity candidates (:math:`z` with separate buffers only), an
integer position :math:`p_i \in [0, n - 1]` per layer (the position of its
subgraph), and for every edge :math:`(u, v)` with a column holding both ends a
Boolean :math:`s_{uv} = \sum_{j \ni u, v} x_j`, true when both ends are in the
same chosen subgraph.

Constraints
-----------
* cover: exactly one :math:`x_j` over the variants holding layer :math:`i`;
* one capacity per buffer: exactly one :math:`y_k`, exactly one :math:`z_m`;
* the capacities hold the modes: the MILP's level Booleans per layer and level,
  :math:`w_{ik} = \sum_{j \ni i,\, a_j \ge k} x_j \le \sum_{k' \ge k} y_{k'}` (and
  for :math:`z`), linear constraints that CP-SAT's linear relaxation uses too;
* order: :math:`s_{uv} \Rightarrow p_v = p_u` and :math:`\neg s_{uv} \Rightarrow
  p_v \ge p_u + 1` (an edge no column holds: always :math:`p_v \ge p_u + 1`).
  Columns are connected, so positions are constant on a chosen subgraph, and the
  precedence between two subgraphs is enforced exactly when they are both chosen;
  the argument of :mod:`accelsched.formulations.partition.milp_model` shows that the
  solutions are exactly the valid partitions.

Objective
---------
The MILP's, :math:`\sum_k A_k y_k + \sum_m W_m z_m + \alpha \sum_j c_j x_j` (or
:math:`\sum_j c_j x_j` with fixed capacities), multiplied by a scale :math:`S` and
rounded to integers, as CP-SAT requires (:func:`objective_scale`): :math:`S = 1`
when every coefficient is an integer (EMA with fixed capacities), the denominator
of :math:`\alpha` when that makes them integers (EMA in co-exploration), else the
largest power of two that keeps the sum of the scaled coefficients below
:math:`2^{50}` (energy). A solution holds at most :math:`n + 2` nonzero terms, each
rounded by at most :math:`e` (the largest rounding error, in objective units), so
the reported bound is CP-SAT's bound divided by :math:`S` minus :math:`(n + 2) e`
(a valid bound of the exact objective), and the reported objective is the exact
objective at the decoded solution.

Running
-------
As for the MILP (:func:`accelsched.formulations.partition.proof.prepare`): columns
enumerated in at most a quarter of the time limit and completed by column generation
beyond the budget, CP-SAT's presolve off (its objective
expansion leaves the linear relaxation without a useful bound on these models), a
warm start given as a complete hint, a result never worse than the warm start, and
OPTIMAL only with a complete column set.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from fractions import Fraction
from pathlib import Path

from ortools.sat.python import cp_model

from accelsched.formulations.partition.common import Assignment, Prepared, VariantTable
from accelsched.formulations.partition.driver import ModelAnswer, proof_settings, solve_over_table
from accelsched.formulations.partition.proof_params import WHOLE_TABLES, ProofParams
from accelsched.formulations.partition.table_model import TableModel
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PROBLEM, PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import DEFAULT_BUDGET
from accelsched.problems.result import Result
from accelsched.solvers import CpSatSolution, SolveOptions, solve_cpsat

__all__ = ["METHODS", "PartitionCpSat", "objective_scale", "solve_cpsat_partition"]

_MAX_SCALED = 2.0**50
"""Largest sum of scaled objective coefficients (CP-SAT objectives are 64-bit integers)."""


class PartitionCpSat(TableModel):
    """The CP-SAT model over the variants of a :class:`VariantTable`.

    Parameters
    ----------
    table
        Columns, variants and coefficients of the instance.

    Attributes
    ----------
    model
        The ``CpModel``.
    x, y, z, position, same
        Variant, activation-capacity, weight-capacity (empty when shared) Booleans,
        layer positions, and the same-subgraph literal of every edge some column holds.
    scale, rounding_error
        The objective scale :math:`S` and the largest rounding error of a coefficient
        (objective units).
    """

    def __init__(self, table: VariantTable) -> None:
        self.table = table
        instance = table.instance
        self.n = instance.n_layers
        self.model = cp_model.CpModel()
        m = self.model
        self.x = [m.new_bool_var(f"x{j}") for j in range(len(table.variants))]
        self.y = [m.new_bool_var(f"y{k}") for k in range(len(table.act_bytes))]
        self.z = [] if instance.shared else [m.new_bool_var(f"z{k}") for k in range(len(table.weight_bytes))]
        self.position = [m.new_int_var(0, self.n - 1, f"p{i}") for i in range(self.n)]
        self.same = {edge: m.new_bool_var(f"s{edge[0]}_{edge[1]}") for edge in table.edges if table.together[edge]}
        self.need_act: dict[tuple[int, int], cp_model.IntVar] = {}
        self.need_weight: dict[tuple[int, int], cp_model.IntVar] = {}
        self.scale = 1.0
        self.rounding_error = 0.0
        self.build()

    def cover(self) -> None:
        """Every layer is in exactly one chosen variant."""
        for variants in self.table.covering:
            self.model.add_exactly_one(self.x[j] for j in variants)

    def one_capacity(self) -> None:
        """Exactly one candidate per buffer."""
        self.model.add_exactly_one(self.y)
        if self.z:
            self.model.add_exactly_one(self.z)

    def capacity_holds(self) -> None:
        """A layer's subgraph is chosen only under capacities that hold its mode: the MILP's level chains."""
        self.need_act = self._levels(self.table.levels(), self.y)
        if self.z:
            self.need_weight = self._levels(self.table.levels(weights=True), self.z)

    def _levels(
        self, levels: dict[int, list[tuple[int, list[int]]]], candidates: list[cp_model.IntVar]
    ) -> dict[tuple[int, int], cp_model.IntVar]:
        """``w_ik = sum of x_j with a_j = k + w_ik+`` and ``w_ik <= sum of the candidates from k on``."""
        need: dict[tuple[int, int], cp_model.IntVar] = {}
        for i, steps in levels.items():
            above: cp_model.IntVar | None = None
            for level, variants in reversed(steps):
                w = self.model.new_bool_var(f"w{i}_{level}")
                self.model.add(w == sum(self.x[j] for j in variants) + (0 if above is None else above))
                self.model.add(w <= sum(candidates[level:]))
                need[i, level] = above = w
        return need

    def order(self) -> None:
        """Equal positions inside a chosen subgraph, strictly increasing positions along edges between subgraphs."""
        p = self.position
        for u, v in self.table.edges:
            same = self.same.get((u, v))
            if same is None:
                self.model.add(p[v] >= p[u] + 1)
                continue
            self.model.add(same == sum(self.x[j] for j in self.table.together[u, v]))
            self.model.add(p[v] == p[u]).only_enforce_if(same)
            self.model.add(p[v] >= p[u] + 1).only_enforce_if(~same)

    def objective(self) -> None:
        """The MILP's objective, scaled to integers (see the module docstring)."""
        table = self.table
        terms: list[tuple[cp_model.IntVar, float]] = [(x, table.variant_coefficient(j)) for j, x in enumerate(self.x)]
        if table.capacity_weight:
            terms += [(y, table.act_coefficient(k)) for k, y in enumerate(self.y)]
            terms += [(z, table.weight_coefficient(k)) for k, z in enumerate(self.z)]
        coefficients = [c for _, c in terms]
        self.scale = objective_scale(coefficients, table.instance.alpha)
        scaled = [round(c * self.scale) for c in coefficients]
        errors = [abs(s - c * self.scale) / self.scale for s, c in zip(scaled, coefficients, strict=True)]
        self.rounding_error = max(errors, default=0.0)
        self.model.minimize(sum(s * var for (var, _), s in zip(terms, scaled, strict=True)))

    def bound(self, answer: CpSatSolution) -> float | None:
        """A valid bound of the exact objective from CP-SAT's bound of the scaled one."""
        if answer.bound is None:
            return None
        return answer.bound - (self.n + 2) * self.rounding_error

    def decode(self, answer: CpSatSolution) -> Assignment:
        """The assignment of a solution: chosen variants in execution order, chosen capacities."""
        chosen = [j for j, x in enumerate(self.x) if answer.boolean_value(x)]
        priority = [float(answer.value(self.position[self.table.members(j)[0]])) for j in chosen]
        act_index = next(k for k, y in enumerate(self.y) if answer.boolean_value(y))
        weight_index = next((k for k, z in enumerate(self.z) if answer.boolean_value(z)), 0)
        return self.table.settle(chosen, priority, act_index, weight_index)

    def hints(self, assignment: Assignment) -> dict[cp_model.IntVar, int]:
        """A complete hint: the assignment's variants, capacities, positions and same-subgraph literals."""
        hints: dict[cp_model.IntVar, int] = {x: 0 for x in self.x}
        where = {}
        for position, j in enumerate(assignment.variants):
            hints[self.x[j]] = 1
            for i in self.table.members(j):
                hints[self.position[i]] = position
                where[i] = position
        for (u, v), same in self.same.items():
            hints[same] = int(where[u] == where[v])
        hints.update({y: int(k == assignment.act_index) for k, y in enumerate(self.y)})
        hints.update({z: int(k == assignment.weight_index) for k, z in enumerate(self.z)})
        hints.update({self.need_act[key]: v for key, v in self.table.needs(assignment).items()})
        if self.z:
            hints.update({self.need_weight[key]: v for key, v in self.table.needs(assignment, weights=True).items()})
        return hints


def objective_scale(coefficients: Sequence[float], alpha: float) -> float:
    """The factor that makes the objective coefficients integers, exactly where possible.

    1 when every coefficient is an integer; else the denominator of ``alpha`` (as a
    fraction with a denominator up to 10^6) when it makes every coefficient an integer
    within 10^-6 (EMA in co-exploration: capacity bytes + alpha x integer bytes); else
    the largest power of two that keeps the sum of the scaled coefficients below 2^50.
    """
    total = math.fsum(abs(c) for c in coefficients)
    for scale in (1, Fraction(alpha).limit_denominator(10**6).denominator):
        if total * scale <= _MAX_SCALED and all(abs(c * scale - round(c * scale)) <= 1e-6 for c in coefficients):
            return float(scale)
    return 2.0 ** math.floor(math.log2(_MAX_SCALED / total)) if total > 0 else 1.0


def solve_cpsat_partition(
    instance: PartitionInstance,
    options: SolveOptions,
    warm_start: PartitionSolution | None = None,
    *,
    budget: int = DEFAULT_BUDGET,
    rounds: int | None = None,
    ledger: str | Path | None = None,
    pairs: Collection[tuple[int, int]] | None = None,
    params: ProofParams = WHOLE_TABLES,
) -> Result[PartitionSolution]:
    """Enumerate the columns, build :class:`PartitionCpSat` and solve it, hinted by a warm start.

    Parameters
    ----------
    instance, options, warm_start, ledger
        As :func:`~accelsched.formulations.partition.driver.solve_over_table` takes them; the warm
        start (or column generation's better partition) is given to CP-SAT as a complete hint.
    budget, rounds, pairs, params
        The proof's settings (:func:`~accelsched.formulations.partition.driver.proof_settings`); by
        default (:data:`~accelsched.formulations.partition.proof_params.WHOLE_TABLES`) a complete
        co-exploration table is solved whole, only an incomplete one pair by pair.

    Returns
    -------
    Result
        OPTIMAL only with a complete column set and a proof from CP-SAT.
    """
    settings = proof_settings(budget, rounds, pairs, params)

    def solve_model(run: Prepared, options: SolveOptions) -> ModelAnswer:
        cpsat = PartitionCpSat(run.table)
        hints = cpsat.hints(run.warm) if run.warm else None
        answer = solve_cpsat(cpsat.model, run.solver_options(options), hints, objective_scale=cpsat.scale)
        found = cpsat.decode(answer) if answer.status.has_solution else None
        hinted = (f"{run.start_label} is given as a complete hint",) if hints else ()
        return ModelAnswer(answer.status, found, cpsat.bound(answer), answer.stats, hinted)

    return solve_over_table(
        instance,
        options,
        warm_start,
        method="cpsat",
        backend="cpsat",
        settings=settings,
        ledger=ledger,
        solve_model=solve_model,
    )


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "cpsat",
        PROBLEM.name,
        "exact",
        solve_cpsat_partition,
        "CP-SAT over enumerated subgraph columns, order positions per layer, capacity candidates as Booleans",
    ),
)
"""The CP-SAT method: ``cpsat``."""
