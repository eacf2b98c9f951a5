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
