"""Small RA-tree instances shared by the tests of the problem, its formulations, heuristics and benchmarks."""

from __future__ import annotations

from accelsched.hardware import load_accelerator
from accelsched.models.builder import NetBuilder
from accelsched.models.random_dag import random_workload
from accelsched.models.workload import Workload
from accelsched.problems.ra_tree import RATreeInstance

__all__ = ["TEXT", "diamond", "edge_instance", "instance", "small"]


def diamond(batch: int = 8) -> Workload:
    """a -> (b, c) -> d: two branches joined by an add."""
    net = NetBuilder("diamond", 4, 8, 8, batch=batch)
    a = net.conv(net.input, 8, 3, pad=1, name="a")
    b = net.conv(a, 8, 3, pad=1, name="b")
    c = net.conv(a, 8, 1, name="c")
    net.add(b, c, name="d")
    return net.build()


def edge_instance(workload: Workload, preset: str = "set-edge-4x4") -> RATreeInstance:
    """``workload`` on ``preset`` with SET's edge objective, E^2 D."""
    return RATreeInstance(workload, load_accelerator(preset), energy_exponent=2, delay_exponent=1)


def instance(batch: int = 8, preset: str = "set-edge-4x4") -> RATreeInstance:
    """The diamond at ``batch`` on ``preset``, E^2 D."""
    return edge_instance(diamond(batch), preset)


def small(n: int, seed: int, batch: int = 4) -> RATreeInstance:
    """A seeded random DAG of ``n`` small layers (4-16 channels, 8x8 maps) on ``set-edge-4x4``, E^2 D."""
    return edge_instance(random_workload(n, seed, channels=(4, 8, 16), height=8, width=8, batch=batch))


TEXT = "T 8/1\n\ta 8\n\tS 8/4\n\t\tb 2\n\t\tc 2\n\t\td 2\n"
"""Layer a alone on all tiles, then b, c, d pipelined in 4 sub-batches of 2."""
