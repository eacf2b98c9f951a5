"""Shared helpers of the partition heuristic tests."""

from __future__ import annotations

from accelsched.hardware import load_accelerator
from accelsched.heuristics.partition.space import Genome, PartitionSpace
from accelsched.models.builder import NetBuilder
from accelsched.problems.partition import BufferDesign, Metric, PartitionInstance, check

KIB = 1024


def assert_valid(space: PartitionSpace, genome: Genome) -> None:
    """The genome is a checked solution in canonical form (sorted blocks, topological order)."""
    check(space.instance, space.to_solution(genome))
    assert all(list(block) == sorted(block) for block in genome.blocks)
    assert sorted(v for block in genome.blocks for v in block) == list(range(space.n))
    assert space.normalize(genome.blocks, genome.act, genome.weight) == genome


def chain(metric: Metric = Metric.EMA, layers: int = 4) -> PartitionInstance:
    """A chain of small 3x3 convolutions with buffers far larger than the whole network."""
    b = NetBuilder("chain", 8, 16, 16)
    x = b.input
    for _ in range(layers):
        x = b.conv(x, 8, 3, pad=1)
    return PartitionInstance(
        b.build(), load_accelerator("cocco-simba-separate"), BufferDesign.SEPARATE, (1024 * KIB,), (1024 * KIB,), metric
    )


def fused_chain_ema(instance: PartitionInstance) -> int:
    """EMA of the chain in one subgraph: every weight, the input and the output once."""
    layers = list(instance.workload)
    return sum(layer.weight_bytes for layer in layers) + layers[0].input_bytes + layers[-1].output_bytes
