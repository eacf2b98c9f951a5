"""CNN-partition baseline of the atomic problem (method ``cnn-p``): clusters of engines per layer segment,
segments pipelined over samples (after Shen et al., ISCA'17, as compared by Atomic Dataflow).

Off-chip feature maps
    As in the paper's CNN-P, every cluster reads its input feature maps from HBM and writes
    its output feature maps to HBM: every atom whose output another layer reads is written
    back (:func:`ofmap_atoms`; partial sums of one output block stay on their engine).
Batch 1
    With one sample there is nothing to pipeline, and the paper's CNN-P uses the
    layer-sequential mapping (:func:`accelsched.heuristics.atomic_ls.ls_schedule`), with
    the feature maps off chip as above.
Configuration
    ``k`` clusters: the layers, in workload order, cut into ``k`` contiguous
    segments of balanced work (each layer's cycles on one engine;
    :func:`accelsched.heuristics.atomic_regions.balanced_segments`); engines given
    to the segments by the exact min-max allocation over the segments' time
    tables (a segment on ``f`` engines takes the sum of its layers' times, each
    layer split evenly over the ``f`` engines); clusters are consecutive runs of
    the serpentine engine order.
Pipeline
    Samples go in mini-batches of ``b``. In step ``t`` cluster ``j`` runs segment
    ``j`` for mini-batch ``t - j``: layer by layer, input-channel level by level,
    block by block, every sample of the mini-batch, output block ``i`` of a layer on
    the cluster's engine ``i mod f`` (a partial-sum chain stays on its engine, and an
    engine runs one weight block for the whole mini-batch before the next). A step is one round: each engine runs
    its atoms in that order and an atom waits for its producers of the same step,
    so the clusters work concurrently and the step ends with the slowest cluster.
Search (batches of 2 or more)
    ``k`` in {2, 4, 8} (at most the layers and the engines) and ``b`` in {1, 4}
    (4 only for batches of at least 8), each configuration placed, given Algorithm 3's
    write-backs and priced by the round evaluator; the best objective wins. The
    time limit stops the search (the best configuration so far is kept).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from accelsched.heuristics.atomic_ls import ls_schedule
from accelsched.heuristics.atomic_regions import allocate, balanced_segments, layer_table, regions
from accelsched.heuristics.atomic_search import search_result, search_schedules
from accelsched.problems.atomic import PROBLEM, AtomDag, AtomicInstance, RoundSchedule, evict, serpentine, split_size
from accelsched.problems.base import MethodSpec
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, Status

__all__ = ["METHODS", "CnnpConfig", "cnnp_configs", "cnnp_schedule", "ofmap_atoms", "solve_cnnp"]


@dataclass(frozen=True)
class CnnpConfig:
    """Segments (layer index ranges), engines per cluster and the mini-batch."""

    segments: tuple[range, ...]
    engines: tuple[int, ...]
    mini_batch: int

    def describe(self) -> str:
        """One line."""
        layers = [len(s) for s in self.segments]
        clusters = f"{len(self.segments)} clusters of {list(self.engines)} engines over {layers} layers"
        return f"{clusters}, mini-batch {self.mini_batch}"


def cnnp_configs(instance: AtomicInstance) -> list[CnnpConfig]:
    """The configurations the search tries (module docstring), most clusters last.

    Raises
    ------
    ValueError
        An abstract instance, or fewer than 2 engines or 2 layers.
    """
    workload, acc = instance.workload, instance.accelerator
    if workload is None or acc is None:
        raise ValueError("the CNN-partition baseline needs a workload and an accelerator")
    engines, layers = instance.n_engines, list(workload)
    if engines < 2 or len(layers) < 2:
        raise ValueError(f"CNN-partition needs at least 2 engines and 2 layers, got {engines} and {len(layers)}")
    tables = [layer_table(layer, acc, engines) for layer in layers]
    batches = [1, 4] if instance.batch >= 8 else [1]
    configs = []
    for k in (2, 4, 8):
        if k > min(engines, len(layers)):
            continue
        segments = balanced_segments([t[0] for t in tables], k)
        merged = [[sum(tables[i][f] for i in segment) for f in range(engines)] for segment in segments]
        counts = allocate(merged, engines)
        configs += [CnnpConfig(tuple(segments), tuple(counts), b) for b in batches]
    return configs


def cnnp_schedule(instance: AtomicInstance, config: CnnpConfig) -> RoundSchedule:
    """The pipelined schedule of ``config`` (module docstring), placed, its feature maps written back (before
    Algorithm 3's write-backs)."""
    workload, acc = instance.workload, instance.accelerator
    assert workload is not None and acc is not None
    layers = list(workload)
    clusters = regions(serpentine(instance), config.engines)
    sizes = {}
    for segment, count in zip(config.segments, config.engines, strict=True):
        for i in segment:
            sizes[layers[i].name] = split_size(layers[i], acc, count)
    probe = RoundSchedule.with_sizes((), sizes)
    dag = instance.dag_for(probe)
    placed = [0] * len(dag.atoms)
    batches = math.ceil(instance.batch / config.mini_batch)
    rounds = []
    for step in range(batches + len(config.segments) - 1):
        members: list[int] = []
        for j, (segment, cluster) in enumerate(zip(config.segments, clusters, strict=True)):
            batch = step - j
            if not 0 <= batch < batches:
                continue
            samples = range(batch * config.mini_batch, min((batch + 1) * config.mini_batch, instance.batch))
            for i in segment:
                members += _place_layer(dag, layers[i].name, samples, cluster, placed)
        rounds.append(tuple(members))
    return RoundSchedule(tuple(rounds), tuple(placed), ofmap_atoms(dag), probe.sizes)


def ofmap_atoms(dag: AtomDag) -> frozenset[int]:
    """The atoms whose output an atom of another layer reads: their output feature maps go to HBM."""
    atoms = dag.atoms
    return frozenset(a for a, b, _ in dag.edge_array.tolist() if atoms[a].layer != atoms[b].layer)


def batch_one_schedule(instance: AtomicInstance) -> RoundSchedule:
    """CNN-P at batch 1: the layer-sequential mapping with every feature map off chip (module docstring)."""
    schedule = ls_schedule(instance)
    return RoundSchedule(schedule.rounds, schedule.engines, ofmap_atoms(instance.dag_for(schedule)), schedule.sizes)


def _place_layer(dag: AtomDag, layer: str, samples: range, cluster: list[int], placed: list[int]) -> list[int]:
    """The atoms of ``layer`` for ``samples`` in execution order (level, block, sample), placed on ``cluster``."""
    atoms = dag.atoms
    order: list[tuple[tuple[int, int], int, int, int]] = []
    for s in samples:
        blocks: dict[tuple[tuple[int, int], ...], int] = {}
        for a in dag.groups[layer, s]:
            atom = atoms[a]
            block = blocks.setdefault((atom.rows, atom.cols, atom.out_channels), len(blocks))
            placed[a] = cluster[block % len(cluster)]
            order.append((atom.in_channels, block, s, a))
    order.sort()
    return [a for _, _, _, a in order]


def solve_cnnp(instance: AtomicInstance, options: SolveOptions, warm_start: object = None) -> Result[RoundSchedule]:
    """Search the configurations (module docstring; at batch 1 the layer-sequential mapping) and return the best,
    checked by the evaluator (the warm start is not used)."""
    start = time.perf_counter()  # the time limit of the search
    if instance.workload is None or instance.accelerator is None:
        return Result.no_solution(Status.ERROR, PROBLEM.name, "cnn-p", "the CNN-partition baseline needs a workload")
    if instance.batch == 1:
        one = search_schedules(instance, [_BatchOne()], lambda _: evict(instance, batch_one_schedule(instance)),
                               options, start)  # fmt: skip
        return search_result("cnn-p", one, 1, "configuration")
    try:
        configs = cnnp_configs(instance)
    except ValueError as exc:
        return Result.no_solution(Status.ERROR, PROBLEM.name, "cnn-p", str(exc))
    found = search_schedules(instance, configs, lambda c: evict(instance, cnnp_schedule(instance, c)), options, start)
    return search_result("cnn-p", found, len(configs), "configuration")


@dataclass(frozen=True)
class _BatchOne:
    """The one configuration at batch 1 (module docstring)."""

    def describe(self) -> str:
        """One line."""
        return "batch 1: the layer-sequential mapping, feature maps off chip"


METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(
        "cnn-p",
        PROBLEM.name,
        "baseline",
        solve_cnnp,
        "CNN-partition: clusters of engines per layer segment, segments pipelined over samples",
    ),
)
"""The CNN-partition baseline: ``cnn-p``."""
