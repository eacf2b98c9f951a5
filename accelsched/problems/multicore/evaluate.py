"""The multicore evaluator: cost report, activities and memory trace of a checked CN schedule (Stream).

Schedule
--------
The solution gives every start; :func:`~accelsched.problems.multicore.check.check` verifies the rules of
:mod:`accelsched.problems.multicore` and :func:`evaluate_schedule` returns the
cost report: latency = the end of the last activity; energy = the sum above;
DRAM bytes = the off-chip accesses; NoC byte-hops = bytes over the bus (one hop);
peak memory = the largest total over time, summed over cores, of the data held
on chip:

* a CN's output, from its start until its last reader (a consumer on the same
  core, a transfer, an output store or spill) ends; a spilled output leaves the
  core when its spill ends;
* a fetched output on the destination core, from the fetch's start until its
  last consumer there ends;
* a transferred output on the destination core, from the transfer's start until
  its last consumer there ends;
* loaded input rows, from the load's start until the last CN reading them ends;
* loaded weights, from the load's start until the last CN they serve ends
  (weights streamed per CN pass through and are not counted, see the problem).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from accelsched.hardware.cost.report import CostReport
from accelsched.problems.multicore.check import CheckedSchedule, peak_bytes
from accelsched.problems.multicore.costs import bus_of, offchip_bytes
from accelsched.problems.multicore.instance import MulticoreInstance
from accelsched.problems.multicore.solution import MulticoreSolution

__all__ = ["Activity", "MulticoreEvaluation", "evaluate", "evaluate_schedule", "objective"]


@dataclass(frozen=True)
class Activity:
    """One timed activity of an evaluated schedule (for Gantt charts and traces).

    ``resource`` is ``core <id>``, ``bus`` or ``dram``; ``kind`` is ``cn``,
    ``transfer``, ``input``, ``weights`` or ``output``; ``label`` names the CN.
    """

    resource: str
    kind: str
    label: str
    start: int
    end: int
    nbytes: int = 0


@dataclass(frozen=True)
class MulticoreEvaluation:
    """The cost report of a schedule with its activities and per-core memory trace.

    Attributes
    ----------
    report
        The shared cost report.
    activities
        Every CN, transfer and off-chip access with its start and end.
    memory_trace
        Per core id, the steps ``(cycle, bytes held from then on)``.
    peak_memory_by_core
        Largest bytes held per core id.
    """

    report: CostReport
    activities: tuple[Activity, ...]
    memory_trace: Mapping[int, tuple[tuple[int, int], ...]]
    peak_memory_by_core: Mapping[int, int]


def evaluate_schedule(instance: MulticoreInstance, solution: MulticoreSolution) -> MulticoreEvaluation:
    """Cost report, activities and memory trace of a schedule (checked on the way)."""
    sched = CheckedSchedule(instance, solution)
    acc, graph = instance.accelerator, sched.graph
    bus = bus_of(instance)
    breakdown: dict[str, float] = defaultdict(float)
    activities: list[Activity] = []
    held: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    last_read = list(sched.end)  # when each CN's output may be dropped on its own core
    for k, cn in enumerate(graph.cns):
        for name, e in sched.cost[k].energy_breakdown_pj.items():
            breakdown[name] += e
        activities.append(Activity(f"core {sched.core_of[k]}", "cn", cn.name, sched.start[k], sched.end[k]))
        for q in graph.successors[k]:
            if sched.core_of[q] == sched.core_of[k] and not sched.spilled[k]:
                last_read[k] = max(last_read[k], sched.end[q])
    noc = dram = 0
    for (p, core), (s, e) in sched.transfers.items():
        nbytes = graph.cns[p].output_bytes
        noc += nbytes
        src, dst = acc.core(sched.core_of[p]).top_level("O"), acc.core(core).top_level("I")
        breakdown["bus"] += nbytes * bus.energy_pj_per_byte
        breakdown[f"mem:{src.name}"] += nbytes * src.read_energy_pj_per_byte
        breakdown[f"mem:{dst.name}"] += nbytes * dst.write_energy_pj_per_byte
        activities.append(Activity("bus", "transfer", f"{graph.cns[p].name} -> core {core}", s, e, nbytes))
        last_read[p] = max(last_read[p], e)
        readers = [sched.end[q] for q in graph.successors[p] if sched.core_of[q] == core]
        held[core].append((s, max([e, *readers]), nbytes))
    accesses = [("input", k, span) for k, span in sched.inputs.items()]
    accesses += [("output", k, span) for k, span in sched.outputs.items()]
    accesses += [("spill", k, span) for k, span in sched.spills.items()]
    accesses += [("weights", k, (s, e)) for loads in sched.weights.values() for s, e, k in loads]
    for (k, into), (s, e) in sched.fetches.items():
        nbytes = offchip_bytes(instance, "fetch", k)
        dram += nbytes
        level = acc.core(into).top_level("I")
        breakdown["dram"] += nbytes * acc.offchip.read_energy_pj_per_byte
        breakdown[f"mem:{level.name}"] += nbytes * level.write_energy_pj_per_byte
        activities.append(Activity("dram", "fetch", f"{graph.cns[k].name} -> core {into}", s, e, nbytes))
        readers = [sched.end[q] for q in graph.successors[k] if sched.core_of[q] == into]
        held[into].append((s, max([e, *readers]), nbytes))
    for kind, k, (s, e) in accesses:
        nbytes = offchip_bytes(instance, kind, k)
        dram += nbytes
        level = acc.core(sched.core_of[k]).top_level({"input": "I", "weights": "W", "output": "O", "spill": "O"}[kind])
        if kind in ("output", "spill"):
            breakdown["dram"] += nbytes * acc.offchip.write_energy_pj_per_byte
            breakdown[f"mem:{level.name}"] += nbytes * level.read_energy_pj_per_byte
            last_read[k] = max(last_read[k], e)
        else:
            breakdown["dram"] += nbytes * acc.offchip.read_energy_pj_per_byte
            breakdown[f"mem:{level.name}"] += nbytes * level.write_energy_pj_per_byte
        activities.append(Activity("dram", kind, graph.cns[k].name, s, e, nbytes))
        if kind == "input":
            readers = [sched.end[q] for q in graph.input_readers[k]]
            held[sched.core_of[k]].append((s, max([e, *readers]), nbytes))
    for k in range(len(graph.cns)):
        held[sched.core_of[k]].append((sched.start[k], last_read[k], graph.cns[k].output_bytes))
    for core, intervals in sched.residency.items():
        held[core] += intervals
    latency = max(a.end for a in activities)
    macs = sum(c.macs for c in sched.cost)
    trace = {core: _steps(intervals) for core, intervals in sorted(held.items())}
    report = CostReport(
        energy_pj=sum(breakdown.values()),
        latency_cycles=float(latency),
        dram_bytes=float(dram),
        noc_byte_hops=float(noc),
        peak_memory_bytes=float(peak_bytes(i for intervals in held.values() for i in intervals)[0]),
        utilization=min(1.0, macs / (latency * acc.n_macs)) if latency > 0 else 0.0,
        macs=macs,
        energy_breakdown_pj=dict(breakdown),
    )
    peaks = {core: max((b for _, b in steps), default=0) for core, steps in trace.items()}
    return MulticoreEvaluation(report, tuple(sorted(activities, key=lambda a: (a.start, a.resource))), trace, peaks)


def _steps(intervals: Iterable[tuple[int, int, int]]) -> tuple[tuple[int, int], ...]:
    """``(cycle, bytes held from then on)`` steps of a set of ``[start, end)`` intervals."""
    delta: dict[int, int] = defaultdict(int)
    for s, e, b in intervals:
        if e > s:
            delta[s] += b
            delta[e] -= b
    steps, held = [], 0
    for t in sorted(delta):
        held += delta[t]
        steps.append((t, held))
    return tuple(steps)


def evaluate(instance: MulticoreInstance, solution: MulticoreSolution) -> CostReport:
    """The shared multicore evaluator's cost report."""
    return evaluate_schedule(instance, solution).report


def objective(instance: MulticoreInstance, solution: MulticoreSolution, report: CostReport) -> float:
    """The instance's objective."""
    return report.metric(instance.objective)
