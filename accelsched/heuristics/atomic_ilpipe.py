r"""Inter-layer pipelining baseline of the atomic problem (method ``il-pipe``): regions proportional to layer cost,
fine-grained pipelining (after Tangram, ASPLOS'19, as compared by Atomic Dataflow).

Tiles
    Each layer's output rows are cut into about ``P`` row tiles: its atoms have
    ``h <= ceil(OY / P)`` rows (the candidate sizes of
    :func:`accelsched.problems.atomic.atoms.split_size` with that cap), the rest of
    the layer split over its region.
Segments
    Consecutive layers (at most :attr:`IlPipeParams.max_segment` and at most ``N``) that run at
    the same time on disjoint regions, the cascade of the paper's IL-Pipe (Tangram's
    inter-layer pipelining as Atomic Dataflow compares it). Within a segment the layers get
    engines by the exact min-max allocation over their per-tile time tables
    (:func:`accelsched.heuristics.atomic_regions.allocate`): regions proportional to the
    layers' costs, in consecutive runs of the serpentine order, so neighbouring layers sit on
    neighbouring engines. Data passes between the layers of a segment on chip; what crosses
    a segment boundary goes through HBM (the outputs a later segment reads are written back,
    and read back from there). A segment whose slowest layer takes ``tau`` per tile costs

    .. math:: F / \beta + (L - 1)\,\tau + \max(B P \tau,\; (H - F) / \beta)

    the first tile's loads, exposed (a tile cannot compute before its input is in its buffer, and
    what the previous segment writes back in its last rounds cannot be prefetched before it is
    in HBM), the pipeline's fill and drain (``L`` layers) and its ``B P`` tiles, or the rest of the
    segment's HBM traffic at the HBM bandwidth ``beta`` when that is longer (the later transfers
    are double-buffered under the computation, as in the evaluator). ``H`` is the segment's
    weights, the activations it reads from earlier segments or the network input, and the
    outputs it writes for later segments or as network outputs; ``F``
    (:func:`first_tile_bytes`) is one of the ``B P`` shares of the first layer's input, plus
    its weights in the network's first segment (no earlier round to prefetch them in; later
    segments' weights stream in during the previous segment's last round, as in the
    evaluator). The buffer state: the weights
    of a segment of several layers stay resident while its tiles stream through, so they must
    fit in half the buffers of the ``N`` engines (the other half holds the tiles' activations);
    a one-layer segment streams its weights. A DP over the workload order picks the segments
    of least total cost. Segments run one after the other.
Rounds
    Within a segment each engine has a queue of its layer's atoms (sample, row
    tile, input-channel level, block; block ``b`` on the region's engine
    ``b mod f``). Every round, each engine runs the head of its queue if all its
    producers ran in earlier rounds: one atom per engine and no producer inside a
    round, Atomic Dataflow's round form, so the rounds are the pipeline's
    synchronous ticks.
Search
    ``P`` in :attr:`IlPipeParams.tiles` ({2, 4, 8} by default), each schedule
    placed, given Algorithm 3's write-backs and priced by the round evaluator; the
    best objective wins. The time limit stops the search (the best so far is kept).
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass

from accelsched.heuristics.atomic_regions import allocate, layer_table, regions
from accelsched.heuristics.atomic_search import search_result, search_schedules
from accelsched.models.layer import Layer
from accelsched.models.workload import Workload
from accelsched.problems.atomic import PROBLEM, AtomDag, AtomicInstance, RoundSchedule, evict, serpentine, split_size
from accelsched.problems.base import MethodSpec
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, Status

__all__ = [
    "METHODS",
    "IlPipeParams",
    "IlPipePlan",
    "boundary_atoms",
    "first_tile_bytes",
    "ilpipe_plan",
    "ilpipe_schedule",
    "segment_hbm_bytes",
    "solve_ilpipe",
]


@dataclass(frozen=True)
class IlPipeParams:
    """Settings of the inter-layer pipelining baseline, validated at construction.

    Parameters
    ----------
    max_segment
        Most layers in one pipelined segment, >= 1.
    tiles
        Row tiles per layer the search tries, in order; each >= 1, at least one.
    """

    max_segment: int = 16
    tiles: tuple[int, ...] = (2, 4, 8)

    def __post_init__(self) -> None:
        if self.max_segment < 1:
            raise ValueError(f"IlPipeParams: field max_segment must be >= 1, got {self.max_segment!r}")
        if not self.tiles or any(t < 1 for t in self.tiles):
            raise ValueError(f"IlPipeParams: field tiles must be row tile counts >= 1, got {self.tiles!r}")


@dataclass(frozen=True)
class IlPipePlan:
    """Row tiles per layer, segments (layer index ranges) and engines per layer of each segment."""

    tiles: int
    segments: tuple[range, ...]
    engines: tuple[tuple[int, ...], ...]

    def describe(self) -> str:
        """One line."""
        return f"{self.tiles} row tiles, {len(self.segments)} segments of {[len(s) for s in self.segments]} layers"


def _rows(layer: Layer, tiles: int) -> int:
    return math.ceil(layer.OY / min(tiles, layer.OY))


def ilpipe_plan(instance: AtomicInstance, tiles: int, max_segment: int = IlPipeParams.max_segment) -> IlPipePlan:
    """Segments (at most ``max_segment`` layers) and regions for ``tiles`` row tiles (module docstring).

    Raises
    ------
    ValueError
        An abstract instance.
    """
    workload, acc = instance.workload, instance.accelerator
    if workload is None or acc is None:
        raise ValueError("the inter-layer pipelining baseline needs a workload and an accelerator")
    layers, engines, batch = list(workload), instance.n_engines, instance.batch
    per_tile = []
    for layer in layers:
        table = layer_table(layer, acc, engines, max_rows=_rows(layer, tiles))
        count = math.ceil(layer.OY / split_size(layer, acc, 1, max_rows=_rows(layer, tiles)).h)
        per_tile.append([t / count for t in table])
    resident = engines * acc.cores[0].top_capacity_bytes / 2
    bandwidth = acc.offchip.bandwidth_bytes_per_cycle
    longest = min(max_segment, engines)
    best = [0.0] + [math.inf] * len(layers)
    cut: list[tuple[int, tuple[int, ...]]] = [(0, ())] * (len(layers) + 1)
    for j in range(1, len(layers) + 1):
        for i in range(max(0, j - longest), j):
            if j - i > 1 and sum(layer.weight_bytes for layer in layers[i:j]) > resident:
                continue
            counts = allocate(per_tile[i:j], engines)
            tau = max(per_tile[k][c - 1] for k, c in zip(range(i, j), counts, strict=True))
            first = first_tile_bytes(workload, i, batch * tiles)
            hbm = (segment_hbm_bytes(workload, i, j) - first) / bandwidth
            value = best[i] + first / bandwidth + (j - i - 1) * tau + max(batch * tiles * tau, hbm)
            if value < best[j]:
                best[j], cut[j] = value, (i, tuple(counts))
    segments: list[range] = []
    counts_of: list[tuple[int, ...]] = []
    j = len(layers)
    while j:
        i, chosen = cut[j]
        segments.append(range(i, j))
        counts_of.append(chosen)
        j = i
    return IlPipePlan(tiles, tuple(segments[::-1]), tuple(counts_of[::-1]))


def segment_hbm_bytes(workload: Workload, first: int, end: int) -> int:
    """HBM bytes of the segment of layers ``first .. end - 1`` (workload order; module docstring): its weights,
    the activations it reads from outside (earlier layers or the network input) and the outputs it writes for
    later layers or as network outputs, the whole batch."""
    names = workload.names
    inside = set(names[first:end])
    successors = workload.successors
    total = 0
    read: set[str] = set()
    for layer in list(workload)[first:end]:
        total += layer.weight_bytes
        producers = workload.predecessors(layer.name)
        if not producers:
            total += layer.activation_input_bytes
        for p in producers:
            if p not in inside and p not in read:
                read.add(p)
                total += workload[p].output_bytes
        later = successors.get(layer.name, ())
        if not later or any(s not in inside for s in later):
            total += layer.output_bytes
    return total


def first_tile_bytes(workload: Workload, first: int, tiles: int) -> int:
    """HBM bytes the first tile of a segment starting at layer ``first`` reads exposed, before it can compute
    (module docstring): one of its ``tiles`` (samples x row tiles) shares of the layer's input, which the previous
    segment writes back only in its last rounds (or the network input), and, for the network's first segment, the
    layer's weights (a later segment's weights are prefetched during the previous segment's last round)."""
    layer = list(workload)[first]
    producers = workload.predecessors(layer.name)
    inputs = sum(workload[p].output_bytes for p in producers) if producers else layer.activation_input_bytes
    return (layer.weight_bytes if first == 0 else 0) + math.ceil(inputs / tiles)


def boundary_atoms(dag: AtomDag, plan_layers: list[set[str]]) -> frozenset[int]:
    """The atoms whose outputs an atom of a later segment reads (written back to HBM; module docstring)."""
    segment_of = {name: k for k, names in enumerate(plan_layers) for name in names}
    atoms = dag.atoms
    return frozenset(a for a, b, _ in dag.edge_array.tolist()
                     if segment_of[atoms[b].layer] != segment_of[atoms[a].layer])  # fmt: skip


def ilpipe_schedule(instance: AtomicInstance, plan: IlPipePlan) -> RoundSchedule:
    """The pipelined rounds of ``plan`` (module docstring), placed, the segment boundaries written back (before
    Algorithm 3's write-backs)."""
    workload, acc = instance.workload, instance.accelerator
    assert workload is not None and acc is not None
    layers = list(workload)
    sizes, homes = {}, {}
    for segment, counts in zip(plan.segments, plan.engines, strict=True):
        for i, region in zip(segment, regions(serpentine(instance), counts), strict=True):
            sizes[layers[i].name] = split_size(layers[i], acc, len(region), max_rows=_rows(layers[i], plan.tiles))
            homes[layers[i].name] = region
    probe = RoundSchedule.with_sizes((), sizes)
    dag = instance.dag_for(probe)
    placed = [0] * len(dag.atoms)
    waiting = [len(p) for p in dag.predecessors]
    rounds: list[tuple[int, ...]] = []
    for segment in plan.segments:
        queues = _queues(dag, [layers[i].name for i in segment], homes, placed, instance.batch)
        while queues:
            members = tuple(q[0] for q in queues.values() if not waiting[q[0]])
            if not members:
                raise AssertionError("the pipeline stalled: a queue waits for an atom queued behind it")
            rounds.append(members)
            for a in members:
                queues[placed[a]].popleft()
                for b in dag.successors[a]:
                    waiting[b] -= 1
            queues = {e: q for e, q in queues.items() if q}
    crossing = boundary_atoms(dag, [{layers[i].name for i in segment} for segment in plan.segments])
    return RoundSchedule(tuple(rounds), tuple(placed), crossing, probe.sizes)


def _queues(
    dag: AtomDag, names: list[str], homes: dict[str, list[int]], placed: list[int], batch: int
) -> dict[int, deque[int]]:  # fmt: skip
    """Each engine's queue of atoms of its segment layer (module docstring), engines recorded in ``placed``."""
    queues: dict[int, list[tuple[tuple[int, ...], int]]] = {}
    for name in names:
        region = homes[name]
        for s in range(batch):
            blocks: dict[tuple[tuple[int, int], ...], int] = {}
            for a in dag.groups[name, s]:
                atom = dag.atoms[a]
                block = blocks.setdefault((atom.rows, atom.cols, atom.out_channels), len(blocks))
                engine = region[block % len(region)]
                placed[a] = engine
                key = (s, atom.rows[0], atom.in_channels[0], block)
                queues.setdefault(engine, []).append((key, a))
    return {e: deque(a for _, a in sorted(items)) for e, items in queues.items()}


def solve_ilpipe(
    instance: AtomicInstance, options: SolveOptions, warm_start: object = None, params: IlPipeParams | None = None
) -> Result[RoundSchedule]:
    """Search the row tiles of ``params`` (default ``IlPipeParams()``; module docstring) and return the best
    schedule, checked by the evaluator (the warm start is not used)."""
    params = params or IlPipeParams()
    start = time.perf_counter()  # the time limit of the search
    if instance.workload is None:
        return Result.no_solution(Status.ERROR, PROBLEM.name, "il-pipe",
                                  "the inter-layer pipelining baseline needs a workload")  # fmt: skip
    plans = (ilpipe_plan(instance, tiles, params.max_segment) for tiles in params.tiles)
    found = search_schedules(instance, plans, lambda p: evict(instance, ilpipe_schedule(instance, p)), options, start)
    return search_result("il-pipe", found, len(params.tiles), "tiling")


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "il-pipe",
        PROBLEM.name,
        "baseline",
        solve_ilpipe,
        "inter-layer pipelining: regions proportional to layer cost, fine-grained (row-tile) pipelining",
    ),
)
"""The inter-layer pipelining baseline: ``il-pipe``."""
