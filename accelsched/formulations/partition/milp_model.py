r"""The MILP model of the partition problem (Cocco) over enumerated columns, on the backend-neutral linear layer.

Data
----
Layers :math:`i \in L` (topological positions, :math:`n = |L|`) and edges
:math:`(u, v) \in E`; the columns of :mod:`accelsched.problems.partition_columns`
in each mode that is not dominated, the *variants* :math:`j \in J`
(:mod:`accelsched.formulations.partition.common`), with metric :math:`c_j` and
requirement :math:`(a_j, b_j)`, the indices of the smallest activation (or shared)
candidate :math:`A_{a_j}` and weight candidate :math:`W_{b_j}` that hold them.

Variables
---------
:math:`x_j \in \{0, 1\}` variant :math:`j` is a subgraph; :math:`y_k \in \{0, 1\}`
the activation (or shared) buffer is :math:`A_k`; :math:`z_m \in \{0, 1\}` the weight
buffer is :math:`W_m` (separate buffers only); :math:`\pi_i \in [0, n - 1]` the
order potential of layer :math:`i`; :math:`w_{ik}, v_{im} \in [0, 1]` layer
:math:`i`'s subgraph needs activation level :math:`k` (weight level :math:`m`) or
more.

Model
-----
.. math::

    \min\ & \textstyle\sum_k A_k y_k + \sum_m W_m z_m + \alpha \sum_j c_j x_j
            \quad (\text{co-exploration; with fixed capacities } \textstyle\sum_j c_j x_j) \\
    & \textstyle\sum_{j \ni i} x_j = 1 & \forall i \in L \quad & \text{(cover)} \\
    & \textstyle\sum_k y_k = 1, \ \sum_m z_m = 1 & & \text{(one capacity per buffer)} \\
    & w_{ik} = \textstyle\sum_{j \ni i,\, a_j \ge k} x_j \le \sum_{k' \ge k} y_{k'}, \
      v_{im} = \sum_{j \ni i,\, b_j \ge m} x_j \le \sum_{m' \ge m} z_{m'} & \forall i, k, m \quad
      & \text{(the capacities hold the modes)} \\
    & \pi_v \ge \pi_u + 1 - s_{uv}, \ \pi_v \le \pi_u + (n - 1)(1 - s_{uv}) & \forall (u, v) \in E \quad
      & \text{(order)}

where :math:`s_{uv} = \sum_{j \ni u, v} x_j` (with a shared buffer, :math:`a_j`
indexes the shared candidates holding activations and weights together, and there
is no :math:`z`).

The capacity rows use a *level* variable :math:`w_{ik} \in [0, 1]` per layer and
activation level (:math:`v_{im}` per weight level), for the levels some variant of
the layer needs (:meth:`VariantTable.levels
<accelsched.formulations.partition.common.VariantTable.levels>`; a row at a level no
variant needs is implied by the row at the next level one needs). The sum is
written as a chain over those levels, :math:`w_{ik} = \sum_{j \ni i,\, a_j = k} x_j
+ w_{ik^+}`, so each variant appears once per layer, as in the cover rows. At
integer points the rows say what the rows :math:`x_j \le \sum_{k \ge a_j} y_k` of
every variant say: the cover leaves one variant per layer, so :math:`w_{ik}` is 1
exactly when the layer's subgraph needs level :math:`k` or more. Their linear
relaxation is stronger: two half-chosen covers that each need a large buffer make
the row of a layer in both ask for all of it, where the rows per variant ask for
half.

The order rows are exact
------------------------
By the cover rows, :math:`s_{uv} \in \{0, 1\}` and is 1 exactly when :math:`u` and
:math:`v` are in the same chosen subgraph. *Every valid partition is feasible:*
number its subgraphs :math:`0, 1, \ldots` in execution order (at most :math:`n`) and
set :math:`\pi_i` to the number of the subgraph of :math:`i`. An edge inside a
subgraph has :math:`s_{uv} = 1` and :math:`\pi_u = \pi_v`, which both rows allow; an
edge between subgraphs goes forward, :math:`s_{uv} = 0` and :math:`\pi_v \ge \pi_u + 1`,
and the second row holds since :math:`\pi_v - \pi_u \le n - 1`. *Every feasible point
is a valid partition:* the rows of an edge inside a chosen subgraph give
:math:`\pi_u = \pi_v`; a column is weakly connected, so :math:`\pi` is constant on
each chosen subgraph; an edge between two chosen subgraphs raises :math:`\pi` by at
least 1, so the graph of the subgraphs has no cycle and ordering them by
:math:`\pi` (ties have no edge between them) respects every edge. The cover,
connectivity (columns are connected) and fit (capacity rows) rules hold by
construction, so the feasible points are exactly the valid partitions of the columns
with their capacities, and the objective is the evaluator's when every subgraph runs
in the cheapest mode its capacities hold, which a minimum always picks.

Decoding orders the chosen subgraphs topologically, ties by :math:`\pi`, and gives
every subgraph the cheapest mode the chosen capacities hold (never worse than the
solver's).
"""

from __future__ import annotations

from accelsched.formulations.partition.common import Assignment, VariantTable
from accelsched.formulations.partition.table_model import TableModel
from accelsched.solvers import LinearModel, Var, VarValues, quicksum

__all__ = ["PartitionMilp"]


class PartitionMilp(TableModel):
    """The MILP over the variants of a :class:`VariantTable` (module docstring).

    Parameters
    ----------
    table
        The instance's columns, their variants and the objective's coefficients.

    Attributes
    ----------
    model
        The :class:`LinearModel`.
    x, y, z, pi
        Variant, activation-capacity, weight-capacity (empty when shared) and potential variables.
    """

    def __init__(self, table: VariantTable) -> None:
        self.table = table
        instance = table.instance
        self.n = instance.n_layers
        self.model = LinearModel(f"partition-{instance.workload.name}")
        m = self.model
        self.x = [m.add_binary(f"x{j}") for j in range(len(table.variants))]
        self.y = [m.add_binary(f"y{k}") for k in range(len(table.act_bytes))]
        self.z = [] if instance.shared else [m.add_binary(f"z{k}") for k in range(len(table.weight_bytes))]
        self.pi = [m.add_var(f"pi{i}", 0.0, float(self.n - 1)) for i in range(self.n)]
        self.need_act: dict[tuple[int, int], Var] = {}
        self.need_weight: dict[tuple[int, int], Var] = {}
        self.build()

    def cover(self) -> None:
        """Every layer is in exactly one chosen variant."""
        for i, variants in enumerate(self.table.covering):
            self.model.add(quicksum(self.x[j] for j in variants) == 1, name=f"cover{i}")

    def one_capacity(self) -> None:
        """Exactly one candidate per buffer."""
        self.model.add(quicksum(self.y) == 1, name="one_act")
        if self.z:
            self.model.add(quicksum(self.z) == 1, name="one_weight")

    def capacity_holds(self) -> None:
        """A layer's subgraph is chosen only under capacities that hold its mode: level chains and their rows."""
        self.need_act = self._levels(self.table.levels(), self.y, "w")
        if self.z:
            self.need_weight = self._levels(self.table.levels(weights=True), self.z, "v")

    def _levels(
        self, levels: dict[int, list[tuple[int, list[int]]]], candidates: list[Var], name: str
    ) -> dict[tuple[int, int], Var]:
        """``w_ik = sum of x_j with a_j = k + w_ik+`` and ``w_ik <= sum of the candidates from k on``."""
        need: dict[tuple[int, int], Var] = {}
        for i, steps in levels.items():
            above: Var | None = None
            for level, variants in reversed(steps):
                w = self.model.add_var(f"{name}{i}_{level}", 0.0, 1.0)
                chain = quicksum(self.x[j] for j in variants) + (0.0 if above is None else above)
                self.model.add(w == chain, name=f"{name}{i}_{level}_chain")
                self.model.add(w <= quicksum(candidates[level:]), name=f"{name}{i}_{level}_fits")
                need[i, level] = above = w
        return need

    def order(self) -> None:
        """Potentials equal inside a chosen subgraph and increasing by at least 1 along edges between subgraphs."""
        for u, v in self.table.edges:
            together = self.table.together[u, v]
            same = quicksum(self.x[j] for j in together)
            self.model.add(self.pi[v] >= self.pi[u] + 1 - same, name=f"after{u}_{v}")
            if together:
                self.model.add(self.pi[v] <= self.pi[u] + (self.n - 1) * (1 - same), name=f"same{u}_{v}")

    def objective(self) -> None:
        """Capacity bytes plus alpha times the metric (co-exploration), or the metric (fixed capacities)."""
        table = self.table
        terms = [table.variant_coefficient(j) * x for j, x in enumerate(self.x)]
        if table.capacity_weight:
            terms += [table.act_coefficient(k) * y for k, y in enumerate(self.y)]
            terms += [table.weight_coefficient(k) * z for k, z in enumerate(self.z)]
        self.model.minimize(quicksum(terms))

    def decode(self, values: VarValues) -> Assignment:
        """The assignment of a solution: chosen variants in execution order, chosen capacities."""
        chosen = [j for j, x in enumerate(self.x) if values[x] > 0.5]
        priority = [min(values[self.pi[i]] for i in self.table.members(j)) for j in chosen]
        act_index = max(range(len(self.y)), key=lambda k: values[self.y[k]])
        weight_index = max(range(len(self.z)), key=lambda k: values[self.z[k]]) if self.z else 0
        return self.table.settle(chosen, priority, act_index, weight_index)

    def start(self, assignment: Assignment) -> dict[Var | str, float]:
        """A complete MIP start: the assignment's variants, capacities, positions and levels."""
        values: dict[Var | str, float] = {x: 0.0 for x in self.x}
        for position, j in enumerate(assignment.variants):
            values[self.x[j]] = 1.0
            for i in self.table.members(j):
                values[self.pi[i]] = float(position)
        values.update({y: float(k == assignment.act_index) for k, y in enumerate(self.y)})
        values.update({z: float(k == assignment.weight_index) for k, z in enumerate(self.z)})
        values.update({self.need_act[key]: float(v) for key, v in self.table.needs(assignment).items()})
        if self.z:
            needs = self.table.needs(assignment, weights=True)
            values.update({self.need_weight[key]: float(v) for key, v in needs.items()})
        return values
