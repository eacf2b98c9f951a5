"""Atoms of a workload on a multi-engine accelerator: the PE-array rule, candidate sizes, costs and the atomic DAG.

Atom sizes
    An atom of layer ``l`` is ``[h, w, ci, co]`` output rows, output columns,
    input channels and output channels of one sample (:class:`AtomSize`). On the
    engine's unrolled loops (``C``, ``K`` for KC-partition engines; ``OY``, ``OX``
    for YX-partition ones) a size is a whole multiple of the unrolling or the whole
    loop (:func:`check_size`). Grouped layers (depthwise, pooling, element-wise)
    are cut into whole groups: ``co`` counts output channels over all groups and
    is a multiple of the channels per group; the array's K and C unrollings are
    within a group (a group's loops are always whole in an atom), so any number of
    groups keeps the rule.
Candidates
    :func:`size_candidates` lists, per layer, the sizes that halve each loop from
    the whole (``ceil(L / 2^k)``, rounded up to the unrolling on unrolled loops)
    and whose *working set* (inputs with their halo, weights, outputs) fits the
    engine buffer; a layer none of whose sizes fits (a global pooling over many
    channels of one group) keeps its sizes of least working set.
Costs
    :func:`atom_cost` prices one atom with the shared per-layer cost model
    (:func:`accelsched.hardware.cost.layer_cost`) on the atom's part of the layer,
    every operand in the engine's top on-chip level: atoms run out of the
    engine's buffer, and moving their data is the round evaluator's business.
The DAG
    :func:`atomize` tiles each layer's output per sample and, when ``ci < C``,
    chains the input-channel parts of one output block (partial sums). A consumer
    atom depends on a producer atom when it reads rows, columns and channels the
    producer writes: the receptive field of its output rows and columns under
    stride, dilation and padding, channels through concatenation offsets,
    element-wise operands channel by channel (a broadcast operand of one pixel
    whole); matrix products read all of both operands. The last
    input-channel part writes a block. The grid of one sample is built once and
    repeated for the other samples.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from accelsched.errors import InputError
from accelsched.hardware.cost.layer_by_layer import part_of
from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.hardware.spec import Accelerator, Core
from accelsched.models.layer import Layer, OpKind
from accelsched.models.workload import Workload
from accelsched.problems.atomic.dag import Atom, AtomDag, AtomSize, Partition

__all__ = [
    "ATOMS_PER_ENGINE",
    "Candidate",
    "atom_chunks",
    "atom_cost",
    "atom_count",
    "atomize",
    "candidate_table",
    "check_size",
    "clip_size",
    "lock_step_cycles",
    "size_candidates",
    "split_cycles",
    "split_size",
    "working_set",
]


def _grouped(layer: Layer) -> bool:
    return layer.G > 1


def clip_size(layer: Layer, size: AtomSize) -> AtomSize:
    """``size`` limited to the layer's loops (per sample); a grouped layer's ``ci`` is its channels per group."""
    if _grouped(layer):
        return AtomSize(min(size.h, layer.OY), min(size.w, layer.OX), layer.C, min(size.co, layer.out_channels))
    return AtomSize(min(size.h, layer.OY), min(size.w, layer.OX), min(size.ci, layer.C), min(size.co, layer.K))


def check_size(layer: Layer, size: AtomSize, core: Core) -> None:
    """Raise :class:`InputError` when ``size`` (already clipped) breaks the PE-array rule of ``core``, or cuts a
    group of a grouped layer."""
    unroll = dict(core.spatial)
    full_co = layer.out_channels if _grouped(layer) else layer.K
    if _grouped(layer) and size.co % layer.K and size.co != full_co:
        raise InputError(f"layer {layer.name!r} is grouped ({layer.G} groups of {layer.K} output channels): atom "
                         f"co={size.co} cuts a group", "--option atom",
                         f"give co as a multiple of {layer.K}")  # fmt: skip
    if Partition.of(core) is Partition.KC:
        # a grouped layer's unrolled K and C are per group, and an atom holds whole groups: nothing more to check
        pairs = [] if _grouped(layer) else [("co", "K", size.co, full_co), ("ci", "C", size.ci, layer.C)]
    else:
        pairs = [("h", "OY", size.h, layer.OY), ("w", "OX", size.w, layer.OX)]
    for field_name, loop, value, full in pairs:
        if value % unroll[loop] and value != full:
            raise InputError(
                f"layer {layer.name!r}: atom {field_name}={value} is not a multiple of the PE array's {loop} "
                f"unrolling {unroll[loop]} (and not the whole {loop}={full})",
                "--option atom",
                f"use a multiple of {unroll[loop]} for {field_name} ({Partition.of(core).value.upper()}-partition "
                "engines)",
            )


def atom_count(layer: Layer, size: AtomSize) -> int:
    """Atoms of ``size`` per sample of ``layer``."""
    count = math.ceil(layer.OY / size.h) * math.ceil(layer.OX / size.w)
    if _grouped(layer):
        return count * math.ceil(layer.out_channels / size.co)
    return count * math.ceil(layer.C / size.ci) * math.ceil(layer.K / size.co)


def atom_chunks(layer: Layer, size: AtomSize) -> int:
    """Input-channel parts of one output block (chained by their partial sums; 1 for a grouped layer)."""
    return 1 if _grouped(layer) else math.ceil(layer.C / size.ci)


def _input_extent(layer: Layer, outputs: int, axis: str) -> int:
    if axis == "y":
        return min(layer.IY, (outputs - 1) * layer.stride_y + (layer.FY - 1) * layer.dilation_y + 1)
    return min(layer.IX, (outputs - 1) * layer.stride_x + (layer.FX - 1) * layer.dilation_x + 1)


@dataclass(frozen=True)
class _Bytes:
    """Byte counts of one atom shape."""

    inputs: int
    weights: int
    outputs: int
    network_input: int


def _atom_bytes(layer: Layer, size: AtomSize, last_chunk: bool) -> _Bytes:
    groups = size.co // layer.K if _grouped(layer) else 1
    in_channels = layer.C * groups if _grouped(layer) else size.ci
    rows, cols = _input_extent(layer, size.h, "y"), _input_extent(layer, size.w, "x")
    operands = max(1, len(layer.inputs)) if layer.kind is OpKind.ELTWISE else 1
    inputs = rows * cols * in_channels * layer.input_bits // 8 * operands
    weights = 0
    if layer.kind.has_parameters:
        weights = size.co * (layer.C if _grouped(layer) else size.ci) * layer.FY * layer.FX * layer.weight_bits // 8
    elif layer.kind is OpKind.MATMUL:
        inputs += size.co * size.ci * layer.weight_bits // 8  # the W operand is an activation
    bits = layer.output_bits if last_chunk else layer.psum_bits
    outputs = size.h * size.w * size.co * bits // 8
    return _Bytes(inputs, weights, outputs, inputs if not layer.inputs else 0)


def working_set(layer: Layer, size: AtomSize) -> int:
    """Bytes an atom of ``size`` holds while it runs: inputs with the halo, weights and outputs."""
    b = _atom_bytes(layer, size, last_chunk=size.ci >= layer.C)
    return b.inputs + b.weights + b.outputs


def _halvings(full: int, unit: int) -> list[int]:
    values = {full}
    k = 1
    while True:
        value = math.ceil(math.ceil(full / 2**k) / unit) * unit
        if value < unit or value >= full:
            break
        values.add(value)
        k += 1
    return sorted(values)


def size_candidates(layer: Layer, core: Core) -> list[AtomSize]:
    """The halving sizes of ``layer`` that keep the PE-array rule and fit the engine buffer (module docstring),
    or, when none fits, those of least working set."""
    unroll = dict(core.spatial)
    kc = Partition.of(core) is Partition.KC
    hs = _halvings(layer.OY, unroll["OY"] if not kc else 1)
    ws = _halvings(layer.OX, unroll["OX"] if not kc else 1)
    if _grouped(layer):
        cos = _halvings(layer.out_channels, layer.K)  # whole groups (the array unrolls K and C within a group)
        cis = [layer.C]
    else:
        cis = _halvings(layer.C, unroll["C"] if kc else 1)
        cos = _halvings(layer.K, unroll["K"] if kc else 1)
    sizes = [AtomSize(h, w, ci, co) for h, w, ci, co in itertools.product(hs, ws, cis, cos)]
    capacity = core.top_capacity_bytes
    fitting = [s for s in sizes if working_set(layer, s) <= capacity]
    if not fitting:
        least = min(working_set(layer, s) for s in sizes)
        fitting = [s for s in sizes if working_set(layer, s) == least]
    return fitting


def _top_levels(core: Core) -> dict[str, str]:
    """The on-chip level holding each operand at the top of the engine (atoms work out of the engine's buffer)."""
    return {op: levels[-1] for op, levels in core.hierarchy.items() if levels}


def atom_cost(layer: Layer, shape: AtomSize, accelerator: Accelerator) -> tuple[int, dict[str, float], int]:
    """Cycles, on-chip energy breakdown (pJ) and MACs of one atom of ``shape`` (clipped, one sample) on an engine.

    Raises
    ------
    InputError
        The engine cannot run the layer's operator.
    """
    core = accelerator.cores[0]
    if _grouped(layer):
        part = part_of(layer, B=1, OY=shape.h, OX=shape.w, G=shape.co // layer.K)
    else:
        part = part_of(layer, B=1, OY=shape.h, OX=shape.w, C=shape.ci, K=shape.co)
    try:
        cost = layer_cost(part, core, accelerator.offchip, _top_levels(core))
    except ValueError as exc:
        raise InputError(str(exc), f"layer {layer.name!r}", "use an accelerator whose engines run it") from exc
    breakdown = {k: float(v) for k, v in cost.energy_breakdown_pj.items() if k != "dram" and v}
    return math.ceil(cost.latency_cycles), breakdown, part.macs


ATOMS_PER_ENGINE = 4
"""Most atoms per engine and sample a layer is cut into, for every method (Atomic Dataflow's sizes included)."""


@dataclass(frozen=True)
class Candidate:
    """One candidate size of a layer with its atoms per sample and cycles per atom."""

    size: AtomSize
    count: int
    cycles: int


_TABLES: dict[tuple[Layer, int], tuple[Accelerator, tuple[Candidate, ...]]] = {}


def candidate_table(layer: Layer, accelerator: Accelerator) -> tuple[Candidate, ...]:
    """:func:`size_candidates` of ``layer`` with their atom counts and cycles (cached per layer and accelerator)."""
    key = (layer, id(accelerator))
    entry = _TABLES.get(key)
    if entry is None or entry[0] is not accelerator:
        table = tuple(Candidate(size, atom_count(layer, size), atom_cost(layer, size, accelerator)[0])
                      for size in size_candidates(layer, accelerator.cores[0]))  # fmt: skip
        entry = (accelerator, table)
        _TABLES[key] = entry
    return entry[1]


def split_size(
    layer: Layer, accelerator: Accelerator, n_engines: int, samples: int = 1, max_rows: int | None = None
) -> AtomSize:
    """The candidate size that runs ``samples`` samples of ``layer`` fastest on ``n_engines`` engines working in
    lock step (:func:`split_cycles`), then fewer atoms, then larger atoms; ``max_rows`` caps ``h``. This is how a
    layer is *split evenly over the engines* (layer-sequential execution). As for Atomic Dataflow's sizes
    (:func:`accelsched.problems.atomic.sizes.size_table`), at most :data:`ATOMS_PER_ENGINE` atoms per engine and
    sample are offered (the cost model charges an atom no fixed overhead, so without a cap the finest split would
    always win on rounding alone)."""
    return _split(layer, accelerator, n_engines, samples, max_rows)[1]


def split_cycles(
    layer: Layer, accelerator: Accelerator, n_engines: int, samples: int = 1, max_rows: int | None = None
) -> int:
    """Cycles of ``samples`` samples of ``layer`` on ``n_engines`` engines in lock step with the best size
    (:func:`lock_step_cycles`)."""
    return _split(layer, accelerator, n_engines, samples, max_rows)[0]


def _split(
    layer: Layer, accelerator: Accelerator, n_engines: int, samples: int, max_rows: int | None
) -> tuple[int, AtomSize]:
    best: tuple[tuple[int, int, int], AtomSize] | None = None
    table = candidate_table(layer, accelerator)
    rows = max_rows if max_rows is not None else layer.OY
    allowed = [c for c in table if c.size.h <= rows] or [min(table, key=lambda c: c.size.h)]
    fewest = min(c.count for c in allowed)
    allowed = [c for c in allowed if c.count <= max(ATOMS_PER_ENGINE * n_engines, fewest)]
    for c in allowed:
        size = c.size
        cycles = lock_step_cycles(layer, size, c.cycles, n_engines, samples)
        key = (cycles, c.count, -size.h * size.w * size.ci * size.co)
        if best is None or key < best[0]:
            best = key, size
    assert best is not None
    return best[0][0], best[1]


def lock_step_cycles(layer: Layer, size: AtomSize, cycles: int, n_engines: int, samples: int = 1) -> int:
    """Cycles of ``samples`` samples of ``layer`` on ``n_engines`` engines in lock step with atoms of ``size`` taking
    ``cycles`` each: ``chunks x ceil(blocks x samples / n_engines) x cycles``, the input-channel parts (chunks) of an
    output block running one after the other, its blocks side by side."""
    chunks = atom_chunks(layer, size)
    return chunks * math.ceil(atom_count(layer, size) // chunks * samples / n_engines) * cycles


def _ranges(total: int, step: int) -> list[tuple[int, int]]:
    return [(s, min(s + step, total)) for s in range(0, total, step)]


def _span(layer: Layer, out: tuple[int, int], axis: str) -> tuple[int, int]:
    """Input rows (``axis="y"``) or columns an output range reads, clipped to the input."""
    if axis == "y":
        stride, kernel, dil, pad, size = layer.stride_y, layer.FY, layer.dilation_y, layer.padding[0], layer.IY
    else:
        stride, kernel, dil, pad, size = layer.stride_x, layer.FX, layer.dilation_x, layer.padding[1], layer.IX
    low = out[0] * stride - pad
    high = (out[1] - 1) * stride - pad + (kernel - 1) * dil + 1
    return max(low, 0), min(high, size)


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


class _Grid:
    """The atoms of one sample of one layer: output blocks (rows x columns x output channels) x input chunks."""

    def __init__(self, layer: Layer, size: AtomSize) -> None:
        self.layer, self.size = layer, size
        self.rows = _ranges(layer.OY, size.h)
        self.cols = _ranges(layer.OX, size.w)
        self.out = _ranges(layer.out_channels if _grouped(layer) else layer.K, size.co)
        self.chunks = [(0, layer.C)] if _grouped(layer) else _ranges(layer.C, size.ci)

    @property
    def count(self) -> int:
        return len(self.rows) * len(self.cols) * len(self.out) * len(self.chunks)

    def index(self, i: int, j: int, k: int, c: int) -> int:
        return ((i * len(self.cols) + j) * len(self.out) + k) * len(self.chunks) + c

    def in_channels(self, k: int, c: int) -> tuple[int, int]:
        """Input channels (the layer's, over all groups) that atom block ``k``, chunk ``c`` reads."""
        if _grouped(self.layer):
            g0, g1 = self.out[k][0] // self.layer.K, math.ceil(self.out[k][1] / self.layer.K)
            return g0 * self.layer.C, g1 * self.layer.C
        return self.chunks[c]

    def blocks(self, ys: tuple[int, int], xs: tuple[int, int], cs: tuple[int, int]) -> list[tuple[int, int]]:
        """Writer atoms whose output overlaps rows ``ys`` x columns ``xs`` x channels ``cs``: ``(atom, area)``."""
        found = []
        h, w, co = self.size.h, self.size.w, self.size.co
        last = len(self.chunks) - 1
        for i in range(ys[0] // h, min(len(self.rows), math.ceil(ys[1] / h))):
            dy = _overlap(ys, self.rows[i])
            for j in range(xs[0] // w, min(len(self.cols), math.ceil(xs[1] / w))):
                dx = _overlap(xs, self.cols[j])
                for k in range(cs[0] // co, min(len(self.out), math.ceil(cs[1] / co))):
                    dc = _overlap(cs, self.out[k])
                    if dy and dx and dc:
                        found.append((self.index(i, j, k, last), dy * dx * dc))
        return found


def _sample_edges(workload: Workload, grids: Mapping[str, _Grid]) -> dict[tuple[str, int, str, int], int]:
    """Edges of one sample: ``(producer layer, local atom, consumer layer, local atom) -> bytes``."""
    edges: dict[tuple[str, int, str, int], int] = {}
    for layer in workload:
        grid = grids[layer.name]
        producers = [workload[p] for p in layer.inputs]
        for i, rows in enumerate(grid.rows):
            for j, cols in enumerate(grid.cols):
                for k in range(len(grid.out)):
                    for c in range(len(grid.chunks)):
                        index = grid.index(i, j, k, c)
                        if c:
                            prev = grid.index(i, j, k, c - 1)
                            psum = (rows[1] - rows[0]) * (cols[1] - cols[0]) * (grid.out[k][1] - grid.out[k][0])
                            edges[layer.name, prev, layer.name, index] = psum * layer.psum_bits // 8
                        _consumer_edges(layer, grid, producers, grids, (i, j, k, c), edges)
    return edges


def _consumer_edges(
    layer: Layer, grid: _Grid, producers: list[Layer], grids: Mapping[str, _Grid], at: tuple[int, int, int, int],
    edges: dict[tuple[str, int, str, int], int],
) -> None:  # fmt: skip
    """Add the edges from the producer atoms atom ``at`` of ``layer`` reads (a matrix product reads all of both
    operands; a broadcast element-wise operand of one pixel is read whole)."""
    i, j, k, c = at
    index = grid.index(i, j, k, c)
    rows, cols = grid.rows[i], grid.cols[j]
    span = grid.in_channels(k, c)
    offset = 0
    for p in producers:
        pg = grids[p.name]
        if layer.kind is OpKind.MATMUL:
            ys, xs, cs = (0, p.OY), (0, p.OX), (0, p.out_channels)
        elif layer.kind is OpKind.ELTWISE:
            broadcast = (p.OY, p.OX) != (layer.OY, layer.OX)
            ys, xs = ((0, p.OY), (0, p.OX)) if broadcast else (rows, cols)
            cs = grid.out[k]
        else:
            ys, xs = _span(layer, rows, "y"), _span(layer, cols, "x")
            cs = (max(span[0], offset) - offset, min(span[1], offset + p.out_channels) - offset)
            offset += p.out_channels
            if cs[0] >= cs[1]:
                continue
        for w, area in pg.blocks(ys, xs, cs):
            key = (p.name, w, layer.name, index)
            edges[key] = edges.get(key, 0) + area * p.output_bits // 8


def atomize(workload: Workload, accelerator: Accelerator, sizes: Mapping[str, AtomSize]) -> AtomDag:
    """The atomic DAG of ``workload`` with the given atom size per layer, costed on the first engine (module
    docstring). Atoms are numbered by layer (workload order), then sample, then output block and input chunk.

    Raises
    ------
    InputError
        A layer without a size, a size that breaks the PE-array rule or cuts a group, or a layer the engine
        cannot run.
    """
    core = accelerator.cores[0]
    grids: dict[str, _Grid] = {}
    for layer in workload:
        if layer.name not in sizes:
            raise InputError(f"no atom size for layer {layer.name!r}", "sizes", "give a size for every layer")
        size = clip_size(layer, sizes[layer.name])
        check_size(layer, size, core)
        grids[layer.name] = _Grid(layer, size)
    sinks = set(workload.sinks)
    local: dict[str, list[Atom]] = {}
    costs: dict[tuple[str, AtomSize], tuple[int, dict[str, float], int]] = {}
    for layer in workload:
        grid = grids[layer.name]
        atoms: list[Atom] = []
        for i, j, k, c in itertools.product(*(range(len(x)) for x in (grid.rows, grid.cols, grid.out, grid.chunks))):
            rows, cols, out, chunk = grid.rows[i], grid.cols[j], grid.out[k], grid.chunks[c]
            shape = AtomSize(rows[1] - rows[0], cols[1] - cols[0], chunk[1] - chunk[0], out[1] - out[0])
            if (layer.name, shape) not in costs:
                costs[layer.name, shape] = atom_cost(layer, shape, accelerator)
            cycles, breakdown, macs = costs[layer.name, shape]
            last = c == len(grid.chunks) - 1
            b = _atom_bytes(layer, shape, last)
            atoms.append(Atom(layer.name, 0, rows, cols, grid.in_channels(k, c), out, cycles, sum(breakdown.values()),
                              macs, b.outputs, b.inputs, b.weights, b.network_input, last and layer.name in sinks,
                              tuple(sorted(breakdown.items()))))  # fmt: skip
        local[layer.name] = atoms
    edges = _sample_edges(workload, grids)
    return _replicate(workload, local, edges)


def _replicate(
    workload: Workload, local: Mapping[str, list[Atom]], edges: Mapping[tuple[str, int, str, int], int]
) -> AtomDag:
    """The DAG of every sample from the atoms and edges of one."""
    batch = workload.batch
    base: dict[str, int] = {}
    atoms: list[Atom] = []
    for layer in workload:
        base[layer.name] = len(atoms)
        one = local[layer.name]
        atoms.extend(one)
        for s in range(1, batch):
            atoms.extend(Atom(a.layer, s, a.rows, a.cols, a.in_channels, a.out_channels, a.duration_cycles, a.energy_pj,
                              a.macs, a.output_bytes, a.input_bytes, a.weight_bytes, a.network_input_bytes,
                              a.network_output, a.energy_breakdown_pj) for a in one)  # fmt: skip
    if not edges:
        return AtomDag(workload.name, atoms)
    keys = list(edges)
    src_base = np.array([base[p] for p, _, _, _ in keys], dtype=np.int64)
    src_local = np.array([w for _, w, _, _ in keys], dtype=np.int64)
    src_count = np.array([len(local[p]) for p, _, _, _ in keys], dtype=np.int64)
    dst_base = np.array([base[c] for _, _, c, _ in keys], dtype=np.int64)
    dst_local = np.array([x for _, _, _, x in keys], dtype=np.int64)
    dst_count = np.array([len(local[c]) for _, _, c, _ in keys], dtype=np.int64)
    nbytes = np.array([edges[key] for key in keys], dtype=np.int64)
    samples = np.arange(batch, dtype=np.int64)[:, None]
    src = (src_base + samples * src_count + src_local).ravel()
    dst = (dst_base + samples * dst_count + dst_local).ravel()
    array = np.stack([src, dst, np.tile(nbytes, batch)], axis=1)
    order = np.lexsort((array[:, 1], array[:, 0]))
    return AtomDag(workload.name, atoms, array[order])
