"""Mesh traffic of the RA-tree evaluator: link loads and byte-hops under a :class:`NocModel`.

A transfer gives part ``i`` of a layer the share ``x_i`` of a tensor; under unicast (SET's
default) every share travels its own XY route, so a tensor ``d`` tiles need whole costs
``d`` routes; under multicast one x-spine with y-branches carries it. DRAM bytes of a tile
are spread equally over its ports (:func:`accelsched.hardware.cost.transfer.interleaved_dram_ports`,
or the nearest attachment point). Routes and their sums are cached per mesh and tile
tuple: the search evaluates the same allocations many times.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache, lru_cache

from accelsched.hardware.cost.transfer import interleaved_dram_ports, mesh_multicast_links
from accelsched.hardware.spec import Mesh
from accelsched.problems.ra_tree.instance import NocModel

__all__ = ["Link", "Links"]


Link = tuple[tuple[int, int], tuple[int, int]]
"""A directed mesh link between two positions ``(row, col)``."""


class Links:
    """Bytes per directed mesh link, and byte-hops, under a :class:`NocModel`."""

    def __init__(self, mesh: Mesh, noc: NocModel) -> None:
        self.mesh = mesh
        self.noc = noc
        self.load: dict[Link, float] = {}
        self.byte_hops = 0.0

    def add(self, links: Iterable[Link], nbytes: float) -> None:
        for link in links:
            self.load[link] = self.load.get(link, 0.0) + nbytes
            self.byte_hops += nbytes

    def spread(self, pattern: tuple[tuple[Link, float], ...], nbytes: float) -> None:
        """Add ``nbytes`` times each link's coefficient of a cached pattern."""
        for link, coeff in pattern:
            value = nbytes * coeff
            self.load[link] = self.load.get(link, 0.0) + value
            self.byte_hops += value

    def deliver(self, sources: Sequence[int], dsts: Sequence[int], nbytes: float, fractions: Sequence[float]) -> None:
        """``nbytes x fractions[i]`` to ``dsts[i]`` from ``sources[i mod |sources|]`` (tiles).

        Under multicast, a tensor every destination needs whole (every fraction 1) goes
        once along the XY multicast tree from the first source.
        """
        if self.noc.multicast and len(dsts) > 1 and all(f >= 1.0 for f in fractions):
            self.add(_tree_links(self.mesh, sources[0], tuple(dsts)), nbytes)
            return
        self.spread(_unicast_pattern(self.mesh, tuple(sources), tuple(dsts), tuple(fractions)), nbytes)

    def from_dram(self, dsts: Sequence[int], nbytes: float, fractions: Sequence[float]) -> None:
        """``nbytes x fractions[i]`` from DRAM to ``dsts[i]`` (the :class:`NocModel`'s ports)."""
        if self.noc.multicast and len(dsts) > 1 and all(f >= 1.0 for f in fractions):
            ports = _ports(self.mesh, dsts[0], self.noc.dram_groups)
            for port in ports:
                self.add(_tree_links(self.mesh, port, tuple(dsts)), nbytes / len(ports))
            return
        self.spread(_dram_pattern(self.mesh, tuple(dsts), tuple(fractions), self.noc.dram_groups, False), nbytes)

    def to_dram(self, srcs: Sequence[int], nbytes: float) -> None:
        """``nbytes`` written to DRAM, an equal share from each of ``srcs``."""
        share = (1.0 / len(srcs),) * len(srcs)
        self.spread(_dram_pattern(self.mesh, tuple(srcs), share, self.noc.dram_groups, True), nbytes)


@lru_cache(maxsize=1 << 16)
def _ports(mesh: Mesh, tile: int, groups: int) -> tuple[int, ...]:
    """The DRAM attachment points (core ids) of a tile's traffic: interleaved over ``groups`` groups, or the nearest."""
    if groups:
        return interleaved_dram_ports(mesh, tile, groups)
    return (_nearest_dram(mesh)[tile],)


def _merge(terms: Iterable[tuple[Iterable[Link], float]]) -> tuple[tuple[Link, float], ...]:
    out: dict[Link, float] = {}
    for links, coeff in terms:
        for link in links:
            out[link] = out.get(link, 0.0) + coeff
    return tuple(out.items())


@lru_cache(maxsize=1 << 16)
def _unicast_pattern(
    mesh: Mesh, sources: tuple[int, ...], dsts: tuple[int, ...], fractions: tuple[float, ...]
) -> tuple[tuple[Link, float], ...]:
    """Link coefficients of ``fractions[i]`` of a tensor from ``sources[i mod |sources|]`` to ``dsts[i]``."""
    pairs = enumerate(zip(dsts, fractions, strict=True))
    return _merge((_tree_links(mesh, sources[i % len(sources)], (d,)), f) for i, (d, f) in pairs)


@lru_cache(maxsize=1 << 16)
def _dram_pattern(
    mesh: Mesh, tiles: tuple[int, ...], fractions: tuple[float, ...], groups: int, write: bool
) -> tuple[tuple[Link, float], ...]:
    """Link coefficients of ``fractions[i]`` of a tensor between DRAM and ``tiles[i]``, spread over its ports."""
    terms = []
    for tile, f in zip(tiles, fractions, strict=True):
        ports = _ports(mesh, tile, groups)
        for port in ports:
            links = _tree_links(mesh, tile, (port,)) if write else _tree_links(mesh, port, (tile,))
            terms.append((links, f / len(ports)))
    return _merge(terms)


@cache
def _tree_links(mesh: Mesh, src: int, dsts: tuple[int, ...]) -> tuple[tuple[tuple[int, int], tuple[int, int]], ...]:
    """The XY multicast tree's links from ``src`` to ``dsts`` (one path for one destination), computed once."""
    return tuple(mesh_multicast_links(mesh, src, dsts))


@cache
def _nearest_dram(mesh: Mesh) -> tuple[int, ...]:
    """For every tile, the core id at its nearest DRAM attachment point (computed once per mesh)."""
    out = []
    for tile in range(mesh.rows * mesh.cols):
        r, c = mesh.position(tile)
        dr, dc = min(mesh.dram_nodes, key=lambda node: abs(node[0] - r) + abs(node[1] - c))
        out.append(dr * mesh.cols + dc)
    return tuple(out)
