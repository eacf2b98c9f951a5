"""What the layer-parallel baselines of the atomic problem share: layer times on groups of engines, the exact
min-max engine allocation, contiguous regions and layer segments.

* :func:`layer_table`: the cycles of one sample of a layer split evenly over ``f``
  engines, ``f = 1..N`` (:func:`accelsched.problems.atomic.atoms.split_cycles`),
  made non-increasing (``f`` engines can always run what ``f' < f`` run).
* :func:`allocate`: integers ``f_i >= 1`` with ``sum f_i <= N`` minimizing
  ``max_i t_i(f_i)`` for tables ``t_i``, exactly, by the threshold search of
  :func:`accelsched.problems.allocation.min_max_allocation` (shared with SET's
  S-Cut allocation); engines left over then go one by one where they shorten a
  stage most (never raising the maximum).
* :func:`regions`: consecutive runs of the serpentine engine order, so a region is
  a compact strip of the mesh and consecutive regions are neighbours.
* :func:`balanced_segments`: layers (in workload order) cut into ``k`` contiguous
  segments of least maximum weight (the linear-partition DP).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from accelsched.hardware.spec import Accelerator
from accelsched.models.layer import Layer
from accelsched.problems.allocation import min_max_allocation
from accelsched.problems.atomic import split_cycles

__all__ = ["allocate", "balanced_segments", "layer_table", "regions"]


def layer_table(
    layer: Layer, accelerator: Accelerator, n_engines: int, samples: int = 1, max_rows: int | None = None
) -> list[int]:
    """``t(f)`` for ``f = 1..n_engines`` (index ``f - 1``), non-increasing (module docstring)."""
    table: list[int] = []
    for f in range(1, n_engines + 1):
        value = split_cycles(layer, accelerator, f, samples, max_rows)
        table.append(min(value, table[-1]) if table else value)
    return table


def allocate(tables: Sequence[Sequence[float]], total: int) -> list[int]:
    """Engines per stage minimizing the slowest stage (module docstring); ``tables[i][f - 1]`` is stage ``i``'s
    time on ``f`` engines, non-increasing in ``f``, at least ``total`` entries.

    Raises
    ------
    ValueError
        More stages than engines, or a table shorter than ``total``.
    """
    if len(tables) > total:
        raise ValueError(f"{len(tables)} stages need at least {len(tables)} engines, got {total}")
    if any(len(t) < total for t in tables):
        raise ValueError(f"every table needs {total} entries")
    counts = list(min_max_allocation(tables, total))
    for _ in range(total - sum(counts)):
        gain, stage = max((t[c - 1] - t[c] if c < len(t) else 0.0, -i)
                          for i, (t, c) in enumerate(zip(tables, counts, strict=True)))  # fmt: skip
        if gain <= 0:
            break
        counts[-stage] += 1  # stage is the negated index: ties go to the earliest stage
    return counts


def regions(order: Sequence[int], counts: Sequence[int]) -> list[list[int]]:
    """Consecutive runs of ``order`` of the given sizes."""
    if sum(counts) > len(order):
        raise ValueError(f"{sum(counts)} engines asked of {len(order)}")
    out, start = [], 0
    for count in counts:
        out.append(list(order[start : start + count]))
        start += count
    return out


def balanced_segments(weights: Sequence[float], k: int) -> list[range]:
    """``k`` contiguous segments of ``range(len(weights))`` (each non-empty) of least maximum total weight.

    Raises
    ------
    ValueError
        ``k`` not in ``1..len(weights)``.
    """
    n = len(weights)
    if not 1 <= k <= n:
        raise ValueError(f"{k} segments of {n} layers")
    prefix = [0.0]
    for w in weights:
        prefix.append(prefix[-1] + w)
    best = [[math.inf] * (n + 1) for _ in range(k + 1)]
    cut = [[0] * (n + 1) for _ in range(k + 1)]
    best[0][0] = 0.0
    for j in range(1, k + 1):
        for i in range(j, n - (k - j) + 1):
            for s in range(j - 1, i):
                value = max(best[j - 1][s], prefix[i] - prefix[s])
                if value < best[j][i]:
                    best[j][i], cut[j][i] = value, s
    bounds, i = [], n
    for j in range(k, 0, -1):
        s = cut[j][i]
        bounds.append(range(s, i))
        i = s
    return bounds[::-1]
