r"""Min-max allocation of identical units (tiles, engines) to stages with time tables: the exact threshold search.

Stage :math:`i` given :math:`f` units takes :math:`t_i(f)`, :math:`f = 1, \ldots, C`;
choose :math:`f_i \ge 1` with :math:`\sum_i f_i \le C` minimizing
:math:`\max_i t_i(f_i)`, units left over staying idle. Shared by SET's S-Cut tile
allocation (:mod:`accelsched.formulations.ra_tree_tiles`, which also states it as
an ILP) and the layer-parallel baselines of the atomic problem
(:mod:`accelsched.heuristics.atomic_regions`).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

__all__ = ["min_max_allocation", "running_min"]


def running_min(table: Sequence[float]) -> list[float]:
    """``min(table[:f])`` for every ``f``: the time with at most ``f`` units."""
    out: list[float] = []
    for value in table:
        out.append(value if not out else min(out[-1], value))
    return out


def min_max_allocation(tables: Sequence[Sequence[float]], units: int) -> tuple[int, ...]:
    r"""An optimal allocation by binary search over the bottleneck, without a solver.

    For a threshold :math:`z`, stage :math:`i` needs :math:`n_i(z) = \min\{f : t_i(f) \le z\}`
    units (the first index where the running minimum of its table drops to :math:`z`),
    and :math:`z` is achievable iff :math:`\sum_i n_i(z) \le C`. :math:`n_i` is
    non-increasing in :math:`z`, so achievability is monotone; the optimal bottleneck
    is a table entry; the search returns the smallest achievable entry :math:`z^*` and
    the allocation :math:`n_i(z^*)`, whose bottleneck is exactly :math:`z^*`. It is exact
    for any tables (exactly :math:`f` units per stage, idle units allowed), since
    :math:`n_i(z)` is the fewest units with which stage :math:`i` meets :math:`z` whether
    or not its table is monotone.

    ``tables[i][f - 1]`` is stage ``i``'s time on ``f`` units; at least ``units`` entries each (later ones are
    ignored) and at most ``units`` stages: the caller validates both. Returns the fewest units per stage that meet
    the optimal bottleneck; their sum may be below ``units``.
    """
    negated = [[-value for value in running_min(table[:units])] for table in tables]

    def need(z: float) -> list[int]:
        return [bisect.bisect_left(row, -z) + 1 for row in negated]

    candidates = sorted({value for table in tables for value in table[:units]})
    low = bisect.bisect_left(candidates, max(min(table[:units]) for table in tables))
    high = len(candidates) - 1  # the largest entry: every stage needs 1 unit, k <= C
    while low < high:
        middle = (low + high) // 2
        if sum(need(candidates[middle])) <= units:
            high = middle
        else:
            low = middle + 1
    return tuple(need(candidates[low]))
