"""How the RA-tree evaluator moves tensors on the mesh: SET's unicast and interleaved DRAM ports by default."""

from __future__ import annotations

import pytest

from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.transfer import dram_port_groups, interleaved_dram_ports
from accelsched.hardware.spec import Mesh
from accelsched.models.builder import NetBuilder
from accelsched.problems.ra_tree import NocModel, RATreeInstance, evaluate_tree, make_instance, sequential_tree


def _one_conv() -> RATreeInstance:
    net = NetBuilder("one", 64, 16, 16, batch=1)
    net.conv(net.input, 256, 3, pad=1, name="a")
    return RATreeInstance(net.build(), load_accelerator("set-edge-4x4"), 2, 1)


def test_the_default_is_sets_unicast_over_the_two_nearest_dram_groups() -> None:
    assert RATreeInstance(_one_conv().workload, load_accelerator("set-edge-4x4")).noc == NocModel(False, 2)
    mesh = load_accelerator("set-edge-4x4").interconnect
    assert isinstance(mesh, Mesh)
    assert dram_port_groups(mesh) == ((0, 4), (8, 12), (3, 7), (11, 15))
    # tile 5 (row 1, col 1): the left top half (1.5 hops on average), then the left bottom half (2.5; the
    # right top half ties at 2.5 and comes later in SET's order)
    assert interleaved_dram_ports(mesh, 5, 2) == (0, 4, 8, 12)
    assert interleaved_dram_ports(mesh, 5, 4) == (0, 4, 8, 12, 3, 7, 11, 15)


def test_unicast_byte_hops_are_every_part_s_share_over_its_ports() -> None:
    instance = _one_conv()
    mesh = instance.accelerator.interconnect
    assert isinstance(mesh, Mesh)
    cost = evaluate_tree(instance, sequential_tree(instance.workload))
    run = cost.leaves["a"]
    layer = instance.workload["a"]

    def mean_hops(tile: int) -> float:
        ports = interleaved_dram_ports(mesh, tile, 2)
        return sum(mesh.hops(tile, p) for p in ports) / len(ports)

    expected = sum(
        mean_hops(tile) * (layer.weight_bytes * fw + layer.input_bytes * fi + layer.output_bytes / len(run.tiles))
        for tile, fw, fi in zip(run.tiles, run.weight_fractions, run.input_fractions, strict=True)
    )
    assert cost.report.noc_byte_hops == pytest.approx(expected)
    multicast = evaluate_tree(RATreeInstance(instance.workload, instance.accelerator, 2, 1, NocModel(True, 0)),
                              sequential_tree(instance.workload))  # fmt: skip
    assert multicast.report.noc_byte_hops < cost.report.noc_byte_hops


def test_options_choose_the_noc_model() -> None:
    acc = load_accelerator("set-edge-4x4")
    workload = _one_conv().workload
    assert make_instance(workload, acc, {}).noc == NocModel(False, 2)
    assert make_instance(workload, acc, {"noc": "multicast", "dram": "nearest"}).noc == NocModel(True, 0)
    with pytest.raises(Exception, match="bad noc"):
        make_instance(workload, acc, {"noc": "broadcast"})
