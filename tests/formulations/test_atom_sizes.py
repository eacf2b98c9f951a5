"""Atom sizing: the exact variance scan against brute force, never above Algorithm 1's annealing; the size steps
of the registry's make_instance."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from accelsched.errors import InputError
from accelsched.formulations.atom_sizes import exact_sizes
from accelsched.hardware import load_accelerator
from accelsched.hardware.spec import Accelerator
from accelsched.heuristics.atom_sizes_sa import AtomSizeSAParams, sa_sizes
from accelsched.models.registry import load_workload
from accelsched.problems.atomic import PROBLEM, AtomSize, SizeTable, size_table, variance
from accelsched.registry import make_instance

KC = load_accelerator("atomic-8x8-kc")
YX = load_accelerator("atomic-8x8-yx")


def synthetic(seed: int) -> SizeTable:
    """2-5 layers with 1-6 candidates of random cycles (sizes are labels only)."""
    rng = np.random.default_rng(seed)
    layers, table = [], []
    for i in range(int(rng.integers(2, 6))):
        cycles = sorted({int(v) for v in rng.integers(1, 200, size=int(rng.integers(1, 7)))})
        layers.append(f"l{i}")
        table.append(tuple((AtomSize(1, 1, 1, k + 1), c) for k, c in enumerate(cycles)))
    return SizeTable(tuple(layers), tuple(table))


@pytest.mark.parametrize("seed", range(60))
def test_the_exact_scan_equals_brute_force(seed: int) -> None:
    table = synthetic(seed)
    best = min(variance([t for _, t in choice]) for choice in itertools.product(*table.candidates))
    sizes, value = exact_sizes(table)
    assert value == pytest.approx(best, abs=1e-9)
    assert variance(table.cycles(sizes)) == pytest.approx(value)


@pytest.mark.parametrize(("workload", "accelerator"), [("random:6:1", KC), ("random:7:2", YX), ("random:5:3", KC)])
def test_the_exact_variance_is_never_above_the_annealings(workload: str, accelerator: Accelerator) -> None:
    table = size_table(load_workload(workload), accelerator)
    _, exact = exact_sizes(table)
    for seed in range(3):
        sizes, annealed = sa_sizes(table, seed, AtomSizeSAParams(iterations=2000))
        assert exact <= annealed + 1e-9
        assert variance(table.cycles(sizes)) == pytest.approx(annealed)


def test_the_annealing_is_seeded_and_validated() -> None:
    table = synthetic(3)
    assert sa_sizes(table, 7) == sa_sizes(table, 7)
    with pytest.raises(ValueError, match="iterations >= 1"):
        AtomSizeSAParams(iterations=0)


def test_instances_take_exact_or_annealed_sizes_and_refuse_unknown_methods() -> None:
    workload = load_workload("random:4:1")
    exact = make_instance(PROBLEM, workload, KC, {"engines": "4", "atoms": "exact"})
    annealed = make_instance(PROBLEM, workload, KC, {"engines": "4", "atoms": "sa"})
    assert exact.dag.atoms and annealed.dag.atoms
    assert (exact.meta["atoms"], annealed.meta["atoms"]) == ("exact", "sa")
    with pytest.raises(InputError, match="use even, exact or sa"):
        make_instance(PROBLEM, workload, KC, {"atoms": "best"})
    with pytest.raises(InputError, match="both atom= and atoms="):
        make_instance(PROBLEM, workload, KC, {"atoms": "exact", "atom": "1,1,16,16"})
