"""Subset-row cuts of the partition models: valid for every partition, found where an LP violates
them, charged by the pricing at each column's exact reduced cost."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from accelsched.formulations.partition.common import VariantTable
from accelsched.formulations.partition.cuts import SUBSET_ROWS_PER_LAYER, SubsetRows, violated_subset_rows
from accelsched.formulations.partition.pricing import NeighbourSearch, PricingModel, TrafficTerms
from accelsched.problems.partition_columns import ColumnSet, enumerate_columns
from tests.formulations.partition.helpers import GENERATION_CONFIGS
from tests.problems.partition_oracle import small_instance


def test_a_cut_is_three_distinct_layers_added_once() -> None:
    cuts = SubsetRows(6)
    assert cuts.add([(4, 1, 2), (1, 2, 4), (0, 1, 5)]) == 2
    assert cuts.triples == [(1, 2, 4), (0, 1, 5)] and len(cuts) == 2
    for bad in [(1, 1, 2), (0, 1, 6), (-1, 2, 3), (1, 2)]:
        with pytest.raises(ValueError, match="three distinct layers of 6"):
            cuts.add([bad])


def test_a_subgraph_hits_a_cut_with_two_of_its_layers_and_pays_its_dual() -> None:
    cuts = SubsetRows(6)
    cuts.add([(1, 2, 4), (0, 1, 5)])
    assert cuts.hits((1, 2)) == [0] and cuts.hits((2, 3)) == [] and sorted(cuts.hits((0, 1, 2, 5))) == [0, 1]
    duals = [0.0] * 6 + [-3.0, -5.0]
    assert cuts.charge((0, 1, 2, 5), duals) == -8.0
    assert cuts.charge((0, 1, 2, 5), duals[:7]) == -3.0  # a cut beyond the duals counts 0
    assert cuts.padded(duals[:6]) == (*duals[:6], 0.0, 0.0)
    for wrong in (duals[:5], [*duals, -1.0]):
        with pytest.raises(ValueError, match="duals for 6 layers and 2 subset-row cuts"):
            cuts.padded(wrong)


@pytest.mark.parametrize("seed", range(20))
def test_every_partition_keeps_every_subset_row_cut(seed: int) -> None:
    """No two blocks of a partition share a layer, so at most one holds two layers of a triple."""
    rng = random.Random(seed)
    n = rng.randint(3, 12)
    labels = [rng.randrange(rng.randint(1, n)) for _ in range(n)]
    blocks = [tuple(i for i in range(n) if labels[i] == b) for b in set(labels)]
    cuts = SubsetRows(n)
    cuts.add([tuple(rng.sample(range(n), 3)) for _ in range(30)])
    for s in range(len(cuts)):
        assert sum(s in cuts.hits(block) for block in blocks) <= 1


def test_the_odd_cycle_of_three_columns_at_a_third_is_cut() -> None:
    """{0,1}, {1,2}, {0,2} (with more layers each) and {0,1,2} at 1/3 cover each of 0, 1, 2 once and
    give the cut on (0, 1, 2) 4/3; columns at 1/2 on two pairs do not violate it."""
    members = [(0, 1, 3), (1, 2, 4), (0, 2, 5), (0, 1, 2, 6)]
    assert violated_subset_rows(members, [1 / 3] * 4, 7, 10)[0] == (0, 1, 2)
    assert violated_subset_rows([(0, 1), (1, 2), (0, 3)], [0.5] * 3, 4, 10) == []
    assert violated_subset_rows([], [], 4, 10) == []


def test_a_round_takes_the_most_violated_cuts_and_few_through_a_layer() -> None:
    members = [(0, 1, 3), (1, 2, 3), (0, 2, 3), (0, 1, 2, 3)]
    found = violated_subset_rows(members, [1 / 3] * 4, 4, 10)
    assert found and all(sum(i in triple for triple in found) <= SUBSET_ROWS_PER_LAYER for i in range(4))
    assert len(violated_subset_rows(members, [1 / 3] * 4, 4, 1)) == 1
    single = violated_subset_rows(members, [1 / 3] * 4, 4, 10, per_layer=1)
    assert single and all(sum(i in triple for triple in single) <= 1 for i in range(4))
    with pytest.raises(ValueError, match="per_layer"):
        violated_subset_rows(members, [1 / 3] * 4, 4, 10, per_layer=0)


@pytest.mark.parametrize("config", GENERATION_CONFIGS)
@pytest.mark.parametrize("seed", range(3))
def test_the_pricing_charges_the_cuts_at_each_columns_exact_reduced_cost(config: dict[str, Any], seed: int) -> None:
    """With cuts and their duals (at most 0), a column favoured by the cover duals is the pricing MILP's
    optimum at its exact reduced cost, which counts the dual of each cut it hits; the local search
    prices it the same."""
    instance = small_instance(9, seed, **config)
    n = instance.n_layers
    table = VariantTable(instance, ColumnSet((), False, 1, 0))
    terms = TrafficTerms.of(instance)
    cuts = SubsetRows(n)
    rng = random.Random(seed)
    cuts.add([tuple(rng.sample(range(n), 3)) for _ in range(8)])
    pricing = PricingModel(instance, terms, table.metric_weight, subset_rows=cuts)
    search = NeighbourSearch(instance, table.metric_weight, cuts)
    weight = 10.0 * sum(abs(b) for b in terms.base) + 1e6
    columns = [c.members for c in enumerate_columns(instance).columns if len(c.members) > 1]
    charged = 0
    for members in rng.sample(columns, min(12, len(columns))):
        duals = [weight if i in members else -weight for i in range(n)]
        duals += [-rng.uniform(0.0, 0.01 * weight) for _ in range(len(cuts))]
        answer = pricing.solve(duals, math.inf)
        exact = table.metric_weight * terms.metric(instance, members) - sum(duals[i] for i in members)
        exact -= sum(duals[n + s] for s in cuts.hits(members))
        assert answer.complete and members in answer.sets
        assert math.isclose(answer.bound, exact, rel_tol=1e-9)
        found = search.reduced_cost(frozenset(members), duals)
        assert found is not None and math.isclose(found, exact, rel_tol=1e-9)
        charged += bool(cuts.hits(members))
    assert charged, "no column hit a cut"
