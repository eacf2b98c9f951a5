"""Tile geometry of a depth-first stack: back-calculation, overlap caches, tile types.

Everything here is separable along the two image axes: a layer's region in a tile
is the product of an interval of columns and an interval of rows, so each axis is
scheduled on its own and a 2-D tile type is a pair of 1-D tile classes.

One axis
--------
The stack's last layer's output, of extent ``W``, is cut into ``n = ceil(W / T)``
tiles; the first one takes the leftover, ``W - (n - 1) T`` pixels, the others
``T``. For tile ``i`` and every tensor of the stack (each layer's output, and
each tensor the stack reads from outside), walking the layers from last to first:

* *needed*: the hull of the input intervals the tensor's consumers in the stack
  read for what they compute in this tile (for the last layer: the tile itself).
  A consumer computing output interval ``[a, b)`` with stride ``s``, kernel
  ``F``, dilation ``d`` and leading padding ``p`` reads
  ``[a s - p, (b - 1) s - p + (F - 1) d + 1)``, clipped to the input extent;
* *computed* (fetched, for a tensor from outside): the needed interval when the
  axis recomputes its overlap; when the axis caches, only what no earlier tile
  computed, ``[max(a, previous end), b)``;
* *kept*: on a caching axis, the tail of the computed interval that the next tile
  needs again, ``previous end - next tile's needed start``, which the overlap
  cache holds.

Tiles whose every tensor has the same needed, computed and kept lengths, and whose
every consumer reads the same number of new and cached pixels, cost the same:
they form one *class*. As in DeFiNES, an axis has by default two classes, the
first (leftover) tile and an interior tile standing for all the others, hence at
most four tile types. That is exact for padding-free stride-1 stacks except for
the last tile, which keeps nothing for a successor; with padding, tiles near the
far border read a little less than the interior one. ``exact=True`` prices every
distinct tile instead (border windows tile by tile, the interior once: interior
tiles are translates of one another, every interval being an affine function of
the tile's position where nothing is clipped).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from accelsched.models.layer import Layer

__all__ = ["AxisClass", "AxisSchedule", "TensorSpan", "input_interval", "schedule_axis", "tile_bounds"]

Interval = tuple[int, int]


def input_interval(layer: Layer, axis: str, out: Interval) -> Interval:
    """Input pixels ``layer`` reads along ``axis`` (``"x"`` or ``"y"``) to compute output pixels ``out``."""
    a, b = out
    if b <= a:
        return (0, 0)
    if axis == "x":
        stride, kernel, dilation, pad, extent = layer.stride_x, layer.FX, layer.dilation_x, layer.padding[1], layer.IX
    else:
        stride, kernel, dilation, pad, extent = layer.stride_y, layer.FY, layer.dilation_y, layer.padding[0], layer.IY
    start = a * stride - pad
    end = (b - 1) * stride - pad + (kernel - 1) * dilation + 1
    return (max(0, start), min(extent, end))


def tile_bounds(extent: int, tile: int) -> list[Interval]:
    """The tiles of an axis, the leftover one first."""
    n = math.ceil(extent / tile)
    first = extent - (n - 1) * tile
    return [(0, first)] + [(first + (i - 1) * tile, first + i * tile) for i in range(1, n)]


def _length(interval: Interval) -> int:
    return max(0, interval[1] - interval[0])


def _overlap(u: Interval, v: Interval) -> int:
    return max(0, min(u[1], v[1]) - max(u[0], v[0]))


@dataclass(frozen=True)
class TensorSpan:
    """One tensor along one axis in one tile: lengths in pixels."""

    needed: int
    computed: int
    kept: int


@dataclass(frozen=True)
class AxisClass:
    """A class of tiles along one axis that cost the same.

    Attributes
    ----------
    count
        Number of tiles in the class.
    tensors
        Span of each tensor (layer name, or the name of an outside producer).
    reads
        For every (producer, consumer) edge of the stack: ``(read, new)``, the
        pixels the consumer reads from the producer and how many of them the
        producer computed (or fetched) in this tile; the rest comes from the cache.
    """

    count: int
    tensors: Mapping[str, TensorSpan]
    reads: Mapping[tuple[str, str], tuple[int, int]]


@dataclass(frozen=True)
class AxisSchedule:
    """The tile classes of one axis and the largest amount each tensor keeps cached."""

    classes: tuple[AxisClass, ...]
    max_kept: Mapping[str, int]
    max_needed: Mapping[str, int]
    n_tiles: int


def schedule_axis(
    layers: Sequence[Layer],
    outside: Sequence[str],
    axis: str,
    tile: int,
    cached: bool,
    exact: bool = False,
    window: int | None = None,
) -> AxisSchedule:
    """Schedule one axis of a stack (see the module docstring).

    Parameters
    ----------
    layers
        The stack's layers in topological order; the last one is tiled.
    outside
        Names of the tensors the stack reads from outside (producers outside the
        stack, or the network input's name); a layer's producer that is neither in
        the stack nor listed is an error.
    axis
        ``"x"`` (columns, ``OX``) or ``"y"`` (rows, ``OY``).
    tile
        Tile size along the axis, in output pixels of the last layer.
    cached
        Whether the axis caches its overlap (else recomputes it).
    exact
        False (the default, DeFiNES' tile types): two classes, the first tile and
        an interior tile standing for all the others. True: every distinct tile
        is its own class (border tiles clipped by padding, the last tile that
        keeps nothing for a successor).
    window
        With ``exact``: tiles priced one by one at each border before the
        interior ones are taken as translates of one another; None derives a safe
        width from the stack's kernels, strides and padding (tests pass a huge one
        to price every tile).
    """
    names = [layer.name for layer in layers]
    in_stack = set(names)
    consumers: dict[str, list[Layer]] = {n: [] for n in (*names, *outside)}
    for layer in layers:
        for producer in _producers(layer, in_stack, outside):
            consumers[producer].append(layer)
    last = layers[-1]
    extent = last.OX if axis == "x" else last.OY
    tiles = tile_bounds(extent, tile)
    tensors = (*reversed(names), *outside)
    walk = _Walk(last.name, tensors, consumers, axis, cached)
    if not exact:
        return _two_classes(layers, in_stack, outside, axis, tiles, walk)
    if window is None:
        window = 2 + math.ceil(_halo(layers, axis) / tile)
    n = len(tiles)
    if n <= 2 * window + 2:
        spans = [walk.step(bounds) for bounds in tiles]
        return _classes(layers, in_stack, outside, axis, spans, [*spans[1:], None], [1] * n)
    # tiles away from both borders are translates of each other (every interval is an affine
    # function of the tile's position and nothing is clipped there): price the first and last
    # windows tile by tile and one interior tile for all the others
    head = [walk.step(bounds) for bounds in tiles[: window + 2]]
    walk.restart_before(tiles[n - window - 1])
    tail = [walk.step(bounds) for bounds in tiles[n - window :]]
    spans = [*head[: window + 1], *tail]
    following = [*head[1 : window + 2], *tail[1:], None]
    counts = [1] * window + [n - 2 * window] + [1] * window
    return _classes(layers, in_stack, outside, axis, spans, following, counts)


def _two_classes(
    layers: Sequence[Layer],
    in_stack: set[str],
    outside: Sequence[str],
    axis: str,
    tiles: Sequence[Interval],
    walk: _Walk,
) -> AxisSchedule:
    """DeFiNES' tile types along one axis: the first (leftover) tile, and one interior tile for the rest."""
    n = len(tiles)
    first = walk.step(tiles[0])
    if n == 1:
        return _classes(layers, in_stack, outside, axis, [first], [None], [1])
    second = walk.step(tiles[1])
    # the interior tile stands for every tile but the first: the middle one (the state it starts from
    # is the needed ends of the tile before it, which depend on nothing else)
    k = n // 2
    if k == 1:
        middle = second
    else:
        walk.restart_before(tiles[k - 1])
        middle = walk.step(tiles[k])
    after = walk.step(tiles[k + 1]) if k + 1 < n else None
    spans = [first, middle]
    return _classes(layers, in_stack, outside, axis, spans, [second, after], [1, n - 1])


def _halo(layers: Sequence[Layer], axis: str) -> int:
    """An upper bound, in pixels of any layer, on how far a tile's regions reach beyond it."""
    total = 0
    for layer in layers:
        if axis == "x":
            total += (layer.FX - 1) * layer.dilation_x + max(layer.padding[1], layer.padding[3]) + layer.stride_x
        else:
            total += (layer.FY - 1) * layer.dilation_y + max(layer.padding[0], layer.padding[2]) + layer.stride_y
    return total + 1


class _Walk:
    """The back-calculation of consecutive tiles, with the overlap state carried between them."""

    def __init__(
        self,
        last: str,
        tensors: Sequence[str],
        consumers: Mapping[str, Sequence[Layer]],
        axis: str,
        cached: bool,
    ) -> None:
        self.last = last
        self.tensors = tensors
        self.consumers = consumers
        self.axis = axis
        self.cached = cached
        self.previous_end = dict.fromkeys(tensors, 0)

    def restart_before(self, bounds: Interval) -> None:
        """Set the state to what it is after the interior tile ``bounds`` (its needed ends)."""
        if not self.cached:
            return
        ends: dict[str, int] = {}
        for name in self.tensors:
            if name == self.last:
                ends[name] = bounds[1]
                continue
            reads = [input_interval(c, self.axis, (ends[c.name] - 1, ends[c.name]))[1] for c in self.consumers[name]]
            ends[name] = max(reads)
        self.previous_end = ends

    def step(self, bounds: Interval) -> dict[str, tuple[Interval, Interval, int]]:
        """Needed and computed interval and the end reached, per tensor, for the tile ``bounds``."""
        computed_of: dict[str, Interval] = {}
        out: dict[str, tuple[Interval, Interval, int]] = {}
        for name in self.tensors:
            if name == self.last:
                needed = bounds
            else:
                reads = [input_interval(c, self.axis, computed_of[c.name]) for c in self.consumers[name]]
                reads = [r for r in reads if r[1] > r[0]]
                needed = (min(r[0] for r in reads), max(r[1] for r in reads)) if reads else (0, 0)
            computed = (max(needed[0], self.previous_end[name]), needed[1]) if self.cached else needed
            if computed[1] <= computed[0]:
                computed = (needed[1], needed[1])
            computed_of[name] = computed
            if self.cached and computed[1] > computed[0]:
                self.previous_end[name] = computed[1]
            out[name] = (needed, computed, self.previous_end[name])
        return out


def _producers(layer: Layer, in_stack: set[str], outside: Sequence[str]) -> list[str]:
    if not layer.inputs:
        if not outside:
            raise ValueError(f"layer {layer.name!r} reads the network input, which is not among the stack's inputs")
        return [p for p in outside if p.startswith("<")][:1] or [outside[0]]
    out = []
    for producer in layer.inputs:
        if producer not in in_stack and producer not in outside:
            raise ValueError(f"layer {layer.name!r} reads {producer!r}, which is neither in the stack nor an input")
        out.append(producer)
    return out


def _classes(
    layers: Sequence[Layer],
    in_stack: set[str],
    outside: Sequence[str],
    axis: str,
    spans: Sequence[Mapping[str, tuple[Interval, Interval, int]]],
    following: Sequence[Mapping[str, tuple[Interval, Interval, int]] | None],
    counts: Sequence[int],
) -> AxisSchedule:
    edges = [(p, layer.name) for layer in layers for p in _producers(layer, in_stack, outside)]
    by_name = {layer.name: layer for layer in layers}
    groups: dict[tuple[object, ...], list[int]] = {}
    rows: list[tuple[dict[str, TensorSpan], dict[tuple[str, str], tuple[int, int]]]] = []
    max_kept: dict[str, int] = dict.fromkeys(spans[0], 0)
    max_needed: dict[str, int] = dict.fromkeys(spans[0], 0)
    for i, span in enumerate(spans):
        after = following[i]
        tensor_spans = {}
        for name, (needed, computed, end) in span.items():
            kept = 0
            if after is not None:
                upcoming = after[name][0]
                kept = min(max(0, end - upcoming[0]), _length(upcoming))
            tensor_spans[name] = TensorSpan(_length(needed), _length(computed), kept)
            max_kept[name] = max(max_kept[name], kept)
            max_needed[name] = max(max_needed[name], _length(needed))
        reads = {}
        for producer, consumer in edges:
            read = input_interval(by_name[consumer], axis, span[consumer][1])
            reads[(producer, consumer)] = (_length(read), _overlap(read, span[producer][1]))
        key = (tuple(sorted(tensor_spans.items())), tuple(sorted(reads.items())))
        if key not in groups:
            groups[key] = []
            rows.append((tensor_spans, reads))
        groups[key].append(counts[i])
    classes = tuple(
        AxisClass(sum(members), tensor_spans, reads)
        for (tensor_spans, reads), members in zip(rows, groups.values(), strict=True)
    )
    return AxisSchedule(classes, max_kept, max_needed, sum(counts))
