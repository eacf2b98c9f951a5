r"""S-Cut tile allocation of SET (ISCA'23): an ILP, the published procedure and an exact threshold search.

Problem
-------
An S-Cut has :math:`k` children that run concurrently on disjoint groups of tiles of
a mesh with :math:`C` tiles. Child :math:`i` given :math:`f` tiles takes time
:math:`t_i(f)`, :math:`f = 1, \ldots, C`. Choose integers :math:`f_i \ge 1` with
:math:`\sum_i f_i \le C` that minimize the bottleneck :math:`\max_i t_i(f_i)`.

*Semantics.* :math:`t_i(f)` is the time of child :math:`i` with **exactly** :math:`f`
tiles, :math:`f_i` is the number of tiles *given* to child :math:`i`, and tiles given
to no child stay idle (hence :math:`\le C`). Nothing is assumed of a table but finite
positive values: a non-monotone table (a layer that cannot use more than some tiles,
or with overheads growing with the tile count) is used as it is, and the model picks
the best size itself. Because tiles may stay idle, the optimum equals the optimum with
every table replaced by its running minimum :math:`\min_{g \le f} t_i(g)` ("at most
:math:`f` tiles"): a child that would be slower on more tiles is simply given fewer.
Entries of a table beyond :math:`C` are never used.

In the *proportional* case, :math:`t_i(f) = T_i / f` where :math:`T_i > 0` is the
child's normalized processing time (NPT); :func:`proportional_tables` builds these tables.

Variables
---------
:math:`y_{i,f} \in \{0, 1\}` child :math:`i` gets :math:`f` tiles
(:math:`f = 1, \ldots, C`); :math:`z \ge 0` the bottleneck.

Model
-----
.. math::

    \min\ & z \\
    & \textstyle\sum_{f=1}^{C} y_{i,f} = 1 & \forall i \quad & \text{(one size per child)} \\
    & \textstyle\sum_{i} \sum_{f=1}^{C} f\, y_{i,f} \le C & & \text{(tile budget)} \\
    & z \ge \textstyle\sum_{f=1}^{C} t_i(f)\, y_{i,f} & \forall i \quad & \text{(bottleneck)}

The feasible points are exactly the allocations (one size per child, at most
:math:`C` tiles in all) and at a minimum :math:`z = \max_i t_i(f_i)`, so the model
is exact for arbitrary tables. With :math:`k > C` it is infeasible (every child needs
a tile). In :class:`TileAllocationIlp` the times are divided by the largest entry
(:attr:`TileAllocationIlp.scale`) so that the coefficients lie in :math:`(0, 1]`;
:func:`allocate_tiles` recomputes the bottleneck from the tables at the decoded
allocation and never reads it from the solver.

The published procedure
-----------------------
:func:`published_allocation` implements SET's "optimal HW-tile allocation" for the
proportional case (``Cluster::try_alloc`` in the SET artifact), in exact rational
arithmetic; see its docstring for the rounds and the proof of optimality.

The threshold search
--------------------
:func:`threshold_allocation` is an exact combinatorial algorithm: the optimal
bottleneck is one of the table entries; for a threshold :math:`z` child :math:`i`
needs :math:`n_i(z) = \min\{f : t_i(f) \le z\}` tiles, and :math:`z` is achievable
iff :math:`\sum_i n_i(z) \le C`; achievability is monotone in :math:`z`, so a binary
search over the sorted entries finds the optimum in :math:`O(kC \log(kC))`. It is the
fast exact path (no solver) and an independent check of the other two.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from accelsched.problems.allocation import min_max_allocation
from accelsched.solvers import LinearModel, SolveOptions, Status, Var, VarValues, quicksum, solve

__all__ = [
    "TileAllocation",
    "TileAllocationIlp",
    "allocate_tiles",
    "allocation_bottleneck",
    "proportional_tables",
    "published_allocation",
    "threshold_allocation",
]

Tables = tuple[tuple[float, ...], ...]


# -- validation ----------------------------------------------------------------------


def _check_tiles(tiles: object) -> int:
    """``tiles`` as an int, or ValueError."""
    if not isinstance(tiles, numbers.Integral) or isinstance(tiles, bool) or int(tiles) < 1:
        raise ValueError(f"tiles must be an integer >= 1, got {tiles!r}")
    return int(tiles)


def _check_time(name: str, value: object) -> float:
    """``value`` as a positive finite float, or ValueError naming it."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and number > 0:
            return number
    raise ValueError(f"{name} must be a positive finite number, got {value!r}")


def _check_npt(npt: Sequence[float]) -> tuple[float, ...]:
    """The NPTs as floats, or ValueError."""
    if isinstance(npt, str | bytes) or not isinstance(npt, Sequence) or len(npt) == 0:
        raise ValueError(f"npt must be a non-empty sequence of positive NPTs, got {npt!r}")
    return tuple(_check_time(f"npt[{i}]", value) for i, value in enumerate(npt))


def _check_tables(times: Sequence[Sequence[float]], tiles: int) -> Tables:
    """The tables cut to their first ``tiles`` entries (every entry is checked), or ValueError."""
    if isinstance(times, str | bytes) or not isinstance(times, Sequence) or len(times) == 0:
        raise ValueError(f"times must be a non-empty sequence of per-child time tables, got {times!r}")
    tables = []
    for i, table in enumerate(times):
        if isinstance(table, str | bytes) or not isinstance(table, Sequence):
            raise ValueError(f"times[{i}] must be a sequence of times on 1, 2, ... tiles, got {table!r}")
        if len(table) < tiles:
            raise ValueError(f"times[{i}] has {len(table)} entries, needs at least tiles = {tiles}")
        values = tuple(_check_time(f"times[{i}][{f}]", value) for f, value in enumerate(table))
        tables.append(values[:tiles])
    return tuple(tables)


def _check_fits(children: int, tiles: int, argument: str) -> None:
    if children > tiles:
        raise ValueError(f"{argument} has {children} children, more than tiles = {tiles}: every child needs a tile")


# -- tables and bottlenecks ----------------------------------------------------------


def proportional_tables(npt: Sequence[float], tiles: int) -> Tables:
    """The tables :math:`t_i(f) = T_i / f`, :math:`f = 1, \\ldots, C`, of the proportional case.

    Parameters
    ----------
    npt
        Normalized processing time :math:`T_i > 0` of each child.
    tiles
        Number of tiles :math:`C \\ge 1`.

    Returns
    -------
    tuple of tuple of float
        ``tables[i][f - 1]`` is the time of child ``i`` on ``f`` tiles.

    Raises
    ------
    ValueError
        ``npt`` is empty or holds a non-positive or non-finite value, or ``tiles < 1``.
    """
    tiles = _check_tiles(tiles)
    return tuple(tuple(t / f for f in range(1, tiles + 1)) for t in _check_npt(npt))


def allocation_bottleneck(times: Sequence[Sequence[float]], allocation: Sequence[int]) -> float:
    """The bottleneck :math:`\\max_i t_i(f_i)` of an allocation, read from the tables.

    Parameters
    ----------
    times
        Per-child time tables, ``times[i][f - 1]`` on ``f`` tiles.
    allocation
        Tiles per child, each in ``1 .. len(times[i])``.

    Returns
    -------
    float
        The largest child time.

    Raises
    ------
    ValueError
        The allocation does not have one size per child or a size is outside its table.
    """
    if len(allocation) != len(times):
        raise ValueError(f"allocation has {len(allocation)} sizes for {len(times)} children: {allocation!r}")
    for i, f in enumerate(allocation):
        if not isinstance(f, numbers.Integral) or isinstance(f, bool) or not 1 <= f <= len(times[i]):
            raise ValueError(f"allocation[{i}] must be an integer in 1..{len(times[i])}, got {f!r}")
    return max(float(times[i][f - 1]) for i, f in enumerate(allocation))


# -- the published procedure ---------------------------------------------------------


def published_allocation(npt: Sequence[float], tiles: int) -> tuple[int, ...]:
    r"""SET's optimal tile allocation for the proportional case, in exact arithmetic.

    What is implemented (``Cluster::try_alloc`` of the SET artifact, rounds instead of
    the tail recursion): with :math:`R` the children not yet fixed (all at first) and
    :math:`C_R` the tiles not yet given (:math:`C` at first), each round computes the
    ideal shares :math:`x_i = C_R T_i / \sum_{j \in R} T_j` and their floors
    :math:`a_i = \lfloor x_i \rfloor` for :math:`i \in R` and the leftover
    :math:`d = C_R - \sum_{i \in R} a_i`. If :math:`d = 0` every child of :math:`R`
    gets :math:`a_i` tiles and the procedure stops. Otherwise the :math:`d` children
    with the smallest ratio :math:`a_i / x_i` (ties by index) get :math:`a_i + 1` tiles
    and are fixed, and the next round runs on the rest with the tiles the rest's
    floors hold, :math:`\sum_{\text{rest}} a_i`. All :math:`C` tiles are given.

    The NPTs are converted to :class:`fractions.Fraction` (exactly, from their float
    values), so floors and ratio comparisons are exact; the artifact computes in
    doubles, where a share that should be an integer can floor one below and ties
    between ratios break by rounding noise.

    "At least 1 each" is a consequence, not a clamp: a child whose share is below 1
    has floor 0 and ratio 0, so it is among the first to get its tile (possibly in a
    later round). Clamping the floors to :math:`\max(1, a_i)` in one round would be
    wrong: NPTs (1, 1, 4) on 3 tiles have shares (0.5, 0.5, 2), clamped floors summing
    to 4 > 3.

    Why it is optimal (shown for the first round; the others are the same procedure on a
    smaller instance). Let :math:`z^*` be the optimal bottleneck; :math:`z^* \ge S / C`
    with :math:`S = \sum_i T_i` (since :math:`\sum_i T_i / z^* \le \sum_i f_i \le C`), so
    every child needs at most :math:`n_i = \lceil T_i / z^* \rceil \le \lceil x_i \rceil`
    tiles to meet :math:`z^*`, and :math:`\sum_i n_i \le C`. If :math:`d = 0` every share
    is an integer :math:`\ge 1` and the bottleneck is :math:`S / C \le z^*`. Otherwise
    :math:`d`, the sum of the fractional parts of the shares, is smaller than the number
    of fractional shares; these have ratio below 1 and the others ratio 1, so the fixed
    set :math:`F` (the :math:`d` smallest ratios) has fractional shares, and a fixed child's
    time :math:`T_i / (a_i + 1) < T_i / x_i = S / C \le z^*`. For the rest :math:`Q`
    (with :math:`C_Q = \sum_Q a_i` tiles), let :math:`\tau_i = T_i / a_i` be the time on
    the floor (:math:`\infty` if :math:`a_i = 0`); the fixed children have the largest
    :math:`\tau`. Either :math:`z^* < \tau_i` for every :math:`i \in F`: then
    :math:`n_i = a_i + 1` there, and :math:`\sum_Q n_i \le C - \sum_F (a_i + 1) = C_Q`, so
    :math:`Q` can meet :math:`z^*` on :math:`C_Q` tiles. Or :math:`z^* \ge \tau_j` for some
    :math:`j \in F`: then every :math:`i \in Q` has :math:`\tau_i \le \tau_j \le z^* < \infty`,
    so :math:`a_i \ge 1` and the floors themselves meet :math:`z^*` on :math:`C_Q` tiles.
    In both cases the subproblem on :math:`Q` is feasible with optimum :math:`\le z^*`,
    and by induction on the number of children the later rounds reach its optimum.
    Hence the bottleneck is :math:`z^*`, for any tie-breaking. Since :math:`d` is less
    than the number of children in the round, the last round always ends with
    :math:`d = 0`. (A single round is not enough: in NPTs (4, 3, 1, 1, 6) on 5 tiles two
    children have share below 1 and there is one leftover tile.)

    Parameters
    ----------
    npt
        Normalized processing time :math:`T_i > 0` of each child.
    tiles
        Number of tiles :math:`C`, at least the number of children.

    Returns
    -------
    tuple of int
        Tiles per child, each at least 1, summing to ``tiles``.

    Raises
    ------
    ValueError
        ``npt`` is empty or holds a non-positive or non-finite value, ``tiles < 1``, or
        there are more children than tiles.
    """
    exact = [Fraction(t) for t in _check_npt(npt)]
    tiles = _check_tiles(tiles)
    _check_fits(len(exact), tiles, "npt")
    allocation = [0] * len(exact)
    rest = list(range(len(exact)))
    remaining = tiles
    while rest:
        total = sum(exact[i] for i in rest)
        ideal = {i: exact[i] * remaining / total for i in rest}
        floors = {i: math.floor(ideal[i]) for i in rest}
        leftover = remaining - sum(floors.values())
        if leftover == 0:
            for i in rest:
                allocation[i] = floors[i]
            break
        fixed = set(sorted(rest, key=lambda i: (floors[i] / ideal[i], i))[:leftover])
        for i in fixed:
            allocation[i] = floors[i] + 1
            remaining -= allocation[i]
        rest = [i for i in rest if i not in fixed]
    return tuple(allocation)


# -- the threshold search ----------------------------------------------------------------


def threshold_allocation(times: Sequence[Sequence[float]], tiles: int) -> tuple[int, ...]:
    """An optimal allocation by binary search over the bottleneck, without a solver.

    The validated front of :func:`accelsched.problems.allocation.min_max_allocation`,
    whose docstring states the search and why it is exact for any tables (exactly
    :math:`f` tiles, idle tiles allowed, as in this module).

    Parameters
    ----------
    times
        Per-child time tables, ``times[i][f - 1]`` on ``f`` tiles, at least ``tiles``
        entries each (later entries are ignored).
    tiles
        Number of tiles :math:`C`, at least the number of children.

    Returns
    -------
    tuple of int
        The fewest tiles per child that meet the optimal bottleneck; their sum may be
        below ``tiles`` (the others stay idle).

    Raises
    ------
    ValueError
        Bad tables or tiles (see :func:`allocate_tiles`), or more children than tiles.
    """
    tiles = _check_tiles(tiles)
    tables = _check_tables(times, tiles)
    _check_fits(len(tables), tiles, "times")
    return min_max_allocation(tables, tiles)


# -- the ILP --------------------------------------------------------------------------


class TileAllocationIlp:
    """The ILP of the module docstring for per-child time tables.

    Parameters
    ----------
    times
        Per-child time tables, ``times[i][f - 1]`` on ``f`` tiles, at least ``tiles``
        entries each (later entries are ignored).
    tiles
        Number of tiles :math:`C`; with more children than tiles the model is infeasible.

    Attributes
    ----------
    model
        The :class:`LinearModel`.
    y
        ``y[i][f - 1]`` is the binary "child ``i`` gets ``f`` tiles".
    z
        The bottleneck, in units of :attr:`scale`.
    scale
        The largest table entry; the model's times are the tables divided by it.

    Raises
    ------
    ValueError
        Bad tables or tiles (see :func:`allocate_tiles`).
    """

    def __init__(self, times: Sequence[Sequence[float]], tiles: int) -> None:
        self.tiles = _check_tiles(tiles)
        self.times = _check_tables(times, self.tiles)
        self.scale = max(max(table) for table in self.times)
        self.model = LinearModel(f"tile-allocation-{len(self.times)}x{self.tiles}")
        m = self.model
        self.y = [[m.add_binary(f"y{i}_{f}") for f in range(1, self.tiles + 1)] for i in range(len(self.times))]
        self.z = m.add_var("z", 0.0, 1.0)
        self.one_size()
        self.tile_budget()
        self.bottleneck()
        self.objective()

    def one_size(self) -> None:
        """Every child gets exactly one number of tiles."""
        for i, row in enumerate(self.y):
            self.model.add(quicksum(row) == 1, name=f"one{i}")

    def tile_budget(self) -> None:
        """The children get at most ``tiles`` tiles in all."""
        terms = (f * y for row in self.y for f, y in enumerate(row, start=1))
        self.model.add(quicksum(terms) <= self.tiles, name="budget")

    def bottleneck(self) -> None:
        """The bottleneck is at least the (scaled) time of every child."""
        for i, (row, table) in enumerate(zip(self.y, self.times, strict=True)):
            time_i = quicksum((t / self.scale) * y for t, y in zip(table, row, strict=True))
            self.model.add(self.z >= time_i, name=f"bottleneck{i}")

    def objective(self) -> None:
        """Minimize the bottleneck."""
        self.model.minimize(self.z)

    def decode(self, values: VarValues) -> tuple[int, ...]:
        """Tiles per child of a solution: the size whose binary is largest."""
        return tuple(1 + max(range(self.tiles), key=lambda j: values[row[j]]) for row in self.y)

    def start(self, allocation: Sequence[int]) -> dict[Var | str, float]:
        """A complete MIP start from an allocation (tiles per child)."""
        values: dict[Var | str, float] = {
            y: float(f == allocation[i]) for i, row in enumerate(self.y) for f, y in enumerate(row, start=1)
        }
        values[self.z] = allocation_bottleneck(self.times, allocation) / self.scale
        return values


@dataclass(frozen=True)
class TileAllocation:
    """What :func:`allocate_tiles` returns.

    Attributes
    ----------
    tiles
        Tiles per child (each at least 1, at most the ``tiles`` given in all); None
        without a solution.
    bottleneck
        :math:`\\max_i t_i(f_i)` recomputed from the tables at ``tiles``; None without a solution.
    status
        :attr:`Status.OPTIMAL` when the solver proved optimality, :attr:`Status.FEASIBLE`
        when a limit stopped it with a solution, :attr:`Status.INFEASIBLE` with more
        children than tiles, otherwise the solver's status (a decoded allocation that
        breaks the rules gives :attr:`Status.ERROR`).
    backend
        The linear backend.
    runtime_s
        Wall-clock time of model building and solving, in seconds.
    """

    tiles: tuple[int, ...] | None
    bottleneck: float | None
    status: Status
    backend: str
    runtime_s: float

    @property
    def used(self) -> int:
        """Tiles given to the children in all (0 without a solution)."""
        return sum(self.tiles) if self.tiles else 0


def allocate_tiles(
    times: Sequence[Sequence[float]],
    tiles: int,
    options: SolveOptions | None = None,
    backend: str = "highs",
) -> TileAllocation:
    """Solve the tile allocation of an S-Cut with :class:`TileAllocationIlp` on a linear backend.

    Parameters
    ----------
    times
        Per-child time tables, ``times[i][f - 1]`` the time of child ``i`` with exactly
        ``f`` tiles (finite, positive; not necessarily monotone), at least ``tiles``
        entries each (later entries are ignored). :func:`proportional_tables` builds
        them from NPTs.
    tiles
        Number of tiles :math:`C \\ge 1`.
    options
        Solver limits; ``SolveOptions()`` when omitted.
    backend
        A linear backend of :func:`accelsched.solvers.solve` (``highs``, ``pulp-cbc``,
        ``pulp-highs``, ``pyomo-highs``).

    Returns
    -------
    TileAllocation
        The allocation, its bottleneck from the tables and the status. More children
        than tiles is :attr:`Status.INFEASIBLE` (no solver is called), not an exception.

    Raises
    ------
    ValueError
        ``times`` is empty, a table is shorter than ``tiles`` or holds a non-positive or
        non-finite value, or ``tiles < 1``; the message names the argument and the value.
        An unknown or unavailable backend (an :class:`~accelsched.errors.InputError`).
    """
    start = time.perf_counter()
    tiles = _check_tiles(tiles)
    tables = _check_tables(times, tiles)
    if len(tables) > tiles:
        return TileAllocation(None, None, Status.INFEASIBLE, backend, time.perf_counter() - start)
    ilp = TileAllocationIlp(tables, tiles)
    answer = solve(ilp.model, backend, options)
    status, allocation, worst = answer.status, None, None
    if answer.values is not None and status.has_solution:
        allocation = ilp.decode(answer.values)
        if sum(allocation) > tiles:
            status, allocation = Status.ERROR, None
        else:
            worst = allocation_bottleneck(tables, allocation)
    return TileAllocation(allocation, worst, status, backend, time.perf_counter() - start)
