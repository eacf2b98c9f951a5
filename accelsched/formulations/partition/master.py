r"""The restricted master of the partition models' column generation (Cocco), and the bound it proves.

Column generation (:mod:`accelsched.formulations.partition.colgen`) solves the linear
relaxation below over the columns found so far and prices the others; this module
states that LP (:class:`RestrictedMaster`, also its integer program over the same
columns) and the lower bound on every partition that any duals of it prove
(:class:`MasterLp`).

Master
------
The linear relaxation of the MILP of :mod:`accelsched.formulations.partition.milp`
without its order rows, over the columns found so far (the restricted master;
:math:`x_j \ge 0` per variant, :math:`y_k, z_m \ge 0` per capacity candidate):

.. math::

    \min\ & \textstyle\sum_k A_k y_k + \sum_m W_m z_m + w \sum_j c_j x_j \\
    & \textstyle\sum_{j \ni i} x_j = 1 \ (\pi_i), \quad \sum_k y_k = 1, \quad \sum_m z_m = 1, \\
    & x_j - \textstyle\sum_{k \ge a_j} y_k \le 0, \quad x_j - \sum_{m \ge b_j} z_m \le 0.

A bound from any duals
----------------------
Let :math:`\lambda` be duals of these rows (those of the :math:`\le` rows clipped to
:math:`\le 0`) and :math:`d = \text{cost} - A^\top \lambda` the reduced costs they
give. For every valid partition, whose columns may be missing from the master (a
missing column has no capacity row, so :math:`d_j = w c_j - \sum_{i \in S_j} \pi_i`),

.. math::

    \text{objective} = \lambda^\top b + \lambda_{\le}^\top G x + d^\top (x, y, z)
    \ \ge\ \lambda^\top b + \min(0, \min_k d_{y_k}) + \min(0, \min_m d_{z_m})
          + \min_{K_m + s K_x \le n} \big(K_m \min(0, \textstyle\min_j d_j) + K_x \min(0, \beta)\big),

because :math:`Gx \le 0`, one candidate per buffer is chosen, and a partition has
:math:`K_m` subgraphs from the master and :math:`K_x` missing from it, each of the
latter with at least :math:`s` layers (every column with fewer is in the master:
the single layers, and what the enumeration records as listed,
:attr:`ColumnSet.listed_below <accelsched.problems.partition_columns.ColumnSet>`); :math:`\beta`
bounds the reduced cost of every column missing from the master (the pricing MILP's
bound, also when the MILP stops at its first improving sets). The minimum is at
:math:`K_x = 0` or :math:`K_x = \lfloor n/s \rfloor`. This *LB*
(:meth:`MasterLp.bound`) is valid whatever the accuracy of the LP solve; when the
exact pricing proves :math:`\beta \ge -\epsilon` the master is optimal and LB is the
LP bound of the whole column set up to :math:`n\epsilon / s`.

Subset-row cuts (:mod:`~accelsched.formulations.partition.cuts`) are rows
:math:`\sum_j a_{sj} x_j \le 1` valid for every partition, with duals :math:`\sigma_s \le 0`:
they join :math:`\lambda`, and a missing column's reduced cost is then
:math:`d_j = w c_j - \sum_{i \in S_j} \pi_i - \sum_s a_{sj} \sigma_s`, which the pricing
charges (:class:`~accelsched.formulations.partition.pricing.PricingModel`).

Before convergence, :math:`K_x \beta` is a poor bound: it charges every one of up to
:math:`n/s` missing subgraphs the reduced cost of the most negative one, which spans
many layers. A *charge per layer* :math:`\rho \le 0` spreads it over the layers: the
pricing MILP with duals :math:`\pi_i + \rho` proves
:math:`\mu \le \min_S (d_S - \rho |S|)` over the missing columns, whose
:math:`L_x \ge s K_x` layers then have :math:`\sum d_S \ge \rho L_x + K_x \mu`, and

.. math::

    \text{objective} \ \ge\ \lambda^\top b + (\text{capacity terms})
        + \min_{0 \le K_x \le n/s,\ s K_x \le L_x \le n}
          \big((n - L_x) \min(0, \textstyle\min_j d_j) + \rho L_x + K_x \min(0, \mu)\big),

a linear minimum, taken at the four corners of its domain (:math:`\rho = 0` gives the
bound above). Dinkelbach's steps choose :math:`\rho`: the least ratio :math:`d_S / |S|`
of the sets met so far, until the MILP proves :math:`\mu \ge 0`
(:meth:`~accelsched.formulations.partition.colgen_steps.ExactPricing.spread`); every
step proves a bound, and the sets it meets
(:math:`d_S < \rho |S| \le 0`) are new columns. LB then moves by about
:math:`n \rho` instead of :math:`(n/s) \beta`.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import highspy
import networkx as nx
import numpy as np

from accelsched.formulations.partition.common import Assignment, VariantTable, execution_order
from accelsched.formulations.partition.cuts import SubsetRows
from accelsched.formulations.partition.rules import PairRule
from accelsched.solvers.highs import ensure_highs_threads

__all__ = ["MasterLp", "Probe", "RestrictedMaster"]

_INF = highspy.kHighsInf


@dataclass(frozen=True)
class MasterLp:
    """A solve of the restricted master LP.

    Attributes
    ----------
    value
        The LP's objective.
    duals
        The duals of the cover rows, then those of the subset-row cuts (:attr:`RestrictedMaster.subset_rows`).
    support
        Variants with a positive value.
    weights
        Their values (as ``support``).
    artificial
        The sum of the artificial variables (:meth:`RestrictedMaster.penalty`; 0 without rules).
    base
        :math:`\\lambda^\\top b` plus the capacity terms of the bound.
    least
        The least reduced cost of a master variant (0 when none is negative).
    n
        Layers.
    min_size
        Fewest layers of a column missing from the master (every smaller one is in it).
    status
        HiGHS' model status of the solve (``value`` is infinite when a limit stopped it).
    reduced
        The reduced costs of the master's variants at ``duals`` (``least`` is their minimum).
    incidence
        The layers of the variants, as (variant, layer) index arrays: what :meth:`at` needs (a
        subset-row cut :math:`s` a variant hits counts as the layer :math:`n + s`).
    """

    value: float
    duals: tuple[float, ...]
    support: tuple[int, ...]
    base: float
    least: float
    n: int
    min_size: int = 2
    status: str = "Optimal"
    weights: tuple[float, ...] = ()
    artificial: float = 0.0
    reduced: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0), compare=False, repr=False)
    incidence: tuple[np.ndarray, np.ndarray] = dataclasses.field(
        default_factory=lambda: (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)), compare=False, repr=False
    )

    def at(self, duals: Sequence[float]) -> MasterLp:
        r"""The terms of the bound at other duals of the cover rows and cuts (the capacity rows' unchanged).

        The bound of the module docstring holds for any duals (those of the cuts at most 0):
        :math:`\lambda^\top b` moves by the change of :math:`\sum_i \pi_i + \sum_s \sigma_s`
        (each row's right-hand side is 1), and each variant's reduced cost by the change of the
        duals of its rows. ``value`` stays the LP's."""
        shift = np.asarray(duals, dtype=np.float64) - np.asarray(self.duals, dtype=np.float64)
        variant, layer = self.incidence
        reduced = self.reduced - np.bincount(variant, weights=shift[layer], minlength=len(self.reduced))
        least = min(0.0, float(reduced.min(initial=0.0)))
        base = self.base + float(shift.sum())
        return dataclasses.replace(self, duals=tuple(float(v) for v in duals), base=base, least=least, reduced=reduced)

    def bound(self, beta: float, per_layer: float = 0.0) -> float:
        """LB of the module docstring.

        Parameters
        ----------
        beta
            A lower bound of :math:`d_S - \\rho |S|` over the columns missing from the master
            (with ``per_layer`` 0: of their reduced cost).
        per_layer
            The charge :math:`\\rho \\le 0` per layer ``beta`` was proven with.
        """
        rho, mu = min(0.0, per_layer), min(0.0, beta)
        return self.base + min(
            (self.n - layers) * self.least + layers * rho + parts * mu for parts, layers in self._corners()
        )

    def beta_above(self, level: float, per_layer: float = 0.0) -> float | None:
        r"""The pricing cutoff that decides whether LB can pass ``level``: a :math:`\beta < 0` with
        ``bound(beta, per_layer)`` above ``level``, or None when no :math:`\beta \le 0` gives that
        (LB at :math:`\beta = 0`, with ``per_layer`` 0 the LP's value at its optimum, is at most
        ``level``). With a charge :math:`\rho` = ``per_layer``, :math:`\beta` bounds
        :math:`d_S - \rho |S|` (:meth:`bound`).

        LB is non-decreasing in :math:`\beta`, so a pricing MILP that proves no missing column
        below the cutoff proves LB above ``level`` (a node pruned, a pair settled): the columns
        of reduced cost between the cutoff and 0 cannot take the LP under ``level`` by
        themselves, and the pricing need not look for them
        (:meth:`~accelsched.formulations.partition.colgen_rounds.PricingRounds.generate`). ``level``
        is raised by a relative 1e-9 first, so that the bound proven at the cutoff is strictly
        above it despite the rounding of the sum."""
        target = level + 1e-9 * max(1.0, abs(level)) - self.base
        rho = min(0.0, per_layer)
        needed = -math.inf
        for parts, layers in self._corners():
            rest = (self.n - layers) * self.least + layers * rho
            if parts == 0:
                if rest <= target:
                    return None
            else:
                needed = max(needed, (target - rest) / parts)
        return needed if -math.inf < needed < 0.0 else None

    def _corners(self) -> tuple[tuple[int, int], ...]:
        r"""The vertices :math:`(K_x, L_x)` of :math:`\{0 \le K_x \le n/s,\ s K_x \le L_x \le n\}`,
        over which LB's linear minimum is taken (module docstring)."""
        most = self.n // self.min_size  # missing columns in one partition
        return ((0, 0), (0, self.n), (most, self.min_size * most), (most, self.n))


class Probe(NamedTuple):
    """The master's LP under one more branching rule, over the columns it has (:meth:`RestrictedMaster.probe`).

    Attributes
    ----------
    value
        The LP's objective, artificial variables included (infinite when a limit stopped the solve).
    artificial
        The sum of the artificial variables: how much of the cover the columns leave to them.
    """

    value: float
    artificial: float


class RestrictedMaster:
    """The master over the columns of a :class:`VariantTable`: its LP and its integer program.

    Parameters
    ----------
    table
        Columns and variants (grown by column generation).
    threads
        HiGHS threads.
    """

    def __init__(self, table: VariantTable, threads: int = 1) -> None:
        self.table = table
        self.threads = threads
        self.min_size = max(2, table.column_set.listed_below)
        """Fewest layers of a column missing from the master (every smaller one is listed)."""
        self.cycles: list[tuple[int, ...]] = []
        """Columns (indices) of the cycles cut from the integer program."""
        self.subset_rows = SubsetRows(table.instance.n_layers)
        """The subset-row cuts (:mod:`~accelsched.formulations.partition.cuts`), rows of the LP and
        of the integer program; their duals follow the cover duals in :attr:`MasterLp.duals`."""
        self.rules: frozenset[PairRule] = frozenset()
        """The branching rules of the node being solved (branch-and-price): the variants whose
        subgraph breaks one are held at 0, in the LP and in the integer program."""
        self.penalty_scale = 1.0
        """Factor on :meth:`penalty` (raised when the LP keeps an artificial variable of a node
        that phase one showed to be feasible)."""
        self.phase_one = False
        """Whether the LP is phase one's: the columns cost 0 and the artificial variables 1, so
        that its value is how far the columns are from covering the layers under the rules."""

    def forbidden(self) -> np.ndarray:
        """Which variants break a branching rule (a boolean per variant)."""
        out = np.zeros(len(self.table.variants), dtype=bool)
        if not self.rules:
            return out
        broken = {k for k, column in enumerate(self.table.columns) if not self.admits(column.members)}
        out[[j for j, variant in enumerate(self.table.variants) if variant.column in broken]] = True
        return out

    def admits(self, members: Sequence[int]) -> bool:
        """Whether a subgraph keeps every branching rule of the node."""
        inside = set(members)
        return all(rule.admits(inside) for rule in self.rules)

    def penalty(self) -> float:
        r"""Cost of an artificial cover variable when branching rules hold (the LP's phase one).

        A rule that keeps two layers together forbids their single-layer columns, so the
        LP over the master's columns may have no solution before the pricing finds the
        columns that join them. One artificial variable per cover row keeps it feasible;
        it is not a subgraph, so the bound (module docstring) leaves it out, and its cost
        only caps the duals :math:`\pi_i`. It starts above twice the objective of the
        partition of single layers (their costliest modes) and grows when a feasible node's
        LP still keeps one (:attr:`penalty_scale`); phase one decides the nodes that have no
        partition."""
        table = self.table
        total = sum(abs(table.act_coefficient(k)) for k in range(len(table.act_bytes)))
        total += sum(abs(table.weight_coefficient(m)) for m in range(len(table.weight_bytes)))
        total += sum(
            abs(table.variant_coefficient(j)) for j in range(len(table.variants)) if len(table.members(j)) == 1
        )
        return self.penalty_scale * (2.0 * total + 1.0)

    def _matrix(self, artificial: bool = False) -> tuple[highspy.HighsLp, int, int]:
        """The master as a HiGHS LP; the number of equality rows and of variant columns.

        The variants that break a branching rule get the upper bound 0; with ``artificial``
        (the LP of a node with rules), an artificial variable per cover row follows the
        capacity variables (:meth:`penalty`)."""
        table = self.table
        n = table.instance.n_layers
        shared = table.instance.shared
        n_var, n_act = len(table.variants), len(table.act_bytes)
        n_weight = 0 if shared else len(table.weight_bytes)
        columns: list[list[tuple[int, float]]] = [[] for _ in range(n_var + n_act + n_weight)]
        for i, variants in enumerate(table.covering):
            for j in variants:
                columns[j].append((i, 1.0))
        rows_lower = [1.0] * n
        rows_upper = [1.0] * n
        for k in range(n_act):
            columns[n_var + k].append((len(rows_lower), 1.0))
        rows_lower.append(1.0)
        rows_upper.append(1.0)
        for m in range(n_weight):
            columns[n_var + n_act + m].append((len(rows_lower), 1.0))
        if n_weight:
            rows_lower.append(1.0)
            rows_upper.append(1.0)
        equalities = len(rows_lower)
        for j, variant in enumerate(table.variants):
            needs = ((variant.act_index, n_var, n_act), (variant.weight_index, n_var + n_act, n_weight))
            for index, offset, count in needs:
                if index > 0 and count:
                    row = len(rows_lower)
                    columns[j].append((row, 1.0))
                    for k in range(index, count):
                        columns[offset + k].append((row, -1.0))
                    rows_lower.append(-_INF)
                    rows_upper.append(0.0)
        for cycle in self.cycles:
            row = len(rows_lower)
            for k in cycle:
                for j in self._variants_of(k):
                    columns[j].append((row, 1.0))
            rows_lower.append(-_INF)
            rows_upper.append(len(cycle) - 1.0)
        first_cut = len(rows_lower)
        if self.subset_rows.triples:
            for j, variant in enumerate(table.variants):
                for s in self.subset_rows.hits(table.columns[variant.column].members):
                    columns[j].append((first_cut + s, 1.0))
        rows_lower += [-_INF] * len(self.subset_rows)
        rows_upper += [1.0] * len(self.subset_rows)
        cost = [table.variant_coefficient(j) for j in range(n_var)]
        cost += [table.act_coefficient(k) for k in range(n_act)]
        cost += [table.weight_coefficient(m) for m in range(n_weight)]
        if self.phase_one:
            cost = [0.0] * len(cost)
        if artificial:
            columns += [[(i, 1.0)] for i in range(n)]
            cost += [1.0 if self.phase_one else self.penalty()] * n
        lp = highspy.HighsLp()
        lp.num_col_ = len(columns)
        lp.num_row_ = len(rows_lower)
        lp.col_cost_ = np.array(cost)
        lp.col_lower_ = np.zeros(len(columns))
        upper = np.full(len(columns), _INF)
        upper[:n_var][self.forbidden()] = 0.0
        lp.col_upper_ = upper
        lp.row_lower_ = np.array(rows_lower)
        lp.row_upper_ = np.array(rows_upper)
        starts = np.cumsum([0] + [len(c) for c in columns])
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = starts.astype(np.int32)
        lp.a_matrix_.index_ = np.array([r for c in columns for r, _ in c], dtype=np.int32)
        lp.a_matrix_.value_ = np.array([v for c in columns for _, v in c], dtype=np.float64)
        return lp, equalities, n_var

    def _variants_of(self, column: int) -> list[int]:
        return [j for j, variant in enumerate(self.table.variants) if variant.column == column]

    def _highs(self, time_limit: float | None) -> highspy.Highs:
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", self.threads)
        if time_limit is not None:
            h.setOptionValue("time_limit", max(time_limit, 1e-3))
        ensure_highs_threads(self.threads)
        return h

    def solve_lp(self, deadline: float | None = None, vertex: bool = False) -> MasterLp:
        """Solve the LP (interior point) and derive the bound's terms from its duals.

        Without crossover by default: the duals lie inside the optimal face, which these
        degenerate set-partitioning LPs need for column generation to converge in few rounds.
        With ``vertex``, crossover makes the primal solution a vertex, whose few fractional
        columns are what branching needs. A solve stopped by the deadline still gives duals,
        and the bound is valid for any duals (module docstring); its value is then reported
        as infinite. Under branching rules the LP has artificial variables (:meth:`penalty`),
        whose sum (:attr:`MasterLp.artificial`) says how much of the cover the master's
        columns still leave to them."""
        artificial = bool(self.rules)
        lp, equalities, n_var = self._matrix(artificial)
        h = self._highs(None if deadline is None else deadline - time.perf_counter())
        h.setOptionValue("solver", "ipm")
        h.setOptionValue("run_crossover", "on" if vertex else "off")
        h.passModel(lp)
        h.run()
        limits = (highspy.HighsModelStatus.kTimeLimit, highspy.HighsModelStatus.kIterationLimit)
        objective = float(h.getInfo().objective_function_value)
        solution = h.getSolution()
        n = self.table.instance.n_layers
        values = np.asarray(solution.col_value)
        # without crossover, a finished interior point solve may also say kUnknown
        solved = h.getModelStatus() not in limits and math.isfinite(objective)
        dual = np.nan_to_num(np.array(solution.row_dual), nan=0.0, posinf=0.0, neginf=0.0)
        dual[equalities:] = np.minimum(dual[equalities:], 0.0)
        matrix = lp.a_matrix_
        starts, index, value = np.asarray(matrix.start_), np.asarray(matrix.index_), np.asarray(matrix.value_)
        column = np.repeat(np.arange(lp.num_col_, dtype=np.int64), np.diff(starts))
        used = np.bincount(column, weights=dual[index] * value, minlength=lp.num_col_)
        reduced = np.asarray(lp.col_cost_, dtype=np.float64) - used
        reduced[:n_var][np.asarray(lp.col_upper_)[:n_var] == 0.0] = math.inf  # rule-breaking: held at 0
        # rows <= b with duals <= 0 add dual * b (0 for the capacity rows, |cycle| - 1 for a cycle cut)
        upper = np.asarray(lp.row_upper_, dtype=np.float64)
        base = float(np.sum(dual[:equalities])) + float(dual[equalities:] @ upper[equalities:])
        capacity = reduced[n_var : lp.num_col_ - n] if artificial else reduced[n_var:]
        n_act = len(self.table.act_bytes)
        base += min(0.0, float(capacity[:n_act].min()))
        if len(capacity) > n_act:
            base += min(0.0, float(capacity[n_act:].min()))
        x = values[:n_var]
        support = np.flatnonzero(x > 1e-6)
        kept = float(values[lp.num_col_ - n :].sum()) if artificial else 0.0
        # the rows whose duals MasterLp.at may move: the cover rows, then the subset-row cuts (the last rows)
        first_cut = lp.num_row_ - len(self.subset_rows)
        moved = np.where(index >= first_cut, n + index - first_cut, index)
        cover = (column < n_var) & ((index < n) | (index >= first_cut))
        return MasterLp(
            value=objective if solved else math.inf,
            status=h.modelStatusToString(h.getModelStatus()),
            duals=tuple(float(v) for v in (*dual[:n], *dual[first_cut:])),
            support=tuple(int(j) for j in support),
            weights=tuple(float(v) for v in x[support]),
            artificial=kept,
            base=base,
            least=min(0.0, float(reduced[:n_var].min())),
            n=n,
            min_size=self.min_size,
            reduced=reduced[:n_var],
            incidence=(column[cover], moved[cover].astype(np.int64)),
        )

    def probe(self, rules: Sequence[PairRule], deadline: float | None = None) -> list[Probe]:
        """The LP over the master's columns under the node's rules (:attr:`rules`) and each of
        ``rules`` in turn (strong branching's look at a node's children before any pricing).

        One dual-simplex model with the artificial variables (:meth:`penalty`) is solved for the
        node, then, for each rule, the variants that break it are held at 0, the model solved
        again from the node's basis, and the bounds restored. Pricing would add columns, which can
        only lower these values. Probing stops at the deadline: the list then ends early."""
        lp, _, _ = self._matrix(artificial=True)
        h = self._highs(None if deadline is None else deadline - time.perf_counter())
        h.setOptionValue("solver", "simplex")
        h.passModel(lp)
        h.run()
        n = self.table.instance.n_layers
        upper = np.asarray(lp.col_upper_, dtype=np.float64)
        covering = [np.asarray(variants, dtype=np.int32) for variants in self.table.covering]
        probes: list[Probe] = []
        for rule in rules:
            if deadline is not None and time.perf_counter() > deadline:
                break
            first, second = covering[rule.first], covering[rule.second]
            broken = np.setxor1d(first, second) if rule.together else np.intersect1d(first, second)
            broken = broken[upper[broken] > 0.0].astype(np.int32)
            zeros = np.zeros(len(broken))
            h.changeColsBounds(len(broken), broken, zeros, zeros)
            h.run()
            optimal = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
            value = float(h.getInfo().objective_function_value) if optimal else math.inf
            kept = float(np.asarray(h.getSolution().col_value)[lp.num_col_ - n :].sum())
            probes.append(Probe(value, kept))
            h.changeColsBounds(len(broken), broken, zeros, upper[broken])
        return probes

    def solve_integer(self, start: Assignment | None, deadline: float | None) -> Assignment | None:
        """The best valid partition of the master's columns found before the deadline (cycles cut lazily)."""
        best = start
        while deadline is None or time.perf_counter() < deadline:
            lp, _, n_var = self._matrix()
            lp.integrality_ = [highspy.HighsVarType.kInteger] * lp.num_col_
            h = self._highs(None if deadline is None else deadline - time.perf_counter())
            h.setOptionValue("presolve", "off")
            h.passModel(lp)
            if best is not None:
                values = np.zeros(lp.num_col_)
                values[list(best.variants)] = 1.0
                values[n_var + best.act_index] = 1.0
                if not self.table.instance.shared:
                    values[n_var + len(self.table.act_bytes) + best.weight_index] = 1.0
                h.setSolution(lp.num_col_, np.arange(lp.num_col_, dtype=np.int32), values)
            h.run()
            if h.getInfo().primal_solution_status != highspy.kSolutionStatusFeasible:
                return best
            x = np.asarray(h.getSolution().col_value)
            chosen = [int(j) for j in np.flatnonzero(x[:n_var] > 0.5)]
            cycle = self.cycle(chosen)
            if cycle is None:
                act = int(np.argmax(x[n_var : n_var + len(self.table.act_bytes)]))
                weight = 0 if self.table.instance.shared else int(np.argmax(x[n_var + len(self.table.act_bytes) :]))
                found = self.table.settle(chosen, [0.0] * len(chosen), act, weight)
                if best is None or self.table.objective(found) < self.table.objective(best):
                    best = found
                if h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
                    return best
                continue
            self.cycles.append(cycle)
        return best

    def cycle(self, chosen: Sequence[int]) -> tuple[int, ...] | None:
        """Columns of a cycle among the chosen variants' subgraphs, or None when they can be ordered."""
        blocks = [self.table.members(j) for j in chosen]
        try:
            execution_order(self.table.instance, blocks, [0.0] * len(blocks))
        except ValueError:
            where = {i: k for k, block in enumerate(blocks) for i in block}
            graph: nx.DiGraph[int] = nx.DiGraph()
            for v, preds in enumerate(self.table.instance.cost_model.preds):
                for p in preds:
                    if where[p] != where[v]:
                        graph.add_edge(where[p], where[v])
            return tuple(sorted(self.table.variants[chosen[a]].column for a, _ in nx.find_cycle(graph)))
        return None
