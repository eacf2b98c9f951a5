"""Cost of a layer (or a part of one) on a core: the primitive every evaluator builds on.

Model
-----
The closed-form model follows the reasoning of ZigZag and MAESTRO, reduced to
what can be searched exhaustively in a few milliseconds.

*Spatial.* The core unrolls some loops (``Core.spatial``). A loop of size ``L``
unrolled ``s`` ways takes ``ceil(L / s)`` temporal steps; when a layer has
``K == 1`` (or ``C == 1``) and ``G > 1`` (depthwise, pooling, element-wise),
the group loop takes the array dimension meant for ``K`` (``C``). Compute
cycles are the product of the temporal steps of all loops, so spatial
under-utilization shows up as extra cycles.

*Temporal.* Loops are gathered in three groups, which is exact for the reuse
structure of a convolution: pixels ``P = (B, OY, OX)`` (relevant to I and O),
output channels ``K`` (relevant to W and O) and the reduction ``R = (C, FY, FX)``
(relevant to I and W). The group loop ``G`` is relevant to all three operands
and is kept outermost. Memory levels are aligned per operand from the top:
depth 1 is the outermost on-chip level of each operand (fed by DRAM), depth 2
the next one inwards, and so on. At every depth a tile ``(t_B, t_OY, t_OX, t_K,
t_C, taps, t_G)`` and an order of the three groups are chosen among all
candidates (tile sizes are multiples of the spatial unrolling, doubling up to
the full loop), subject to the footprints of the operands stored at that depth
fitting their level (levels shared by several operands hold the sum); tiles at
depth ``d + 1`` nest inside the tile at depth ``d``. Depth 1 minimizes DRAM
bytes first and energy second, the other depths minimize energy. For a chosen
tile and order the traffic into the level of operand ``X`` is:

* ``W``: ``|W| * n_P`` if the pixel group is not the innermost group with more
  than one step, else ``|W|`` (the weight tile stays while pixels stream);
* ``I``: ``n_P * n_R`` input tiles with their halo, times ``n_K`` when the
  ``K`` group is outside the innermost relevant group;
* ``O``: ``|O|`` when the reduction completes inside the tile, else partial sums
  go up ``n_R`` times and come back ``n_R - 1`` times at ``psum_bits``.

The innermost level of an operand is read once per cycle for every distinct
element the array consumes (spatial reuse is multicast); outputs are
accumulated there (read and write per cycle, minus the first read). A loop of
size ``L`` unrolled ``s`` ways runs steps of mean size ``L / ceil(L / s)``
(``14 = 4 + 4 + 4 + 2``: 3.5), and the per-cycle count is the mean over the
steps; the instances an operand occupies are those of a full step.

*Time.* Latency is a roofline: the largest of the compute cycles, every level's
reads and writes over its bandwidth (all instances), and the DRAM bytes over
the off-chip bandwidth (double buffering assumed).

*Energy.* MACs x MAC energy + accesses x energy per byte at every level + DRAM
bytes x DRAM energy per byte.

*Top levels.* By default every operand comes from (and goes to) DRAM. With
``tops``, an operand's data is already resident in a chosen on-chip level (as in
a depth-first tile whose data stay on chip, DeFiNES' "top memory level"): that
level takes DRAM's place as the operand's source, the levels above it are not
used, and the levels below it keep their depth, so the hierarchy is cut, not
re-aligned. Moving the data into the top level is the caller's business.

Against ZigZag
--------------
``python -m accelsched.bench.zigzag_crosscheck`` compares this model with ZigZag
3.9.1 layer by layer (``bench/results/zigzag_crosscheck.md``). These differences
are deliberate; each was measured (``docs/notes/fidelity-zigzag.md``):

* *No serial prologue.* The roofline overlaps every transfer with compute.
  ZigZag's ``latency_total2`` loads a DRAM transfer that happens once per layer
  before the first MAC, hidden by idle port cycles only down to the whole content
  of the operand's lowest level. On a core whose only input SRAM holds the whole
  layer (TPU-like) that is the whole input over the DRAM bandwidth, 22-44 % of the
  compute cycles of compute-bound layers, and ZigZag gets faster when that SRAM shrinks, so it is not a
  physical cost. The physical fill, one streamed input band, is 1-4 % of compute
  and is not modelled.
* *Every cycle reads the innermost level.* ZigZag's API reads a stationary operand
  from a register once per run of irrelevant loops (``access_same_data_considered_as_no_access``).
* *One tile per depth.* All operands at a depth share one tile and one order of
  the three loop groups; LOMA orders loops per memory level and operand.
* *The first accumulation reads no partial sum*, where ZigZag's port model
  bills a read every cycle (1-5 % of stall on output-register ports).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from accelsched.hardware.spec import OPERANDS, Core, OffChip
from accelsched.models.layer import Layer, OpKind

__all__ = ["LayerCost", "TileChoice", "cache_info", "clear_cache", "layer_cost", "window_extent"]

GROUPS = ("P", "K", "R")
"""Loop groups: pixels, output channels, reduction."""

ORDERS: tuple[tuple[str, ...], ...] = tuple(itertools.permutations(GROUPS))
"""All orders of the three groups, outermost first."""


@dataclass(frozen=True)
class TileChoice:
    """The tile and loop order chosen at one depth of the hierarchy.

    ``tile`` maps ``B, OY, OX, K, C, G`` to tile sizes and ``taps`` to the number
    of filter taps (``FY*FX`` positions) in the tile; ``order`` lists the groups
    ``P, K, R`` outermost first. ``levels`` names the level of each operand at this
    depth (operands without a level at this depth are absent).
    """

    depth: int
    order: tuple[str, ...]
    tile: Mapping[str, int]
    levels: Mapping[str, str]
    fits: bool


@dataclass(frozen=True)
class LayerCost:
    """Cost of one layer on one core, standalone (from DRAM to DRAM).

    Attributes
    ----------
    macs
        Multiply-accumulates of the layer.
    compute_cycles
        Cycles of the MAC array alone (spatial under-utilization included).
    latency_cycles
        Roofline latency: compute, every on-chip level's bandwidth, DRAM bandwidth.
    spatial_utilization
        ``macs / (compute_cycles * n_macs)``.
    energy_breakdown_pj
        ``mac``, ``mem:<level>`` for every level, and ``dram``.
    dram_read_bytes, dram_write_bytes
        Off-chip traffic per operand.
    level_read_bytes, level_write_bytes
        On-chip traffic per ``(level, operand)``.
    footprint_bytes
        Bytes of each operand resident in its top level (the on-chip working set).
    tiles
        The chosen tile and order per depth, outermost first.
    fits
        False when even the smallest tile overflows a level (the cost then assumes
        the smallest tile anyway).
    """

    macs: int
    compute_cycles: int
    latency_cycles: float
    spatial_utilization: float
    energy_breakdown_pj: Mapping[str, float]
    dram_read_bytes: Mapping[str, float]
    dram_write_bytes: Mapping[str, float]
    level_read_bytes: Mapping[tuple[str, str], float]
    level_write_bytes: Mapping[tuple[str, str], float]
    footprint_bytes: Mapping[str, float]
    tiles: tuple[TileChoice, ...]
    fits: bool
    spatial_mapping: Mapping[str, int] = field(default_factory=dict)

    @property
    def energy_pj(self) -> float:
        """Total energy."""
        return float(sum(self.energy_breakdown_pj.values()))

    @property
    def dram_bytes(self) -> float:
        """Off-chip bytes read plus written."""
        return float(sum(self.dram_read_bytes.values()) + sum(self.dram_write_bytes.values()))

    @property
    def on_chip_energy_pj(self) -> float:
        """Energy without the DRAM share (MACs and on-chip memories)."""
        return self.energy_pj - self.energy_breakdown_pj.get("dram", 0.0)


def window_extent(stride: int, outputs: Any, dilation: int, taps: Any) -> Any:
    """Distinct input coordinates ``stride * o + dilation * f`` for ``o < outputs``, ``f < taps``.

    With ``g = gcd(stride, dilation)``, ``s = stride / g`` and ``d = dilation / g``, the
    pairs ``(o, f)`` and ``(o + d, f - s)`` read the same coordinate, and every other
    coincidence is a chain of such steps, so exactly the pairs with ``o + d < outputs`` and
    ``f >= s`` repeat a coordinate already counted::

        extent = outputs * taps - max(0, outputs - d) * max(0, taps - s)

    It is smaller than the bounding box ``(outputs - 1) * stride + (taps - 1) * dilation + 1``
    whenever coordinates between windows are skipped: a strided window with fewer taps
    than its stride (a 1x1 stride-2 tile of 4 outputs reads 4 input columns, not 7), or
    a stride and dilation with ``g > 1`` or both reduced values above 1 (stride 2,
    dilation 2: every other coordinate). ZigZag's ``LayerNode.calc_pr_dimension_size``
    gives the same count when ``outputs >= d`` (it lacks the second ``max(0, .)``). ``outputs`` and
    ``taps`` may be NumPy arrays (and ``outputs`` a mean tile size, not an integer).
    """
    g = math.gcd(stride, dilation)
    s, d = stride // g, dilation // g
    return outputs * taps - np.maximum(0, outputs - d) * np.maximum(0, taps - s)


# --------------------------------------------------------------------- cache
_CACHE: dict[tuple[Any, ...], LayerCost] = {}
_STATS = {"hits": 0, "misses": 0}


def clear_cache() -> None:
    """Forget every cached layer cost."""
    _CACHE.clear()
    _STATS.update(hits=0, misses=0)


def cache_info() -> dict[str, int]:
    """Cache hits, misses and size."""
    return {**_STATS, "size": len(_CACHE)}


def layer_cost(layer: Layer, core: Core, offchip: OffChip, tops: Mapping[str, str] | None = None) -> LayerCost:
    """Cost of running ``layer`` alone on ``core``, fetching from and writing to DRAM.

    Cached per (layer shape, core configuration, off-chip memory, tops): the
    layer's name, producers and the core's id do not matter. For a part of a
    layer, pass a layer with the part's loop sizes (see
    :func:`accelsched.hardware.cost.layer_by_layer.part_of`).

    Parameters
    ----------
    layer, core, offchip
        What runs where.
    tops
        Optional top level per operand (``I``, ``W``, ``O``): the on-chip level
        that holds the operand's data for this run and serves as its source
        instead of DRAM (see the module docstring). Operands not named, or named
        ``"dram"``, come from DRAM.

    Raises
    ------
    ValueError
        If the core does not support the layer's operator kind, or a top level
        does not hold its operand.
    """
    if not core.supports(layer.kind):
        raise ValueError(
            f"core {core.id} ({core.name}) does not execute {layer.kind.value} layers (layer {layer.name!r})"
        )
    chosen = tuple(sorted((op, lvl) for op, lvl in (tops or {}).items() if lvl != "dram"))
    for op, lvl in chosen:
        if op not in OPERANDS or lvl not in core.hierarchy[op]:
            raise ValueError(
                f"layer_cost: top level {lvl!r} of operand {op!r} is not in core {core.id}'s hierarchy "
                f"({dict(core.hierarchy)})"
            )
    key = (layer.shape_key(), core.cost_key(), offchip, chosen)
    cached = _CACHE.get(key)
    if cached is not None:
        _STATS["hits"] += 1
        return cached
    _STATS["misses"] += 1
    result = _Model(layer, core, offchip, dict(chosen)).run()
    _CACHE[key] = result
    return result


# --------------------------------------------------------------------- model
class _Model:
    """One evaluation of the closed-form model (see the module docstring)."""

    def __init__(self, layer: Layer, core: Core, offchip: OffChip, tops: Mapping[str, str]) -> None:
        self.layer = layer
        self.tops = tops
        self.core = core
        self.offchip = offchip
        self.loops = layer.loops
        self.taps = layer.FY * layer.FX
        self.has_w = layer.kind.has_w_operand
        self.operands = tuple(op for op in OPERANDS if op != "W" or self.has_w)
        self.spatial = self._spatial_mapping()
        self.bytes_per = {
            "I": layer.input_bits / 8,
            "W": layer.weight_bits / 8,
            "O": layer.output_bits / 8,
            "P": layer.psum_bits / 8,
        }

    # ------------------------------------------------------------ spatial
    def _spatial_mapping(self) -> dict[str, int]:
        """Unrolling factor actually applied per loop (group loop takes unused K/C slots)."""
        loops = self.loops
        out: dict[str, int] = {}
        for dim, factor in self.core.spatial:
            target = dim
            if dim in ("K", "C") and loops[dim] == 1 and loops["G"] > 1 and "G" not in out:
                target = "G"
            out[target] = out.get(target, 1) * factor
        return out

    def _steps(self, dim: str) -> int:
        return math.ceil(self.loops[dim] / self.spatial.get(dim, 1))

    def _used(self, dim: str) -> int:
        return min(self.loops[dim], self.spatial.get(dim, 1))

    def _step_sizes(self, dim: str) -> tuple[tuple[int, int], ...]:
        """``(size, count)`` of the spatial steps of ``dim``: ``14`` on 4 is ``((4, 3), (2, 1))``."""
        size, unroll = self.loops[dim], self.spatial.get(dim, 1)
        if size <= unroll:
            return ((size, 1),)
        full, rest = divmod(size, unroll)
        return ((unroll, full), (rest, 1)) if rest else ((unroll, full),)

    def _full_step(self, dim: str) -> tuple[tuple[int, int], ...]:
        """One step of ``dim`` at its full unrolling, as :meth:`_step_sizes` gives steps."""
        return ((self._used(dim), 1),)

    def _per_cycle(self, operand: str, steps: Callable[[str], tuple[tuple[int, int], ...]]) -> float:
        """Distinct elements of ``operand`` one cycle touches, averaged over the ``(size, count)`` steps of each loop.

        The steps form the Cartesian product of every loop's steps, so the mean of the
        product is the product of per-loop means ``sum(size * count) / sum(count)``, per axis
        for the input window. Along an axis every output step meets every tap step, so the
        window is the count-weighted mean of :func:`window_extent` over the pairs of step
        sizes (at most four), each capped at the coordinates the input has;
        ``window_extent`` is not linear in its arguments, so this is not the extent of the
        mean sizes.
        """
        layer = self.layer

        def size(dim: str) -> float:
            return sum(v * n for v, n in steps(dim)) / sum(n for _, n in steps(dim))

        def window(stride: int, dilation: int, out_dim: str, tap_dim: str, limit: int) -> float:
            pairs = [(o, no, t, nt) for o, no in steps(out_dim) for t, nt in steps(tap_dim)]
            total = sum(no * nt * min(window_extent(stride, o, dilation, t), limit) for o, no, t, nt in pairs)
            return float(total) / sum(no * nt for _, no, _, nt in pairs)

        if operand == "W":
            return size("G") * size("K") * size("C") * size("FY") * size("FX")
        if operand == "O":
            return size("B") * size("G") * size("K") * size("OY") * size("OX")
        rows = window(layer.stride_y, layer.dilation_y, "OY", "FY", layer.IY)
        cols = window(layer.stride_x, layer.dilation_x, "OX", "FX", layer.IX)
        return size("B") * size("G") * size("C") * rows * cols * layer.n_operands

    def _peak_per_cycle(self, operand: str) -> float:
        """Distinct elements of ``operand`` in a full spatial step (the instances it occupies)."""
        return self._per_cycle(operand, self._full_step)

    def _mean_per_cycle(self, operand: str) -> float:
        """Distinct elements of ``operand`` per cycle over all steps (the traffic it causes).

        A ragged last step (``L mod s != 0``) counts only the coordinates it has; the
        array's idle lanes read nothing. A loop's mean step is ``L / ceil(L / s)``:
        ``14 = 4 + 4 + 4 + 2`` on 4 lanes touches 3.5 coordinates per cycle, not 4.
        """
        return self._per_cycle(operand, self._step_sizes)

    # ----------------------------------------------------------- candidates
    def _candidates(self, dim: str) -> np.ndarray:
        size = self.loops[dim]
        low = self._used(dim)
        values = {size}
        v = low
        while v < size:
            values.add(v)
            v *= 2
        return np.array(sorted(values), dtype=np.int64)

    def _tap_candidates(self) -> np.ndarray:
        low = self._used("FY") * self._used("FX")
        return np.array(sorted({low, self.taps}), dtype=np.int64)

    def _grid(self) -> dict[str, np.ndarray]:
        dims = ("B", "OY", "OX", "K", "C", "G")
        axes = [self._candidates(d) for d in dims] + [self._tap_candidates()]
        mesh = np.meshgrid(*axes, indexing="ij")
        grid = {d: m.ravel() for d, m in zip((*dims, "taps"), mesh, strict=True)}
        return grid

    # ------------------------------------------------------------ traffic
    def _tile_shape(self, t: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Trip counts and tile footprints (bytes) of every candidate tile."""
        layer = self.layer
        full_taps = t["taps"] >= self.taps
        tfy = np.where(full_taps, layer.FY, self._used("FY"))
        tfx = np.where(full_taps, layer.FX, self._used("FX"))
        rows = np.minimum(window_extent(layer.stride_y, t["OY"], layer.dilation_y, tfy), layer.IY)
        cols = np.minimum(window_extent(layer.stride_x, t["OX"], layer.dilation_x, tfx), layer.IX)
        n_f = np.ceil(layer.FY / tfy) * np.ceil(layer.FX / tfx)
        loops = self.loops
        n_p = np.ceil(loops["B"] / t["B"]) * np.ceil(loops["OY"] / t["OY"]) * np.ceil(loops["OX"] / t["OX"])
        n_k = np.ceil(loops["K"] / t["K"])
        n_r = np.ceil(loops["C"] / t["C"]) * n_f
        n_g = np.ceil(loops["G"] / t["G"])
        tile_i = t["B"] * t["G"] * t["C"] * rows * cols * layer.n_operands * self.bytes_per["I"]
        # traffic uses the mean tile (L / n per loop) so that ragged last tiles are not over-counted
        mean = {d: loops[d] / np.ceil(loops[d] / t[d]) for d in ("B", "OY", "OX", "C", "G")}
        rows_m = np.minimum(window_extent(layer.stride_y, mean["OY"], layer.dilation_y, tfy), layer.IY)
        cols_m = np.minimum(window_extent(layer.stride_x, mean["OX"], layer.dilation_x, tfx), layer.IX)
        mean_i = mean["B"] * mean["G"] * mean["C"] * rows_m * cols_m * layer.n_operands * self.bytes_per["I"]
        tile_w = t["G"] * t["K"] * t["C"] * tfy * tfx * self.bytes_per["W"] if self.has_w else 0 * n_p
        if layer.kind is OpKind.MATMUL:
            tile_w = tile_w * t["B"]
        out_bytes = np.where(n_r > 1, self.bytes_per["P"], self.bytes_per["O"])
        tile_o = t["B"] * t["G"] * t["K"] * t["OY"] * t["OX"] * out_bytes
        return {
            "n_p": n_p,
            "n_k": n_k,
            "n_r": n_r,
            "n_g": n_g,
            "n_f": n_f,
            "I": tile_i,
            "W": tile_w,
            "O": tile_o,
            "I_mean": mean_i,
        }

    def _traffic(self, shape: Mapping[str, np.ndarray], order: tuple[str, ...]) -> dict[str, np.ndarray]:
        """Bytes moved into (and for O out of) a level, per operand, for one group order."""
        trips = {"P": shape["n_p"], "K": shape["n_k"], "R": shape["n_r"]}
        layer = self.layer

        def refetch(relevant: tuple[str, str], irrelevant: str) -> np.ndarray:
            # the irrelevant group causes refetches when it lies outside the innermost
            # relevant group that actually iterates
            pos_irr = order.index(irrelevant)
            result = np.ones_like(shape["n_p"])
            inner_relevant = np.full(shape["n_p"].shape, -1)
            for g in relevant:
                pos = order.index(g)
                inner_relevant = np.where((trips[g] > 1) & (pos > inner_relevant), pos, inner_relevant)
            outside = pos_irr < inner_relevant
            return np.where(outside, trips[irrelevant], result)

        n_g = shape["n_g"]
        i_tiles = shape["n_p"] * shape["n_r"] * n_g
        traffic_i = i_tiles * shape["I_mean"] * refetch(("P", "R"), "K")
        # the reduction loop: partial sums travel when R is outside the innermost iterating O loop
        r_refetch = refetch(("P", "K"), "R")
        psum_passes = np.where(r_refetch > 1, shape["n_r"], 1.0)
        o_final = layer.output_elements * self.bytes_per["O"]
        o_partial = layer.output_elements * self.bytes_per["P"]
        o_up = o_final + (psum_passes - 1) * o_partial
        o_down = (psum_passes - 1) * o_partial
        traffic = {"I": traffic_i, "O_up": o_up, "O_down": o_down}
        if self.has_w:
            w_total = layer.w_elements * self.bytes_per["W"]
            traffic["W"] = w_total * refetch(("K", "R"), "P")
        return traffic

    # -------------------------------------------------------------- search
    def _depth_levels(self) -> list[dict[str, str]]:
        """Level of each operand at each depth, outermost depth first."""
        chains = {op: self.core.hierarchy[op] for op in self.operands}
        # an operand with a top level uses only the levels strictly inside it
        inside = {op: (c.index(self.tops[op]) if op in self.tops else len(c)) for op, c in chains.items()}
        depth = max(len(c) for c in chains.values())
        return [
            {op: c[len(c) - d] for op, c in chains.items() if d <= len(c) and len(c) - d < inside[op]}
            for d in range(1, depth + 1)
        ]

    def _capacity_ok(self, shape: Mapping[str, np.ndarray], levels: Mapping[str, str]) -> np.ndarray:
        """Whether every level at this depth holds the tiles of the operands it stores."""
        ok = np.ones(shape["n_p"].shape, dtype=bool)
        by_level: dict[str, list[str]] = {}
        for op, lvl in levels.items():
            by_level.setdefault(lvl, []).append(op)
        for lvl, ops in by_level.items():
            mem = self.core.memory(lvl)
            per_instance = np.zeros(shape["n_p"].shape)
            for op in ops:
                copies = min(mem.instances, max(1.0, self._peak_per_cycle(op)))
                per_instance = per_instance + shape[op] / copies
            ok &= per_instance <= mem.capacity_bytes
        return ok

    def _access_energy(
        self, traffic: Mapping[str, np.ndarray], levels: Mapping[str, str], parents: Mapping[str, str | None]
    ) -> np.ndarray:
        """Energy of moving this depth's traffic: parent reads/writes and level writes/reads."""
        total = np.zeros_like(traffic["I"])
        for op, lvl in levels.items():
            mem = self.core.memory(lvl)
            parent = parents.get(op)
            if parent is None:
                p_read, p_write = self.offchip.read_energy_pj_per_byte, self.offchip.write_energy_pj_per_byte
            else:
                pm = self.core.memory(parent)
                p_read, p_write = pm.read_energy_pj_per_byte, pm.write_energy_pj_per_byte
            if op == "O":
                up, down = traffic["O_up"], traffic["O_down"]
                total = (
                    total
                    + up * (mem.read_energy_pj_per_byte + p_write)
                    + down * (p_read + mem.write_energy_pj_per_byte)
                )
            else:
                total = total + traffic[op] * (p_read + mem.write_energy_pj_per_byte)
        return total

    def _search(self) -> tuple[list[TileChoice], list[dict[str, float]]]:
        grid = self._grid()
        depth_levels = self._depth_levels()
        chosen: list[TileChoice] = []
        traffic_per_depth: list[dict[str, float]] = []
        mask = np.ones(grid["B"].shape, dtype=bool)
        parents: dict[str, str | None] = {op: self.tops.get(op) for op in self.operands}
        all_fit = True
        for depth, levels in enumerate(depth_levels, start=1):
            shape = self._tile_shape(grid)
            fits = self._capacity_ok(shape, levels) & mask
            feasible = bool(fits.any())
            if not feasible:
                all_fit = False
                # fall back to the smallest tile still nested in the previous one
                sizes = np.sum([grid[d] for d in ("B", "OY", "OX", "K", "C", "G", "taps")], axis=0)
                candidates = np.flatnonzero(mask)
                smallest = candidates[np.argmin(sizes[candidates])]
                fits = np.zeros_like(mask)
                fits[smallest] = True
            best: tuple[float, float, int, int] | None = None
            best_traffic: dict[str, np.ndarray] = {}
            for o_idx, order in enumerate(ORDERS):
                traffic = self._traffic(shape, order)
                energy = self._access_energy(traffic, levels, parents)
                dram = sum(
                    (traffic[k] for k in traffic if parents.get(k[0]) is None and k[0] in levels),
                    np.zeros_like(energy),
                )
                key_primary = np.where(fits, dram, np.inf)
                key_energy = np.where(fits, energy, np.inf)
                idx = int(np.lexsort((key_energy, key_primary))[0])
                candidate = (float(key_primary[idx]), float(key_energy[idx]), o_idx, idx)
                if best is None or candidate[:2] < best[:2]:
                    best = candidate
                    best_traffic = traffic
            assert best is not None
            _, _, o_idx, idx = best
            tile = {d: int(grid[d][idx]) for d in ("B", "OY", "OX", "K", "C", "G", "taps")}
            chosen.append(
                TileChoice(depth, ORDERS[o_idx], MappingProxyType(tile), MappingProxyType(dict(levels)), feasible)
            )
            traffic_per_depth.append({k: float(v[idx]) for k, v in best_traffic.items()})
            mask = np.ones_like(mask)
            for d in tile:
                mask &= grid[d] <= tile[d]
            for op, lvl in levels.items():
                parents[op] = lvl
        self.all_fit = all_fit
        return chosen, traffic_per_depth

    # ------------------------------------------------------------- totals
    def run(self) -> LayerCost:
        layer, core = self.layer, self.core
        tiles, traffic = self._search()
        compute_cycles = math.prod(self._steps(d) for d in self.loops)
        reads: dict[tuple[str, str], float] = {}
        writes: dict[tuple[str, str], float] = {}
        dram_read = dict.fromkeys(self.operands, 0.0)
        dram_write = dict.fromkeys(self.operands, 0.0)

        def add(store: dict[tuple[str, str], float], lvl: str, op: str, value: float) -> None:
            store[(lvl, op)] = store.get((lvl, op), 0.0) + value

        parents: dict[str, str | None] = {op: self.tops.get(op) for op in self.operands}
        for choice, moved in zip(tiles, traffic, strict=True):
            for op, lvl in choice.levels.items():
                parent = parents[op]
                if op == "O":
                    up, down = moved["O_up"], moved["O_down"]
                    add(reads, lvl, op, up)
                    add(writes, lvl, op, down)
                    if parent is None:
                        dram_write[op] += up
                        dram_read[op] += down
                    else:
                        add(writes, parent, op, up)
                        add(reads, parent, op, down)
                else:
                    add(writes, lvl, op, moved[op])
                    if parent is None:
                        dram_read[op] += moved[op]
                    else:
                        add(reads, parent, op, moved[op])
                parents[op] = lvl
        # the innermost level of every operand feeds the array every cycle
        for op in self.operands:
            inner = core.hierarchy[op][0]
            per_cycle = self._mean_per_cycle(op) * compute_cycles
            if op == "O":
                acc_bytes = self.bytes_per["P"]
                first_writes = layer.output_elements
                add(writes, inner, op, per_cycle * acc_bytes)
                add(reads, inner, op, max(0.0, per_cycle - first_writes) * acc_bytes)
            else:
                add(reads, inner, op, per_cycle * self.bytes_per[op])
        breakdown: dict[str, float] = {"mac": layer.macs * core.mac_energy_pj}
        latency = float(compute_cycles)
        for mem in core.memories:
            r = sum(v for (lvl, _), v in reads.items() if lvl == mem.name)
            w = sum(v for (lvl, _), v in writes.items() if lvl == mem.name)
            breakdown[f"mem:{mem.name}"] = r * mem.read_energy_pj_per_byte + w * mem.write_energy_pj_per_byte
            latency = max(
                latency,
                r / (mem.read_bandwidth_bytes_per_cycle * mem.instances),
                w / (mem.write_bandwidth_bytes_per_cycle * mem.instances),
            )
        dram_r, dram_w = sum(dram_read.values()), sum(dram_write.values())
        breakdown["dram"] = (
            dram_r * self.offchip.read_energy_pj_per_byte + dram_w * self.offchip.write_energy_pj_per_byte
        )
        latency = max(latency, (dram_r + dram_w) / self.offchip.bandwidth_bytes_per_cycle)
        top = tiles[0]
        shape = self._tile_shape({k: np.array([v]) for k, v in top.tile.items()})
        footprint = {op: float(shape[op][0]) for op in self.operands}
        return LayerCost(
            macs=layer.macs,
            compute_cycles=compute_cycles,
            latency_cycles=latency,
            spatial_utilization=layer.macs / (compute_cycles * core.n_macs),
            energy_breakdown_pj=MappingProxyType(breakdown),
            dram_read_bytes=MappingProxyType(dram_read),
            dram_write_bytes=MappingProxyType(dram_write),
            level_read_bytes=MappingProxyType(reads),
            level_write_bytes=MappingProxyType(writes),
            footprint_bytes=MappingProxyType(footprint),
            tiles=tuple(tiles),
            fits=self.all_fit,
            spatial_mapping=MappingProxyType(dict(self.spatial)),
        )
