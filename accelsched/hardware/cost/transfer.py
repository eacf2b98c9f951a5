"""Cost of moving bytes between DRAM and cores, and between cores."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from accelsched.hardware.spec import Accelerator, Bus, Crossbar, Mesh

__all__ = [
    "Transfer",
    "core_to_core",
    "core_to_dram",
    "dram_port_groups",
    "dram_to_core",
    "interleaved_dram_ports",
    "mesh_multicast_links",
    "mesh_unicast_links",
]


@dataclass(frozen=True)
class Transfer:
    """Energy and time of one transfer.

    Attributes
    ----------
    energy_pj
        Network energy plus, for DRAM transfers, the DRAM access energy.
    network_energy_pj
        The interconnect's share of ``energy_pj``.
    byte_hops
        Bytes times mesh links crossed (0 off a mesh).
    cycles
        Time of the transfer alone at the bottleneck bandwidth (no contention).
    """

    energy_pj: float
    network_energy_pj: float
    byte_hops: float
    cycles: float


def _network(acc: Accelerator, nbytes: float, hops: int) -> tuple[float, float, float]:
    """(energy, byte-hops, cycles) of ``nbytes`` over ``hops`` links (mesh) or one bus/crossbar path."""
    net = acc.interconnect
    if net is None or nbytes == 0:
        return 0.0, 0.0, 0.0
    if isinstance(net, Mesh):
        cycles = nbytes / net.link_bandwidth_bytes_per_cycle + hops if hops else 0.0
        return nbytes * hops * net.hop_energy_pj_per_byte, nbytes * hops, cycles
    assert isinstance(net, Bus | Crossbar)
    return nbytes * net.energy_pj_per_byte, 0.0, nbytes / net.bandwidth_bytes_per_cycle


def core_to_core(acc: Accelerator, src: int, dst: int, nbytes: float) -> Transfer:
    """Move ``nbytes`` from core ``src`` to core ``dst`` (XY routing on a mesh)."""
    acc.core(src)
    acc.core(dst)
    if src == dst:
        return Transfer(0.0, 0.0, 0.0, 0.0)
    hops = acc.interconnect.hops(src, dst) if isinstance(acc.interconnect, Mesh) else 1
    energy, byte_hops, cycles = _network(acc, nbytes, hops)
    return Transfer(energy, energy, byte_hops, cycles)


def dram_to_core(acc: Accelerator, core: int, nbytes: float) -> Transfer:
    """Read ``nbytes`` from DRAM into core ``core`` (through the nearest DRAM node on a mesh)."""
    return _dram(acc, core, nbytes, acc.offchip.read_energy_pj_per_byte)


def core_to_dram(acc: Accelerator, core: int, nbytes: float) -> Transfer:
    """Write ``nbytes`` from core ``core`` to DRAM."""
    return _dram(acc, core, nbytes, acc.offchip.write_energy_pj_per_byte)


def _dram(acc: Accelerator, core: int, nbytes: float, energy_per_byte: float) -> Transfer:
    acc.core(core)
    net = acc.interconnect
    hops = net.dram_hops(core) if isinstance(net, Mesh) else (1 if net is not None else 0)
    net_energy, byte_hops, net_cycles = _network(acc, nbytes, hops)
    cycles = max(nbytes / acc.offchip.bandwidth_bytes_per_cycle, net_cycles)
    return Transfer(nbytes * energy_per_byte + net_energy, net_energy, byte_hops, cycles)


def mesh_multicast_links(mesh: Mesh, src: int, dsts: Iterable[int]) -> set[tuple[tuple[int, int], tuple[int, int]]]:
    """Directed mesh links used to multicast from ``src`` to ``dsts``.

    The tree is an x-spine along the source row with y-branches: the data goes
    along the row of the source to every destination column, then along each
    column to the destinations (the XY-routing multicast tree used by SET).
    Multiply the number of links by the bytes to get the byte-hops.
    """
    sr, sc = mesh.position(src)
    links: set[tuple[tuple[int, int], tuple[int, int]]] = set()
    for dst in dsts:
        dr, dc = mesh.position(dst)
        step = 1 if dc > sc else -1
        for c in range(sc, dc, step):
            links.add(((sr, c), (sr, c + step)))
        step = 1 if dr > sr else -1
        for r in range(sr, dr, step):
            links.add(((r, dc), (r + step, dc)))
    return links


def mesh_unicast_links(mesh: Mesh, src: int, dst: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Directed links of the XY route from ``src`` to ``dst`` (along the source row, then the column)."""
    return sorted(mesh_multicast_links(mesh, src, (dst,)))


def dram_port_groups(mesh: Mesh) -> tuple[tuple[int, ...], ...]:
    """The mesh's DRAM attachment points as core ids, grouped as SET's artifact groups its DRAM ports.

    SET's ``main.cpp`` attaches four DRAMs to the two side columns, each to half a
    column (rows ``0 .. rows/2 - 1`` or the rest); a group here is the attachment points
    of one column half, ordered by column, then top half first (SET's DRAM order; a
    mesh with one row gives one group per column); inside a group, in the order of
    :attr:`Mesh.dram_nodes`.
    """
    groups: dict[tuple[int, bool], list[int]] = {}
    for r, c in mesh.dram_nodes:
        groups.setdefault((c, r >= (mesh.rows + 1) // 2 if mesh.rows > 1 else False), []).append(r * mesh.cols + c)
    return tuple(tuple(groups[key]) for key in sorted(groups))


def interleaved_dram_ports(mesh: Mesh, core_id: int, n_groups: int) -> tuple[int, ...]:
    """The DRAM attachment points (core ids) a core's DRAM traffic is interleaved over.

    The ``n_groups`` groups of :func:`dram_port_groups` with the fewest hops from the
    core on average (ties: the earlier group), SET's group interleaving
    (``NoC::set_interleave(port_groups, 2)`` in SET's ``main.cpp``); the bytes are spread
    equally over their ports. ``n_groups`` at least the number of groups is full
    interleaving.
    """
    if n_groups < 1:
        raise ValueError(f"interleaved_dram_ports: n_groups must be at least 1, got {n_groups}")
    groups = dram_port_groups(mesh)

    def mean_hops(g: int) -> float:
        return sum(mesh.hops(core_id, p) for p in groups[g]) / len(groups[g])

    ranked = sorted(range(len(groups)), key=lambda g: (mean_hops(g), g))
    return tuple(p for g in sorted(ranked[:n_groups]) for p in groups[g])
