"""Shared by the atomic problem's tests."""

from __future__ import annotations

import dataclasses

from accelsched.hardware.spec import Accelerator


def with_buffer(accelerator: Accelerator, capacity_bytes: int, level: str = "sram") -> Accelerator:
    """``accelerator`` with every core's ``level`` memory resized to ``capacity_bytes``."""
    cores = tuple(
        dataclasses.replace(core, memories=tuple(
            dataclasses.replace(m, capacity_bytes=capacity_bytes) if m.name == level else m for m in core.memories))
        for core in accelerator.cores
    )  # fmt: skip
    return accelerator.replace(cores=cores)
