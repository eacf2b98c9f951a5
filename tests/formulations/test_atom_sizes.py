"""Atom sizing: the exact variance scan against brute force, never above Algorithm 1's annealing; candidates."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from accelsched.errors import InputError
from accelsched.formulations.atom_sizes import SizeTable, exact_sizes, size_table, variance
from accelsched.hardware import load_accelerator
from accelsched.hardware.spec import Accelerator
from accelsched.heuristics.atom_sizes_sa import AtomSizeSAParams, sa_sizes
from accelsched.models.registry import load_workload
from accelsched.problems.atomic import AtomSize, make_instance
from accelsched.problems.atomic_atoms import atom_chunks, atom_count, candidate_table, check_size

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


def test_candidates_keep_the_pe_array_rule_and_fit_the_buffer() -> None:
    workload = load_workload("random:6:1")
    for accelerator in (KC, YX):
        table = size_table(workload, accelerator, max_atoms=16)
        for name, cands in zip(table.layers, table.candidates, strict=True):
            assert cands and [t for _, t in cands] == sorted(t for _, t in cands)
            for size, _ in cands:
                check_size(workload[name], size, accelerator.cores[0])


def test_every_layer_offers_parallel_blocks_enough_to_fill_the_engines_and_no_slow_atoms() -> None:
    """Blocks (atoms of a sample that can run at once; input-channel parts chain) are at least ``min_atoms`` where a
    layer can have that many, and no candidate runs the layer in lock step on the engines more than 1 / efficiency
    slower than the fastest."""
    workload = load_workload("random:6:1")
    table = size_table(workload, KC, max_atoms=64, min_atoms=16, efficiency=0.8)
    for name, cands in zip(table.layers, table.candidates, strict=True):
        layer = workload[name]
        every = candidate_table(layer, KC)
        most = max(c.count // atom_chunks(layer, c.size) for c in every)
        blocks = [atom_count(layer, size) // atom_chunks(layer, size) for size, _ in cands]
        assert min(blocks) >= min(16, most), (name, blocks)
        chunks = [atom_chunks(layer, size) for size, _ in cands]
        lock_step = [c * math.ceil(b / KC.n_cores) * cycles for c, b, (_, cycles) in zip(chunks, blocks, cands,
                                                                                          strict=True)]  # fmt: skip
        assert max(lock_step) * 0.8 <= min(lock_step)
    with pytest.raises(ValueError, match="efficiency must be in"):
        size_table(workload, KC, efficiency=0.0)


def test_the_annealing_is_seeded_and_validated() -> None:
    table = synthetic(3)
    assert sa_sizes(table, 7) == sa_sizes(table, 7)
    with pytest.raises(ValueError, match="iterations >= 1"):
        AtomSizeSAParams(iterations=0)


def test_instances_take_exact_or_annealed_sizes_and_refuse_unknown_methods() -> None:
    workload = load_workload("random:4:1")
    exact = make_instance(workload, KC, {"engines": "4", "atoms": "exact"})
    annealed = make_instance(workload, KC, {"engines": "4", "atoms": "sa"})
    assert exact.dag.atoms and annealed.dag.atoms
    with pytest.raises(InputError, match="use even, exact or sa"):
        make_instance(workload, KC, {"atoms": "best"})
    with pytest.raises(InputError, match="both atom= and atoms="):
        make_instance(workload, KC, {"atoms": "exact", "atom": "1,1,16,16"})
