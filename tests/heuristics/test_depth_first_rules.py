"""DeFiNES' fuse-depth rule (``auto_stacks``) and the depth-first baselines built on its stacks."""

from __future__ import annotations

import pytest

from accelsched.hardware import load_accelerator
from accelsched.heuristics.depth_first_rules import auto_stacks, layer_by_layer, single_layer, uniform_solution
from accelsched.models.registry import load_workload
from accelsched.problems.depth_first import DepthFirstInstance, DepthFirstSolution, OverlapMode, Stack, Strategy, check

META = "defines-meta-proto-df"
WEIGHT_MEMORY = 1 << 20  # sram_1MB_W, the largest on-chip weight memory of defines-meta-proto-df


def stacks_of(workload: str, hardware: str) -> tuple[DepthFirstInstance, list[tuple[str, ...]]]:
    instance = DepthFirstInstance(load_workload(workload), load_accelerator(hardware))
    return instance, auto_stacks(instance)


@pytest.mark.parametrize("workload", ["resnet18", "mobilenet_v1", "fsrcnn"])
def test_a_fused_stack_never_overflows_the_weight_memory(workload: str) -> None:
    instance, stacks = stacks_of(workload, META)
    assert [n for s in stacks for n in s] == list(instance.order)
    for stack in stacks:
        if len(stack) > 1:
            assert sum(instance.workload[n].weight_bytes for n in stack) <= WEIGHT_MEMORY
    check(instance, DepthFirstSolution(tuple(Stack(s, Strategy(1, 1, OverlapMode.FULLY_CACHED)) for s in stacks)))


def test_a_branch_set_that_overflows_alone_becomes_one_layer_stacks() -> None:
    """ResNet-18's layer4_0 block holds 3.5 MiB of weights: DeFiNES runs each of its layers as its own stack."""
    instance, stacks = stacks_of("resnet18", META)
    block = [n for n in instance.order if n.startswith("layer4_0")]
    assert sum(instance.workload[n].weight_bytes for n in block) > WEIGHT_MEMORY
    for name in block:
        assert (name,) in stacks
    # layer3_0 (896 KiB) fits alone, not with the next block: it is one fused stack of its own
    assert tuple(n for n in instance.order if n.startswith("layer3_0")) in stacks


def test_without_an_on_chip_weight_memory_every_weighted_layer_is_its_own_stack() -> None:
    instance, stacks = stacks_of("fsrcnn", "defines-tpu")
    assert stacks == [(n,) for n in instance.order]


def test_baselines_are_valid_solutions() -> None:
    instance, _ = stacks_of("resnet18", META)
    for solution in (layer_by_layer(instance), single_layer(instance),
                     uniform_solution(instance, Strategy(4, 72, OverlapMode.FULLY_CACHED))):  # fmt: skip
        check(instance, solution)
