"""Field checks shared by the parameter objects of the search engines (SA, GA, NSGA-II, stopping).

Each check raises a ``ValueError`` that names the owner, the field and the offending
value, e.g. ``GAParams: field elites must be an integer >= 0, got -1``.
"""

from __future__ import annotations

import math

__all__ = ["require_fraction", "require_int", "require_positive"]


def require_int(owner: str, name: str, value: object, low: int) -> int:
    """``value`` when it is an integer (not a bool) >= ``low``; else a ValueError naming the field."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{owner}: field {name} must be an integer >= {low}, got {value!r}")
    return value


def require_fraction(owner: str, name: str, value: object) -> float:
    """``value`` when it is a number (not a bool) in [0, 1]; else a ValueError naming the field."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"{owner}: field {name} must be a number in [0, 1], got {value!r}")
    return float(value)


def require_positive(owner: str, name: str, value: object) -> float:
    """``value`` when it is a finite number (not a bool) > 0; else a ValueError naming the field."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{owner}: field {name} must be a finite number > 0, got {value!r}")
    return float(value)
