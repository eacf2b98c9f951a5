"""What the layer-parallel baselines share: the min-max allocation against SET's allocation ILP and brute force,
the balanced segments against brute force, regions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from accelsched.formulations.ra_tree_tiles import allocate_tiles
from accelsched.heuristics.atomic_regions import allocate, balanced_segments, regions


def tables(seed: int) -> tuple[list[list[float]], int]:
    """2-4 stages on 4-9 engines, non-increasing random tables (plateaus included)."""
    rng = np.random.default_rng(seed)
    engines = int(rng.integers(4, 10))
    out = []
    for _ in range(int(rng.integers(2, 5))):
        steps = np.maximum(0, rng.integers(-3, 40, size=engines))
        out.append([float(v) for v in np.maximum(1, 400 - np.cumsum(steps))])
    return out, engines


@pytest.mark.parametrize("seed", range(40))
def test_the_allocation_reaches_the_ilps_bottleneck_and_spends_spare_engines_usefully(seed: int) -> None:
    times, engines = tables(seed)
    counts = allocate(times, engines)
    assert all(c >= 1 for c in counts) and sum(counts) <= engines
    bottleneck = max(t[c - 1] for t, c in zip(times, counts, strict=True))
    ilp = allocate_tiles(times, engines)
    assert bottleneck == pytest.approx(ilp.bottleneck)
    choices = (c for c in itertools.product(range(1, engines + 1), repeat=len(times)) if sum(c) <= engines)
    best = min(max(t[c - 1] for t, c in zip(times, choice, strict=True)) for choice in choices)
    assert bottleneck == best
    if sum(counts) < engines:  # spare engines stay idle only when no stage gets faster with one more
        assert all(t[c - 1] == t[c] for t, c in zip(times, counts, strict=True) if c < engines)


def test_the_allocation_refuses_more_stages_than_engines() -> None:
    with pytest.raises(ValueError, match="3 stages need at least 3 engines, got 2"):
        allocate([[1.0, 1.0]] * 3, 2)


@pytest.mark.parametrize("seed", range(20))
def test_balanced_segments_are_contiguous_and_of_least_maximum_weight(seed: int) -> None:
    rng = np.random.default_rng(seed)
    weights = [float(w) for w in rng.integers(1, 50, size=int(rng.integers(2, 9)))]
    k = int(rng.integers(1, len(weights) + 1))
    segments = balanced_segments(weights, k)
    assert [i for s in segments for i in s] == list(range(len(weights))) and all(len(s) for s in segments)
    best = min(max(sum(weights[a:b]) for a, b in itertools.pairwise((0, *cuts, len(weights))))
               for cuts in itertools.combinations(range(1, len(weights)), k - 1))  # fmt: skip
    assert max(sum(weights[i] for i in s) for s in segments) == best
    with pytest.raises(ValueError, match="segments of"):
        balanced_segments(weights, len(weights) + 1)


def test_regions_are_consecutive_runs_of_the_order() -> None:
    assert regions([0, 1, 2, 3, 7, 6], [2, 3]) == [[0, 1], [2, 3, 7]]
    with pytest.raises(ValueError, match="7 engines asked of 6"):
        regions([0, 1, 2, 3, 7, 6], [4, 3])
