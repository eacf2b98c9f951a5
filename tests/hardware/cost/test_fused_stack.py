"""The fused-stack primitive: vertical overlap caches and recomputed MACs of one stack tiled on one core."""

from __future__ import annotations

from typing import Any

from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.fused_stack import DRAM, StackCost, StackTile, price_stack
from accelsched.models.workload import Workload
from accelsched.models.zoo.defines import padding_free_chain

META = "defines-meta-proto-df"


def two_layers() -> Workload:
    return padding_free_chain("two", 1, 8, 8, [(4, 3), (4, 3)])


def price(workload: Workload, tile: StackTile, cache: dict[Any, Any] | None = None) -> StackCost:
    accelerator = load_accelerator(META)
    core = accelerator.cores[0]
    return price_stack(workload, core, accelerator.offchip, workload.names, tile, {} if cache is None else cache)


def test_vertical_cache_holds_the_kept_rows_over_the_full_width() -> None:
    cost = price(two_layers(), StackTile(8, 4, caches_x=True, caches_y=True))
    # conv0 keeps 2 rows of 10 columns x 4 channels (1 B each); the input 2 rows of 12 columns x 1 channel
    assert cost.v_cache_bytes == 2 * 10 * 4 + 2 * 12 * 1
    assert cost.cache_level != DRAM
    for caches_x in (False, True):
        assert price(two_layers(), StackTile(8, 4, caches_x, caches_y=False)).v_cache_bytes == 0


def test_recompute_computes_more_macs_than_caching() -> None:
    workload = two_layers()
    cached = price(workload, StackTile(4, 4, True, True)).macs
    h_cached = price(workload, StackTile(4, 4, True, False)).macs
    recomputed = price(workload, StackTile(4, 4, False, False)).macs
    exact = sum(layer.macs for layer in workload)
    assert cached == exact
    # recompute: conv0 computes 6x6 per tile on 4 tiles instead of 10x10 once
    conv0 = workload["conv0"]
    per_pixel = conv0.macs // (conv0.OY * conv0.OX)
    assert recomputed == exact + (4 * 36 - 100) * per_pixel
    assert exact < h_cached < recomputed


def test_a_shared_cache_does_not_change_the_price() -> None:
    workload, cache = two_layers(), dict[Any, Any]()
    first = price(workload, StackTile(4, 8, True, False), cache)
    assert price(workload, StackTile(4, 8, True, False), cache) == first
    assert price(workload, StackTile(4, 8, True, False)) == first


def test_weights_homed_on_chip_are_not_counted_twice_nor_fetched_from_dram_per_tile() -> None:
    """ResNet-18's layer3_0 block (896 KiB of weights) fits the 1 MiB weight buffer: it is its only home.

    Every layer-tile reads its weights from the home (or a level below it), never from DRAM: the stack's
    DRAM traffic is its weights once plus its activations in and out, whatever the number of tiles.
    """
    from accelsched.models.registry import load_workload

    workload = load_workload("resnet18")
    layers = [n for n in workload.names if n.startswith("layer3_0")]
    accelerator = load_accelerator(META)
    cost = price_stack(workload, accelerator.cores[0], accelerator.offchip, layers, StackTile(2, 2, True, True), {})
    weights = sum(workload[n].weight_bytes for n in layers)
    assert cost.n_tiles == 49
    assert cost.weight_home == "sram_1MB_W"
    for tops in cost.tops:
        for name in layers:
            if workload[name].kind.has_w_operand:
                assert tops[name]["W"] != DRAM
    # the block input is read from DRAM by its two readers (conv1 and downsample), at most once each
    source = workload[workload[layers[0]].inputs[0]]
    activations = cost.dram_bytes - weights - workload[layers[-1]].output_bytes
    assert source.output_bytes <= activations <= 2 * source.output_bytes
