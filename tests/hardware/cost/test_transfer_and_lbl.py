"""Transfers between places, and the layer-by-layer evaluator."""

from __future__ import annotations

from dataclasses import replace

import pytest

from accelsched.hardware.cost.layer_by_layer import evaluate_layer_by_layer, layer_by_layer_steps, part_of, split_layer
from accelsched.hardware.cost.layer_cost import layer_cost
from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.cost.transfer import core_to_core, core_to_dram, dram_to_core, mesh_multicast_links
from accelsched.hardware.spec import Accelerator, Bus, Mesh
from accelsched.models.layer import Layer, OpKind
from accelsched.models.random_dag import random_workload
from tests.hardware.cost.helpers import flat_core, offchip


def mesh_acc(rows: int = 2, cols: int = 3) -> Accelerator:
    cores = tuple(replace(flat_core(), id=i) for i in range(rows * cols))
    return Accelerator("m", cores, offchip(bandwidth=4.0), Mesh(rows, cols, 2.0, 8.0, dram_nodes=((0, 0),)))


def test_mesh_transfers_count_xy_hops() -> None:
    acc = mesh_acc()
    t = core_to_core(acc, 0, 5, 100)
    assert t.byte_hops == 300 and t.energy_pj == 600
    assert t.cycles == pytest.approx(100 / 8 + 3)
    assert core_to_core(acc, 4, 4, 100).energy_pj == 0
    d = dram_to_core(acc, 5, 40)
    assert d.byte_hops == 120
    assert d.energy_pj == pytest.approx(40 * 10 + 120 * 2)
    assert d.cycles == pytest.approx(max(40 / 4, 40 / 8 + 3))
    assert core_to_dram(acc, 0, 40).network_energy_pj == 0


def test_bus_transfer() -> None:
    cores = tuple(replace(flat_core(), id=i) for i in range(2))
    acc = Accelerator("b", cores, offchip(), Bus(16.0, 0.5))
    t = core_to_core(acc, 0, 1, 64)
    assert (t.energy_pj, t.byte_hops, t.cycles) == (32.0, 0.0, 4.0)


def test_multicast_tree_is_x_spine_with_y_branches() -> None:
    mesh = Mesh(3, 3, 1.0, 1.0)
    links = mesh_multicast_links(mesh, 0, [2, 8, 6])
    # row 0 from (0,0) to (0,2): 2 links; column 2 down to (2,2): 2 links; column 0 down to (2,0): 2 links
    assert len(links) == 6
    assert len(mesh_multicast_links(mesh, 4, [4])) == 0


def test_split_layer_parts_cover_the_layer() -> None:
    layer = Layer("c", OpKind.CONV, K=10, C=4, OY=7, OX=7, FY=3, FX=3, padding=(1, 1, 1, 1))
    for dim in ("K", "OY"):
        parts = split_layer(layer, dim, 4)
        assert sum(getattr(p, dim) for p in parts) == getattr(layer, dim)
        assert sum(p.macs for p in parts) == layer.macs
    with pytest.raises(ValueError, match=r"outside 1\.\.10"):
        part_of(layer, K=11)


def test_single_core_lbl_equals_sum_of_layer_costs() -> None:
    acc = Accelerator("one", (flat_core(capacity_bytes=1 << 14),), offchip(bandwidth=8.0))
    w = random_workload(8, 2)
    report = evaluate_layer_by_layer(w, acc)
    costs = [layer_cost(layer, acc.cores[0], acc.offchip) for layer in w]
    assert report.energy_pj == pytest.approx(sum(c.energy_pj for c in costs))
    assert report.latency_cycles == pytest.approx(sum(c.latency_cycles for c in costs))
    assert report.dram_bytes == pytest.approx(sum(c.dram_bytes for c in costs))
    assert report.macs == w.macs
    assert isinstance(report, CostReport)


def test_more_cores_never_slower_and_noc_counted() -> None:
    acc = mesh_acc()
    w = random_workload(10, 4)
    one = evaluate_layer_by_layer(w, acc, cores=[0])
    many = evaluate_layer_by_layer(w, acc)
    assert many.latency_cycles <= one.latency_cycles + 1e-9
    steps = layer_by_layer_steps(w, acc)
    assert many.noc_byte_hops == pytest.approx(sum(s.noc_byte_hops for s in steps))
    assert "noc" in many.energy_breakdown_pj


def test_layer_without_capable_core_is_an_error() -> None:
    only_pool = replace(flat_core(), supported=frozenset({OpKind.POOL}))
    acc = Accelerator("p", (only_pool,), offchip())
    with pytest.raises(ValueError, match="has no core among"):
        evaluate_layer_by_layer(random_workload(3, 0), acc)


def test_report_metrics() -> None:
    r = CostReport(10.0, 5.0, 1.0, 0.0, 2.0, 0.5, 7, {"mac": 4.0, "dram": 6.0})
    assert r.edp == 50.0
    assert r.metric("E^2*D") == 500.0
    assert r.metric("ED^2") == 250.0
    assert CostReport.from_dict(r.to_dict()) == r
    with pytest.raises(ValueError, match="unknown metric"):
        r.metric("speed")
    with pytest.raises(ValueError, match="differs from the sum of its breakdown"):
        CostReport(11.0, 5.0, 1.0, 0.0, 2.0, 0.5, 7, {"mac": 4.0, "dram": 6.0})
