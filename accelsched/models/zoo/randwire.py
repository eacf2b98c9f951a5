"""RandWire networks (Xie et al., ICCV 2019) from a seeded Watts-Strogatz generator.

Each random stage is a graph drawn from WS(N, k=4, p=0.75), implemented here
with a seeded :class:`random.Random` (the paper's procedure: a ring lattice where
every node links to its ``k/2`` neighbours on each side, then each clockwise edge
is rewired with probability ``p`` to a uniformly chosen node that is neither the
node itself nor already linked; a disconnected draw is redrawn). Edges are
oriented from the lower to the higher node index, which makes a DAG.

Every node aggregates its inputs by a (weighted) sum, an element-wise ``add``
layer when it has more than one input, and transforms the sum by a ReLU-SepConv
3x3-BN triplet: a depthwise 3x3 then a pointwise 1x1 convolution. Nodes without
input read the previous stage's output with stride 2; the stage output is the
average of the nodes without output, an ``add`` layer when there are several.
ReLU, BN and the averaging scale are free.

Stages follow the paper's Table 1:

=========== ======== =========================== ===========================
stage       output   small regime (``randwire_a``) regular (``randwire_b``)
=========== ======== =========================== ===========================
conv1       112x112  3x3 conv, C/2               3x3 conv, C/2
conv2       56x56    3x3 conv, C                 random wiring N/2, C
conv3       28x28    random wiring N, C          random wiring N, 2C
conv4       14x14    random wiring N, 2C         random wiring N, 4C
conv5       7x7      random wiring N, 4C         random wiring N, 8C
classifier  1x1      1x1 conv 1280, global average pool, fc 1000
=========== ======== =========================== ===========================

In the small regime conv2 is a plain 3x3 convolution, not a random stage (with a
random conv2 of N/2 nodes the network would need about 0.81 G multiply-adds, far
from the paper's 583 M); conv1 and conv2 are plain convolutions, as the paper's
table states and its parameter counts confirm. ``randwire_a`` uses C=78, N=32
(paper, Table 3: 583 M FLOPs, counted as multiply-adds, 5.6 M parameters);
``randwire_b`` uses C=109, N=32 (paper, Table 4: 4.0 B FLOPs, 31.9 M parameters;
C=154 gives 7.9 B). The MACs vary slightly with the drawn graphs (the stride-2
input nodes of a stage read fewer channels than the other nodes), so the
registered networks use seed 0 and the tests allow 2 %.
"""

from __future__ import annotations

import math
import random

from accelsched.models.builder import NetBuilder, Tensor
from accelsched.models.workload import Workload
from accelsched.models.zoo.catalog import register
from accelsched.models.zoo.classifier import classifier

__all__ = ["randwire", "randwire_a", "randwire_b", "stage_dag", "watts_strogatz"]

_WS_K = 4
_WS_P = 0.75
_MAX_TRIES = 100


def _connected(n: int, adjacency: list[set[int]]) -> bool:
    """Whether the undirected graph on ``0..n-1`` is connected."""
    seen = {0}
    stack = [0]
    while stack:
        for w in adjacency[stack.pop()]:
            if w not in seen:
                seen.add(w)
                stack.append(w)
    return len(seen) == n


def watts_strogatz(n: int, k: int, p: float, rng: random.Random) -> list[tuple[int, int]]:
    """A connected Watts-Strogatz small-world graph.

    Parameters
    ----------
    n
        Nodes, numbered ``0..n-1`` around the ring.
    k
        Even number of ring neighbours of every node before rewiring (``k < n``).
    p
        Rewiring probability of each edge.
    rng
        Source of randomness (the result depends only on its state).

    Returns
    -------
    list of tuple of int
        Undirected edges ``(u, v)`` with ``u < v``, sorted.

    Raises
    ------
    ValueError
        If ``k`` is odd or not smaller than ``n``, or if no connected graph is drawn
        in 100 tries.
    """
    if k % 2 or not 0 < k < n:
        raise ValueError(f"Watts-Strogatz needs an even k with 0 < k < n, got k={k}, n={n}")
    for _ in range(_MAX_TRIES):
        adjacency: list[set[int]] = [set() for _ in range(n)]
        for u in range(n):
            for j in range(1, k // 2 + 1):
                v = (u + j) % n
                adjacency[u].add(v)
                adjacency[v].add(u)
        for j in range(1, k // 2 + 1):
            for u in range(n):
                v = (u + j) % n
                if v not in adjacency[u] or rng.random() >= p or len(adjacency[u]) >= n - 1:
                    continue
                w = rng.randrange(n)
                while w == u or w in adjacency[u]:
                    w = rng.randrange(n)
                adjacency[u].discard(v)
                adjacency[v].discard(u)
                adjacency[u].add(w)
                adjacency[w].add(u)
        if _connected(n, adjacency):
            return sorted((u, w) for u in range(n) for w in adjacency[u] if u < w)
    raise ValueError(f"no connected Watts-Strogatz graph with n={n}, k={k}, p={p} in {_MAX_TRIES} tries")


def stage_dag(n: int, rng: random.Random) -> list[list[int]]:
    """Predecessors of every node of a WS(n, 4, 0.75) graph oriented from low to high index.

    Parameters
    ----------
    n
        Nodes.
    rng
        Source of randomness.

    Returns
    -------
    list of list of int
        ``preds[v]``: the nodes with an edge into ``v``, ascending.
    """
    preds: list[list[int]] = [[] for _ in range(n)]
    for u, v in watts_strogatz(n, _WS_K, _WS_P, rng):
        preds[v].append(u)
    return [sorted(p) for p in preds]


def _sep_conv(b: NetBuilder, x: Tensor, channels: int, stride: int, name: str) -> Tensor:
    """ReLU-SepConv-BN node transformation: depthwise 3x3 (strided) and pointwise 1x1."""
    y = b.dwconv(x, 3, stride=stride, pad=1, name=f"{name}_dw")
    return b.conv(y, channels, 1, name=f"{name}_pw")


def _random_stage(b: NetBuilder, x: Tensor, preds: list[list[int]], channels: int, name: str) -> Tensor:
    """A randomly wired stage: nodes in index order, input nodes stride 2, outputs averaged."""
    outputs: list[Tensor] = []
    has_successor = {u for p in preds for u in p}
    for v, inputs in enumerate(preds):
        if inputs:
            parts = [outputs[u] for u in inputs]
            agg = parts[0] if len(parts) == 1 else b.add(*parts, name=f"{name}_n{v}_agg")
            y = _sep_conv(b, agg, channels, 1, f"{name}_n{v}")
        else:
            y = _sep_conv(b, x, channels, 2, f"{name}_n{v}")
        outputs.append(y)
    sinks = [outputs[v] for v in range(len(preds)) if v not in has_successor]
    return sinks[0] if len(sinks) == 1 else b.add(*sinks, name=f"{name}_out")


def randwire(name: str, *, regime: str, channels: int, nodes: int = 32, seed: int = 0, batch: int = 1) -> Workload:
    """A RandWire-WS network for ImageNet at 224x224.

    Parameters
    ----------
    name
        Network name.
    regime
        ``"small"`` (conv2 is a 3x3 convolution, three random stages) or
        ``"regular"`` (four random stages, the first with ``nodes // 2`` nodes).
    channels
        ``C`` of the paper's Table 1.
    nodes
        ``N``, nodes per random stage.
    seed
        Seed of the graph generator; the stages are drawn in order from one
        ``random.Random(seed)``.
    batch
        Batch size.

    Returns
    -------
    Workload
        The network. Layers of stage ``convS`` node ``v`` are named
        ``convS_n{v}_dw``, ``convS_n{v}_pw`` and ``convS_n{v}_agg``.

    Raises
    ------
    ValueError
        For an unknown regime.
    """
    if regime == "small":
        stages = [("conv3", nodes, channels), ("conv4", nodes, 2 * channels), ("conv5", nodes, 4 * channels)]
    elif regime == "regular":
        stages = [
            ("conv2", nodes // 2, channels),
            ("conv3", nodes, 2 * channels),
            ("conv4", nodes, 4 * channels),
            ("conv5", nodes, 8 * channels),
        ]
    else:
        raise ValueError(f"regime must be 'small' or 'regular', got {regime!r}")
    rng = random.Random(seed)
    b = NetBuilder(name, 3, 224, 224, batch=batch)
    x = b.conv(b.input, math.ceil(channels / 2), 3, stride=2, pad=1, name="conv1")
    if regime == "small":
        x = b.conv(x, channels, 3, stride=2, pad=1, name="conv2")
    for stage, n, width in stages:
        x = _random_stage(b, x, stage_dag(n, rng), width, stage)
    x = b.conv(x, 1280, 1, name="conv6")
    classifier(b, x)
    return b.build()


@register(
    "randwire_a",
    "RandWire-WS small regime (C=78, N=32, WS(4, 0.75), seed 0), 224x224",
    0.583,
    "Xie et al., ICCV 2019, Table 3: 583M FLOPs (multiply-adds)",
)
def randwire_a(batch: int = 1) -> Workload:
    """RandWire-WS in the small computation regime, C=78, N=32, graphs from seed 0.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    return randwire("randwire_a", regime="small", channels=78, nodes=32, seed=0, batch=batch)


@register(
    "randwire_b",
    "RandWire-WS regular regime (C=109, N=32, WS(4, 0.75), seed 0), 224x224",
    4.0,
    "Xie et al., ICCV 2019, Table 4: 4.0B FLOPs (multiply-adds) for C=109",
)
def randwire_b(batch: int = 1) -> Workload:
    """RandWire-WS in the regular computation regime, C=109, N=32, graphs from seed 0.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    return randwire("randwire_b", regime="regular", channels=109, nodes=32, seed=0, batch=batch)
