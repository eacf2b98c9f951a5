"""The RA-tree instance: validation, CLI options, the E^n D^m objective."""

from __future__ import annotations

import pytest

from accelsched.errors import InputError
from accelsched.hardware import load_accelerator
from accelsched.models.registry import load_workload
from accelsched.problems.ra_tree import (
    PROBLEM,
    RATreeInstance,
    evaluate,
    evaluate_tree,
    make_instance,
    objective,
    sequential_tree,
    set_ls_tree,
)
from tests.problems.ra_tree.instances import diamond, instance


def test_instance_validation() -> None:
    with pytest.raises(ValueError, match="has no mesh of tiles"):
        RATreeInstance(diamond(), load_accelerator("cocco-simba-separate"))
    with pytest.raises(ValueError, match="energy_exponent must be an integer >= 0, got -1"):
        RATreeInstance(diamond(), load_accelerator("set-edge-4x4"), energy_exponent=-1)
    with pytest.raises(ValueError, match="cannot both be 0"):
        RATreeInstance(diamond(), load_accelerator("set-edge-4x4"), 0, 0)
    assert instance().n_tiles == 16 and instance().batch == 8


def test_make_instance_objective_defaults_and_errors() -> None:
    workload = diamond(8)
    edge = make_instance(workload, load_accelerator("set-edge-4x4"), {})
    cloud = make_instance(workload, load_accelerator("set-cloud-12x12"), {})
    assert (edge.energy_exponent, edge.delay_exponent) == (2, 1)
    assert (cloud.energy_exponent, cloud.delay_exponent) == (1, 2)
    assert make_instance(workload, load_accelerator("set-edge-4x4"), {"objective": "E1D1"}).delay_exponent == 1
    for options, message in (
        ({"objective": "ED"}, "bad objective 'ED'"),
        ({"objective": "E0D0"}, "cannot both be 0"),
        ({"tiles": "4"}, "unknown ra-tree option 'tiles'"),
    ):
        with pytest.raises(InputError, match=message):
            make_instance(workload, load_accelerator("set-edge-4x4"), options)
    with pytest.raises(InputError, match="has no mesh of tiles"):
        make_instance(workload, load_accelerator("cocco-simba-separate"), {})


def test_objective_is_energy_and_delay_to_their_powers() -> None:
    inst = instance()
    tree = sequential_tree(inst.workload)
    report = evaluate(inst, tree)
    assert objective(inst, tree, report) == pytest.approx(report.energy_pj**2 * report.latency_cycles)
    assert PROBLEM.solution_from_text is not None and PROBLEM.solution_from_text(tree.to_text(), "x") == tree


def test_the_l12_presets_add_sets_per_pe_buffers_and_change_little() -> None:
    """SET's artifact has per-PE L1 / L2 buffers (al1 8 KB, wl1 4 KB, ol1 2 KB, ol2 28 KB) under the 1 MB
    global buffer; with them the LS schedule of ResNet-50 costs within 1 % of the global-buffer-only tile."""
    workload = load_workload("set-resnet50")
    energies = []
    for name in ("set-edge-4x4", "set-edge-4x4-l12"):
        acc = load_accelerator(name)
        core = acc.cores[0]
        assert core.memory("glb").capacity_bytes == 1024 * 1024
        instance = make_instance(workload, acc, {})
        energies.append(evaluate_tree(instance, set_ls_tree(instance)).report.energy_pj)
    levels = {m.name: (m.capacity_bytes, m.instances) for m in load_accelerator("set-edge-4x4-l12").cores[0].memories}
    assert levels["al1"] == (8192, 16) and levels["wl1"] == (4096, 16)
    assert levels["ol1"] == (2048, 16) and levels["ol2"] == (28672, 16)
    assert energies[1] == pytest.approx(energies[0], rel=0.01)
    assert energies[1] != energies[0]
