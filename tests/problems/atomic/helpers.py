"""Shared by the atomic problem's tests."""

from __future__ import annotations

import dataclasses

from accelsched.hardware import load_accelerator
from accelsched.hardware.spec import Accelerator
from accelsched.models.builder import NetBuilder
from accelsched.models.workload import Workload
from accelsched.problems.atomic import Atom, AtomDag, AtomicInstance

KC = load_accelerator("atomic-8x8-kc")
YX = load_accelerator("atomic-8x8-yx")


def with_buffer(accelerator: Accelerator, capacity_bytes: int, level: str = "sram") -> Accelerator:
    """``accelerator`` with every core's ``level`` memory resized to ``capacity_bytes``."""
    cores = tuple(
        dataclasses.replace(core, memories=tuple(
            dataclasses.replace(m, capacity_bytes=capacity_bytes) if m.name == level else m for m in core.memories))
        for core in accelerator.cores
    )  # fmt: skip
    return accelerator.replace(cores=cores)


def chain() -> Workload:
    """Two 3x3 convolutions, padding 1, 32 -> 32 -> 32 channels on an 8x8 map."""
    b = NetBuilder("chain", 32, 8, 8)
    x = b.conv(b.input, 32, 3, pad=1, name="a")
    b.conv(x, 32, 3, pad=1, name="b")
    return b.build()


def tiny() -> AtomicInstance:
    """Three abstract atoms of 5, 3 and 4 cycles, an edge 0 -> 2, two engines."""
    atoms = tuple(Atom(f"l{i}", 0, (0, 1), (0, 1), (0, 1), (0, 1), d, energy_pj=1.0, output_bytes=4)
                  for i, d in enumerate((5, 3, 4)))  # fmt: skip
    return AtomicInstance(AtomDag("t", atoms, ((0, 2, 4),)), 2)
