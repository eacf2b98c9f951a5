r"""The round evaluator of the atomic problem (:mod:`accelsched.problems.atomic`), built from the shared
primitives of :mod:`accelsched.hardware.cost`.

Execution
    Rounds run back to back. In a round each engine runs its atoms in the listed
    order; an atom starts when its engine is free and its producers in the same
    round (pipelined baselines only) have finished; the round ends with its last
    atom. With one atom per engine (Atomic Dataflow's rounds) a round lasts as long
    as its slowest atom.
Time of an atom ``a`` on engine ``e`` in round ``r`` (causal double buffering)
    The buffer is double-buffered towards HBM: while engine ``e`` computes in round
    ``r``, the HBM reads of its atoms of round ``r + 1`` stream in (*prefetch*) and
    the write-backs of its atoms of round ``r - 1`` drain. Nothing is read before it
    exists: an atom's HBM reads split into

    * prefetched reads :math:`P_a`, read during round ``r - 1`` on ``e``: its weights
      (unless its engine ran an atom with the same weights just before), the network
      input it reads, and inputs already in HBM at the end of round ``r - 2`` (a
      tensor whose write drains in round ``q`` is in HBM from the end of round ``q``:
      it can be prefetched for atoms of rounds ``>= q + 2``). Only when engine ``e``
      runs an atom in round ``r - 1`` and the buffer has room (below); otherwise
    * exposed reads :math:`X_a`: read in round ``r`` before ``a`` computes (all of
      them for an engine's first atom; a tensor written back in the round just
      before, or drained in it, is always read exposed).

    An atom's HBM write :math:`W_a` (a written-back output or a network output)
    drains during round ``r + 1`` when its engine runs an atom then, no atom of round
    ``r`` or ``r + 1`` reads it from HBM and the buffer has room (its bytes stay in the buffer
    until drained; the tensor is then in HBM from the end of round ``r + 1``);
    otherwise it is written after the computation, exposed, and in HBM from the end
    of round ``r``. With :math:`O_{e,r}` the HBM time of the prefetches of ``e``'s
    atoms of round ``r + 1`` and of the drains of ``e``'s atoms of round ``r - 1``,

    .. math:: t_a = \text{noc}_a + X_a + \max(\text{compute}_a,\; O_{e,r}\,c_a / C_{e,r})
              + W_a\,[\text{exposed}]

    where :math:`c_a` is the atom's compute and :math:`C_{e,r}` the compute of all of
    ``e``'s atoms of round ``r`` (with one atom per engine, Atomic Dataflow's rounds,
    the round lasts :math:`\max_e (\text{noc} + X + \max(\text{compute}, O_{e,r}) + W)`).
    An engine idle in a round neither prefetches nor drains in it (a conservative
    choice: its next atom's reads are exposed).

    * ``compute``: the atom's cycles from the shared per-layer cost model
      (:func:`accelsched.problems.atomic.atoms.atom_cost`);
    * ``noc``: every input held on chip by another engine crosses the mesh with
      :func:`accelsched.hardware.cost.transfer.core_to_core` (bytes over the link
      bandwidth plus one cycle per hop, XY routing), one transfer after the other;
      its producer ran in an earlier round, so it cannot be fetched before the
      round starts;
    * HBM times: every engine's HBM traffic of round ``r`` (its exposed reads and
      writes of ``r``, the prefetches for ``r + 1`` and the drains of ``r - 1``) is
      one flow through the HBM channel, which the engines of a round share fairly
      (processor sharing: with the engines' HBM bytes in the round
      ``b_1 <= b_2 <= ...``, the ``i``-th engine's transfers end after
      :math:`(\sum_{j < i} b_j + (m - i + 1) b_i) / \beta` for ``m`` engines and the
      bandwidth ``beta``; one engine alone gets the whole bandwidth; the transfers of
      one flow split its time in proportion to their bytes), and each transfer is
      never faster than the mesh path from the nearest HBM port (as in
      :func:`accelsched.hardware.cost.transfer.dram_to_core`). Weights that ``k``
      atoms of one round fetch (the same layer, input and output channels) are read
      from HBM once and multicast over the mesh (an assumption: the paper does not
      say how engines share an HBM read): each of those atoms is charged ``1 / k`` of
      the HBM read, in time and energy, while the whole block still crosses the mesh
      to its engine (time, hop energy and buffer fill).

    In :class:`RoundRun`, ``load`` is :math:`\text{noc}_a + X_a` (before the
    computation) and ``store`` the rest, :math:`\max(0, O_{e,r} c_a / C_{e,r} -
    \text{compute}_a) + W_a[\text{exposed}]`, so that ``t_a = load + compute + store``;
    ``hbm`` is the time of all of the atom's own HBM transfers, wherever they run.
Energy
    The atoms' engine energy (MACs and engine memories), the buffer writes of
    everything loaded (``mem:<buffer>``), the NoC (byte-hops x energy per byte and
    hop, HBM traffic included from its port), and HBM reads and writes.
Buffer
    What engine ``e`` holds during round ``r`` (:func:`buffer_occupancy`): the
    outputs of its earlier atoms that a later round still reads and that were not
    written back (held until the end of the round of their last consumer), the
    outputs of its atoms of ``r`` that a later round reads, and the largest working
    set among its atoms of ``r``: the inputs it does not find in the buffer
    already, its weights, and its output when nothing later reads it; plus the
    double buffer's bytes: the outputs of round ``r - 1`` draining in ``r`` and the
    bytes prefetched for round ``r + 1`` (all of them, weights whole). Rule 4 of the
    checker (:mod:`accelsched.problems.atomic.check`) bounds this total. The double
    buffer is the evaluator's choice, not the schedule's, and it is only used where
    it fits: for each engine and round, first the drains, then the prefetch, are
    admitted only if the total stays within the capacity; otherwise those writes are
    exposed in their own round and those reads in theirs. A schedule therefore
    breaks rule 4 exactly when its single-buffered holding (the terms before the
    double buffer) does, so Algorithm 3's eviction
    (:func:`accelsched.problems.atomic.placement.evict`) and the checker agree.
Metrics
    PE utilization (MACs over the engines' MAC slots during the latency), NoC
    overhead and HBM stall share (the latency that transfers over the mesh, and
    the HBM, add: the latency minus the latency with those transfers free, over
    the latency), on-chip reuse (the bytes passed between atoms that stay on chip
    over all of them), throughput.

An abstract instance (no accelerator) has no transfers, no HBM and no buffer: an
atom takes its compute cycles.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.cost.transfer import core_to_core
from accelsched.hardware.spec import Accelerator, Mesh
from accelsched.problems.atomic.dag import AtomDag, RoundSchedule
from accelsched.problems.atomic.instance import AtomicInstance

__all__ = [
    "AtomicMetrics",
    "RoundRun",
    "atomic_metrics",
    "buffer_occupancy",
    "buffer_overflow",
    "evaluate_rounds",
    "round_durations",
    "simulate",
]


class _DagArrays:
    """Per-atom numbers of a DAG as arrays (built once per DAG)."""

    def __init__(self, dag: AtomDag) -> None:
        atoms = dag.atoms
        self.durations = np.fromiter((a.duration_cycles for a in atoms), dtype=np.float64, count=len(atoms))
        self.outputs = np.fromiter((a.output_bytes for a in atoms), dtype=np.float64, count=len(atoms))
        self.inputs = np.fromiter((a.input_bytes for a in atoms), dtype=np.float64, count=len(atoms))
        self.weights = np.fromiter((a.weight_bytes for a in atoms), dtype=np.float64, count=len(atoms))
        self.network_inputs = np.fromiter((a.network_input_bytes for a in atoms), dtype=np.float64, count=len(atoms))
        self.network_outputs = np.fromiter((a.network_output for a in atoms), dtype=bool, count=len(atoms))
        self.macs = int(sum(a.macs for a in atoms))
        keys: dict[tuple[str, tuple[int, int], tuple[int, int]], int] = {}
        self.weight_keys = np.fromiter((keys.setdefault(a.weight_key, len(keys)) for a in atoms), dtype=np.int64,
                                       count=len(atoms))  # fmt: skip
        energy: dict[str, float] = {}
        for atom in atoms:
            if atom.energy_breakdown_pj:
                for key, value in atom.energy_breakdown_pj:
                    energy[key] = energy.get(key, 0.0) + value
            else:
                energy["engines"] = energy.get("engines", 0.0) + atom.energy_pj
        self.energy = energy
        src, dst, nbytes = dag.edge_array.T
        self.src, self.dst, self.edge_bytes = src, dst, nbytes.astype(np.float64)


_ARRAYS: dict[int, tuple[AtomDag, _DagArrays]] = {}


def _arrays(dag: AtomDag) -> _DagArrays:
    entry = _ARRAYS.get(id(dag))
    if entry is None or entry[0] is not dag:
        if len(_ARRAYS) > 16:
            _ARRAYS.clear()
        entry = (dag, _DagArrays(dag))
        _ARRAYS[id(dag)] = entry
    return entry[1]


class _Platform:
    """Transfer costs between the instance's engines, from the shared transfer primitives (built once per
    accelerator and engine count)."""

    def __init__(self, accelerator: Accelerator, n_engines: int) -> None:
        engines = range(n_engines)
        one = [[core_to_core(accelerator, e, f, 1.0) for f in engines] for e in engines]
        two = [[core_to_core(accelerator, e, f, 2.0) for f in engines] for e in engines]
        self.cycles_per_byte = np.array([[b.cycles - a.cycles for a, b in zip(r1, r2, strict=True)]
                                         for r1, r2 in zip(one, two, strict=True)])  # fmt: skip
        self.fixed_cycles = np.array([[2 * a.cycles - b.cycles for a, b in zip(r1, r2, strict=True)]
                                      for r1, r2 in zip(one, two, strict=True)])  # fmt: skip
        self.energy_per_byte = np.array([[t.network_energy_pj for t in row] for row in one])
        self.hops_per_byte = np.array([[t.byte_hops for t in row] for row in one])
        net = accelerator.interconnect
        self.dram_hops = np.array([net.dram_hops(e) if isinstance(net, Mesh) else 0 for e in engines], dtype=float)
        self.link_bandwidth = net.link_bandwidth_bytes_per_cycle if isinstance(net, Mesh) else np.inf
        self.hop_energy = net.hop_energy_pj_per_byte if isinstance(net, Mesh) else 0.0
        self.hbm_bandwidth = accelerator.offchip.bandwidth_bytes_per_cycle
        self.hbm_read_energy = accelerator.offchip.read_energy_pj_per_byte
        self.hbm_write_energy = accelerator.offchip.write_energy_pj_per_byte
        core = accelerator.cores[0]
        top = {levels[-1] for levels in core.hierarchy.values() if levels}
        self.buffer_name = sorted(top)[0]
        self.buffer_write_energy = core.memory(self.buffer_name).write_energy_pj_per_byte
        self.capacity_bytes = core.top_capacity_bytes
        self.macs_per_engine = core.n_macs
        self.clock_hz = accelerator.clock_hz


_PLATFORMS: dict[tuple[int, int], tuple[Accelerator, _Platform]] = {}


def _platform(instance: AtomicInstance) -> _Platform | None:
    acc = instance.accelerator
    if acc is None:
        return None
    entry = _PLATFORMS.get((id(acc), instance.n_engines))
    if entry is None or entry[0] is not acc:
        entry = (acc, _Platform(acc, instance.n_engines))
        _PLATFORMS[id(acc), instance.n_engines] = entry
    return entry[1]


def _hbm_cycles(
    nbytes: np.ndarray, arriving: np.ndarray, round_of: np.ndarray, engine: np.ndarray, hops: np.ndarray,
    bandwidth: float, link: float,
) -> np.ndarray:  # fmt: skip
    """Cycles of every atom's HBM transfers (module docstring): ``nbytes`` through the HBM channel, fairly shared
    by the engines of its round (an engine's atoms of the round, run one after the other, split its share in
    proportion to their bytes), and never faster than the mesh path of ``hops`` links for the ``arriving`` bytes
    (more than ``nbytes`` when a multicast read is shared)."""
    pairs, flow_of = np.unique(round_of * (int(engine.max(initial=0)) + 1) + engine, return_inverse=True)
    flow_bytes = np.bincount(flow_of, weights=nbytes, minlength=len(pairs))
    flow_round = np.zeros(len(pairs), dtype=np.int64)
    flow_round[flow_of] = round_of
    order = np.lexsort((flow_bytes, flow_round))
    ordered, rounds = flow_bytes[order], flow_round[order]
    first = np.flatnonzero(np.concatenate(([True], rounds[1:] != rounds[:-1]))) if len(order) else order
    size = np.diff(np.concatenate((first, [len(order)])))
    before = np.cumsum(ordered) - ordered
    before -= np.repeat(before[first], size)
    remaining = np.repeat(first + size, size) - np.arange(len(order))
    flow_cycles = np.empty(len(order))
    flow_cycles[order] = (before + remaining * ordered) / bandwidth
    total = flow_bytes[flow_of]
    channel = np.where(total > 0, flow_cycles[flow_of] * nbytes / np.where(total > 0, total, 1.0), 0.0)
    network = np.where(hops > 0, arriving / link + hops, 0.0)
    return np.where(arriving > 0, np.maximum(channel, network), 0.0)


def _multicast_copies(round_of: np.ndarray, keys: np.ndarray, fetching: np.ndarray) -> np.ndarray:
    """For every atom that fetches its weights from HBM, how many atoms of its round fetch the same weights
    (the one multicast read they share); 1 for the others."""
    copies = np.ones(len(round_of))
    if fetching.any():
        group = round_of[fetching] * (int(keys.max()) + 1) + keys[fetching]
        _, inverse, counts = np.unique(group, return_inverse=True, return_counts=True)
        copies[fetching] = counts[inverse]
    return copies


@dataclass(frozen=True)
class _BufferPlan:
    """Which transfers the double buffer overlaps (module docstring), per atom, and the bytes it adds to the
    buffer per engine and round."""

    drained: np.ndarray  # the atom's write drains during its engine's next round
    pre_reads: np.ndarray  # HBM bytes (multicast share) read during the round before the atom's
    pre_arriving: np.ndarray  # bytes those reads bring into the buffer
    extra: np.ndarray  # engines x rounds: prefetched and draining bytes


def _double_buffer(
    arrays: _DagArrays, round_of: np.ndarray, engine: np.ndarray, on_chip: np.ndarray, fetched: np.ndarray,
    copies: np.ndarray, from_hbm: np.ndarray, writes: np.ndarray, base: np.ndarray, capacity: float, n_engines: int,
) -> _BufferPlan:  # fmt: skip
    """Drains and prefetches of the double buffer (module docstring): a write drains in the next round of its
    engine when the engine runs an atom then, no consumer reads it from HBM in that round and it fits; an atom's
    available reads are prefetched in the round before it when its engine runs an atom then and they fit."""
    n_rounds = base.shape[1]
    src, dst = arrays.src, arrays.dst
    active = np.zeros((n_engines, n_rounds + 2), dtype=bool)  # column r + 1 is round r
    active[engine, round_of + 1] = True
    has_prev, has_next = active[engine, round_of], active[engine, round_of + 2]
    through = ~on_chip
    first_read = np.full(len(round_of), np.iinfo(np.int64).max)
    np.minimum.at(first_read, src[through], round_of[dst[through]])
    can_drain = (writes > 0) & has_next & (first_read >= round_of + 2)
    held = np.zeros((n_engines, n_rounds + 2))
    np.add.at(held, (engine[can_drain], round_of[can_drain] + 2), writes[can_drain])
    fits = np.ones((n_engines, n_rounds + 2), dtype=bool)
    fits[:, 1:-1] = base + held[:, 1:-1] <= capacity
    drained = can_drain & fits[engine, round_of + 2]
    draining = np.zeros((n_engines, n_rounds + 2))
    np.add.at(draining, (engine[drained], round_of[drained] + 2), writes[drained])
    # a tensor in HBM from the end of round ``ready`` can be prefetched for an atom of round ``ready + 2`` on
    ready = round_of + drained
    available = through & (round_of[dst] >= ready[src] + 2)
    pre_hbm = np.bincount(dst[available], weights=arrays.edge_bytes[available], minlength=len(round_of))
    pre_arriving = np.where(has_prev, fetched + arrays.network_inputs + pre_hbm, 0.0)
    pre_reads = np.where(has_prev, fetched / copies + arrays.network_inputs + pre_hbm, 0.0)
    wanted = np.zeros((n_engines, n_rounds + 2))
    np.add.at(wanted, (engine, round_of), pre_arriving)  # held during round r - 1 (column r)
    room = np.ones((n_engines, n_rounds + 2), dtype=bool)
    room[:, 1:-1] = base + draining[:, 1:-1] + wanted[:, 1:-1] <= capacity
    prefetched = has_prev & room[engine, round_of]
    pre_arriving, pre_reads = np.where(prefetched, pre_arriving, 0.0), np.where(prefetched, pre_reads, 0.0)
    extra = draining.copy()
    np.add.at(extra, (engine, round_of), pre_arriving)
    return _BufferPlan(drained, pre_reads, pre_arriving, extra[:, 1:-1])


@dataclass(frozen=True)
class RoundRun:
    """What the evaluator derives from one schedule. Arrays are indexed by atom unless said otherwise.

    Attributes
    ----------
    round_of, engine
        Round and engine of every atom.
    start_cycles, finish_cycles
        When every atom starts loading and finishes storing.
    load_cycles, store_cycles, noc_cycles, hbm_cycles
        The load before the computation (the NoC transfers and the exposed HBM reads), the time after it (the
        overlapped HBM traffic longer than the computation and the exposed write), the NoC transfers, and the time of
        the atom's own HBM reads and write, prefetched, drained or exposed (zero when HBM is free).
    hbm_read_bytes, hbm_write_bytes
        HBM traffic of every atom.
    round_end_cycles
        End of every round (indexed by round).
    noc_byte_hops, onchip_bytes, offchip_bytes
        Byte-hops on the mesh; bytes passed between atoms on chip (same engine or over the mesh) and through HBM.
    energy_breakdown_pj
        Energy by component.
    occupancy_bytes
        Buffer held per engine and round (engines x rounds), None without an accelerator.
    """

    round_of: np.ndarray
    engine: np.ndarray
    start_cycles: np.ndarray
    finish_cycles: np.ndarray
    load_cycles: np.ndarray
    store_cycles: np.ndarray
    noc_cycles: np.ndarray
    hbm_cycles: np.ndarray
    hbm_read_bytes: np.ndarray
    hbm_write_bytes: np.ndarray
    round_end_cycles: np.ndarray
    noc_byte_hops: float
    onchip_bytes: float
    offchip_bytes: float
    energy_breakdown_pj: dict[str, float]
    occupancy_bytes: np.ndarray | None
    macs: int
    mac_slots_per_cycle: int

    @property
    def latency_cycles(self) -> float:
        return float(self.round_end_cycles[-1]) if len(self.round_end_cycles) else 0.0

    @cached_property
    def report(self) -> CostReport:
        """The shared :class:`CostReport`."""
        latency = self.latency_cycles
        peak = float(self.occupancy_bytes.sum(axis=0).max()) if self.occupancy_bytes is not None else 0.0
        return CostReport(
            energy_pj=sum(self.energy_breakdown_pj.values()),
            latency_cycles=latency,
            dram_bytes=float(self.hbm_read_bytes.sum() + self.hbm_write_bytes.sum()),
            noc_byte_hops=self.noc_byte_hops,
            peak_memory_bytes=peak,
            utilization=min(1.0, self.macs / (self.mac_slots_per_cycle * latency)) if latency > 0 else 0.0,
            macs=self.macs,
            energy_breakdown_pj=self.energy_breakdown_pj,
        )


def _rounds_and_engines(instance: AtomicInstance, solution: RoundSchedule, n: int) -> tuple[np.ndarray, ...]:
    """Round, execution position and engine of every atom; atoms in execution order; round sizes."""
    sizes = np.fromiter((len(r) for r in solution.rounds), dtype=np.int64, count=len(solution.rounds))
    order = np.fromiter((a for r in solution.rounds for a in r), dtype=np.int64, count=int(sizes.sum()))
    round_of = np.empty(n, dtype=np.int64)
    round_of[order] = np.repeat(np.arange(len(sizes)), sizes)
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(len(order))
    if solution.engines is not None:
        engine = np.asarray(solution.engines, dtype=np.int64)
    else:
        first = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        engine = position - first[round_of]
    return round_of, position, engine, order, sizes


_RECENT: list[tuple[AtomicInstance, RoundSchedule, bool, bool, RoundRun]] = []


def simulate(
    instance: AtomicInstance, solution: RoundSchedule, *, free_noc: bool = False, free_hbm: bool = False
) -> RoundRun:
    """Run ``solution`` through the evaluator (module docstring); ``free_noc`` / ``free_hbm`` make those transfers
    take no time (for the overhead metrics). The solution is assumed checked. The last few runs are remembered by
    identity (the checker and the evaluator run the same schedule one after the other)."""
    for inst, sol, noc, hbm, run in _RECENT:
        if inst is instance and sol is solution and (noc, hbm) == (free_noc, free_hbm):
            return run
    run = _simulate(instance, solution, free_noc, free_hbm)
    _RECENT.insert(0, (instance, solution, free_noc, free_hbm, run))
    del _RECENT[3:]
    return run


def _simulate(instance: AtomicInstance, solution: RoundSchedule, free_noc: bool, free_hbm: bool) -> RoundRun:
    dag = instance.dag_for(solution)
    arrays, platform = _arrays(dag), _platform(instance)
    n = len(dag.atoms)
    round_of, position, engine, order, sizes = _rounds_and_engines(instance, solution, n)
    n_rounds = len(sizes)
    src, dst, edge_bytes = arrays.src, arrays.dst, arrays.edge_bytes
    written = np.zeros(n, dtype=bool)
    if solution.write_back:
        written[np.fromiter(solution.write_back, dtype=np.int64)] = True
    on_chip = ~written[src]
    local = on_chip & (engine[src] == engine[dst])
    remote = on_chip & ~local
    zeros = np.zeros(n)
    noc: np.ndarray
    energy = dict(arrays.energy)
    occupancy = None
    if platform is None:
        load = store = noc = reads = writes = hbm_cycles = zeros
        byte_hops = 0.0
    else:
        es, ed, rb = engine[src[remote]], engine[dst[remote]], edge_bytes[remote]
        noc = np.bincount(dst[remote], weights=rb * platform.cycles_per_byte[es, ed] + platform.fixed_cycles[es, ed],
                          minlength=n)  # fmt: skip
        from_hbm = np.bincount(dst[~on_chip], weights=edge_bytes[~on_chip], minlength=n)
        by_engine = np.lexsort((position, engine))
        reuse = np.zeros(n, dtype=bool)
        same = (engine[by_engine][1:] == engine[by_engine][:-1]) & (
            arrays.weight_keys[by_engine][1:] == arrays.weight_keys[by_engine][:-1]
        )
        reuse[by_engine[1:]] = same
        fetched = np.where(reuse, 0.0, arrays.weights)
        copies = _multicast_copies(round_of, arrays.weight_keys, fetched > 0)
        writes = np.where(written | arrays.network_outputs, arrays.outputs, 0.0)
        hops = platform.dram_hops[engine]
        base = _occupancy(arrays, round_of, engine, written, local, n_rounds, instance.n_engines)
        plan = _double_buffer(arrays, round_of, engine, on_chip, fetched, copies, from_hbm, writes, base,
                              platform.capacity_bytes, instance.n_engines)  # fmt: skip
        arriving = fetched + arrays.network_inputs + from_hbm
        reads = fetched / copies + arrays.network_inputs + from_hbm
        # three transfers per atom: its exposed reads (its round), its prefetched reads (the round before), its
        # write (drained in the next round, or exposed in its own)
        item_bytes = np.concatenate((reads - plan.pre_reads, plan.pre_reads, writes))
        item_arriving = np.concatenate((arriving - plan.pre_arriving, plan.pre_arriving, writes))
        item_round = np.concatenate((round_of, round_of - 1, round_of + plan.drained))
        item_engine = np.tile(engine, 3)
        times = _hbm_cycles(item_bytes, item_arriving, item_round + 1, item_engine, np.tile(hops, 3),
                            platform.hbm_bandwidth, platform.link_bandwidth)  # fmt: skip
        if free_hbm:
            times = np.zeros(3 * n)
        t_exposed, t_pre, t_write = times[:n], times[n : 2 * n], times[2 * n :]
        hbm_cycles = t_exposed + t_pre + t_write
        # the overlapped traffic of (engine, round): the next round's prefetches and the previous round's drains,
        # shared by the engine's atoms of the round in proportion to their compute
        cols = n_rounds + 2
        overlap = np.bincount(engine * cols + round_of - 1 + 1, weights=t_pre, minlength=instance.n_engines * cols)
        overlap += np.bincount(engine * cols + round_of + 1 + 1, weights=np.where(plan.drained, t_write, 0.0),
                               minlength=instance.n_engines * cols)  # fmt: skip
        cell = engine * cols + round_of + 1
        work = np.bincount(cell, weights=arrays.durations, minlength=instance.n_engines * cols)
        count = np.bincount(cell, minlength=instance.n_engines * cols)
        share = np.where(work[cell] > 0, arrays.durations / np.where(work[cell] > 0, work[cell], 1.0),
                         1.0 / count[cell])  # fmt: skip
        overlapped = overlap[cell] * share
        exposed_write = np.where(plan.drained, 0.0, t_write)
        load = t_exposed + (zeros if free_noc else noc.astype(np.float64))
        store = np.maximum(0.0, overlapped - arrays.durations) + exposed_write
        occupancy = base + plan.extra
        noc_energy = float((rb * platform.energy_per_byte[es, ed]).sum())
        byte_hops = float((rb * platform.hops_per_byte[es, ed]).sum()) + float(((arriving + writes) * hops).sum())
        noc_energy += float(((arriving + writes) * hops).sum()) * platform.hop_energy
        fill = float(rb.sum() + arriving.sum()) * platform.buffer_write_energy
        key = f"mem:{platform.buffer_name}"
        energy[key] = energy.get(key, 0.0) + fill
        energy["noc"] = energy.get("noc", 0.0) + noc_energy
        energy["dram"] = float(reads.sum()) * platform.hbm_read_energy + float(writes.sum()) * platform.hbm_write_energy
    busy = load + arrays.durations + store
    start, finish, round_end = _timeline(dag, solution, round_of, engine, order, sizes, busy, instance.n_engines)
    slots = instance.n_engines * (platform.macs_per_engine if platform is not None else 1)
    macs = arrays.macs if platform is not None else int(arrays.durations.sum())
    return RoundRun(round_of, engine, start, finish, load, store, noc, hbm_cycles, reads, writes, round_end, byte_hops,
                    float(edge_bytes[on_chip].sum()), float(edge_bytes[~on_chip].sum()),
                    {k: v for k, v in energy.items() if v}, occupancy, macs, slots)  # fmt: skip


def _timeline(
    dag: AtomDag, solution: RoundSchedule, round_of: np.ndarray, engine: np.ndarray, order: np.ndarray,
    sizes: np.ndarray, busy: np.ndarray, n_engines: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Start and finish of every atom and the end of every round (module docstring)."""
    n_rounds = len(sizes)
    pairs = np.unique(round_of * n_engines + engine)
    crowded = np.bincount(pairs // n_engines, minlength=n_rounds) < sizes  # an engine runs several atoms
    src, dst = dag.edge_array[:, 0], dag.edge_array[:, 1]
    inner = round_of[src] == round_of[dst]
    crowded[round_of[src[inner]]] = True
    first = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    length = np.maximum.reduceat(busy[order], first) if len(order) else np.zeros(0)
    offset = np.zeros(len(busy))
    preds = dag.predecessors
    for r in np.flatnonzero(crowded):
        free: dict[int, float] = {}
        done: dict[int, float] = {}
        for a in solution.rounds[r]:
            ready = max([free.get(int(engine[a]), 0.0)] + [done[p] for p in preds[a] if p in done])
            offset[a] = ready
            done[a] = ready + busy[a]
            free[int(engine[a])] = done[a]
        length[r] = max(done.values())
    round_end = np.cumsum(length)
    round_start = round_end - length
    start = round_start[round_of] + offset
    return start, start + busy, round_end


def _occupancy(
    arrays: _DagArrays, round_of: np.ndarray, engine: np.ndarray, written: np.ndarray, local: np.ndarray,
    n_rounds: int, n_engines: int,
) -> np.ndarray:  # fmt: skip
    """Bytes held per engine and round (module docstring)."""
    n = len(round_of)
    src, dst = arrays.src, arrays.dst
    last_use = np.full(n, -1, dtype=np.int64)
    np.maximum.at(last_use, src, round_of[dst])
    persists = ~written & (last_use > round_of)
    held = np.zeros((n_engines, n_rounds + 1))
    p = np.flatnonzero(persists)
    np.add.at(held, (engine[p], round_of[p] + 1), arrays.outputs[p])
    np.add.at(held, (engine[p], last_use[p] + 1), -arrays.outputs[p])
    resident = np.cumsum(held, axis=1)[:, :n_rounds]
    kept = np.zeros((n_engines, n_rounds))
    np.add.at(kept, (engine[p], round_of[p]), arrays.outputs[p])
    found = np.bincount(dst[local], weights=arrays.edge_bytes[local], minlength=n)
    working = np.maximum(0.0, arrays.inputs - found) + arrays.weights + np.where(persists, 0.0, arrays.outputs)
    largest = np.zeros((n_engines, n_rounds))
    np.maximum.at(largest, (engine, round_of), working)
    return resident + kept + largest


def buffer_occupancy(instance: AtomicInstance, solution: RoundSchedule) -> np.ndarray | None:
    """Bytes each engine's buffer holds in each round (engines x rounds; module docstring), None without an
    accelerator."""
    return simulate(instance, solution).occupancy_bytes


def buffer_overflow(instance: AtomicInstance, solution: RoundSchedule) -> tuple[int, int, int, int] | None:
    """The first ``(engine, round, bytes held, capacity)`` over the buffer capacity, or None."""
    platform = _platform(instance)
    occupancy = buffer_occupancy(instance, solution)
    if platform is None or occupancy is None:
        return None
    over = occupancy > platform.capacity_bytes
    if not over.any():
        return None
    r = int(np.flatnonzero(over.any(axis=0))[0])
    e = int(np.flatnonzero(over[:, r])[0])
    return e, r, int(occupancy[e, r]), platform.capacity_bytes


def round_durations(instance: AtomicInstance, solution: RoundSchedule) -> list[float]:
    """Cycles of every round."""
    ends = simulate(instance, solution).round_end_cycles
    return np.diff(np.concatenate(([0.0], ends))).tolist()


def evaluate_rounds(instance: AtomicInstance, solution: RoundSchedule) -> CostReport:
    """The cost report of a checked round schedule (see the module docstring)."""
    return simulate(instance, solution).report


@dataclass(frozen=True)
class AtomicMetrics:
    """Atomic Dataflow's Table II quantities and the throughput of one schedule (module docstring)."""

    latency_cycles: float
    throughput_samples_per_s: float
    pe_utilization: float
    noc_overhead: float
    hbm_stall_share: float
    onchip_reuse: float
    hbm_bytes: float
    energy_pj: float


def atomic_metrics(instance: AtomicInstance, solution: RoundSchedule) -> AtomicMetrics:
    """The metrics of a checked schedule (three runs of the evaluator: as is, NoC free, HBM free)."""
    run = simulate(instance, solution)
    latency = run.latency_cycles
    no_noc = simulate(instance, solution, free_noc=True).latency_cycles
    no_hbm = simulate(instance, solution, free_hbm=True).latency_cycles
    clock = instance.accelerator.clock_hz if instance.accelerator is not None else 1.0
    moved = run.onchip_bytes + run.offchip_bytes
    return AtomicMetrics(
        latency_cycles=latency,
        throughput_samples_per_s=instance.batch * clock / latency if latency else 0.0,
        pe_utilization=run.report.utilization,
        noc_overhead=(latency - no_noc) / latency if latency else 0.0,
        hbm_stall_share=(latency - no_hbm) / latency if latency else 0.0,
        onchip_reuse=run.onchip_bytes / moved if moved else 1.0,
        hbm_bytes=run.report.dram_bytes,
        energy_pj=run.report.energy_pj,
    )
