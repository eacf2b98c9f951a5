"""Layer-sequential baseline of the atomic problem (method ``ls``): every layer split evenly over all engines.

Layers run one after the other in workload order, each split over all ``N``
engines (:func:`accelsched.problems.atomic.atoms.split_size`, the size that runs
the whole batch of the layer fastest in lock step) and *batch-enhanced*: a layer
runs for every sample of the batch before the next layer starts. Within a layer:

* input-channel parts of one output block (partial sums) run in successive rounds,
  one part per round level;
* with ``m >= N`` atoms per sample and level, rounds take ``N`` blocks of one sample,
  the samples innermost, so that an engine keeps the same weights over ``B``
  rounds (weights are loaded once per layer, not once per sample);
* with ``m < N``, a round takes ``floor(N / m)`` samples, block ``i`` of the
  ``j``-th sample on engine ``i + m j``, again keeping each engine on one weight
  block.

Engines are fixed by this rule (a partial sum stays on its engine); Algorithm 3's
write-backs follow (:func:`accelsched.problems.atomic.placement.evict`).
"""

from __future__ import annotations

from accelsched.problems.atomic import PROBLEM, AtomicInstance, RoundSchedule, evict, price, split_size
from accelsched.problems.base import MethodSpec
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["METHODS", "ls_schedule", "solve_ls"]


def ls_schedule(instance: AtomicInstance) -> RoundSchedule:
    """The layer-sequential schedule (module docstring), placed, before write-backs.

    Raises
    ------
    ValueError
        An abstract instance (no workload).
    """
    workload, acc = instance.workload, instance.accelerator
    if workload is None or acc is None:
        raise ValueError("the layer-sequential baseline needs a workload and an accelerator")
    engines, batch = instance.n_engines, instance.batch
    sizes = {layer.name: split_size(layer, acc, engines, batch) for layer in workload}
    probe = RoundSchedule.with_sizes((), sizes)
    dag = instance.dag_for(probe)
    placed = [0] * len(dag.atoms)
    rounds: list[tuple[int, ...]] = []
    for layer in workload:
        samples = [dag.groups[layer.name, s] for s in range(batch)]
        levels = sorted({dag.atoms[a].in_channels for a in samples[0]})
        for level in levels:
            per_sample = [[a for a in atoms if dag.atoms[a].in_channels == level] for atoms in samples]
            m = len(per_sample[0])
            if m >= engines:
                for first in range(0, m, engines):
                    for atoms in per_sample:
                        chunk = atoms[first : first + engines]
                        rounds.append(tuple(chunk))
                        for i, a in enumerate(chunk):
                            placed[a] = i
                continue
            together = engines // m
            for first in range(0, batch, together):
                members: list[int] = []
                for j, atoms in enumerate(per_sample[first : first + together]):
                    for i, a in enumerate(atoms):
                        placed[a] = i + m * j
                    members += atoms
                rounds.append(tuple(members))
    return RoundSchedule(tuple(rounds), tuple(placed), frozenset(), probe.sizes)


def solve_ls(instance: AtomicInstance, options: SolveOptions, warm_start: object = None) -> Result[RoundSchedule]:
    """Run the layer-sequential baseline (the warm start and the time limit are not used)."""
    if instance.workload is None:
        return Result.no_solution(Status.ERROR, PROBLEM.name, "ls", "the layer-sequential baseline needs a workload")
    schedule = evict(instance, ls_schedule(instance))
    value, failure = price(instance, schedule)
    if value is None:
        return Result.no_solution(Status.INFEASIBLE, PROBLEM.name, "ls", str(failure))
    note = f"{len(schedule.rounds)} rounds; {len(schedule.write_back)} outputs written back"
    return Result(Status.FEASIBLE, PROBLEM.name, "ls", solution=schedule, objective=value,
                  stats=SolveStats(native_status=note))  # fmt: skip


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "ls",
        PROBLEM.name,
        "baseline",
        solve_ls,
        "layer-sequential: every layer split evenly over all engines, batch-enhanced",
    ),
)
"""The layer-sequential baseline: ``ls``."""
