"""The machine conditions every benchmark records beside its figures."""

from __future__ import annotations

import os
import platform
from typing import Any

__all__ = ["conditions_line", "machine_conditions"]


def machine_conditions() -> dict[str, Any]:
    """Python version, platform, CPU count, niceness and load averages at the time of the call.

    Returns
    -------
    dict
        ``python``, ``platform``, ``cpu_count``, ``nice`` (None where unsupported) and
        ``load_average_1_5_15`` (1-, 5- and 15-minute load, rounded to 0.01; empty where
        unsupported). Timing figures measured on a loaded machine say so through it.
    """
    try:
        load = [round(v, 2) for v in os.getloadavg()]
    except (OSError, AttributeError):  # pragma: no cover - not on every platform
        load = []
    return {"python": platform.python_version(), "platform": platform.platform(), "cpu_count": os.cpu_count(),
            "nice": os.nice(0) if hasattr(os, "nice") else None, "load_average_1_5_15": load}  # fmt: skip


def conditions_line(conditions: dict[str, Any]) -> str:
    """``Python X, N CPUs, load average a / b / c`` for a report, from :func:`machine_conditions` output."""
    load = " / ".join(f"{v:.1f}" for v in conditions.get("load_average_1_5_15", []))
    return f"Python {conditions.get('python')}, {conditions.get('cpu_count')} CPUs, load average {load or '-'}"
