"""Accelerator spec validation."""

from __future__ import annotations

from typing import Any

import pytest

from accelsched.hardware.spec import Accelerator, Bus, Core, MemoryLevel, Mesh, OffChip
from accelsched.models.layer import OpKind

BUF = MemoryLevel("buf", 1024, 1.0, 1.0, 8, 8)


def core(i: int = 0, **kw: object) -> Core:
    args: dict[str, object] = {
        "id": i,
        "name": "c",
        "spatial": (("K", 4), ("C", 4)),
        "memories": (BUF,),
        "hierarchy": {"I": ("buf",), "W": ("buf",), "O": ("buf",)},
        "mac_energy_pj": 0.1,
    }
    args.update(kw)
    return Core(**args)  # type: ignore[arg-type]


def test_core_derived() -> None:
    c = core()
    assert c.n_macs == 16
    assert c.levels("W") == (BUF,)
    assert c.operands_of("buf") == ("I", "W", "O")
    assert c.top_level("O") is BUF
    assert c.supports(OpKind.POOL)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"spatial": (("Z", 4),)}, "spatial dimension 'Z' is not one of"),
        ({"spatial": (("K", 4), ("K", 2))}, "unrolled twice"),
        ({"spatial": (("K", 0),)}, "field spatial.K must be > 0, got 0"),
        ({"hierarchy": {"I": ("buf",), "W": ("buf",)}}, "hierarchy.O is missing"),
        ({"hierarchy": {"I": ("buf",), "W": ("nope",), "O": ("buf",)}}, "missing memory level 'nope'"),
        ({"memories": (BUF, MemoryLevel("x", 8, 1, 1, 1, 1))}, r"level\(s\) \['x'\] hold no operand"),
        ({"mac_energy_pj": -1.0}, "mac_energy_pj must be >= 0"),
    ],
)
def test_core_validation(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        core(**changes)


def test_memory_validation() -> None:
    with pytest.raises(ValueError, match="capacity_bytes must be > 0, got 0"):
        MemoryLevel("m", 0, 1, 1, 1, 1)
    with pytest.raises(ValueError, match="read_bandwidth_bytes_per_cycle must be > 0"):
        MemoryLevel("m", 8, 1, 1, -2, 1)


def test_mesh_geometry() -> None:
    mesh = Mesh(2, 3, 1.0, 8.0)
    assert mesh.position(4) == (1, 1)
    assert mesh.hops(0, 5) == 3
    assert mesh.dram_nodes == ((0, 0), (0, 2), (1, 0), (1, 2))
    assert mesh.dram_hops(1) == 1
    with pytest.raises(ValueError, match="outside the 2x3 mesh"):
        Mesh(2, 3, 1.0, 8.0, dram_nodes=((5, 0),))


def test_accelerator_cross_checks() -> None:
    off = OffChip(16, 10, 10)
    Accelerator("one", (core(),), off)
    with pytest.raises(ValueError, match=r"ids must be 0\.\.n-1"):
        Accelerator("a", (core(1),), off)
    with pytest.raises(ValueError, match="2 cores need an interconnect"):
        Accelerator("a", (core(0), core(1)), off)
    with pytest.raises(ValueError, match="a 2x2 mesh needs 4 cores, got 2"):
        Accelerator("a", (core(0), core(1)), off, Mesh(2, 2, 1.0, 8.0))
    acc = Accelerator("a", (core(0), core(1, supported=frozenset({OpKind.POOL}))), off, Bus(16, 1.0))
    assert [c.id for c in acc.cores_for(OpKind.CONV)] == [0]
    with pytest.raises(KeyError, match="no core 7"):
        acc.core(7)
