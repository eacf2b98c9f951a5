"""The round evaluator of the atomic problem (:mod:`accelsched.problems.atomic`).

Latency
    Rounds are synchronous: a round lasts as long as its slowest atom, and the
    latency is the sum over rounds. An atom's duration comes from the shared
    per-layer cost model with its operands in the engine's SRAM
    (:func:`accelsched.problems.atomic.atomize`).
Energy
    The atoms' engine energy (MACs and engine memories, from the same cost model),
    plus, when the schedule gives every atom an engine and the instance has a mesh,
    the NoC energy of each edge between atoms on different engines: its bytes x the
    XY-routing hops between the two engines x the mesh's energy per byte and hop.
Utilization
    Engine-time utilization: the atoms' cycles over ``N`` engines x the latency.

Not modelled yet (stated so that no number is read as more than it is): NoC
transfer time on the latency, DRAM traffic (inputs, weights and outputs are taken
as on chip) and the per-engine buffer occupancy under an eviction policy; the
report's ``dram_bytes`` is 0 and its ``peak_memory_bytes`` is the largest round's
sum of atom output bytes.
"""

from __future__ import annotations

from accelsched.hardware.cost.report import CostReport
from accelsched.problems.atomic import AtomicInstance, RoundSchedule

__all__ = ["evaluate_rounds", "noc_byte_hops", "round_durations"]


def round_durations(instance: AtomicInstance, solution: RoundSchedule) -> list[int]:
    """Cycles of every round: its slowest atom."""
    durations = instance.dag.durations
    return [max(durations[a] for a in members) for members in solution.rounds]


def noc_byte_hops(instance: AtomicInstance, solution: RoundSchedule) -> float:
    """Bytes x hops of the edges between atoms on different engines (0 without engines or mesh)."""
    if solution.engines is None or instance.mesh is None:
        return 0.0
    cols = instance.mesh.cols
    total = 0.0
    for a, b, nbytes in instance.dag.edges:
        ea, eb = solution.engines[a], solution.engines[b]
        total += nbytes * (abs(ea // cols - eb // cols) + abs(ea % cols - eb % cols))
    return total


def evaluate_rounds(instance: AtomicInstance, solution: RoundSchedule) -> CostReport:
    """The cost report of a checked round schedule (see the module docstring)."""
    atoms = instance.dag.atoms
    latency = sum(round_durations(instance, solution))
    hops = noc_byte_hops(instance, solution)
    breakdown = {"engines": sum(a.energy_pj for a in atoms)}
    if instance.mesh is not None and hops:
        breakdown["noc"] = hops * instance.mesh.hop_energy_pj_per_byte
    busy = sum(instance.dag.durations)
    return CostReport(
        energy_pj=sum(breakdown.values()),
        latency_cycles=float(latency),
        dram_bytes=0.0,
        noc_byte_hops=hops,
        peak_memory_bytes=float(max(sum(atoms[a].output_bytes for a in members) for members in solution.rounds)),
        utilization=min(1.0, busy / (instance.n_engines * latency)) if latency > 0 else 0.0,
        macs=sum(a.macs for a in atoms),
        energy_breakdown_pj=breakdown,
    )
