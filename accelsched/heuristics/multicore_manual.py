"""Stream's manual layer-core allocations, scheduled by the list scheduler (method ``manual``).

* **Ping-pong** (cores of one dataflow): the layers a set of identical cores may
  run are dealt to them in turn, in the workload's topological order, so that
  consecutive layers sit on different cores and can overlap in a fused schedule.
* **Best spatial fit** (cores of different dataflows): each layer goes to the
  allowed core whose spatial unrolling it uses best (highest spatial utilization
  of the shared primitive; ties: fewer cycles). Layers whose best fit is a set of
  equally good cores (two identical TPU-like cores in a heterogeneous quad-core)
  are dealt to those cores in turn, as in ping-pong, instead of all going to the
  lowest core id.

Layers with a single allowed core (pooling and element-wise layers on the SIMD
core) go there. The allocation is then scheduled by
:func:`~accelsched.problems.multicore.scheduler.list_schedule` with the
instance's priority.
"""

from __future__ import annotations

from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.problems.base import MethodSpec
from accelsched.problems.multicore import PROBLEM, MulticoreInstance, list_schedule
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["METHODS", "manual_allocation"]


def manual_allocation(instance: MulticoreInstance) -> dict[str, int]:
    """Core of every layer by ping-pong (identical cores) or best spatial fit (different dataflows)."""
    acc = instance.accelerator
    turn: dict[tuple[int, ...], int] = {}
    allocation: dict[str, int] = {}
    for name in instance.workload.names:
        cores = instance.allowed_cores[name]
        if len({acc.core(c).cost_key() for c in cores}) > 1:
            layer = instance.workload[name]
            costs = {c: layer_cost(layer, acc.core(c), acc.offchip) for c in cores}
            fit = {c: (-costs[c].spatial_utilization, costs[c].compute_cycles) for c in cores}
            best = min(fit.values())
            cores = tuple(c for c in cores if fit[c] == best)
        allocation[name] = cores[turn.get(cores, 0) % len(cores)]
        turn[cores] = turn.get(cores, 0) + 1
    return allocation


def _run_manual(instance: MulticoreInstance, options: SolveOptions, warm_start: object) -> Result:
    solution = list_schedule(instance, manual_allocation(instance))
    report = PROBLEM.evaluate(instance, solution)
    return Result(
        Status.FEASIBLE,
        PROBLEM.name,
        "manual",
        solution=solution,
        objective=PROBLEM.objective(instance, solution, report),
        stats=SolveStats(native_status=f"{instance.priority.value}-priority list schedule"),
    )


METHODS = (
    MethodSpec(
        "manual",
        "multicore",
        "baseline",
        _run_manual,
        "Stream's manual allocation (ping-pong on identical cores, best spatial fit otherwise), list-scheduled",
    ),
)
