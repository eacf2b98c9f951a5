"""An immutable, validated DAG of layers."""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import networkx as nx

from accelsched.models.layer import Layer, OpKind

__all__ = ["Workload"]


@dataclass(frozen=True)
class Workload:
    """A DNN as a directed acyclic graph of :class:`Layer` objects.

    The edges are the ``inputs`` of each layer. At construction the layers are
    put in a deterministic topological order (the given order when it already is
    one), and every cross-reference and tensor shape is checked once for the
    whole graph:

    * every producer name exists and the graph has no cycle;
    * batch sizes agree along every edge;
    * convolution / pooling / fc: the producers' output channels add up to the
      consumer's input channels (concatenation), and every producer's spatial
      extent covers exactly the input window the consumer reads (at most
      ``stride - 1`` unused trailing rows/columns, as with floor-mode outputs);
    * element-wise: every operand has the consumer's channels and extent, or is a
      ``channels x 1 x 1`` vector broadcast over the map (squeeze-and-excitation);
    * matmul: the producers hold exactly as many elements as the I and W operands.

    Parameters
    ----------
    name
        Name of the network.
    layers
        The layers; names must be unique.
    """

    name: str
    layers: tuple[Layer, ...]
    _index: dict[str, int] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"workload name must be a non-empty string, got {self.name!r}")
        layers = tuple(self.layers)
        if not layers:
            raise ValueError(f"workload {self.name!r}: field layers is empty; a workload needs at least one layer")
        for layer in layers:
            if not isinstance(layer, Layer):
                raise ValueError(f"workload {self.name!r}: field layers holds a {type(layer).__name__}, not a Layer")
        names = [layer.name for layer in layers]
        seen: set[str] = set()
        for n in names:
            if n in seen:
                raise ValueError(f"workload {self.name!r}: layer name {n!r} is used twice")
            seen.add(n)
        for layer in layers:
            missing = [p for p in layer.inputs if p not in seen]
            if missing:
                raise ValueError(
                    f"workload {self.name!r}: layer {layer.name!r} reads unknown layer(s) "
                    f"{', '.join(map(repr, missing))}"
                )
        ordered = _topological(self.name, layers)
        object.__setattr__(self, "layers", ordered)
        object.__setattr__(self, "_index", {layer.name: i for i, layer in enumerate(ordered)})
        for layer in ordered:
            self._check_shapes(layer)

    # ---------------------------------------------------------------- checks
    def _check_shapes(self, layer: Layer) -> None:
        producers = [self[p] for p in layer.inputs]
        where = f"workload {self.name!r}, layer {layer.name!r}"
        for p in producers:
            if p.B != layer.B:
                raise ValueError(f"{where}: batch B={layer.B} differs from producer {p.name!r} (B={p.B})")
        if not producers:
            return
        if layer.kind is OpKind.MATMUL:
            src_i, src_w = producers
            if src_i.output_elements != layer.input_elements:
                raise ValueError(
                    f"{where}: I operand has {layer.input_elements} elements but producer "
                    f"{src_i.name!r} makes {src_i.output_elements}"
                )
            if src_w.output_elements != layer.w_elements:
                raise ValueError(
                    f"{where}: W operand has {layer.w_elements} elements but producer "
                    f"{src_w.name!r} makes {src_w.output_elements}"
                )
            return
        if layer.kind is OpKind.ELTWISE:
            for p in producers:
                if p.out_channels != layer.G or (p.OY, p.OX) not in ((layer.OY, layer.OX), (1, 1)):
                    raise ValueError(
                        f"{where}: operand {p.name!r} is {p.out_channels}x{p.OY}x{p.OX}, "
                        f"expected {layer.G}x{layer.OY}x{layer.OX} (or {layer.G}x1x1, broadcast)"
                    )
            return
        channels = sum(p.out_channels for p in producers)
        if channels != layer.in_channels:
            detail = " + ".join(f"{p.name}:{p.out_channels}" for p in producers)
            raise ValueError(
                f"{where}: reads {layer.in_channels} input channels but its producers make {channels} ({detail})"
            )
        for p in producers:
            for axis, have, need, stride in (
                ("rows", p.OY, layer.IY, layer.stride_y),
                ("columns", p.OX, layer.IX, layer.stride_x),
            ):
                if not need <= have < need + stride:
                    raise ValueError(
                        f"{where}: reads {need} input {axis} but producer {p.name!r} makes {have}; "
                        f"fix the padding or output size"
                    )

    # ----------------------------------------------------------- graph access
    def __len__(self) -> int:
        return len(self.layers)

    def __iter__(self) -> Iterator[Layer]:
        return iter(self.layers)

    def __getitem__(self, name: str) -> Layer:
        try:
            return self.layers[self._index[name]]
        except KeyError:
            raise KeyError(f"workload {self.name!r} has no layer {name!r}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def index(self, name: str) -> int:
        """Position of a layer in the topological order."""
        return self._index[name]

    @property
    def names(self) -> tuple[str, ...]:
        """Layer names in topological order."""
        return tuple(layer.name for layer in self.layers)

    @cached_property
    def edges(self) -> tuple[tuple[str, str], ...]:
        """Producer-consumer pairs, ordered by consumer then operand."""
        return tuple((p, layer.name) for layer in self.layers for p in layer.inputs)

    @cached_property
    def successors(self) -> dict[str, tuple[str, ...]]:
        """Consumers of every layer, in topological order."""
        out: dict[str, list[str]] = {layer.name: [] for layer in self.layers}
        for src, dst in self.edges:
            out[src].append(dst)
        return {k: tuple(v) for k, v in out.items()}

    def predecessors(self, name: str) -> tuple[str, ...]:
        """Producers of a layer (its ``inputs``)."""
        return self[name].inputs

    @cached_property
    def sources(self) -> tuple[str, ...]:
        """Layers that read the network input."""
        return tuple(layer.name for layer in self.layers if not layer.inputs)

    @cached_property
    def sinks(self) -> tuple[str, ...]:
        """Layers whose output is a network output (no consumer)."""
        return tuple(n for n, succ in self.successors.items() if not succ)

    @cached_property
    def is_chain(self) -> bool:
        """Whether the DAG is a simple path."""
        return all(len(layer.inputs) <= 1 for layer in self.layers) and all(
            len(s) <= 1 for s in self.successors.values()
        )

    def to_networkx(self) -> nx.DiGraph:
        """A new ``networkx.DiGraph`` with a ``layer`` attribute on every node."""
        graph: nx.DiGraph[str] = nx.DiGraph(name=self.name)
        for layer in self.layers:
            graph.add_node(layer.name, layer=layer)
        graph.add_edges_from(self.edges)
        return graph

    # ------------------------------------------------------------- totals
    @cached_property
    def macs(self) -> int:
        """Total multiply-accumulates."""
        return sum(layer.macs for layer in self.layers)

    @cached_property
    def weight_bytes(self) -> int:
        """Total parameter bytes."""
        return sum(layer.weight_bytes for layer in self.layers)

    @cached_property
    def batch(self) -> int:
        """The batch size (largest ``B`` over the layers)."""
        return max(layer.B for layer in self.layers)

    def summary(self) -> str:
        """One line: name, layers, GMAC and weight MB."""
        return f"{self.name}: {len(self)} layers, {self.macs / 1e9:.3f} GMAC, {self.weight_bytes / 1e6:.2f} MB weights"

    # -------------------------------------------------------------- variants
    def replace_layers(self, **changes: Layer) -> Workload:
        """Return a workload with some layers (by name) replaced."""
        unknown = [n for n in changes if n not in self._index]
        if unknown:
            raise KeyError(f"workload {self.name!r} has no layer(s) {unknown}")
        return Workload(self.name, tuple(changes.get(layer.name, layer) for layer in self.layers))

    def with_batch(self, batch: int) -> Workload:
        """The same network with every layer at batch size ``batch``."""
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValueError(f"batch must be a positive integer, got {batch!r}")
        return Workload(self.name, tuple(layer.replace(B=batch) for layer in self.layers))

    # --------------------------------------------------------- serialization
    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (JSON-compatible); inverse of :meth:`from_dict`."""
        return {"name": self.name, "layers": [layer.to_dict() for layer in self.layers]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Workload:
        """Build a workload from :meth:`to_dict` output."""
        if not isinstance(data, dict) or "layers" not in data or "name" not in data:
            raise ValueError("a workload needs the keys 'name' and 'layers'")
        unknown = sorted(set(data) - {"name", "layers"})
        if unknown:
            raise ValueError(f"workload: unknown key(s) {', '.join(unknown)}; known keys are name, layers")
        return cls(data["name"], tuple(Layer.from_dict(d) for d in data["layers"]))

    def save_json(self, path: str | Path) -> None:
        """Write the workload as JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=1))

    @classmethod
    def load_json(cls, path: str | Path) -> Workload:
        """Read a workload written by :meth:`save_json`."""
        return cls.from_dict(json.loads(Path(path).read_text()))


def _topological(name: str, layers: tuple[Layer, ...]) -> tuple[Layer, ...]:
    """Kahn's algorithm, always taking the earliest given layer that is ready."""
    position = {layer.name: i for i, layer in enumerate(layers)}
    indegree = {layer.name: len(layer.inputs) for layer in layers}
    consumers: dict[str, list[str]] = {layer.name: [] for layer in layers}
    for layer in layers:
        for p in layer.inputs:
            consumers[p].append(layer.name)
    ready = [position[n] for n, d in indegree.items() if d == 0]
    heapq.heapify(ready)
    order: list[Layer] = []
    while ready:
        layer = layers[heapq.heappop(ready)]
        order.append(layer)
        for c in consumers[layer.name]:
            indegree[c] -= 1
            if indegree[c] == 0:
                heapq.heappush(ready, position[c])
    if len(order) != len(layers):
        stuck = sorted(n for n, d in indegree.items() if d > 0)
        raise ValueError(f"workload {name!r}: the layers form a cycle through {', '.join(stuck[:5])}")
    return tuple(order)
