"""Tile buffer accounting of an RA tree, SET's rules (``SchNode``'s buffer usages in SET's artifact).

Every node has three per-tile usages (bytes of the tile's global buffer, by tile id):

* ``ifm``: the input activations its runs need on the tile;
* ``buf``: the activations it holds while it runs;
* ``wgt``: the weights it keeps on the tile.

and a per-tile ``need``: the largest usage any of SET's checks at or below the node
compares with the buffer's capacity. A tree is feasible when every tile's ``need`` of
every segment fits (:func:`accelsched.problems.ra_tree.check.check`).

Leaf (``LNode::searchLayer``): on each tile running a part, ``ifm`` is the part's
input (the whole input for an output-channel split, a slice otherwise; for a matmul
both operands), ``buf = ifm`` (SET's ISCA artifact reserves ``ofm_ubuf_vol = 0`` bytes
for outputs, which stream out through the tile's 28 KB output buffer), ``wgt`` the
part's weights; checked: ``buf + wgt``.

T-Cut over children ``c_0 .. c_{m-1}`` with ``n`` sub-batches (``TCut::construct``); a
*segment* is a child of the root; ``shift`` holds for a segment with ``n = 1``: its
weights are streamed, each layer's loaded while the previous one runs, since with one
sub-batch nothing reuses them:

* ``buf = max_k (c_k.ifm + c_{k-1}.buf [+ c_{k-1}.wgt + c_k.wgt if shift])``, the next
  child's input arriving while the previous child still holds its data, and the end
  term ``c_{m-1}.buf [+ c_{m-1}.wgt]`` for ``n = 1`` or ``c_0.ifm + c_{m-1}.buf`` (the
  next sub-batch's input) for ``n > 1``; checked: ``buf``;
* ``wgt = sum_k c_k.wgt`` unless ``shift`` (the weights stay for all sub-batches);
  checked: ``buf + wgt``;
* ``ifm = n x sum_k c_k.ifm`` (the inputs of every sub-batch wait for the cut),
  checked below a segment.

S-Cut (``SCut::construct``): ``buf = sum_k (c_k.buf [+ c_k.ifm if n > 1])`` (with more
than one sub-batch every child double-buffers its next input), ``wgt = sum_k c_k.wgt``;
checked: ``buf + wgt``; ``ifm = n x sum_k c_k.ifm``, checked below a segment. The
children of an S-Cut have disjoint tiles, so the sums add a tile's usages only when
the same tile is used twice.

The root is not checked (its children are the segments; their data comes from and
goes to DRAM).

Weights are read from DRAM once per segment run in either case: streamed weights are
used once (``n = 1``); resident ones are reused by every sub-batch
(:mod:`accelsched.problems.ra_tree.cost`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["TChain", "Usage", "leaf_usage", "s_cut_usage"]

PerTile = dict[int, float]


def _add(*terms: Mapping[int, float]) -> PerTile:
    out: PerTile = {}
    for term in terms:
        for tile, value in term.items():
            out[tile] = out.get(tile, 0.0) + value
    return out


def _max_into(target: PerTile, *terms: Mapping[int, float]) -> None:
    for term in terms:
        for tile, value in term.items():
            if value > target.get(tile, 0.0):
                target[tile] = value


def _scale(term: Mapping[int, float], factor: int) -> PerTile:
    return {tile: value * factor for tile, value in term.items()}


@dataclass(frozen=True)
class Usage:
    """A node's per-tile buffer usages (module docstring): ``ifm``, ``buf``, ``wgt`` and the checked ``need``."""

    ifm: PerTile
    buf: PerTile
    wgt: PerTile
    need: PerTile


def leaf_usage(tiles: Iterable[int], part_inputs: Iterable[float], part_weights: Iterable[float]) -> Usage:
    """A leaf's usages from its parts' input and weight bytes, one part per tile."""
    ifm: PerTile = {}
    wgt: PerTile = {}
    for tile, nin, nw in zip(tiles, part_inputs, part_weights, strict=True):
        ifm[tile] = ifm.get(tile, 0.0) + float(nin)
        wgt[tile] = wgt.get(tile, 0.0) + float(nw)
    return Usage(ifm, dict(ifm), wgt, _add(ifm, wgt))


@dataclass
class TChain:
    """A T-Cut's usages, its children added one at a time (module docstring).

    :meth:`add` takes the next child; :meth:`usage` is the cut's usage with the
    children added so far, without changing the chain (so that a program growing
    T-Cut segments layer by layer prices every end in O(tiles)).

    Parameters
    ----------
    subbatches
        The cut's ``n``.
    segment
        Whether the cut is a child of the root (its input is not checked; with ``n = 1``
        its weights are streamed).
    """

    subbatches: int
    segment: bool
    _first_ifm: PerTile | None = field(default=None, init=False)
    _last: Usage | None = field(default=None, init=False)
    _buf: PerTile = field(default_factory=dict, init=False)
    _wgt: PerTile = field(default_factory=dict, init=False)
    _ifm: PerTile = field(default_factory=dict, init=False)
    _need: PerTile = field(default_factory=dict, init=False)

    @property
    def shift(self) -> bool:
        """Whether the weights are streamed (a segment with one sub-batch)."""
        return self.segment and self.subbatches == 1

    def add(self, child: Usage) -> None:
        """Append the next child."""
        if self._last is None:
            self._first_ifm = child.ifm
        else:
            term = (
                _add(child.ifm, self._last.buf, self._last.wgt, child.wgt)
                if self.shift
                else _add(child.ifm, self._last.buf)
            )
            _max_into(self._buf, term)
        _max_into(self._need, child.need)
        if not self.shift:
            self._wgt = _add(self._wgt, child.wgt)
        self._ifm = _add(self._ifm, child.ifm)
        self._last = child

    def usage(self) -> Usage:
        """The cut's usages with the children added so far."""
        last = self._last
        if last is None or self._first_ifm is None:
            raise ValueError("TChain.usage: the cut has no child yet")
        buf = dict(self._buf)
        if self.subbatches == 1:
            _max_into(buf, _add(last.buf, last.wgt) if self.shift else last.buf)
        else:
            _max_into(buf, _add(self._first_ifm, last.buf))
        need = dict(self._need)
        _max_into(need, buf)
        ifm = _scale(self._ifm, self.subbatches)
        if self.shift:
            return Usage(ifm, buf, {}, need)
        _max_into(need, _add(buf, self._wgt))
        if not self.segment:
            _max_into(need, ifm)
        return Usage(ifm, buf, dict(self._wgt), need)


def s_cut_usage(children: Iterable[Usage], subbatches: int, segment: bool) -> Usage:
    """An S-Cut's usages from its children's (module docstring)."""
    kids = list(children)
    buf = _add(*(c.buf for c in kids), *((c.ifm for c in kids) if subbatches > 1 else ()))
    wgt = _add(*(c.wgt for c in kids))
    ifm = _scale(_add(*(c.ifm for c in kids)), subbatches)
    need: PerTile = {}
    _max_into(need, *(c.need for c in kids), _add(buf, wgt))
    if not segment:
        _max_into(need, ifm)
    return Usage(ifm, buf, wgt, need)
