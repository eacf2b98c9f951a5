"""Small hand-made cores for cost-model tests."""

from __future__ import annotations

from accelsched.hardware.spec import Accelerator, Core, MemoryLevel, OffChip


def flat_core(
    capacity_bytes: int = 1 << 30,
    spatial: tuple[tuple[str, int], ...] = (("K", 2), ("C", 2)),
    bandwidth: float = 1e6,
) -> Core:
    """One buffer holding every operand: read 1 pJ/B, write 2 pJ/B; MAC 0.5 pJ."""
    buf = MemoryLevel("buf", capacity_bytes, 1.0, 2.0, bandwidth, bandwidth)
    return Core(
        id=0,
        name="flat",
        spatial=spatial,
        memories=(buf,),
        hierarchy={"I": ("buf",), "W": ("buf",), "O": ("buf",)},
        mac_energy_pj=0.5,
    )


def offchip(bandwidth: float = 1e6) -> OffChip:
    """DRAM at 10 pJ/B both ways."""
    return OffChip(bandwidth, 10.0, 10.0)


def single(core: Core | None = None, bandwidth: float = 1e6) -> Accelerator:
    """A one-core accelerator around ``core``."""
    return Accelerator("test", (core or flat_core(),), offchip(bandwidth))


def multicore(
    spatials: tuple[tuple[tuple[str, int], ...], ...] = ((("K", 4), ("C", 4)), (("OX", 4), ("K", 4))),
    weight_bytes: int = 1 << 20,
    activation_bytes: int = 1 << 20,
    bus_bandwidth: float = 8.0,
    dram_bandwidth: float = 4.0,
    simd: bool = True,
) -> Accelerator:
    """Compute cores of the given spatial unrollings (conv/fc/matmul) and, with ``simd``, a pooling/add core.

    Each compute core has a weight buffer ``wbuf`` of ``weight_bytes`` (read 1, write 2 pJ/B)
    and an activation buffer ``abuf`` of ``activation_bytes`` (read 1.5, write 2.5 pJ/B),
    64 B/cycle each; the SIMD core one 64 KiB buffer. Bus 0.5 pJ/B; DRAM 10 pJ/B.
    """
    from accelsched.hardware.spec import Bus
    from accelsched.models.layer import OpKind

    cores = []
    for i, spatial in enumerate(spatials):
        memories = (
            MemoryLevel("wbuf", weight_bytes, 1.0, 2.0, 64, 64),
            MemoryLevel("abuf", activation_bytes, 1.5, 2.5, 64, 64),
        )
        cores.append(
            Core(
                id=i,
                name=f"pe{i}",
                spatial=spatial,
                memories=memories,
                hierarchy={"I": ("abuf",), "W": ("wbuf",), "O": ("abuf",)},
                mac_energy_pj=0.5,
                supported=frozenset({OpKind.CONV, OpKind.FC, OpKind.MATMUL}),
            )
        )
    if simd:
        buf = MemoryLevel("sbuf", 1 << 16, 1.0, 1.0, 64, 64)
        cores.append(
            Core(
                id=len(cores),
                name="simd",
                spatial=(("G", 8),),
                memories=(buf,),
                hierarchy={"I": ("sbuf",), "W": ("sbuf",), "O": ("sbuf",)},
                mac_energy_pj=0.1,
                supported=frozenset({OpKind.POOL, OpKind.ELTWISE}),
            )
        )
    return Accelerator("test-multicore", tuple(cores), offchip(dram_bandwidth), Bus(bus_bandwidth, 0.5))
