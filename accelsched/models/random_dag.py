"""Seeded random DAG workloads for tests and benchmarks (``random:N:SEED``)."""

from __future__ import annotations

import random

from accelsched.models.builder import NetBuilder, Tensor
from accelsched.models.workload import Workload

__all__ = ["random_workload"]


def random_workload(
    n_layers: int,
    seed: int,
    *,
    channels: tuple[int, ...] = (8, 16, 24, 32, 48, 64),
    height: int = 32,
    width: int = 32,
    batch: int = 1,
    branch_probability: float = 0.3,
) -> Workload:
    """A random, valid DAG of ``n_layers`` layers, the same for the same arguments.

    Layers are convolutions (3x3, 1x1, depthwise, occasionally stride 2), pooling,
    element-wise adds of two equally shaped earlier outputs, and channel
    concatenations feeding a convolution. With probability ``branch_probability``
    a layer reads an earlier output than the latest one, which creates branches.

    Parameters
    ----------
    n_layers
        Number of layers (>= 1).
    seed
        Seed of the generator.
    channels
        Output channel counts to draw from.
    height, width
        Input resolution; stride-2 layers stop at 4x4.
    batch
        Batch size of every layer.
    branch_probability
        Chance that a layer reads an older tensor instead of the newest one.
    """
    if isinstance(n_layers, bool) or not isinstance(n_layers, int) or n_layers < 1:
        raise ValueError(f"random workload: n_layers must be a positive integer, got {n_layers!r}")
    rng = random.Random(seed)
    b = NetBuilder(f"random:{n_layers}:{seed}", 3, height, width, batch=batch)
    outputs: list[Tensor] = [b.conv(b.input, rng.choice(channels), 3, pad=1, name="L0")]
    while len(outputs) < n_layers:
        name = f"L{len(outputs)}"
        latest = outputs[-1]
        same = [t for t in outputs if (t.height, t.width) == (latest.height, latest.width)]
        src = rng.choice(same) if rng.random() < branch_probability else latest
        roll = rng.random()
        peers = [t for t in same if t.channels == src.channels and t != src]
        if roll < 0.15 and peers:
            outputs.append(b.add(src, rng.choice(peers), name=name))
        elif roll < 0.25 and len(same) > 1:
            other = rng.choice([t for t in same if t != src])
            outputs.append(b.conv(NetBuilder.concat(src, other), rng.choice(channels), 1, name=name))
        elif roll < 0.35:
            outputs.append(b.dwconv(src, 3, name=name))
        elif roll < 0.45 and src.height >= 8:
            outputs.append(b.pool(src, 2, stride=2, name=name))
        elif roll < 0.55 and src.height >= 8:
            outputs.append(b.conv(src, rng.choice(channels), 3, stride=2, pad=1, name=name))
        elif roll < 0.75:
            outputs.append(b.conv(src, rng.choice(channels), 1, name=name))
        else:
            outputs.append(b.conv(src, rng.choice(channels), 3, pad=1, name=name))
    return b.build()
