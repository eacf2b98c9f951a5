"""Atom-to-round scheduling on a multi-engine accelerator (Atomic Dataflow, HPCA'22).

Instance
--------
A workload cut into *atoms* on ``N`` engines of a mesh (:class:`AtomicInstance`).
An atom is one block of a layer for one sample: output rows x columns x output
channels, and a range of input channels when the reduction is split; its size per
layer is ``[h, w, ci, co]`` (:class:`AtomSize`), whole multiples of the PE array on
the unrolled loops. The *atomic DAG* (:class:`AtomDag`) has an edge wherever a
consumer atom reads what a producer atom writes (receptive fields, concatenation
offsets, partial sums); :mod:`accelsched.problems.atomic.atoms` builds it and costs
every atom with the shared per-layer cost model. The instance holds the DAG of its
sizes (:func:`make_instance`'s options); a solution may bring sizes of its own (the
baselines do), and then :meth:`AtomicInstance.dag_for` builds that DAG. Sizes of
least atom-cycle variance need a solver: they are chosen by a step before the
instance (``atoms=exact|sa`` through :func:`accelsched.registry.make_instance`, see
:mod:`accelsched.problems.atomic.sizes`). Abstract instances (a seeded random DAG,
no workload, no accelerator) serve the tests; they have no NoC, no HBM and no buffer
limit.

Solution
--------
A :class:`RoundSchedule`: the atoms of each round in round order, the engine of
every atom, the atoms whose outputs are written back to HBM, and optionally the
atom sizes. Rounds are synchronous: a round starts when the previous one has
ended, each engine runs its atoms of the round in the listed order, and the round
ends with its last atom. Atomic Dataflow's rounds give each engine at most one atom
(so a round holds at most ``N`` atoms and lasts as long as its slowest); the
pipelined baselines (CNN-P) give an engine a sequence of atoms per pipeline step,
where an atom may read what an earlier atom of the same round wrote. The rules
:func:`check` enforces are listed in :mod:`accelsched.problems.atomic.check`.

Objective: latency, energy or EDP of the round evaluator
(:mod:`accelsched.problems.atomic.cost`).

Modules
-------
``dag`` the data types; ``atoms`` the PE-array rule, candidate sizes, atom costs and
the atomic DAG; ``instance`` the instance; ``sizes`` the candidate table of the
size step and the ``sizes=`` option; ``options`` :func:`make_instance`; ``cost`` the
round evaluator; ``check`` the checker; ``bounds`` lower bounds; ``placement``
engine placement and Algorithm 3's write-backs.
"""

from __future__ import annotations

from accelsched.hardware.cost.report import CostReport
from accelsched.problems.atomic.atoms import (
    ATOMS_PER_ENGINE,
    Candidate,
    atom_chunks,
    atom_cost,
    atom_count,
    atomize,
    candidate_table,
    check_size,
    clip_size,
    lock_step_cycles,
    size_candidates,
    split_cycles,
    split_size,
    working_set,
)
from accelsched.problems.atomic.bounds import lower_bounds
from accelsched.problems.atomic.check import check
from accelsched.problems.atomic.cost import (
    AtomicMetrics,
    RoundRun,
    atomic_metrics,
    buffer_occupancy,
    buffer_overflow,
    evaluate_rounds,
    round_durations,
    simulate,
)
from accelsched.problems.atomic.dag import Atom, AtomDag, AtomSize, Partition, RoundSchedule, SizeItems
from accelsched.problems.atomic.instance import MAPPINGS, AtomicInstance
from accelsched.problems.atomic.options import (
    OPTIONS,
    SOLVED_SIZES,
    engines_option,
    make_instance,
    size_step_table,
    sized_options,
    validate_options,
)
from accelsched.problems.atomic.placement import (
    assign_engines,
    buffer_failure,
    evict,
    hop_matrix,
    place_and_buffer,
    placement_byte_hops,
    price,
    serpentine,
    zigzag_engines,
)
from accelsched.problems.atomic.sizes import (
    EFFICIENCY,
    SizeTable,
    format_sizes,
    instance_size_table,
    parse_sizes,
    size_table,
    variance,
)
from accelsched.problems.base import ProblemSpec

__all__ = [
    "ATOMS_PER_ENGINE",
    "EFFICIENCY",
    "MAPPINGS",
    "OPTIONS",
    "PROBLEM",
    "SOLVED_SIZES",
    "Atom",
    "AtomDag",
    "AtomSize",
    "AtomicInstance",
    "AtomicMetrics",
    "Candidate",
    "Partition",
    "RoundRun",
    "RoundSchedule",
    "SizeItems",
    "SizeTable",
    "assign_engines",
    "atom_chunks",
    "atom_cost",
    "atom_count",
    "atomic_metrics",
    "atomize",
    "buffer_failure",
    "buffer_occupancy",
    "buffer_overflow",
    "candidate_table",
    "check",
    "check_size",
    "clip_size",
    "engines_option",
    "evaluate",
    "evaluate_rounds",
    "evict",
    "format_sizes",
    "hop_matrix",
    "instance_size_table",
    "lock_step_cycles",
    "lower_bounds",
    "make_instance",
    "objective",
    "parse_sizes",
    "place_and_buffer",
    "placement_byte_hops",
    "price",
    "round_durations",
    "serpentine",
    "simulate",
    "size_candidates",
    "size_step_table",
    "size_table",
    "sized_options",
    "split_cycles",
    "split_size",
    "validate_options",
    "variance",
    "working_set",
    "zigzag_engines",
]


def evaluate(instance: AtomicInstance, solution: RoundSchedule) -> CostReport:
    """The shared round evaluator's cost report (:func:`accelsched.problems.atomic.cost.evaluate_rounds`)."""
    return evaluate_rounds(instance, solution)


def objective(instance: AtomicInstance, solution: RoundSchedule, report: CostReport) -> float:
    """The instance's objective (latency, energy or EDP of ``report``)."""
    return report.metric(instance.objective)


PROBLEM = ProblemSpec(
    name="atomic",
    description="atom-to-round scheduling on a multi-engine accelerator (Atomic Dataflow)",
    make_instance=make_instance,
    check=check,
    evaluate=evaluate,
    objective=objective,
    solution_from_dict=RoundSchedule.from_dict,
)
