"""The restricted master of the partition models' column generation: the bound it proves from
any duals stays below the brute-force optimum, and its integer program cuts cycles.

The instances stop their enumeration at a tight budget, so the master misses columns and the
bound has to account for them."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import pytest

from accelsched.formulations.partition.common import VariantTable
from accelsched.formulations.partition.master import MasterLp, RestrictedMaster
from accelsched.formulations.partition.pricing import PricingModel, TrafficTerms
from accelsched.problems.partition_columns import ColumnSet, enumerate_columns
from tests.formulations.partition.helpers import GENERATION_CONFIGS, crossed, run
from tests.problems.partition_oracle import small_instance


class Unfinished(NamedTuple):
    """A small instance whose enumeration stopped at a tight budget, with the master LP over the
    listed columns, its pricing MILP and the brute-force optimum."""

    seed: int
    columns: ColumnSet
    master: RestrictedMaster
    lp: MasterLp
    pricing: PricingModel
    best: float


def unfinished(seeds: range) -> Iterator[Unfinished]:
    """The instances of ``seeds`` (10-12 layers, the configurations in turn) whose enumeration stops early."""
    for seed in seeds:
        instance = small_instance(10 + seed % 3, seed, **GENERATION_CONFIGS[seed % len(GENERATION_CONFIGS)])
        columns = enumerate_columns(instance, budget=20 + 15 * (seed % 3))
        if columns.complete:
            continue
        best = run("enumerate", instance).objective
        assert best is not None
        master = RestrictedMaster(VariantTable(instance, columns))
        lp = master.solve_lp()
        pricing = PricingModel(instance, TrafficTerms.of(instance), master.table.metric_weight, min_size=lp.min_size)
        yield Unfinished(seed, columns, master, lp, pricing, best)


def test_the_bound_counts_the_missing_columns_by_their_size() -> None:
    """LB with every column of fewer than ``s`` layers in the master (at most n // s missing ones in a
    partition) stays below the optimum, with the pricing solved to the end or stopped at its first set."""
    larger = 0
    for seed, columns, master, lp, pricing, best in unfinished(range(10)):
        larger += master.min_size > 2
        assert lp.min_size == master.min_size == max(2, columns.listed_below)
        for max_sets in (1, None):
            beta = pricing.solve(lp.duals, math.inf, max_sets=max_sets).bound
            if math.isfinite(beta):
                assert lp.bound(beta) <= best + 1e-6 * abs(best), (seed, max_sets)
    assert larger >= 3


def test_a_charge_per_layer_gives_a_valid_and_often_stronger_bound() -> None:
    """LB with duals lowered by a charge rho per layer stays below the optimum for any rho <= 0 (the
    ratio of the most negative set, half and twice it), and the ratio's charge beats the charge-free
    bound on some instances."""
    stronger = tested = 0
    for seed, _, _, lp, pricing, best in unfinished(range(16)):
        answer = pricing.solve(lp.duals, math.inf)
        if not answer.sets or answer.bound >= 0:
            continue
        tested += 1
        free = lp.bound(answer.bound)
        assert lp.bound(answer.bound, 0.0) == free
        ratio = answer.bound / len(answer.sets[-1])  # the optimal set is the last incumbent
        for rho in (ratio, ratio / 2, 2 * ratio):
            mu = pricing.solve([p + rho for p in lp.duals], math.inf).bound
            assert lp.bound(mu, rho) <= best + 1e-6 * abs(best), (seed, rho)
        mu = pricing.solve([p + ratio for p in lp.duals], math.inf).bound
        stronger += lp.bound(mu, ratio) > free + 1e-9 * abs(free)
    assert tested >= 6 and stronger >= 2, (tested, stronger)


@pytest.mark.parametrize("charge", [0.0, 1e-4, 1e-2])
def test_the_cutoff_for_a_level_is_where_the_bound_passes_it(charge: float) -> None:
    """``beta_above(level, rho)`` for a level below LB at beta = 0 (with the charge rho per layer,
    here ``-charge`` times the LP value per layer) is a beta < 0 whose LB passes the level by the
    relative 1e-9 of its margin, so LB at any beta above it passes too and LB a little below it does
    not; it is None for a level LB at beta = 0 does not pass. With brute force's optimum as the level
    (below LB at beta = 0), the pricing must meet a set below the cutoff, or LB would pass the
    optimum."""
    tested = 0
    for seed, _, _, lp, pricing, best in unfinished(range(10)):
        rho = -charge * max(1.0, abs(lp.value)) / lp.n
        top = lp.bound(0.0, rho)
        assert lp.beta_above(top, rho) is None and lp.beta_above(top + 1.0, rho) is None, seed
        for drop in (1e-6, 0.01, 0.2):
            level = top - drop * max(1.0, abs(top))
            beta = lp.beta_above(level, rho)
            assert beta is not None and beta < 0.0, (seed, drop)
            margin = 1e-9 * max(1.0, abs(level))
            assert level < lp.bound(beta, rho) <= level + 2 * margin, (seed, drop)
            below = beta * (1 + 1e-6) - 1e-6
            assert lp.bound(beta / 2, rho) > level and lp.bound(below, rho) < level + margin, (seed, drop)
        if charge:
            continue  # the pricing below is of the reduced costs, uncharged
        if best < top:
            beta = lp.beta_above(best)
            assert beta is not None
            answer = pricing.solve(lp.duals, beta)
            tested += 1
            assert answer.sets, (seed, "the optimum is below the level, so some set is below the cutoff")
    assert tested >= 3 or charge, tested


def test_the_bound_holds_at_any_duals_of_the_cover_rows() -> None:
    """``MasterLp.at`` moves the bound's terms to other duals (the inner points of the in-out
    separation): its reduced costs are those of the table's variants, recomputed, and LB with the
    pricing MILP's bound at those duals stays below the optimum for duals far from the LP's."""
    rng = np.random.default_rng(7)
    tested = 0
    for seed, _, master, lp, pricing, best in unfinished(range(12)):
        same_point = lp.at(lp.duals)
        assert same_point.base == pytest.approx(lp.base) and same_point.least == pytest.approx(lp.least)
        scale = max(abs(p) for p in lp.duals)
        for spread in (0.05, 0.5):
            duals = [p + spread * scale * rng.standard_normal() for p in lp.duals]
            moved = lp.at(duals)
            for j in range(len(lp.reduced)):
                shift = sum(duals[i] - lp.duals[i] for i in master.table.members(j))
                assert moved.reduced[j] == pytest.approx(lp.reduced[j] - shift, abs=1e-6 * scale), (seed, j)
            mu = pricing.solve(duals, math.inf).bound
            if math.isfinite(mu):
                tested += 1
                assert moved.bound(mu) <= best + 1e-6 * abs(best), (seed, spread)
    assert tested >= 10, tested


def test_the_integer_master_cuts_a_cycle_of_fused_subgraphs() -> None:
    """``{x, y}`` and ``{q, p}`` are the cheapest cover but need each other first: the cut forbids the pair."""
    instance = crossed(560)
    table = VariantTable(instance, enumerate_columns(instance))
    master = RestrictedMaster(table)
    found = master.solve_integer(None, None)
    assert found is not None and table.objective(found) == 4672
    assert master.cycles and all(len(cycle) == 2 for cycle in master.cycles)


def test_the_bound_counts_the_cycle_cuts_of_the_master() -> None:
    """A cut ``sum x <= |cycle| - 1`` has a dual <= 0 that adds ``dual x (|cycle| - 1)`` to the bound.
    With every column in the master (beta = 0) the bound is then the LP value (4160: every pair at
    1/2 keeps both cuts), not above it (4367.5 when that term was left out)."""
    instance = crossed(560)
    table = VariantTable(instance, enumerate_columns(instance))
    master = RestrictedMaster(table)
    assert master.solve_integer(None, None) is not None and len(master.cycles) == 2
    lp = master.solve_lp()
    assert lp.value == pytest.approx(4160.0, rel=1e-9)
    assert lp.bound(0.0) == pytest.approx(lp.value, rel=1e-6)


def with_subset_rows(master: RestrictedMaster, seed: int) -> RestrictedMaster:
    """``master`` with subset-row cuts on random triples of layers, and a pricing MILP sharing them."""
    rng = np.random.default_rng(seed)
    n = master.table.instance.n_layers
    master.subset_rows.add([tuple(int(i) for i in rng.choice(n, 3, replace=False)) for _ in range(6)])
    return master


def test_the_bound_with_subset_row_cuts_stays_below_the_optimum() -> None:
    """Subset-row cuts join the master's rows (their duals after the cover duals, at most 0) and the
    pricing charges them: LB at the LP's duals, and at other duals through ``MasterLp.at`` (whose
    reduced costs are those of the variants recomputed with the cuts they hit), stays below the
    optimum; with every column in the master and beta = 0 it is the LP value, at least the LP's
    without the cuts."""
    rng = np.random.default_rng(3)
    tested = 0
    for seed, _, master, _, _, best in unfinished(range(12)):
        with_subset_rows(master, seed)
        cuts = master.subset_rows
        lp = master.solve_lp()
        n = master.table.instance.n_layers
        assert len(lp.duals) == n + len(cuts) and max(lp.duals[n:]) <= 0.0
        pricing = PricingModel(
            master.table.instance, TrafficTerms.of(master.table.instance), master.table.metric_weight,
            min_size=lp.min_size, subset_rows=cuts,
        )  # fmt: skip
        mu = pricing.solve(lp.duals, math.inf).bound
        assert lp.bound(mu) <= best + 1e-6 * abs(best), seed
        scale = max(abs(p) for p in lp.duals)
        duals = [p + 0.3 * scale * rng.standard_normal() for p in lp.duals[:n]]
        duals += [min(0.0, s + 0.3 * scale * rng.standard_normal()) for s in lp.duals[n:]]
        moved = lp.at(duals)
        for j in range(len(lp.reduced)):
            members = master.table.members(j)
            rows = [*members, *(n + s for s in cuts.hits(members))] if len(members) > 1 else list(members)
            shift = sum(duals[r] - lp.duals[r] for r in rows)
            assert moved.reduced[j] == pytest.approx(lp.reduced[j] - shift, abs=1e-6 * scale), (seed, j)
        mu = pricing.solve(duals, math.inf).bound
        if math.isfinite(mu):
            tested += 1
            assert moved.bound(mu) <= best + 1e-6 * abs(best), seed
        whole = with_subset_rows(RestrictedMaster(VariantTable(master.table.instance, enumerate_columns(
            master.table.instance))), seed)  # fmt: skip
        complete = whole.solve_lp()
        assert complete.bound(0.0) == pytest.approx(complete.value, rel=1e-6)
        assert complete.value <= best + 1e-6 * abs(best)
        assert complete.value >= RestrictedMaster(whole.table).solve_lp().value - 1e-6 * abs(best)
    assert tested >= 6, tested
