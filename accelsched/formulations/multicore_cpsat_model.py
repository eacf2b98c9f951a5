r"""The CP-SAT model of layer-core allocation and CN scheduling on a multi-core with a bus (Stream).

Space
-----
The schedules :func:`accelsched.problems.multicore.check` accepts in which **each
non-streamed layer's weights are loaded once**, on its core, before its first CN, and
stay resident until its last CN ends: a subset of what the checker allows (it also
accepts reloads after an eviction, which Stream's FIFO list scheduler makes when the
weight memory is short). Every other activity is exactly the problem's: transfers,
spills, fetches, input loads, output stores, one load per CN of a streamed layer. So
OPTIMAL and the bound of ``latency`` (and ``edp``) hold over this space, while the
``energy`` optimum, which reloads could only raise, is the problem's.

Model
-----
A Boolean :math:`x_{l,c}` per layer and allowed core, exactly one per layer (rule 1).
Per CN a start :math:`S_k` and an optional interval per allowed core (present iff
:math:`x_{l,c}`, duration from :func:`~accelsched.problems.multicore.costs.cn_cost`),
so :math:`E_k = S_k + \sum_c d_{k,c} x_{l,c}`. Derived literals: ``u`` (a consumer of
CN :math:`p` on core :math:`c'`), ``z`` (:math:`p` on a core :math:`c \ne c'` that
does not spill it, and ``u``), a transfer iff :math:`\bigvee_c z`; spilled iff the
layer sits on a core where ``instance.spills(layer, core)``, a fetch iff spilled and
``u``. Every activity is an interval present iff its literal (start 0 when absent).
Rules 3-5 are precedences enforced by these literals; rule 2 no-overlaps per core, on
the bus and on the DRAM port; the weight memory a cumulative per core over residency
intervals (load start to the layer's last CN end, demand its weight bytes); rule 6 a
barrier per stack.

Energy
------
In this space the energy is a linear function of the literals (coefficients from the
cost model). CP-SAT needs integers: the coefficients are scaled by the smallest power
of two that makes them all integers, exactly, if that keeps their sum below
:math:`2^{50}`, else by the largest one that does, and rounded (:meth:`MulticoreCpSat.energy`);
:meth:`MulticoreCpSat.energy_pj` is the float sum of the unrounded coefficients and
:meth:`MulticoreCpSat.energy_bound` CP-SAT's bound minus the summed rounding errors
(zero when exact), so it stays valid.

The method that solves this model (objectives, the EDP sweep, warm starts) is
:mod:`accelsched.formulations.multicore_cpsat`.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from accelsched.hardware.spec import Bus
from accelsched.problems.multicore import (
    MulticoreInstance,
    MulticoreSolution,
    OffChipAccess,
    Transfer,
    cn_cost,
    offchip_bytes,
    offchip_cycles,
    transfer_cycles,
)
from accelsched.solvers import CpSatSolution

__all__ = ["LiteralAlgebra", "MulticoreCpSat"]

_MAX_SCALED = 2.0**50
"""Largest sum of scaled energy coefficients (CP-SAT's objective is a 64-bit integer)."""

Lit = Any
"""A CP-SAT Boolean variable, or Python ``True`` for a literal that always holds."""


@dataclass(frozen=True)
class _Task:
    """An activity: start variable, duration, presence literal (``True``: always), interval."""

    start: Any
    duration: int
    present: Lit
    interval: Any


class LiteralAlgebra:
    """Derived Boolean literals of a CP-SAT model (disjunctions, conjunctions), each remembered with its
    definition, so that its value at an allocation can be computed for a hint.

    Parameters
    ----------
    model
        The ``CpModel`` the literals are added to.
    """

    def __init__(self, model: cp_model.CpModel) -> None:
        self.model = model
        self._defs: dict[int, tuple[Any, str, tuple[Any, ...]]] = {}  # index -> (literal, "x" | "any" | "all", parts)
        self._cache: dict[tuple[Any, ...], Lit] = {}

    def _new_lit(self, name: str, kind: str, parts: tuple[Any, ...]) -> Any:
        var = self.model.new_bool_var(name)
        self._defs[var.index] = (var, kind, parts)
        return var

    def _any(self, lits: Iterable[Lit], name: str, exclusive: bool = True) -> Lit | None:
        """A literal equal to the disjunction of literals, pairwise ``exclusive`` or not (None when empty)."""
        items = list(lits)
        if any(lit is True for lit in items):
            return True
        items = list({lit.index: lit for lit in items}.values())
        if not items:
            return None
        if len(items) == 1:
            return items[0]
        key = ("any", *sorted(lit.index for lit in items))
        if key not in self._cache:
            var = self._new_lit(name, "any", tuple(items))
            if exclusive:
                self.model.add(var == sum(items))
            else:
                self.model.add_max_equality(var, items)
            self._cache[key] = var
        return self._cache[key]

    def _all(self, a: Lit, b: Lit, name: str) -> Lit:
        """A literal equal to ``a and b``."""
        if a is True or b is True:
            return b if a is True else a
        key = ("all", *sorted((a.index, b.index)))
        if key not in self._cache:
            var = self._new_lit(name, "all", (a, b))
            self.model.add_implication(var, a)
            self.model.add_implication(var, b)
            self.model.add_bool_or([~a, ~b, var])
            self._cache[key] = var
        return self._cache[key]

    @staticmethod
    def _when(*lits: Lit) -> list[Any]:
        return [lit for lit in lits if lit is not True]

    def value(self, answer: CpSatSolution, lit: Lit) -> bool:
        """Value of a literal in a solution."""
        return True if lit is True else answer.boolean_value(lit)

    def _holds(self, lit: Lit, allocation: Mapping[str, int]) -> bool:
        if lit is True:
            return True
        _, kind, parts = self._defs[lit.index]
        if kind == "x":
            return allocation.get(parts[0]) == parts[1]
        values = [self._holds(p, allocation) for p in parts]
        return any(values) if kind == "any" else all(values)


class MulticoreCpSat(LiteralAlgebra):
    """The CP-SAT model of one instance (module docstring), one method per constraint family.

    Parameters
    ----------
    instance
        The multicore instance.
    energy_cap, latency_cap
        Upper bounds on the scaled energy (:meth:`scaled_energy`) and on the makespan (cycles), or None.

    Attributes
    ----------
    model, x, tasks
        The ``CpModel``; the allocation literal per ``(layer, core)``; every activity's interval by key.
    scale, rounding_error_pj
        Factor of the energy coefficients and the sum of their rounding errors (0 when exact).
    """

    def __init__(self, instance: MulticoreInstance, energy_cap: int | None = None, latency_cap: int | None = None):
        self.instance = instance
        self.graph = instance.graph
        super().__init__(cp_model.CpModel())
        self.horizon = self._horizon()
        self.tasks: dict[tuple[Any, ...], _Task] = {}  # (kind, CN or layer, core) -> task
        for family in (self.allocation, self.computation, self.transfers, self.spills, self.offchip, self.weights,
                       self.precedence, self.resources, self.stacks, self.makespan, self.energy):  # fmt: skip
            family()
        if energy_cap is not None:
            self.model.add(self.energy_expr <= energy_cap)
        if latency_cap is not None:
            self.model.add(self.makespan_var <= latency_cap)

    # ------------------------------------------------------------------ building blocks
    def _horizon(self) -> int:
        """Length of a fully serial schedule: every activity one after the other."""
        inst, n = self.instance, len(self.graph.cns)
        cores = len(inst.accelerator.cores)
        total = sum(max(cn_cost(inst, k, c).duration_cycles for c in inst.allowed_cores[cn.layer])
                    for k, cn in enumerate(self.graph.cns))  # fmt: skip
        for k in range(n):
            total += cores * transfer_cycles(inst, k) + offchip_cycles(inst, "input", k)
            total += (2 + cores) * offchip_cycles(inst, "output", k) + offchip_cycles(inst, "weights", k)
        return total + 1

    def _task(self, key: tuple[Any, ...], duration: int, present: Lit, name: str) -> _Task:
        """An interval of ``duration`` cycles, present iff ``present``; its start is 0 when absent."""
        m = self.model
        start = m.new_int_var(0, self.horizon, f"s_{name}")
        if present is True:
            interval = m.new_fixed_size_interval_var(start, duration, f"i_{name}")
        else:
            interval = m.new_optional_fixed_size_interval_var(start, duration, present, f"i_{name}")
            m.add(start == 0).only_enforce_if(~present)
        task = _Task(start, duration, present, interval)
        self.tasks[key] = task
        return task

    def _core_lits(self, layer: str, cores: Iterable[int]) -> Lit | None:
        """The literal "``layer`` sits on one of ``cores``"."""
        chosen = set(cores)
        if chosen >= set(self.instance.allowed_cores[layer]):
            return True
        return self._any((self.x[layer, c] for c in sorted(chosen)), f"on_{layer}_{'_'.join(map(str, chosen))}")

    # ------------------------------------------------------------------ constraint families
    def allocation(self) -> None:
        """Rule 1: every layer on exactly one allowed core."""
        self.x: dict[tuple[str, int], Any] = {}
        for name, cores in self.instance.allowed_cores.items():
            for c in cores:
                self.x[name, c] = self._new_lit(f"x_{name}_{c}", "x", (name, c))
            self.model.add_exactly_one(self.x[name, c] for c in cores)

    def computation(self) -> None:
        """Rule 2 (cores): one optional interval per CN and allowed core, duration from ``cn_cost``."""
        inst, m = self.instance, self.model
        self.cn_start: list[Any] = []
        self.cn_end: list[Any] = []
        self.core_intervals: dict[int, list[Any]] = defaultdict(list)
        for k, cn in enumerate(self.graph.cns):
            start = m.new_int_var(0, self.horizon, f"S_{cn.name}")
            durations = {c: cn_cost(inst, k, c).duration_cycles for c in inst.allowed_cores[cn.layer]}
            for c, d in durations.items():
                self.core_intervals[c].append(
                    m.new_optional_fixed_size_interval_var(start, d, self.x[cn.layer, c], f"cn_{cn.name}_{c}")
                )
            self.cn_start.append(start)
            self.cn_end.append(start + sum(d * self.x[cn.layer, c] for c, d in durations.items()))

    def _consumers_on(self, p: int, core: int) -> Lit | None:
        """The literal "a consumer CN of ``p`` runs on ``core``"."""
        layers = sorted({self.graph.cns[q].layer for q in self.graph.successors[p]})
        lits = [self.x[name, core] for name in layers if (name, core) in self.x]
        return self._any(lits, f"u_{'_'.join(layers)}_{core}", exclusive=False)

    def transfers(self) -> None:
        """Rule 3 (which transfers): CN ``p`` to core ``c'`` iff ``p`` is on another core, unspilled, with a consumer
        on ``c'``; one bus interval each, ``z`` literals per producer core for the energy."""
        inst = self.instance
        self.z: dict[tuple[int, int, int], Lit] = {}
        for p, cn in enumerate(self.graph.cns):
            for dest in range(len(inst.accelerator.cores)):
                u = self._consumers_on(p, dest)
                if u is None:
                    continue
                sources = [c for c in inst.allowed_cores[cn.layer] if c != dest and not inst.spills(cn.layer, c)]
                for c in sources:
                    self.z[p, c, dest] = self._all(self.x[cn.layer, c], u, f"z_{cn.layer}_{c}_{dest}")
                present = self._any((self.z[p, c, dest] for c in sources), f"tr_{cn.name}_{dest}")
                if present is not None:
                    self._task(("transfer", p, dest), transfer_cycles(inst, p), present, f"tr_{cn.name}_{dest}")

    def spills(self) -> None:
        """Rule 4 (spills and fetches): a spill per CN of a layer spilled on its core, a fetch per consumer core."""
        inst = self.instance
        self.spilled: dict[str, Lit] = {}
        for name in inst.workload.names:
            lit = self._core_lits(name, [c for c in inst.allowed_cores[name] if inst.spills(name, c)])
            if lit is not None:
                self.spilled[name] = lit
        for p, cn in enumerate(self.graph.cns):
            sp = self.spilled.get(cn.layer)
            if sp is None:
                continue
            self._task(("spill", p), offchip_cycles(inst, "spill", p), sp, f"sp_{cn.name}")
            for dest in range(len(inst.accelerator.cores)):
                u = self._consumers_on(p, dest)
                if u is not None:
                    fe = self._all(sp, u, f"fe_{cn.layer}_{dest}")
                    self._task(("fetch", p, dest), offchip_cycles(inst, "fetch", p), fe, f"fe_{cn.name}_{dest}")

    def offchip(self) -> None:
        """Rule 4 (inputs and outputs): an input load per CN reading new network-input rows, a store per sink CN."""
        inst = self.instance
        for k, cn in enumerate(self.graph.cns):
            if self.graph.input_bytes(k) > 0:
                self._task(("input", k), offchip_cycles(inst, "input", k), True, f"in_{cn.name}")
            if cn.layer in inst.workload.sinks:
                self._task(("output", k), offchip_cycles(inst, "output", k), True, f"out_{cn.name}")

    def weights(self) -> None:
        """Rule 5 (loads): one load per CN of a streamed layer; one load per other layer, resident from its start
        to the layer's last CN end (a residency interval per allowed core, for the cumulative)."""
        inst, m = self.instance, self.model
        self.residency: dict[int, list[tuple[Any, int]]] = defaultdict(list)  # core -> (interval, bytes)
        self.resident_end: dict[str, Any] = {}
        for name in inst.workload.names:
            layer = inst.workload[name]
            if not (layer.kind.has_parameters and layer.weight_bytes > 0):
                continue
            members = self.graph.by_layer[name]
            duration = offchip_cycles(inst, "weights", members[0])
            cores = inst.allowed_cores[name]
            streamed = self._core_lits(name, [c for c in cores if inst.streams_weights(name, c)])
            if streamed is not None:
                for k in members:
                    self._task(("stream", k), duration, streamed, f"ws_{self.graph.cns[k].name}")
            kept = [c for c in cores if not inst.streams_weights(name, c)]
            once = self._core_lits(name, kept)
            if once is None:
                continue
            load = self._task(("weights", name), duration, once, f"w_{name}")
            end = m.new_int_var(0, self.horizon, f"R_{name}")
            size = m.new_int_var(0, self.horizon, f"RS_{name}")
            self.resident_end[name] = end
            for c in kept:
                interval = m.new_optional_interval_var(load.start, size, end, self.x[name, c], f"res_{name}_{c}")
                self.residency[c].append((interval, layer.weight_bytes))

    def precedence(self) -> None:
        """Rules 3-5 (order): producers, transfers, fetches, input and weight loads before each CN; transfers,
        spills and stores after their CN; fetches after their spill."""
        m, graph, t = self.model, self.graph, self.tasks
        for p, q in graph.edges:
            m.add(self.cn_start[q] >= self.cn_end[p])
            layer = graph.cns[q].layer
            for c in self.instance.allowed_cores[layer]:
                for kind in ("transfer", "fetch"):
                    task = t.get((kind, p, c))
                    if task is not None:
                        enforce = self._when(self.x[layer, c], task.present)
                        m.add(self.cn_start[q] >= task.start + task.duration).only_enforce_if(enforce)
        for key, task in t.items():
            kind, k = key[0], key[1]
            if kind in ("transfer", "spill", "output"):
                m.add(task.start >= self.cn_end[k]).only_enforce_if(self._when(task.present))
            elif kind == "fetch":
                spill = t["spill", k]
                m.add(task.start >= spill.start + spill.duration).only_enforce_if(self._when(task.present))
            elif kind == "stream":
                m.add(self.cn_start[k] >= task.start + task.duration).only_enforce_if(self._when(task.present))
            elif kind == "weights":
                for j in graph.by_layer[k]:
                    m.add(self.cn_start[j] >= task.start + task.duration).only_enforce_if(self._when(task.present))
                    m.add(self.resident_end[k] >= self.cn_end[j])
        for q, loads in enumerate(graph.input_reads):
            for j in loads:
                m.add(self.cn_start[q] >= t["input", j].start + t["input", j].duration)

    def resources(self) -> None:
        """Rule 2 (resources) and rule 5 (capacity): no overlap per core, on the bus, on the DRAM port; the resident
        weights of each core within its weight memory (only where they could exceed it)."""
        m = self.model
        for intervals in self.core_intervals.values():
            m.add_no_overlap(intervals)
        m.add_no_overlap([task.interval for key, task in self.tasks.items() if key[0] == "transfer"])
        m.add_no_overlap([task.interval for key, task in self.tasks.items() if key[0] != "transfer"])
        for core, items in self.residency.items():
            capacity = self.instance.weight_capacity_bytes(self.instance.accelerator.core(core))
            if sum(b for _, b in items) > capacity:
                m.add_cumulative([i for i, _ in items], [b for _, b in items], capacity)

    def stacks(self) -> None:
        """Rule 6: every CN of a stack starts at or after a barrier that follows every CN of the earlier stacks."""
        groups: dict[int, list[int]] = defaultdict(list)
        for cn in self.graph.cns:
            groups[cn.stack].append(cn.index)
        order = sorted(groups)
        self.barriers: list[tuple[Any, list[int]]] = []
        for before, after in itertools.pairwise(order):
            barrier = self.model.new_int_var(0, self.horizon, f"B_{before}")
            members = [k for s in order if s <= before for k in groups[s]]
            for k in groups[before]:
                self.model.add(barrier >= self.cn_end[k])
            if self.barriers:
                self.model.add(barrier >= self.barriers[-1][0])
            for k in groups[after]:
                self.model.add(self.cn_start[k] >= barrier)
            self.barriers.append((barrier, members))

    def makespan(self) -> None:
        """The makespan: at or after the end of every CN and every present activity."""
        self.makespan_var = self.model.new_int_var(0, self.horizon, "makespan")
        for end in self.cn_end:
            self.model.add(self.makespan_var >= end)
        for task in self.tasks.values():
            self.model.add(self.makespan_var >= task.start + task.duration).only_enforce_if(self._when(task.present))

    def energy(self) -> None:
        """Energy as a linear expression of the literals, its coefficients scaled to integers (module docstring)."""
        inst, acc = self.instance, self.instance.accelerator
        dram, bus = acc.offchip, acc.interconnect
        assert isinstance(bus, Bus)
        coefficient: dict[int, float] = defaultdict(float)
        literal: dict[int, Any] = {}
        self.energy_constant_pj = 0.0

        def add(lit: Lit, pj: float) -> None:
            if lit is True:
                self.energy_constant_pj += pj
            else:
                coefficient[lit.index] += pj
                literal[lit.index] = lit

        def load(c: int, op: str) -> float:  # pJ per byte from DRAM into core c's top level of op
            return dram.read_energy_pj_per_byte + acc.core(c).top_level(op).write_energy_pj_per_byte

        for (name, c), x in self.x.items():
            layer, members = inst.workload[name], self.graph.by_layer[name]
            pj = math.fsum(cn_cost(inst, k, c).energy_pj for k in members)
            pj += sum(offchip_bytes(inst, "input", k) for k in members) * load(c, "I")
            stores = ((name in inst.workload.sinks) + inst.spills(name, c)) * self.graph.cns[members[0]].output_bytes
            pj += stores * len(members) * 0 + sum(stores and offchip_bytes(inst, "output", k) for k in members) * (
                dram.write_energy_pj_per_byte + acc.core(c).top_level("O").read_energy_pj_per_byte)  # fmt: skip
            if layer.kind.has_parameters and layer.weight_bytes > 0:
                pj += (len(members) if inst.streams_weights(name, c) else 1) * layer.weight_bytes * load(c, "W")
            add(True if len(inst.allowed_cores[name]) == 1 else x, pj)
        for (p, c, dest), z in self.z.items():
            src, dst = acc.core(c).top_level("O"), acc.core(dest).top_level("I")
            per_byte = bus.energy_pj_per_byte + src.read_energy_pj_per_byte + dst.write_energy_pj_per_byte
            add(z, self.graph.cns[p].output_bytes * per_byte)
        for key, task in self.tasks.items():
            if key[0] == "fetch":
                add(task.present, offchip_bytes(inst, "fetch", key[1]) * load(key[2], "I"))
        self.energy_terms = [(literal[i], coefficient[i]) for i in sorted(literal)]
        self.scale, self.rounding_error_pj = _scale([c for _, c in self.energy_terms])
        self.energy_expr = cp_model.LinearExpr.weighted_sum(
            [lit for lit, _ in self.energy_terms], [round(c * self.scale) for _, c in self.energy_terms]
        )

    # ------------------------------------------------------------------ objectives, decoding, hints
    def minimize(self, metric: str) -> float:
        """Set the objective (``latency`` or ``energy``); return the factor CP-SAT's objective is scaled by."""
        if metric == "latency":
            self.model.minimize(self.makespan_var)
            return 1.0
        self.model.minimize(self.energy_expr)
        return self.scale

    def latency(self, answer: CpSatSolution) -> int:
        """The end of the last present activity (the evaluator's latency of the decoded schedule)."""
        ends = [answer.value(e) for e in self.cn_end]
        ends += [answer.value(t.start) + t.duration for t in self.tasks.values() if self.value(answer, t.present)]
        return max(ends)

    def energy_pj(self, answer: CpSatSolution) -> float:
        """The energy of a solution from the unrounded coefficients."""
        return self.energy_constant_pj + math.fsum(c for lit, c in self.energy_terms if self.value(answer, lit))

    def scaled_energy(self, answer: CpSatSolution) -> int:
        """The value of the scaled (integer) energy expression."""
        return sum(round(c * self.scale) for lit, c in self.energy_terms if self.value(answer, lit))

    def energy_bound(self, answer: CpSatSolution) -> float | None:
        """A valid lower bound of the energy from CP-SAT's bound of the scaled expression."""
        if answer.bound is None:
            return None
        return answer.bound + self.energy_constant_pj - self.rounding_error_pj

    def decode(self, answer: CpSatSolution) -> MulticoreSolution:
        """The solution: allocation, CN starts, present transfers and off-chip accesses."""
        graph = self.graph
        allocation = {name: c for (name, c), x in self.x.items() if answer.boolean_value(x)}
        starts = {cn.name: answer.value(self.cn_start[k]) for k, cn in enumerate(graph.cns)}
        transfers: list[Transfer] = []
        offchip: list[OffChipAccess] = []
        for key, task in self.tasks.items():
            if not self.value(answer, task.present):
                continue
            start = answer.value(task.start)
            if key[0] == "transfer":
                transfers.append(Transfer(graph.cns[key[1]].name, key[2], start))
                continue
            kind = "weights" if key[0] == "stream" else key[0]
            k = graph.by_layer[key[1]][0] if kind == "weights" and key[0] == "weights" else key[1]
            core = key[2] if kind == "fetch" else allocation[graph.cns[k].layer]
            offchip.append(OffChipAccess(kind, graph.cns[k].name, core, start))
        return MulticoreSolution(allocation, starts, tuple(transfers), tuple(offchip))

    def hints(self, solution: MulticoreSolution) -> dict[Any, int]:
        """Values of every variable at ``solution`` (absent activities at 0; a reloaded layer hints its first load)."""
        graph, alloc = self.graph, solution.allocation
        hints: dict[Any, int] = {}
        for var, _, _ in self._defs.values():
            hints[var] = int(self._holds(var, alloc))
        names = graph.names
        end = [solution.starts[cn.name] + cn_cost(self.instance, k, alloc[cn.layer]).duration_cycles
               for k, cn in enumerate(graph.cns)]  # fmt: skip
        hints.update({self.cn_start[k]: solution.starts[cn.name] for k, cn in enumerate(graph.cns)})
        found: dict[tuple[Any, ...], int] = {("transfer", names[t.cn], t.core): t.start for t in solution.transfers}
        for a in sorted(solution.offchip, key=lambda a: -a.start):  # the first load of a layer wins
            k = names[a.cn]
            layer = graph.cns[k].layer
            if a.kind == "weights":
                streamed = self.instance.streams_weights(layer, alloc[layer])
                found[("stream", k) if streamed else ("weights", layer)] = a.start
            else:
                found[(a.kind, k, a.core) if a.kind == "fetch" else (a.kind, k)] = a.start
        last = max(end)
        for key, task in self.tasks.items():
            present = self._holds(task.present, alloc)
            if not present:
                hints[task.start] = 0
            elif key in found:
                hints[task.start] = found[key]
                last = max(last, found[key] + task.duration)
        for name, var in self.resident_end.items():
            hints[var] = max(end[k] for k in graph.by_layer[name])
        for barrier, members in self.barriers:
            hints[barrier] = max(end[k] for k in members)
        hints[self.makespan_var] = last
        return hints


def _scale(coefficients: list[float]) -> tuple[float, float]:
    """The power of two making the coefficients integers, and the sum of their rounding errors (pJ)."""
    total = math.fsum(abs(c) for c in coefficients)
    if total == 0:
        return 1.0, 0.0
    limit = math.floor(math.log2(_MAX_SCALED / total))
    for exponent in range(limit + 1):
        if all((c * 2.0**exponent).is_integer() for c in coefficients):
            return 2.0**exponent, 0.0
    scale = 2.0**limit
    return scale, math.fsum(abs(round(c * scale) - c * scale) for c in coefficients) / scale
