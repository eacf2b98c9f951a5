"""Cost of executing a workload as a sequence of fused subgraphs (Cocco, ASPLOS'24).

A *subgraph* is a set of layers executed together on one core: its intermediate
activations stay in the on-chip buffer, tile by tile, and only its weights, the
activations entering it and the outputs needed later cross the DRAM interface.

Consumption-centric tiling (Cocco section 4), along output rows or tokens
------------------------------------------------------------------------
Stage 1 fixes the output tile: every node of the subgraph whose output leaves it
(or is a network output) produces ``Δ = 1`` row per update. Stage 2 walks the
subgraph in reverse topological order: a producer ``u`` advances by

    Δ_u = lcm over its consumers c inside the subgraph of (Δ_c · s_c)

rows per update (``s_c`` the consumer's vertical stride; capped at the tensor
height), and a consumer that needs ``x`` new output rows reads

    f_c(x) = (x - 1) · s_c + (F_c - 1) · d_c + 1

rows of its input (``F_c`` its kernel height, ``d_c`` its dilation). A consumer
that reads its operand whole (the W operand of a matmul, or a reshaped input whose
height does not match the consumer's row geometry) needs the whole tensor. The
buffer of a tensor holds a MAIN region, the rows its consumers read in one step,
``max_c f_c(Δ_c)``, and a SIDE region, the ``Δ_u`` rows produced for the next
step: ``rows_u = min(H_u, max_c f_c(Δ_c) + Δ_u)``; a tensor with no consumer
inside the subgraph is double-buffered on its way out (``min(H_u, 2 Δ_u)``).
Stage 3 (the co-prime update counts) follows from the lcm: each producer's update
is a whole number of its consumers' updates. Tensors entering the subgraph from
DRAM get the same MAIN + SIDE buffer. The activation footprint is the sum over
the subgraph's own outputs and its external inputs, for one sample (samples run
one after the other through the subgraph).

Weights of a subgraph stay resident for the whole batch (they are read once). A
subgraph of one layer whose weights do not fit has two more ways to run
(:class:`Mode`): *stream* its weights in one-channel blocks while its whole input
(all samples) stays on chip, so nothing is read twice; or split its weights into
N blocks (N = 2, 4, ...) and stream its input by rows once per block, reading it
N times. Given the buffers, :meth:`SubgraphCost.mode_for` takes the cheapest mode
that fits (resident whenever it does), so a subgraph's cost is a function of the
capacities only through which mode fits.

Traffic, energy, latency
------------------------
External memory access (EMA) of a subgraph = its weights + every tensor entering
it from outside (once per subgraph, even with several consumers inside) + every
output needed outside it or by the network output; there is no recomputation.
Energy = DRAM reads and writes x their energy per byte + the on-chip energy of
every layer (MACs and every on-chip level, from :func:`layer_cost` on the core,
its DRAM part replaced by the subgraph's EMA). Latency: the first subgraph's
weights are loaded up front, then each subgraph takes ``max(compute cycles,
(its activation traffic + the next subgraph's weights) / DRAM bandwidth)``: the
next weights are prefetched while a subgraph runs.

The energy and the EMA of a partition are sums over its subgraphs (the property the
exact models rely on); the latency is not.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import reduce

from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.spec import Core, OffChip
from accelsched.models.layer import Layer, OpKind
from accelsched.models.workload import Workload

__all__ = ["Mode", "PartitionCostModel", "SubgraphCost", "Tensor"]


@dataclass(frozen=True)
class Tensor:
    """An activation tensor read by a subgraph, per sample.

    Attributes
    ----------
    producer
        Index of the producing layer, or -1 - i for the network input read by layer ``i``.
    height
        Rows (the tiled dimension).
    row_bytes
        Bytes of one row, all channels, one sample.
    total_bytes
        Bytes of the whole tensor for the whole batch.
    """

    producer: int
    height: int
    row_bytes: float
    total_bytes: int


@dataclass(frozen=True)
class Mode:
    """One way of holding a subgraph on chip.

    Attributes
    ----------
    name
        ``resident`` (all weights on chip for the batch), ``stream`` (one layer streams
        its weights in output-channel blocks, its whole input on chip) or ``blocks:N``
        (one layer in N weight blocks, its input re-read from DRAM for every block).
    act_bytes, weight_bytes
        Activation and weight footprints (one buffer holds both when it is shared).
    extra_read_bytes
        DRAM reads beyond the subgraph's base traffic (the input re-reads of ``blocks:N``).
    """

    name: str
    act_bytes: int
    weight_bytes: int
    extra_read_bytes: int = 0

    def fits(self, shared: bool, act_capacity_bytes: int, weight_capacity_bytes: int) -> bool:
        """Whether this footprint fits the buffer(s)."""
        if shared:
            return self.act_bytes + self.weight_bytes <= act_capacity_bytes
        return self.act_bytes <= act_capacity_bytes and self.weight_bytes <= weight_capacity_bytes


@dataclass(frozen=True)
class SubgraphCost:
    """Cost of one subgraph, executed once for the whole batch.

    The traffic and energy depend on the :class:`Mode` only through
    ``extra_read_bytes``; :meth:`mode_for` picks the cheapest mode that fits given
    buffers (the resident mode whenever it fits).

    Attributes
    ----------
    members
        Layer indices (topological positions in the workload), increasing.
    weight_dram_bytes
        Weights read from DRAM (once: reused across the batch).
    input_dram_bytes
        Activations read from DRAM: every tensor entering the subgraph, once.
    output_dram_bytes
        Activations written to DRAM: outputs needed outside the subgraph or by the network.
    modes
        The ways to hold the subgraph on chip, by increasing extra traffic, resident first.
    onchip_energy_pj
        Energy of MACs and on-chip levels, per component (``mac``, ``mem:<level>``).
    compute_cycles
        Cycles of the MAC array for all of the subgraph's layers.
    macs
        Multiply-accumulates.
    dram_read_pj_per_byte, dram_write_pj_per_byte
        DRAM energies.
    """

    members: tuple[int, ...]
    weight_dram_bytes: int
    input_dram_bytes: int
    output_dram_bytes: int
    modes: tuple[Mode, ...]
    onchip_energy_pj: tuple[tuple[str, float], ...]
    compute_cycles: int
    macs: int
    dram_read_pj_per_byte: float
    dram_write_pj_per_byte: float

    @property
    def resident(self) -> Mode:
        """The mode with every weight resident."""
        return self.modes[0]

    def mode_for(self, shared: bool, act_capacity_bytes: int, weight_capacity_bytes: int = 0) -> Mode | None:
        """The cheapest mode that fits the buffer(s), or None when none does.

        Parameters
        ----------
        shared
            One buffer for activations and weights (``act_capacity_bytes`` is its size).
        act_capacity_bytes
            The shared buffer, or the activation buffer.
        weight_capacity_bytes
            The weight buffer (separate design only).
        """
        for mode in self.modes:
            if mode.fits(shared, act_capacity_bytes, weight_capacity_bytes):
                return mode
        return None

    def fits(self, shared: bool, act_capacity_bytes: int, weight_capacity_bytes: int = 0) -> bool:
        """Whether some mode fits the buffer(s)."""
        return self.mode_for(shared, act_capacity_bytes, weight_capacity_bytes) is not None

    def ema_bytes(self, mode: Mode | None = None) -> int:
        """External memory access in ``mode`` (default resident): every byte read or written."""
        extra = (mode or self.resident).extra_read_bytes
        return self.weight_dram_bytes + self.input_dram_bytes + self.output_dram_bytes + extra

    def activation_dram_bytes(self, mode: Mode | None = None) -> int:
        """DRAM traffic of activations only (what cannot be prefetched with the weights)."""
        return self.input_dram_bytes + self.output_dram_bytes + (mode or self.resident).extra_read_bytes

    def dram_energy_pj(self, mode: Mode | None = None) -> float:
        """Energy of the DRAM traffic in ``mode``."""
        reads = self.weight_dram_bytes + self.input_dram_bytes + (mode or self.resident).extra_read_bytes
        return reads * self.dram_read_pj_per_byte + self.output_dram_bytes * self.dram_write_pj_per_byte

    def energy_pj(self, mode: Mode | None = None) -> float:
        """Total energy in ``mode``: on-chip components plus DRAM."""
        return self.dram_energy_pj(mode) + sum(value for _, value in self.onchip_energy_pj)


def _lcm(values: Iterable[int]) -> int:
    return reduce(math.lcm, values, 1)


class PartitionCostModel:
    """Subgraph costs of one workload on one core, cached per subgraph.

    Parameters
    ----------
    workload
        The workload (its batch is the batch executed).
    core
        The core; its spatial unrolling and levels give the on-chip energy and cycles.
    offchip
        DRAM bandwidth and energy.
    """

    def __init__(self, workload: Workload, core: Core, offchip: OffChip) -> None:
        self.workload = workload
        self.core = core
        self.offchip = offchip
        self.layers: tuple[Layer, ...] = tuple(workload)
        self.index = {layer.name: i for i, layer in enumerate(self.layers)}
        n = len(self.layers)
        self.preds: tuple[tuple[int, ...], ...] = tuple(
            tuple(self.index[p] for p in layer.inputs) for layer in self.layers
        )
        succs: list[list[int]] = [[] for _ in range(n)]
        for i, ps in enumerate(self.preds):
            for p in ps:
                if i not in succs[p]:
                    succs[p].append(i)
        self.succs: tuple[tuple[int, ...], ...] = tuple(tuple(s) for s in succs)
        self.batch = workload.batch
        self._onchip = [self._layer_onchip(layer) for layer in self.layers]
        self._cache: dict[frozenset[int], SubgraphCost] = {}
        self.evaluations = 0
        """Subgraph costs computed (cache misses), for benchmarks."""

    # ------------------------------------------------------------- per layer
    def _layer_onchip(self, layer: Layer) -> tuple[dict[str, float], int]:
        cost = layer_cost(layer, self.core, self.offchip)
        energy = {k: v for k, v in cost.energy_breakdown_pj.items() if k != "dram"}
        return energy, cost.compute_cycles

    @staticmethod
    def _axis(layer: Layer) -> str:
        """The tiled axis of a layer's output: rows (``y``), or columns (``x``) when it has one
        row (token sequences of FC and matmul layers sit in ``OX``)."""
        return "y" if layer.OY > 1 else "x"

    def output_tensor(self, i: int) -> Tensor:
        """The output of layer ``i`` as a tensor, tiled along its axis."""
        layer = self.layers[i]
        height = layer.OY if self._axis(layer) == "y" else layer.OX
        row = layer.G * layer.K * layer.OY * layer.OX * layer.output_bits / 8 / height
        return Tensor(i, height, row, layer.output_bytes)

    def network_input(self, i: int) -> Tensor:
        """The network input read by source layer ``i``, tiled along the layer's axis."""
        layer = self.layers[i]
        height = layer.IY if self._axis(layer) == "y" else layer.IX
        row = layer.in_channels * layer.IY * layer.IX * layer.input_bits / 8 * layer.n_operands / height
        return Tensor(-1 - i, height, row, layer.input_bytes)

    def _geometry(self, consumer: int) -> tuple[int, int, int, int]:
        """(input extent, stride, kernel, dilation) of a consumer along its tiled axis."""
        c = self.layers[consumer]
        if self._axis(c) == "y":
            return c.IY, c.stride_y, c.FY, c.dilation_y
        return c.IX, c.stride_x, c.FX, c.dilation_x

    def _rows_needed(self, consumer: int, tensor: Tensor, x: int) -> int:
        """Rows of ``tensor`` that ``consumer`` reads to produce ``x`` of its output rows."""
        if self._reads_whole(consumer, tensor):
            return tensor.height
        _, stride, kernel, dilation = self._geometry(consumer)
        return min(tensor.height, (x - 1) * stride + (kernel - 1) * dilation + 1)

    def _step(self, consumer: int, tensor: Tensor, delta: int) -> int:
        """Rows of ``tensor`` consumed per update of ``consumer`` (Δ_c · s_c, or all)."""
        if self._reads_whole(consumer, tensor):
            return tensor.height
        return delta * self._geometry(consumer)[1]

    def _reads_whole(self, consumer: int, tensor: Tensor) -> bool:
        """Whether ``consumer`` needs all of ``tensor`` before its first output row: the W
        operand of a matmul, or an input tiled along another axis or reshaped."""
        c = self.layers[consumer]
        if tensor.producer >= 0:
            if c.kind is OpKind.MATMUL and self.preds[consumer].index(tensor.producer) == 1:
                return True
            if self._axis(self.layers[tensor.producer]) != self._axis(c):
                return True
        extent, stride, _, _ = self._geometry(consumer)
        return not extent <= tensor.height < extent + stride

    def _tensor_rows(self, tensor: Tensor, consumers: Sequence[int], delta: dict[int, int]) -> tuple[int, int]:
        """(Δ, buffered rows) of a tensor read by ``consumers`` inside the subgraph."""
        if not consumers:
            return 1, min(tensor.height, 2)
        advance = min(tensor.height, _lcm(self._step(c, tensor, delta[c]) for c in consumers))
        main = max(self._rows_needed(c, tensor, delta[c]) for c in consumers)
        return advance, min(tensor.height, main + advance)

    # ------------------------------------------------------------- subgraph
    def subgraph(self, members: Iterable[int]) -> SubgraphCost:
        """Cost of the subgraph made of the layers at ``members`` (cached)."""
        key = frozenset(members)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._compute(key)
            self._cache[key] = cached
        return cached

    def _compute(self, members: frozenset[int]) -> SubgraphCost:
        self.evaluations += 1
        order = sorted(members)
        delta: dict[int, int] = {}
        act_bytes = 0.0
        for u in reversed(order):  # stage 2: consumers before producers
            inside = [c for c in self.succs[u] if c in members]
            tensor = self.output_tensor(u)
            delta[u], rows = self._tensor_rows(tensor, inside, delta)
            act_bytes += rows * tensor.row_bytes
        external: dict[int, list[int]] = {}
        for v in order:
            if not self.preds[v]:
                external.setdefault(-1 - v, []).append(v)
            for p in self.preds[v]:
                if p not in members and v not in external.setdefault(p, []):
                    external[p].append(v)
        input_dram = 0
        whole_inputs = 0
        for producer, consumers in external.items():
            tensor = self.output_tensor(producer) if producer >= 0 else self.network_input(-1 - producer)
            _, rows = self._tensor_rows(tensor, consumers, delta)
            act_bytes += rows * tensor.row_bytes
            input_dram += tensor.total_bytes
            whole_inputs += math.ceil(tensor.height * tensor.row_bytes) * self.batch
        output_dram = sum(
            self.layers[u].output_bytes
            for u in order
            if not self.succs[u] or any(c not in members for c in self.succs[u])
        )
        weights = sum(self.layers[u].weight_bytes for u in order)
        modes = [Mode("resident", math.ceil(act_bytes), weights)]
        if len(order) == 1 and weights:
            modes += self._streaming_modes(order[0], whole_inputs, input_dram, math.ceil(act_bytes))
        energy: dict[str, float] = {}
        cycles = 0
        for u in order:
            layer_energy, layer_cycles = self._onchip[u]
            cycles += layer_cycles
            for key, value in layer_energy.items():
                energy[key] = energy.get(key, 0.0) + value
        return SubgraphCost(
            members=tuple(order),
            weight_dram_bytes=weights,
            input_dram_bytes=input_dram,
            output_dram_bytes=output_dram,
            modes=tuple(modes),
            onchip_energy_pj=tuple(sorted(energy.items())),
            compute_cycles=cycles,
            macs=sum(self.layers[u].macs for u in order),
            dram_read_pj_per_byte=self.offchip.read_energy_pj_per_byte,
            dram_write_pj_per_byte=self.offchip.write_energy_pj_per_byte,
        )

    def _streaming_modes(self, u: int, whole_input_bytes: int, input_dram_bytes: int, window_bytes: int) -> list[Mode]:
        """Modes of a single layer whose weights need not all be on chip.

        ``stream``: output-channel blocks of one channel, double-buffered, the whole input
        (all samples) kept on chip so it is read once. ``blocks:N`` (N = 2, 4, ... up to
        the output channels): N weight blocks, double-buffered, the input streamed by
        rows once per block (N - 1 extra reads of it). A mode is kept only when no cheaper
        mode needs as little of both buffers.
        """
        layer = self.layers[u]
        weights = layer.weight_bytes
        channels = layer.G * layer.K
        out = self.output_tensor(u)
        out_rows = math.ceil(min(out.height, 2) * out.row_bytes)
        candidates = [Mode("stream", whole_input_bytes + out_rows, 2 * math.ceil(weights / channels))]
        n = 2
        while n <= channels:
            candidates.append(Mode(f"blocks:{n}", window_bytes, 2 * math.ceil(weights / n), (n - 1) * input_dram_bytes))
            n *= 2
        kept: list[Mode] = []
        cheaper = [Mode("resident", window_bytes, weights)]
        for mode in candidates:  # by increasing extra traffic
            if not any(m.act_bytes <= mode.act_bytes and m.weight_bytes <= mode.weight_bytes for m in cheaper):
                kept.append(mode)
            cheaper.append(mode)
        return kept

    # ------------------------------------------------------------- partition
    def evaluate(
        self,
        subgraphs: Sequence[Iterable[int]],
        shared: bool,
        act_capacity_bytes: int,
        weight_capacity_bytes: int = 0,
    ) -> CostReport:
        """Cost report of executing ``subgraphs`` in the given order.

        Parameters
        ----------
        subgraphs
            Layer indices of every subgraph, in execution order (validity is the
            problem's ``check``; this only adds costs up).
        shared, act_capacity_bytes, weight_capacity_bytes
            The buffer design and sizes; they decide the mode of every subgraph
            (:meth:`SubgraphCost.mode_for`; a subgraph that fits no mode, which
            ``check`` rejects, is costed in its last mode).
        """
        costs = [self.subgraph(s) for s in subgraphs]
        modes = [c.mode_for(shared, act_capacity_bytes, weight_capacity_bytes) or c.modes[-1] for c in costs]
        bandwidth = self.offchip.bandwidth_bytes_per_cycle
        breakdown: dict[str, float] = {"dram": 0.0}
        latency = costs[0].weight_dram_bytes / bandwidth if costs else 0.0
        for i, (cost, mode) in enumerate(zip(costs, modes, strict=True)):
            breakdown["dram"] += cost.dram_energy_pj(mode)
            for key, value in cost.onchip_energy_pj:
                breakdown[key] = breakdown.get(key, 0.0) + value
            next_weights = costs[i + 1].weight_dram_bytes if i + 1 < len(costs) else 0
            latency += max(cost.compute_cycles, (cost.activation_dram_bytes(mode) + next_weights) / bandwidth)
        macs = sum(c.macs for c in costs)
        peak = max((m.act_bytes + m.weight_bytes for m in modes), default=0)
        latency = max(latency, 1.0)
        return CostReport(
            energy_pj=sum(breakdown.values()),
            latency_cycles=latency,
            dram_bytes=float(sum(c.ema_bytes(m) for c, m in zip(costs, modes, strict=True))),
            noc_byte_hops=0.0,
            peak_memory_bytes=float(peak),
            utilization=min(1.0, macs / (latency * self.core.n_macs)) if macs else 0.0,
            macs=macs,
            energy_breakdown_pj=breakdown,
        )
