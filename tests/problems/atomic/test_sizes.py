"""The candidate atom sizes of the size steps, and the ``sizes=`` option that carries a step's choice."""

from __future__ import annotations

import math

import pytest

from accelsched.errors import InputError
from accelsched.models.registry import load_workload
from accelsched.problems.atomic import (
    AtomSize,
    atom_chunks,
    atom_count,
    candidate_table,
    check_size,
    format_sizes,
    make_instance,
    parse_sizes,
    size_table,
)
from tests.problems.atomic.helpers import KC, YX, chain


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


def test_the_sizes_option_round_trips_and_builds_the_instance_of_those_sizes() -> None:
    sizes = {"a": AtomSize(4, 8, 32, 32), "b/x:y": AtomSize(8, 8, 16, 32)}
    assert parse_sizes(format_sizes(sizes)) == sizes
    given = {"a": AtomSize(4, 8, 32, 32), "b": AtomSize(8, 8, 32, 32)}
    instance = make_instance(chain(), KC, {"engines": "4", "sizes": format_sizes(given)})
    assert dict(instance.sizes or ()) == given and instance.meta["atoms"] == "sizes"
    labelled = make_instance(chain(), KC, {"engines": "4", "atoms": "exact", "sizes": format_sizes(given)})
    assert labelled.meta["atoms"] == "exact" and labelled.dag == instance.dag
    with pytest.raises(InputError, match=r"misses layers \['b'\]"):
        make_instance(chain(), KC, {"sizes": "a:4,8,32,32"})
    with pytest.raises(InputError, match="has no layer"):
        parse_sizes("4,8,32,32")
    with pytest.raises(InputError, match="sizes= given with atom= or atoms=even"):
        make_instance(chain(), KC, {"atoms": "even", "sizes": format_sizes(given)})


def test_sizes_chosen_by_a_solver_are_refused_without_the_registrys_step() -> None:
    for mode in ("exact", "sa"):
        with pytest.raises(InputError, match=f"atoms={mode} needs a solver.*accelsched.registry.make_instance"):
            make_instance(chain(), KC, {"atoms": mode})
