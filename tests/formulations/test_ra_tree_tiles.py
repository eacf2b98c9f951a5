"""S-Cut tile allocation (SET): the ILP on every backend, the published procedure and the threshold search.

The references are independent of the module: brute force over every allocation (``f_i >= 1``,
``sum f_i <= C``) and, for the proportional case, the classic greedy (start from one tile each and
give each further tile to the currently slowest child), exact for ``max T_i / f_i``, in rationals.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
import re
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction

import pytest

from accelsched.formulations.ra_tree_tiles import (
    TileAllocationIlp,
    allocate_tiles,
    allocation_bottleneck,
    proportional_tables,
    published_allocation,
    threshold_allocation,
)
from accelsched.problems.ra_tree import balance_tiles
from accelsched.solvers import SolveOptions, Status, available_backends, solve

BACKENDS = available_backends()
REL = 1e-9


def close(a: float | None, b: float) -> bool:
    return a is not None and abs(a - b) <= REL * abs(b)


def brute_force(tables: Sequence[Sequence[float]], tiles: int) -> float:
    """The optimal bottleneck over every allocation with sizes >= 1 and at most ``tiles`` tiles."""
    best = math.inf
    for sizes in itertools.product(range(1, tiles + 1), repeat=len(tables)):
        if sum(sizes) <= tiles:
            best = min(best, max(table[f - 1] for table, f in zip(tables, sizes, strict=True)))
    return best


def greedy_optimum(npt: Sequence[float], tiles: int) -> Fraction:
    """Optimal ``max T_i / f_i`` by the greedy (each extra tile to the slowest child), exact."""
    sizes = [1] * len(npt)
    heap = [(-Fraction(t), i) for i, t in enumerate(npt)]
    heapq.heapify(heap)
    for _ in range(tiles - len(npt)):
        _, i = heapq.heappop(heap)
        sizes[i] += 1
        heapq.heappush(heap, (-Fraction(npt[i]) / sizes[i], i))
    return max(Fraction(t) / f for t, f in zip(npt, sizes, strict=True))


def random_npt(rng: random.Random, k: int, kind: int) -> list[float]:
    """Uniform reals, small integers (many ties), one-decimal values (inexact in binary), or log-normal."""
    if kind == 0:
        return [rng.uniform(0.1, 10.0) for _ in range(k)]
    if kind == 1:
        return [float(rng.randint(1, 10)) for _ in range(k)]
    if kind == 2:
        return [rng.randint(1, 10) / 10 for _ in range(k)]
    return [rng.lognormvariate(0.0, 1.5) for _ in range(k)]


def random_proportional(seed: int, count: int) -> Iterator[tuple[list[float], int]]:
    """``count`` seeded proportional instances ``(npt, tiles)``: 1-6 children, up to 16 tiles, every kind of NPT."""
    rng = random.Random(seed)
    for n in range(count):
        k = rng.randint(1, 6)
        tiles = rng.randint(k, 16)
        yield random_npt(rng, k, n % 4), tiles


def random_table(rng: random.Random, length: int, kind: int) -> list[float]:
    """Monotone non-increasing, capped with a per-tile overhead (non-monotone), or arbitrary."""
    if kind == 0:
        return sorted((rng.uniform(0.5, 10.0) for _ in range(length)), reverse=True)
    if kind == 1:
        work, cap, overhead = rng.uniform(1.0, 10.0), rng.randint(1, length), rng.uniform(0.0, 0.5)
        return [work / min(f, cap) + overhead * f for f in range(1, length + 1)]
    return [rng.uniform(0.5, 10.0) for _ in range(length)]


# -- by hand ------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_by_hand_proportional(backend: str) -> None:
    # (3, 1) on 4 tiles: shares (3, 1) are integers, both children take time 1.
    result = allocate_tiles(proportional_tables([3, 1], 4), 4, backend=backend)
    assert result.status is Status.OPTIMAL
    assert result.tiles == (3, 1) and result.bottleneck == 1.0 and result.used == 4
    # (1, 1, 1) on 4 tiles: the fourth tile cannot lower the bottleneck 1 (the ILP may leave it idle).
    result = allocate_tiles(proportional_tables([1, 1, 1], 4), 4, backend=backend)
    assert result.status is Status.OPTIMAL and result.bottleneck == 1.0
    assert result.tiles is not None and sorted(result.tiles)[:2] == [1, 1] and result.used in (3, 4)


def test_by_hand_published_and_threshold() -> None:
    assert published_allocation([3, 1], 4) == (3, 1)
    # Shares (4/3, 4/3, 4/3): floors 1 each, one leftover, ratios tie, the lowest index gets it.
    assert published_allocation([1, 1, 1], 4) == (2, 1, 1)
    assert threshold_allocation(proportional_tables([1, 1, 1], 4), 4) == (1, 1, 1)  # the fewest tiles
    assert threshold_allocation(proportional_tables([3, 1], 4), 4) == (3, 1)


def test_naive_proportional_rounding_is_not_optimal() -> None:
    # NPTs (1, 4) on 7 tiles: shares (1.4, 5.6), floors (1, 5), one leftover tile. Rounding by the
    # largest fractional part (Hamilton) gives it to the big child, (1, 6): bottleneck max(1, 4/6) = 1.
    # The small child loses more *relatively* (ratio floor/share 1/1.4 < 5/5.6), so SET gives the tile
    # to it, (2, 5): bottleneck max(1/2, 4/5) = 0.8, the optimum.
    tables = proportional_tables([1, 4], 7)
    assert allocation_bottleneck(tables, (1, 6)) == 1.0
    assert published_allocation([1, 4], 7) == (2, 5)
    assert allocation_bottleneck(tables, (2, 5)) == 0.8 == float(greedy_optimum([1, 4], 7))
    assert threshold_allocation(tables, 7) == (2, 5)
    assert allocate_tiles(tables, 7).bottleneck == 0.8


def test_published_needs_its_rounds_and_no_clamp() -> None:
    # Shares (0.5, 0.5, 2): clamping floors to 1 would ask for 4 > 3 tiles; floors (0, 0, 2) leave
    # one tile for child 0 (ratio 0), the next round gives child 1 its tile, child 2 keeps 1.
    assert published_allocation([1, 1, 4], 3) == (1, 1, 1)
    # Shares (4/3, 1, 1/3, 1/3, 2): two children below 1 but one leftover tile; later rounds fix it.
    assert published_allocation([4, 3, 1, 1, 6], 5) == (1, 1, 1, 1, 1)
    # A single child takes everything.
    assert published_allocation([2.5], 6) == (6,)


def test_non_monotone_table_leaves_tiles_idle() -> None:
    # Child 0 cannot use a second tile (it gets slower); child 1 is fastest on 3 tiles.
    # Optimum on 5 tiles: (1, 3), bottleneck 2, one tile idle; (1, 4) would take 2.5.
    tables = [[2.0, 5.0, 5.0, 5.0, 5.0], [6.0, 3.0, 2.0, 2.5, 2.5]]
    result = allocate_tiles(tables, 5)
    assert result.status is Status.OPTIMAL and result.tiles == (1, 3) and result.bottleneck == 2.0
    assert result.used == 4
    assert threshold_allocation(tables, 5) == (1, 3)
    assert brute_force(tables, 5) == 2.0


def test_longer_tables_are_cut_to_the_tiles() -> None:
    # Entries past `tiles` (here the tiny ones) are never used.
    tables = [[4.0, 2.0, 0.001], [4.0, 2.0, 0.001]]
    assert allocate_tiles(tables, 2).bottleneck == 4.0
    assert threshold_allocation(tables, 2) == (1, 1)


def test_mip_start_is_feasible_and_accepted() -> None:
    tables = proportional_tables([1.0, 2.5, 4.0], 9)
    ilp = TileAllocationIlp(tables, 9)
    allocation = published_allocation([1.0, 2.5, 4.0], 9)
    start = ilp.start(allocation)
    assert ilp.model.max_violation(start) == 0.0
    answer = solve(ilp.model, "highs", SolveOptions(), start)
    assert answer.status is Status.OPTIMAL and answer.values is not None
    assert close(allocation_bottleneck(tables, ilp.decode(answer.values)), allocation_bottleneck(tables, allocation))
    assert close(answer.objective, allocation_bottleneck(tables, allocation) / ilp.scale)


# -- the must-hold: ILP == published procedure ------------------------------------------------------


def test_ilp_and_published_procedure_agree_on_1000_random_instances() -> None:
    for npt, tiles in random_proportional(20230617, 1000):
        tables = proportional_tables(npt, tiles)
        published = published_allocation(npt, tiles)
        assert min(published) >= 1 and sum(published) == tiles, (npt, tiles, published)
        expected = allocation_bottleneck(tables, published)
        result = allocate_tiles(tables, tiles)
        assert result.status is Status.OPTIMAL, (npt, tiles, result)
        assert result.tiles is not None and min(result.tiles) >= 1 and result.used <= tiles
        assert close(result.bottleneck, expected), (npt, tiles, result, published)


def test_published_procedure_is_optimal_on_5000_random_instances() -> None:
    # No solver: the exact greedy optimum, in rationals, and the threshold search.
    for npt, tiles in random_proportional(7, 5000):
        published = published_allocation(npt, tiles)
        assert min(published) >= 1 and sum(published) == tiles, (npt, tiles, published)
        optimum = greedy_optimum(npt, tiles)
        assert max(Fraction(t) / f for t, f in zip(npt, published, strict=True)) == optimum, (npt, tiles)
        tables = proportional_tables(npt, tiles)
        assert close(allocation_bottleneck(tables, threshold_allocation(tables, tiles)), float(optimum))


# -- arbitrary tables: ILP and threshold search == brute force --------------------------------------


def test_ilp_matches_brute_force_on_200_random_tables() -> None:
    rng = random.Random(11)
    for n in range(200):
        k = rng.randint(1, 4)
        tiles = rng.randint(k, 8)
        tables = [random_table(rng, tiles, (n + i) % 3) for i in range(k)]
        result = allocate_tiles(tables, tiles)
        assert result.status is Status.OPTIMAL, (tables, tiles, result)
        assert result.tiles is not None and min(result.tiles) >= 1 and result.used <= tiles
        assert result.bottleneck == allocation_bottleneck(tables, result.tiles)
        assert close(result.bottleneck, brute_force(tables, tiles)), (tables, tiles, result)


@pytest.mark.parametrize("kind", [0, 1, 2], ids=["monotone", "capped-overhead", "arbitrary"])
def test_threshold_matches_brute_force(kind: int) -> None:
    rng = random.Random(100 + kind)
    for _ in range(400):
        k = rng.randint(1, 4)
        tiles = rng.randint(k, 8)
        tables = [random_table(rng, tiles, kind) for _ in range(k)]
        allocation = threshold_allocation(tables, tiles)
        assert min(allocation) >= 1 and sum(allocation) <= tiles, (tables, tiles, allocation)
        assert allocation_bottleneck(tables, allocation) == brute_force(tables, tiles), (tables, tiles)


# -- every backend -----------------------------------------------------------------------------------

FEW = [
    (proportional_tables([3.0, 1.0, 2.0], 7), 7),
    (proportional_tables([0.3, 0.7, 1.1, 5.0], 12), 12),
    ([[2.0, 5.0, 5.0, 5.0, 5.0], [6.0, 3.0, 2.0, 2.5, 2.5], [4.0, 2.2, 1.9, 1.8, 1.8]], 5),
    ([[9.0, 4.0, 6.0, 2.0, 7.0, 1.5], [3.0, 3.0, 3.0, 3.0, 3.0, 3.0]], 6),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("index", range(len(FEW)))
def test_every_backend_gives_the_optimal_bottleneck(backend: str, index: int) -> None:
    tables, tiles = FEW[index]
    # models of a few dozen binaries: the limit is only a safety net, far above any solve time
    result = allocate_tiles(tables, tiles, SolveOptions(time_limit_s=600.0), backend=backend)
    assert result.status is Status.OPTIMAL and result.backend == backend
    assert result.tiles is not None and result.used <= tiles
    assert close(result.bottleneck, brute_force(tables, tiles)), (backend, result)


@pytest.mark.parametrize("backend", BACKENDS)
def test_more_children_than_tiles_is_infeasible(backend: str) -> None:
    tables = proportional_tables([1.0, 2.0, 3.0], 2)
    result = allocate_tiles(tables, 2, backend=backend)
    assert result.status is Status.INFEASIBLE and result.tiles is None and result.bottleneck is None
    assert result.used == 0
    # The model itself is infeasible too, and every backend proves it.
    assert solve(TileAllocationIlp(tables, 2).model, backend).status is Status.INFEASIBLE


# -- error paths ---------------------------------------------------------------------------------------

ERRORS: list[tuple[Callable[[], object], str]] = [
    (lambda: allocate_tiles([], 4), "times must be a non-empty sequence of per-child time tables, got []"),
    (lambda: allocate_tiles([[1.0, 0.0]], 2), "times[0][1] must be a positive finite number, got 0.0"),
    (lambda: allocate_tiles([[1.0], [-2.0]], 1), "times[1][0] must be a positive finite number, got -2.0"),
    (lambda: allocate_tiles([[math.nan]], 1), "times[0][0] must be a positive finite number, got nan"),
    (lambda: allocate_tiles([[1.0, math.inf]], 2), "times[0][1] must be a positive finite number, got inf"),
    (lambda: allocate_tiles([[True]], 1), "times[0][0] must be a positive finite number, got True"),
    (lambda: allocate_tiles([[1.0, 0.5], [1.0]], 2), "times[1] has 1 entries, needs at least tiles = 2"),
    (lambda: allocate_tiles(["ab"], 2), "times[0] must be a sequence of times on 1, 2, ... tiles, got 'ab'"),  # type: ignore[list-item]
    (lambda: allocate_tiles([[1.0]], 0), "tiles must be an integer >= 1, got 0"),
    (lambda: allocate_tiles([[1.0, 1.0]], 2.0), "tiles must be an integer >= 1, got 2.0"),  # type: ignore[arg-type]
    (lambda: allocate_tiles([[1.0]], True), "tiles must be an integer >= 1, got True"),
    (lambda: allocate_tiles([[1.0]], 1, backend="nope"), "unknown backend 'nope'"),
    (lambda: TileAllocationIlp([], 3), "times must be a non-empty sequence of per-child time tables, got []"),
    (lambda: proportional_tables([], 3), "npt must be a non-empty sequence of positive NPTs, got []"),
    (lambda: proportional_tables([1, -2], 3), "npt[1] must be a positive finite number, got -2"),
    (lambda: proportional_tables([1.0], -1), "tiles must be an integer >= 1, got -1"),
    (lambda: published_allocation([1, math.inf], 3), "npt[1] must be a positive finite number, got inf"),
    (lambda: published_allocation([1, 2, 3], 2), "npt has 3 children, more than tiles = 2: every child needs a tile"),
    (lambda: published_allocation([1], 0), "tiles must be an integer >= 1, got 0"),
    (lambda: threshold_allocation([[1.0, 0.5]] * 3, 2), "times has 3 children, more than tiles = 2"),
    (lambda: threshold_allocation([[1.0, 0.5]], 3), "times[0] has 2 entries, needs at least tiles = 3"),
    (lambda: allocation_bottleneck([[1.0, 0.5]], (1, 1)), "allocation has 2 sizes for 1 children: (1, 1)"),
    (lambda: allocation_bottleneck([[1.0, 0.5]], (3,)), "allocation[0] must be an integer in 1..2, got 3"),
]


@pytest.mark.parametrize(("call", "message"), ERRORS, ids=[message for _, message in ERRORS])
def test_bad_input_raises_value_error(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


@pytest.mark.parametrize("seed", range(300))
def test_the_analyzers_water_filling_reaches_the_published_bottleneck(seed: int) -> None:
    """The RA-tree analyzer allocates by water-filling; with minimums of 1 it is the published optimum."""
    rng = random.Random(seed)
    k = rng.randint(1, 6)
    tiles = rng.randint(k, 16)
    npt = [rng.uniform(0.1, 10.0) for _ in range(k)]
    table = proportional_tables(npt, tiles)
    water = balance_tiles(npt, tiles)
    assert sum(water) == tiles
    assert allocation_bottleneck(table, water) == pytest.approx(
        allocation_bottleneck(table, published_allocation(npt, tiles)), rel=1e-12
    )
