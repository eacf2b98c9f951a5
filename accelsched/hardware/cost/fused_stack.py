"""Cost of one fused stack of layers run tile by tile on one core (DeFiNES' primitive).

Per stack, tile size and caching of the overlap along each axis, :mod:`depth_first_tiles`
gives the tile types (pairs of axis classes, each with a count) and, per tile
type, every layer's computed region, the input each layer reads (new and from
the overlap cache) and what each tensor keeps cached. This module prices them.

Memory levels
-------------
Only levels with one instance (shared buffers, not per-PE register files) can
hold a whole tile's operand. For each tile type and layer, in the paper's
priority order, every operand gets its *top level*, the lowest level of its
hierarchy with room left for it, DRAM when none has:

1. the stack's weights, when they all fit one weight level (their *home*, loaded
   from DRAM once per stack, by the first tile), and the vertical overlap caches
   (the kept rows of every tensor over its full width, in the lowest activation
   level that holds them all) are reserved for the whole stack;
2. tensors produced earlier in the tile and still waiting for a later consumer
   stay where they were written;
3. the layer's input (every operand it reads), then its output, then its weights.
   Weights with a home never go above it: their top is the lowest level below
   the home with room for them, else the home itself, whose reservation already
   counts them (they are not added a second time). Without a home, the lowest
   level with room, DRAM when none has.

Data copies
-----------
Moving data between two places costs the bytes times the source's read energy
plus the destination's write energy, and the bytes over the slower of the two
ports in cycles. Per layer and tile: the new part of each input comes from where
its producer wrote it (DRAM for the stack's input), the rows cached from the
previous row of tiles from the vertical cache, each only when that is not the
layer's input top; the columns cached from the tile to the left stay in place
(they are part of the layer's input region, already in its top level); the rows
a tensor keeps for the next row of tiles are written to the vertical cache; the
output of the stack's
last layer goes to DRAM; weights come from their home (or from DRAM when they
have none) whenever their top is below it. The layer itself is priced by the
shared primitive (:func:`accelsched.hardware.cost.layer_cost.layer_cost`) with its
hierarchy cut at the chosen tops.

Totals
------
Energy and latency add up over the tiles of a stack (a tile type's cost times its
count), the layers of a tile (run one after the other) and the stacks; each
layer-tile's latency is the primitive's roofline plus its copies (no overlap of
copies with compute). Energy is broken down by memory level (``mem:<level>``,
``dram``, ``mac``) and, separately, by data type (``W``, ``I``, ``O``; the
overlap caches count as ``I``).

Simplifications: a layer-tile's input is the interior band of
:func:`accelsched.hardware.cost.layer_by_layer.part_of` (border tiles count the
padding as halo); the primitive's on-chip tiling under the top levels is its own
choice, independent of the neighbouring layer-tiles.
"""


from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from accelsched.hardware.cost.depth_first_tiles import AxisClass, AxisSchedule, schedule_axis
from accelsched.hardware.cost.layer_by_layer import part_of
from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.hardware.spec import Core, OffChip
from accelsched.models.layer import Layer
from accelsched.models.workload import Workload

__all__ = ["DRAM", "NETWORK_INPUT", "StackCost", "StackTile", "price_stack"]

DRAM = "dram"
"""Name of off-chip memory where a level name is expected."""

NETWORK_INPUT = "<input>"
"""Name of the network input among a stack's outside tensors."""


@dataclass(frozen=True)
class StackCost:
    """Cost of one stack under one strategy.

    Attributes
    ----------
    energy_pj, latency_cycles, dram_bytes
        Totals over all tiles, copies included.
    energy_by_component_pj
        ``mac``, ``dram`` and ``mem:<level>``.
    energy_by_operand_pj
        ``W``, ``I``, ``O`` (MAC energy is in neither).
    peak_memory_bytes
        Largest on-chip reservation of any layer-tile.
    macs
        MACs computed, recomputation included.
    n_tiles, n_tile_types
        Tiles of the stack and distinct tile types priced.
    v_cache_bytes, cache_level
        Size of the vertical overlap caches and the level holding them.
    weight_home
        Level holding the whole stack's weights (``dram`` when they do not fit).
    tops
        Per tile type (index) and layer, the top level of ``I``, ``O`` and ``W``.
    """

    energy_pj: float
    latency_cycles: float
    dram_bytes: float
    energy_by_component_pj: Mapping[str, float]
    energy_by_operand_pj: Mapping[str, float]
    peak_memory_bytes: float
    macs: int
    n_tiles: int
    n_tile_types: int
    v_cache_bytes: float
    cache_level: str
    weight_home: str
    tops: tuple[Mapping[str, Mapping[str, str]], ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class StackTile:
    """How a stack is tiled: the tile of its last output (``tile_x`` columns by ``tile_y`` rows) and whether the
    overlap with the previous tile is cached along each axis (``caches_x``: to the left; ``caches_y``: above)."""

    tile_x: int
    tile_y: int
    caches_x: bool
    caches_y: bool


class _Ledger:
    """Energy by component and by operand, latency and DRAM bytes of one tile type."""

    def __init__(self) -> None:
        self.component: dict[str, float] = {}
        self.operand: dict[str, float] = {}
        self.latency = 0.0
        self.dram_bytes = 0.0

    def add(self, component: str, operand: str, energy: float) -> None:
        self.component[component] = self.component.get(component, 0.0) + energy
        self.operand[operand] = self.operand.get(operand, 0.0) + energy


class _Places:
    """Energy per byte and bandwidth of on-chip levels and DRAM."""

    def __init__(self, core: Core, offchip: OffChip) -> None:
        self.core = core
        self.offchip = offchip

    def read(self, level: str) -> tuple[float, float]:
        if level == DRAM:
            return self.offchip.read_energy_pj_per_byte, self.offchip.bandwidth_bytes_per_cycle
        mem = self.core.memory(level)
        return mem.read_energy_pj_per_byte, mem.read_bandwidth_bytes_per_cycle * mem.instances

    def write(self, level: str) -> tuple[float, float]:
        if level == DRAM:
            return self.offchip.write_energy_pj_per_byte, self.offchip.bandwidth_bytes_per_cycle
        mem = self.core.memory(level)
        return mem.write_energy_pj_per_byte, mem.write_bandwidth_bytes_per_cycle * mem.instances

    def copy(self, ledger: _Ledger, operand: str, nbytes: float, src: str, dst: str) -> None:
        """Move ``nbytes`` of ``operand`` from ``src`` to ``dst`` (nothing when they are the same)."""
        if nbytes <= 0 or src == dst:
            return
        e_read, bw_read = self.read(src)
        e_write, bw_write = self.write(dst)
        ledger.add(_component(src), operand, nbytes * e_read)
        ledger.add(_component(dst), operand, nbytes * e_write)
        ledger.latency += nbytes / min(bw_read, bw_write)
        ledger.dram_bytes += nbytes * ((src == DRAM) + (dst == DRAM))


def _component(level: str) -> str:
    return "dram" if level == DRAM else f"mem:{level}"


class _StackModel:
    """Prices one stack with one tiling (see the module docstring)."""

    def __init__(
        self,
        workload: Workload,
        core: Core,
        offchip: OffChip,
        layers: Sequence[str],
        tile: StackTile,
        cache: dict[Any, Any],
    ):
        self.cache = cache
        self.core = core
        self.offchip = offchip
        self.places = _Places(core, offchip)
        self.layers = [workload[n] for n in layers]
        names = set(layers)
        outside: list[str] = []
        for layer in self.layers:
            for producer in layer.inputs or (NETWORK_INPUT,):
                if producer not in names and producer not in outside:
                    outside.append(producer)
        self.outside = outside
        self.pixel_bytes = self._pixel_bytes(workload)
        self.consumers = {n: [c.name for c in self.layers if n in (c.inputs or (NETWORK_INPUT,))] for n in names}
        self.x = self._axis(tuple(layers), "x", tile.tile_x, tile.caches_x)
        self.y = self._axis(tuple(layers), "y", tile.tile_y, tile.caches_y)

    def _axis(self, key: tuple[str, ...], axis: str, tile: int, cached: bool) -> AxisSchedule:
        """The axis schedule, shared by every strategy with the same tile and caching along the axis."""
        full_key = ("axis", key, axis, tile, cached)
        schedule = self.cache.get(full_key)
        if schedule is None:
            schedule = self.cache[full_key] = schedule_axis(self.layers, self.outside, axis, tile, cached)
        return schedule

    # ---------------------------------------------------------------- sizes
    def _pixel_bytes(self, workload: Workload) -> dict[str, float]:
        """Bytes per pixel (all channels and samples) of every tensor of the stack."""
        out: dict[str, float] = {}
        for layer in self.layers:
            out[layer.name] = layer.B * layer.out_channels * layer.output_bits / 8
            for producer in layer.inputs:
                if producer not in out and producer in self.outside:
                    p = workload[producer]
                    out[producer] = p.B * p.out_channels * p.output_bits / 8
            if not layer.inputs:
                out[NETWORK_INPUT] = layer.B * layer.in_channels * layer.input_bits / 8
        return out

    def v_cache_bytes(self) -> float:
        """Bytes the vertical overlap caches hold: the kept rows over the full width of every tensor."""
        return sum(self.y.max_kept[n] * self._extent_x(n) * per_pixel for n, per_pixel in self.pixel_bytes.items())

    def _extent_x(self, name: str) -> int:
        """Full width of a tensor: a layer's output, or what the stack's first reader of an input reads."""
        for layer in self.layers:
            if layer.name == name:
                return layer.OX
        return max(c.IX for c in self.layers if name in (c.inputs or (NETWORK_INPUT,)))

    # --------------------------------------------------------------- levels
    def _shared_levels(self, operand: str) -> list[str]:
        """Levels of ``operand`` that can hold a whole tile (one instance), innermost first."""
        return [n for n in self.core.hierarchy[operand] if self.core.memory(n).instances == 1]

    def _lowest_fit(
        self, operand: str, nbytes: float, used: Mapping[str, float], levels: Sequence[str] | None = None
    ) -> str:
        """The lowest of ``levels`` (default: every shared level of ``operand``) with room for ``nbytes``."""
        for level in self._shared_levels(operand) if levels is None else levels:
            if used.get(level, 0.0) + nbytes <= self.core.memory(level).capacity_bytes:
                return level
        return DRAM

    def _stack_reservations(self) -> tuple[str, str, dict[str, float]]:
        """Home of the stack's weights, level of the overlap caches, and what they reserve."""
        used: dict[str, float] = {}
        weights = sum(layer.weight_bytes for layer in self.layers)
        home = DRAM
        if weights > 0:
            home = self._lowest_fit("W", weights, used)
            if home != DRAM:
                used[home] = used.get(home, 0.0) + weights
        cache = DRAM
        cache_bytes = self.v_cache_bytes()
        if cache_bytes > 0:
            cache = self._lowest_fit("I", cache_bytes, used)
            if cache != DRAM:
                used[cache] = used.get(cache, 0.0) + cache_bytes
        return home, cache, used

    # ----------------------------------------------------------------- cost
    def run(self) -> StackCost:
        home, cache, reserved = self._stack_reservations()
        total = _Ledger()
        macs = 0
        peak = 0.0
        tops_per_type: list[Mapping[str, Mapping[str, str]]] = []
        for cx in self.x.classes:
            for cy in self.y.classes:
                count = cx.count * cy.count
                ledger, type_macs, type_peak, tops = self._tile_type(cx, cy, home, cache, reserved)
                for key, value in ledger.component.items():
                    total.component[key] = total.component.get(key, 0.0) + count * value
                for key, value in ledger.operand.items():
                    total.operand[key] = total.operand.get(key, 0.0) + count * value
                total.latency += count * ledger.latency
                total.dram_bytes += count * ledger.dram_bytes
                macs += count * type_macs
                peak = max(peak, type_peak)
                tops_per_type.append(tops)
        if home != DRAM:
            weights = sum(layer.weight_bytes for layer in self.layers)
            self.places.copy(total, "W", weights, DRAM, home)
        return StackCost(
            energy_pj=sum(total.component.values()),
            latency_cycles=total.latency,
            dram_bytes=total.dram_bytes,
            energy_by_component_pj=MappingProxyType(total.component),
            energy_by_operand_pj=MappingProxyType(total.operand),
            peak_memory_bytes=peak,
            macs=macs,
            n_tiles=self.x.n_tiles * self.y.n_tiles,
            n_tile_types=len(self.x.classes) * len(self.y.classes),
            v_cache_bytes=self.v_cache_bytes(),
            cache_level=cache,
            weight_home=home,
            tops=tuple(tops_per_type),
        )

    def _tile_type(
        self, cx: AxisClass, cy: AxisClass, home: str, cache: str, reserved: Mapping[str, float]
    ) -> tuple[_Ledger, int, float, dict[str, dict[str, str]]]:
        """Cost of one tile of a type: every layer in order, with its copies."""
        ledger = _Ledger()
        written: dict[str, str] = {p: DRAM for p in self.outside}
        kept: set[str] = set()
        live: dict[str, float] = {}  # tensor -> bytes held on chip for later consumers
        remaining = {n: len(c) for n, c in self.consumers.items()}
        macs = 0
        peak = 0.0
        tops: dict[str, dict[str, str]] = {}
        last = self.layers[-1].name
        for layer in self.layers:
            for producer in layer.inputs:
                if producer in remaining:
                    remaining[producer] -= 1
                    if remaining[producer] == 0:
                        live.pop(producer, None)
            sx, sy = cx.tensors[layer.name], cy.tensors[layer.name]
            if sx.computed == 0 or sy.computed == 0:
                continue
            part = self._part(layer, sx.computed, sy.computed)
            used = dict(reserved)
            for tensor, nbytes in live.items():
                if tensor not in layer.inputs and written[tensor] != DRAM:
                    used[written[tensor]] = used.get(written[tensor], 0.0) + nbytes
            top_i = self._lowest_fit("I", part.input_bytes, used)
            used[top_i] = used.get(top_i, 0.0) + part.input_bytes
            top_o = self._lowest_fit("O", part.output_bytes, used)
            used[top_o] = used.get(top_o, 0.0) + part.output_bytes
            top_w = self._weight_top(layer, part, home, used)
            peak = max(peak, sum(v for k, v in used.items() if k != DRAM))
            tops[layer.name] = {"I": top_i, "O": top_o, "W": top_w}
            self._inputs(ledger, layer, cx, cy, top_i, cache, written, kept)
            if layer.kind.has_w_operand:
                self.places.copy(ledger, "W", part.w_operand_bytes, home, top_w)
            self._primitive(ledger, part, {"I": top_i, "O": top_o, "W": top_w})
            macs += part.macs
            out_bytes = sx.computed * sy.computed * self.pixel_bytes[layer.name]
            written[layer.name] = top_o
            self._keep(ledger, layer.name, cx, cy, top_o, cache)
            if layer.name == last:
                self.places.copy(ledger, "O", out_bytes, top_o, DRAM)
            else:
                live[layer.name] = out_bytes
        return ledger, macs, peak, tops

    def _weight_top(self, layer: Layer, part: Layer, home: str, used: dict[str, float]) -> str:
        """Top level of a layer-tile's weights; adds them to ``used`` where they are not already reserved.

        When the stack's weights have a home, the layer's own ``weight_bytes`` are
        already part of the home's reservation: the lowest level below the home
        with room for them besides everything else is chosen (and charged), else
        the home itself (not charged again). Weights never go above their home
        (``dram`` only for a stack without a home).
        """
        if not layer.kind.has_w_operand:
            return DRAM
        nbytes = part.w_operand_bytes
        if home == DRAM:
            top = self._lowest_fit("W", nbytes, used)
        else:
            levels = self._shared_levels("W")
            top = self._lowest_fit("W", nbytes, used, levels[: levels.index(home)])
            if top == DRAM:
                return home
        used[top] = used.get(top, 0.0) + nbytes
        return top

    def _inputs(
        self,
        ledger: _Ledger,
        layer: Layer,
        cx: AxisClass,
        cy: AxisClass,
        top_i: str,
        cache: str,
        written: Mapping[str, str],
        kept: set[str],
    ) -> None:
        """Copies of a layer's inputs: the new part from its producer, cached rows from the vertical cache."""
        for producer in layer.inputs or (NETWORK_INPUT,):
            read_x, new_x = cx.reads[(producer, layer.name)]
            read_y, new_y = cy.reads[(producer, layer.name)]
            per_pixel = self.pixel_bytes[producer]
            new = new_x * new_y * per_pixel
            # rows from the previous row of tiles come from the vertical cache; the columns the tile to
            # the left read stay where they are (they are part of this tile's input region)
            from_v_cache = (read_y - new_y) * read_x * per_pixel
            self.places.copy(ledger, "I", new, written.get(producer, cache), top_i)
            if producer in self.outside and producer not in kept:
                # the stack's input is fetched tile by tile and its overlap cached like a computed tensor's
                kept.add(producer)
                self._keep(ledger, producer, cx, cy, top_i, cache)
            self.places.copy(ledger, "I", from_v_cache, cache, top_i)

    def _keep(self, ledger: _Ledger, tensor: str, cx: AxisClass, cy: AxisClass, src: str, cache: str) -> None:
        """Write the rows ``tensor`` keeps for the next row of tiles into the vertical cache."""
        sx, sy = cx.tensors[tensor], cy.tensors[tensor]
        self.places.copy(ledger, "I", sy.kept * sx.computed * self.pixel_bytes[tensor], src, cache)

    def _part(self, layer: Layer, cols: int, rows: int) -> Layer:
        key = ("part", layer.name, cols, rows)
        part = self.cache.get(key)
        if part is None:
            part = self.cache[key] = _part(layer, cols, rows)
        return part

    def _primitive(self, ledger: _Ledger, part: Layer, tops: Mapping[str, str]) -> None:
        """The layer-tile itself, on the hierarchy cut at its tops."""
        key = ("tile", part.name, part.OX, part.OY, tops["I"], tops["O"], tops["W"])
        cost = self.cache.get(key)
        if cost is None:
            cost = self.cache[key] = layer_cost(part, self.core, self.offchip, tops)
        ledger.latency += cost.latency_cycles
        ledger.add("mac", "mac", cost.energy_breakdown_pj["mac"])
        for (level, operand), nbytes in cost.level_read_bytes.items():
            ledger.add(f"mem:{level}", operand, nbytes * self.core.memory(level).read_energy_pj_per_byte)
        for (level, operand), nbytes in cost.level_write_bytes.items():
            ledger.add(f"mem:{level}", operand, nbytes * self.core.memory(level).write_energy_pj_per_byte)
        for operand, nbytes in cost.dram_read_bytes.items():
            ledger.add("dram", operand, nbytes * self.offchip.read_energy_pj_per_byte)
        for operand, nbytes in cost.dram_write_bytes.items():
            ledger.add("dram", operand, nbytes * self.offchip.write_energy_pj_per_byte)
        ledger.dram_bytes += cost.dram_bytes


def _part(layer: Layer, cols: int, rows: int) -> Layer:
    sizes = {}
    if cols < layer.OX:
        sizes["OX"] = cols
    if rows < layer.OY:
        sizes["OY"] = rows
    return part_of(layer, **sizes) if sizes else layer


def price_stack(
    workload: Workload, core: Core, offchip: OffChip, layers: Sequence[str], tile: StackTile, cache: dict[Any, Any]
) -> StackCost:
    """Cost of running ``layers`` (consecutive, whole branches of ``workload``) as one stack tiled by ``tile``.

    ``cache`` memoizes axis schedules, layer parts and layer-tile costs across calls on the same workload and
    core. The tile must fit the stack's last output.
    """
    return _StackModel(workload, core, offchip, tuple(layers), tile, cache).run()
