"""Accelerator specifications, presets and the shared cost model."""

from accelsched.hardware.presets_io import load_accelerator, preset_names
from accelsched.hardware.spec import Accelerator, Bus, Core, Crossbar, MemoryLevel, Mesh, OffChip

__all__ = [
    "Accelerator",
    "Bus",
    "Core",
    "Crossbar",
    "MemoryLevel",
    "Mesh",
    "OffChip",
    "load_accelerator",
    "preset_names",
]
