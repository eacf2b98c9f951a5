"""Branch-and-price of the partition models: the rules, the nodes, and exactness against brute force."""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math
import random
import re
import time
from collections.abc import Sequence
from typing import Any

import pytest

from accelsched.formulations.partition import branch as partition_branch
from accelsched.formulations.partition import colgen as partition_colgen
from accelsched.formulations.partition import fixed_capacity as partition_fixed
from accelsched.formulations.partition.branch import BranchAndPrice, Node, strong_choice, tree_note
from accelsched.formulations.partition.colgen import ColumnGeneration
from accelsched.formulations.partition.colgen_core import Outcome
from accelsched.formulations.partition.colgen_params import ColumnGenerationParams
from accelsched.formulations.partition.common import InnerPoint, OpenNode, VariantTable
from accelsched.formulations.partition.master import MasterLp, Probe, RestrictedMaster
from accelsched.formulations.partition.pricing import PricingModel, TrafficTerms
from accelsched.formulations.partition.proof import prepare
from accelsched.formulations.partition.proof_params import BranchParams, ProofParams, ProofSettings
from accelsched.formulations.partition.rules import PairRule
from accelsched.problems.partition import Metric, PartitionInstance
from accelsched.problems.partition_columns import ColumnSet, enumerate_columns
from accelsched.solvers import SolveOptions, Status
from tests.formulations.partition.helpers import FORCED, crossed, favouring, generated, run, same, woven
from tests.problems.partition_oracle import brute_force, small_instance

FIXED_CONFIGS: list[dict[str, Any]] = [
    {},
    {"shared": True, "act_kb": (5,)},
    {"act_kb": (3,), "weight_kb": (2,)},
    {"act_kb": (64,), "weight_kb": (64,)},
]
"""Fixed capacities (branch-and-price runs only there): as the column-generation tests', without the
candidate lists of co-exploration."""


def random_rules(instance: PartitionInstance, seed: int) -> frozenset[PairRule]:
    """One to three pair rules on distinct pairs of layers."""
    rng = random.Random(seed)
    pairs = rng.sample([(i, j) for i in range(instance.n_layers) for j in range(i + 1, instance.n_layers)], 3)
    return frozenset(PairRule(i, j, rng.random() < 0.5) for i, j in pairs[: rng.randint(1, 3)])


def keeps(members: tuple[int, ...], rules: frozenset[PairRule]) -> bool:
    """The rules' meaning, written out: together = both or neither, apart = not both."""
    for rule in rules:
        first, second = rule.first in members, rule.second in members
        if rule.together and first != second:
            return False
        if not rule.together and first and second:
            return False
    return True


DEFAULTS = BranchParams()
"""The tree's default limits."""

TREE_ALONE_PARAMS = BranchParams(prune_ratio=10.0, node_integer_s=0.0)
"""No node settled by its integer program, none pruned by the incumbent (only those whose bound is far
above it: a node its rules leave without a partition): the tree alone decides."""


def forced(**fields: Any) -> ColumnGenerationParams:
    """:data:`FORCED` (the listing given up at once: branching decides) with ``fields`` changed."""
    return dataclasses.replace(FORCED, **fields)


def test_a_pair_rule_needs_two_ordered_layers() -> None:
    with pytest.raises(ValueError, match="first < second"):
        PairRule(3, 3, True)
    assert PairRule(1, 4, True).admits({1, 4, 5}) and not PairRule(1, 4, True).admits({1, 5})
    assert PairRule(1, 4, False).admits({1, 5}) and not PairRule(1, 4, False).admits({1, 4})


@pytest.mark.parametrize("seed", range(6))
def test_a_node_holds_exactly_the_columns_that_keep_its_rules(seed: int) -> None:
    """The master holds at 0 the variants whose subgraph breaks a rule, in the LP and in the integer
    program, and leaves them out of the bound's least reduced cost: over every column, the integer
    program is brute force's optimum among the partitions that keep the rules, and the LP bounds it."""
    instance = small_instance(8, seed, act_kb=(6,), weight_kb=(4,))
    table = VariantTable(instance, enumerate_columns(instance))
    master = RestrictedMaster(table)
    master.rules = random_rules(instance, seed)
    broken = {j for j in range(len(table.variants)) if not keeps(table.members(j), master.rules)}
    assert broken, "the rules forbid nothing: the test would prove nothing"
    assert set(map(int, master.forbidden().nonzero()[0])) == broken
    lp = master.solve_lp()
    assert math.isfinite(lp.value) and not broken & set(lp.support)
    assert all(math.isinf(lp.reduced[j]) for j in broken)
    best, _ = brute_force(instance, lambda block: keeps(block, master.rules))
    found = master.solve_integer(None, None)
    if math.isinf(best):
        assert found is None
        return
    assert found is not None and same(table.objective(found), best), (seed, best)
    assert lp.bound(0.0) <= best + 1e-6 * abs(best)


@pytest.mark.parametrize("seed", range(4))
def test_the_pricing_admits_exactly_the_sets_that_keep_the_rules(seed: int) -> None:
    """Under rules, a column favoured by the duals is the pricing's optimum when it keeps them and is
    never returned when it breaks one; once the rules are lifted, every column is admitted again."""
    instance = small_instance(9, seed, act_kb=(6,), weight_kb=(4,))
    columns = [c.members for c in enumerate_columns(instance).columns if len(c.members) > 1]
    pricing = PricingModel(instance, TrafficTerms.of(instance), 1.0)
    rules = random_rules(instance, seed)
    kept = broken = 0
    for members in random.Random(seed).sample(columns, min(16, len(columns))):
        pricing.impose(rules)
        answer = pricing.solve(favouring(instance, members), math.inf)
        if keeps(members, rules):
            kept += 1
            assert answer.complete and members in answer.sets, members
        else:
            broken += 1
            assert all(keeps(found, rules) for found in answer.sets)
            assert members not in answer.sets
        pricing.impose(())
        assert members in pricing.solve(favouring(instance, members), math.inf).sets
    assert kept and broken, (kept, broken)


def test_branching_proves_the_optimum_where_the_lp_is_fractional(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """On ``crossed`` with 600 B of activations the LP takes every conv-add pair at 1/2 (4160 B), and
    its integral covers form cycles (cut by the integer programs): the tree branches and proves
    4672 B. Each node's line is logged as it ends, with the nodes solved and the prune level."""
    caplog.set_level(logging.INFO, logger=partition_branch.LOGGER.name)
    instance = crossed(600)
    best, _ = brute_force(instance)
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None, params=FORCED)
    root = generation.run(None)
    assert not root.complete and root.converged and root.bound is not None and root.bound < best - 500
    tree = BranchAndPrice(generation)
    outcome = tree.run(None)
    assert outcome.complete and outcome.nodes > 1 and outcome.incumbent is not None
    assert table.objective(outcome.incumbent) == best == 4672
    assert outcome.bound == best  # a whole number of bytes: no partition lies strictly between
    assert outcome.tree == tuple(tree.log)
    assert_tree_logged(tree.log, open_at_deadline=False)
    logged = [r.getMessage() for r in caplog.records if r.name == partition_branch.LOGGER.name]
    assert len(logged) == len(tree.log)
    assert all(message.startswith(f"{line}; ") for message, line in zip(logged, tree.log, strict=True))
    assert logged[-1].endswith(f"; {outcome.nodes} nodes solved, prune level {tree.prune_level():.12g}")
    assert not generation.master.rules and not generation.pricing.rules  # the root's model again


def assert_tree_logged(log: list[str], *, open_at_deadline: bool) -> None:
    """Every line of a tree's log names a node, its rules and its bound; every node branched on a pair
    is followed by its two children, each with the parent's rules and one more on that pair."""
    nodes: dict[int, tuple[frozenset[str], str]] = {}
    for line in log:
        match = re.fullmatch(r"node (\d+) \[([^]]*)\]: (.+), bound (\S+)", line)
        assert match, line
        serial, rules, how, bound = match.groups()
        float(bound)
        nodes[int(serial)] = (frozenset(rules.split()), how)
    assert 0 in nodes and not nodes[0][0]  # the root is logged, without rules
    ends = (
        "pruned",
        "settled",
        "branched on",
        "priced again",
        *(("open at the deadline", "open at the node limit") if open_at_deadline else ()),
    )
    for rules, how in nodes.values():
        assert any(end in how for end in ends), how
        branched = re.fullmatch(r"branched on (\d+) and (\d+)(?: \(strong branching over .+\))?", how)
        if branched:
            first, second = branched.groups()
            extended = [other - rules for other, _ in nodes.values() if rules < other and len(other) == len(rules) + 1]
            children = set().union(*extended)
            assert {f"{first}+{second}", f"{first}|{second}"} <= children, (how, children)


def test_the_tree_note_repeats_the_log_up_to_its_limit() -> None:
    lines = DEFAULTS.tree_note_lines
    log = tuple(f"node {serial} []: pruned, bound 1" for serial in range(lines + 3))
    note = tree_note(log, lines)
    assert note.startswith("tree: node 0 []: pruned, bound 1; node 1 []") and note.endswith("; (3 more)")
    assert note.count("pruned") == lines
    assert tree_note(log[:2], lines) == "tree: node 0 []: pruned, bound 1; node 1 []: pruned, bound 1"


@pytest.mark.parametrize("seed", range(24))
def test_branch_and_price_agrees_with_brute_force(seed: int) -> None:
    """Through the MILP model, with the listing forced to give up and no node pruned by its bound
    (only an integer program or an integral vertex settles one): the optimum is still brute force's."""
    instance = small_instance(6 + seed % 3, seed, **FIXED_CONFIGS[seed % len(FIXED_CONFIGS)])
    best, _ = brute_force(instance)
    never_pruned = ProofParams(colgen=FORCED, branch=BranchParams(prune_ratio=math.inf))
    result = generated("milp-highs", instance, never_pruned)
    assert result.status is Status.OPTIMAL and same(result.objective, best), (seed, result.objective, best)
    assert result.bound is not None and result.bound <= best + 1e-6 * abs(best)


FRACTIONAL = [(10, 700), (10, 1000), (37, 700), (51, 700), (60, 800), (60, 1000), (75, 800), (76, 800)]
FRACTIONAL += [(79, 700), (83, 700), (92, 800), (92, 1000), (96, 1000), (104, 700), (118, 800), (118, 1000)]
"""(seed, activation bytes) of :func:`woven` instances whose LP over every column has a fractional vertex."""

BRANCHING = [(10, 700), (10, 1000), (37, 700), (75, 800), (76, 800), (96, 1000), (104, 700)]
"""The :data:`FRACTIONAL` instances whose tree branches when their listing gives up at once."""

TREE_ALONE = [(10, 700), (10, 1000), (37, 700), (60, 800), (75, 800), (76, 800), (92, 800), (92, 1000)]
TREE_ALONE += [(96, 1000), (104, 700), (118, 800)]
"""The :data:`FRACTIONAL` instances whose tree branches when no node is settled by its integer program
and none is pruned by an incumbent (the other five finish at the root or in its one node)."""

RESUMED = [(10, 700), (10, 1000), (37, 700), (75, 800), (76, 800), (96, 1000), (104, 700)]
"""The :data:`TREE_ALONE` instances whose tree, stopped after every node, is resumed at least once (the
other four end in the run that starts it)."""

BANDED = [(10, 1000), (37, 700), (60, 1000), (79, 700), (83, 700), (96, 1000), (104, 700), (118, 1000)]
""":data:`FRACTIONAL` instances whose trees, with energy as the metric and the pricing's tolerance at 1e-4,
prune a node whose bound lies between U - n eps |U| and U - eps |U| (ten of the sixteen do; these eight)."""


def rooted(
    seed: int, act: int, params: ColumnGenerationParams = FORCED
) -> tuple[float, VariantTable, ColumnGeneration, Outcome]:
    """Brute force's optimum of ``woven(seed, act)``, its table from the smallest enumeration, and the
    root's column generation over it with ``params``, run to its end (complete, or handed to a tree)."""
    instance = woven(seed, act)
    best, _ = brute_force(instance)
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None, params=params)
    return best, table, generation, generation.run(None)


@pytest.mark.parametrize(
    ("settle", "cuts", "strong"), [(True, True, 8), (False, True, 8), (False, False, 8), (False, False, 1)]
)
def test_the_tree_alone_reaches_brute_force_where_the_lp_is_fractional(settle: bool, cuts: bool, strong: int) -> None:
    """On instances whose LP is fractional, with the listing given up at once: the tree proves brute
    force's optimum. Without ``settle`` no node is settled by its integer program, and only those
    whose bound is far above the incumbent's (a node its rules leave without a partition, whose LP
    keeps an artificial variable) are pruned: branching down to integral vertices (and cycle cuts)
    decides, the tree alone. Either way, on the instances whose tree branches then (:data:`TREE_ALONE`,
    :data:`BRANCHING`), and every one of them must branch. With ``cuts``, the nodes get subset-row
    cuts before they branch (some must), and the pricing charges them; a root whose cuts leave its LP
    where it was, and turn up an integral vertex of it, is settled without branching (and
    counted with the trees that branch). With ``strong`` pairs probed, some node is branched by
    strong branching; with one, the pair nearest 1/2 is taken unprobed."""
    params = dataclasses.replace(
        DEFAULTS if settle else TREE_ALONE_PARAMS,
        strong_candidates=strong,
        subset_row_rounds=DEFAULTS.subset_row_rounds if cuts else 0,
    )
    branched, cut, probed, infeasible, undecided = 0, 0, 0, 0, 0
    cases = BRANCHING if settle else TREE_ALONE
    for seed, act in cases:
        best, table, generation, root = rooted(seed, act)
        if root.complete:  # the listing's first solve found nothing below the gap
            assert root.incumbent is not None and same(table.objective(root.incumbent), best), seed
            undecided += generation.stats.phase_one_open
            continue
        outcome = BranchAndPrice(generation, params).run(None)
        infeasible += generation.stats.phase_one_infeasible
        undecided += generation.stats.phase_one_open
        assert outcome.complete and outcome.incumbent is not None, (seed, act, outcome.stopped)
        assert same(table.objective(outcome.incumbent), best), (seed, act, table.objective(outcome.incumbent), best)
        assert outcome.bound is not None and outcome.bound <= best + 1e-6 * abs(best)
        assert_tree_logged(list(outcome.tree), open_at_deadline=False)
        at_once = any("pricing again cannot raise its bound" in line for line in outcome.tree)
        branched += outcome.nodes > 1 or at_once  # the root's cuts may turn up an integral vertex of its LP
        cut += len(generation.cuts) > 0
        probed += any("strong branching over" in line for line in outcome.tree)
    assert branched == len(cases), branched
    assert bool(probed) == (strong > 1), probed
    assert undecided == 0
    assert bool(cut) == cuts, cut
    if not settle and not cuts:  # nodes whose rules leave no partition, proven so by phase one
        assert infeasible >= 3, infeasible


def test_pricing_to_the_level_stays_exact() -> None:
    """Roots and nodes whose LP lies above their prune level price below ``MasterLp.beta_above``'s
    cutoff, lower than the pricing's tolerance (some do, on these instances), and are pruned or
    settled from what that pricing proves: every tree still proves brute force's optimum, with a
    valid bound."""
    lowered = 0
    for seed, act in BRANCHING:
        best, table, generation, root = rooted(seed, act)
        outcome = root if root.complete else BranchAndPrice(generation).run(None)
        lowered += generation.stats.rounds_to_level
        assert outcome.complete and outcome.incumbent is not None, (seed, act)
        assert same(table.objective(outcome.incumbent), best), (seed, act)
        assert outcome.bound is not None and outcome.bound <= best + 1e-6 * abs(best), (seed, act)
    assert lowered >= 3, lowered


def test_a_cutoff_below_the_optimum_is_proven_with_steps_to_the_level() -> None:
    """Column generation with a cutoff at 0.8 of brute force's optimum (a pair of the capacity
    decomposition that holds no better partition) ends complete, settled by its bound or with every
    column below its gap listed, and its bound stays below the optimum. Every round is exact (no
    heuristic pricing), so the Dinkelbach steps run, and those whose charge's bound at 0 passes the
    level price below 0, to the level (some do, on these instances)."""
    stepped = 0
    for seed, act in BRANCHING:
        instance = woven(seed, act)
        best, _ = brute_force(instance)
        generation = ColumnGeneration(
            VariantTable(instance, enumerate_columns(instance, budget=1)),
            None,
            cutoff=0.8 * best,
            params=ColumnGenerationParams(stall_rounds=0),
        )
        outcome = generation.run(None)
        stepped += generation.stats.steps_to_level
        assert outcome.complete, (seed, act)
        assert outcome.bound is not None and outcome.bound <= best + 1e-6 * abs(best), (seed, act)
    assert stepped >= 3, stepped


def test_a_reach_prices_the_root_past_its_cutoff_to_the_lp_optimum(caplog: pytest.LogCaptureFixture) -> None:
    """With a cutoff at 0.8 of brute force's optimum the root settles as soon as its bound passes it.
    With a reach at the LP optimum over every column (the capacity decomposition's, for the pairs
    within a pair) its pricing goes on to it: the bound is the LP optimum (the complete enumeration's
    master) less at most one step (these objectives are whole bytes: a bound above U - 1 passes U),
    still at most the optimum, and the work ends complete without a listing. Without the reach the
    bound is lower on two of these instances (their LP is fractional). A reach above the first
    master's LP value changes nothing: no bound can pass it (the LP value only falls), so the root
    stops where it does without one. Each root records when its bound passed the cutoff, and one with
    a reach logs it at its end, with its bound and the level its last round priced to (the cutoff's
    when the reach is above every LP value)."""
    lower = 0
    caplog.set_level(logging.INFO, logger=partition_colgen.LOGGER.name)
    for seed, act in BRANCHING:
        instance = woven(seed, act)
        best, _ = brute_force(instance)
        optimum = RestrictedMaster(VariantTable(instance, enumerate_columns(instance))).solve_lp(vertex=True).value
        first = RestrictedMaster(VariantTable(instance, enumerate_columns(instance, budget=1))).solve_lp().value
        outcomes = []
        for reach in ((), (optimum,), (2.0 * first,)):
            table = VariantTable(instance, enumerate_columns(instance, budget=1))
            generation = ColumnGeneration(table, None, cutoff=0.8 * best, reach=reach)
            caplog.clear()
            start = time.perf_counter()
            outcome = generation.run(None)
            elapsed = time.perf_counter() - start
            assert outcome.complete and outcome.listed == 0 and outcome.bound is not None, (seed, act, reach)
            assert generation.settled_s is not None and 0.0 <= generation.settled_s <= elapsed
            logged = [record.getMessage() for record in caplog.records]
            assert len(logged) == (1 if reach else 0), logged
            assert not reach or logged[0].startswith(f"root with a reach: complete, bound {outcome.bound:.7g} after ")
            assert not reach or f"cutoff passed after {generation.settled_s:.1f} s" in logged[0]
            # the level of the last round: the reach's below the LP value, else the cutoff's
            priced_to = generation.priced_to
            assert priced_to is not None and (not reach or logged[0].endswith(f"; last priced to {priced_to:.7g}"))
            levels = {generation.prune_level()} | ({generation._below(optimum)} if reach == (optimum,) else set())
            assert priced_to in levels, (seed, act, reach, priced_to, levels)
            outcomes.append(outcome)
        plain, reached, beyond = (outcome.bound for outcome in outcomes)
        assert plain is not None and reached is not None and beyond is not None
        tolerance = 1e-6 * abs(optimum)
        assert optimum - 1.0 - tolerance <= reached <= best + 1e-6 * abs(best), (seed, act, reached, optimum)
        assert beyond == plain and outcomes[2].rounds == outcomes[0].rounds, (seed, act, plain, beyond)
        lower += plain < reached - 1.0
    assert lower >= 2, lower


def test_phase_one_proves_a_node_without_partitions() -> None:
    """On ``crossed`` with 600 B, the two convolutions ``x`` and ``q`` share a subgraph only with an
    add, and three layers do not fit: no partition keeps them together. The node's LP keeps an
    artificial variable, and phase one proves the node empty (bound infinite); apart, it is not."""
    instance = crossed(600)
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None, params=FORCED)
    root = generation.run(None)
    inner, inner_bound = generation.inner, generation.inner_bound  # the root's: valid in both children
    assert root.converged and inner is not None and inner_bound is not None
    x, q = sorted(instance.cost_model.index[name] for name in ("x", "q"))
    for together in (True, False):
        rules = frozenset({PairRule(x, q, together)})
        lp = generation.solve_node(rules, inner, inner_bound, None, math.inf)
        assert lp is not None
        if together:
            assert generation.bound == math.inf and lp.artificial > 0.5
        else:
            assert generation.bound is not None and generation.bound < 4672 + 1 and lp.artificial == 0.0


def test_a_node_rates_its_inner_point_by_the_bound_it_proves() -> None:
    """A node's bound may have been proven at other duals than the inner point it starts from (the tree
    keeps the best bound beside the best inner point). Started from the forced traffic's duals under
    the root's bound, above theirs, the node rates them by their own bound at its first LP, so that
    a point proven in the node, below the root's bound, still replaces them; its inner point ends
    with a bound it proves (at most that of its duals at the node's last LP, :meth:`MasterLp.at`,
    and at most the enumeration's optimum), not the bound it was handed. Rated by the root's bound,
    the forced duals were kept on every seed whose node proved no more than the root. Handed a bound
    below theirs, a node rises to it at once."""
    rated = 0
    for seed in range(8):
        instance = small_instance(9 + seed % 4, seed, **FIXED_CONFIGS[seed % len(FIXED_CONFIGS)])
        table = VariantTable(instance, enumerate_columns(instance, budget=3))
        generation = ColumnGeneration(table, None)
        forced, forced_bound = generation.inner, generation.inner_bound
        assert forced is not None and forced_bound is not None
        generation.run(None)
        root_bound = generation.bound
        assert root_bound is not None
        if root_bound <= forced_bound + 1e-6 * abs(root_bound):
            continue  # the forced traffic is the root's bound: nothing to rate
        lp = generation.solve_node(frozenset(), forced, root_bound, None, math.inf)
        assert lp is not None and generation.inner is not None and generation.inner_bound is not None
        tolerance = instance.n_layers * generation.params.pricing_eps * max(1.0, abs(lp.value)) + 1e-9
        own = lp.at(generation.inner).bound(0.0)
        assert generation.inner_bound <= own + tolerance, (seed, generation.inner_bound, own)
        best = run("enumerate", instance).objective
        assert best is not None and generation.inner_bound <= best + 1e-6 * abs(best)
        assert generation.inner != forced and generation.inner_bound > forced_bound, seed
        generation.rounds = generation.done  # the next node stops at its first LP, rated
        low = forced_bound - 0.5 * abs(forced_bound) - 1.0
        assert generation.solve_node(frozenset(), forced, low, None, math.inf) is None
        assert generation.inner == forced and generation.inner_bound == pytest.approx(forced_bound, rel=1e-9)
        assert generation.bound == generation.inner_bound  # a node's bound rises to its inner point's
        rated += 1
    assert rated >= 4, rated


def test_a_tree_stopped_early_gives_the_least_open_bound() -> None:
    """A tree stopped after the root (its node limit) leaves the root's children open: no proof, the
    root's bound."""
    table = VariantTable(crossed(600), enumerate_columns(crossed(600), budget=1))
    generation = ColumnGeneration(table, None, params=FORCED)
    root = generation.run(None)
    tree = BranchAndPrice(generation)
    outcome = tree.run(None, node_limit=1)
    assert not outcome.complete and outcome.bound == root.bound and outcome.incumbent is not None
    assert "node limit reached during branch-and-price (1 nodes solved, 2 open" in outcome.stopped
    assert len(outcome.tree) == 3 and "branched on" in outcome.tree[0]
    assert all(line.endswith(f"open at the node limit, bound {root.bound:.12g}") for line in outcome.tree[1:])
    assert_tree_logged(tree.log, open_at_deadline=True)


def test_a_node_whose_lp_vertex_the_deadline_stops_is_left_open_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a machine too slow for any LP in the time left (every LP with a deadline stops at once),
    the root of a tree whose deadline has passed is left open at the deadline with its bound, neither
    cut nor branched on an LP it did not solve, nor reported as a vertex that keeps an artificial
    variable; resumed with time, the tree proves brute force's optimum."""
    instance = crossed(600)
    best, _ = brute_force(instance)
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None, params=FORCED)
    root = generation.run(None)
    highs = RestrictedMaster._highs

    def starved(master: RestrictedMaster, time_limit: float | None) -> Any:
        h = highs(master, time_limit)
        if time_limit is not None and time_limit < 1.0:
            h.setOptionValue("time_limit", 1e-9)
        return h

    monkeypatch.setattr(RestrictedMaster, "_highs", starved)
    tree = BranchAndPrice(generation)
    outcome = tree.run(time.perf_counter() - 1.0)
    assert not outcome.complete and outcome.bound == root.bound and outcome.incumbent is not None
    assert (
        outcome.stopped
        == f"time limit reached during branch-and-price (1 nodes solved, 1 open, bound {root.bound:.12g})"
    )
    assert outcome.tree == (f"node 0 []: open at the deadline, bound {root.bound:.12g}",)
    assert outcome.left is not None and not generation.cuts.triples
    (left,) = outcome.left.nodes
    assert (left.rules, left.cut_rounds, left.inner.bound) == (frozenset(), 0, root.bound)
    resumed = BranchAndPrice(ColumnGeneration(table, outcome.incumbent, params=FORCED)).run(None, resume=outcome.left)
    assert resumed.complete and resumed.incumbent is not None and same(table.objective(resumed.incumbent), best)


GIVING_UP = [(10, 700), (79, 700), (83, 700), (92, 800), (92, 1000), (104, 700), (118, 800), (118, 1000)]
""":data:`FRACTIONAL` instances with ``LISTING_SHARE`` 0: five give the listing up, three complete at its
first solve; of the five, (118, 800) completes later as its bound passes the incumbent's objective, four
go to the tree."""


def test_a_listing_that_gives_up_for_time_is_the_last() -> None:
    """A listing stopped by ``LISTING_SHARE`` (here 0: after its first solve) marks the listing slow:
    none is tried again, before the master is optimal nor after, and branching decides, still
    exactly, unless the bound passes the incumbent's objective first. (A first solve that finds
    nothing below the gap completes the proof instead.)"""
    params = ColumnGenerationParams(close_gap=math.inf, listing_share=0.0)  # a listing at every new inner bound
    slow = branched = 0
    for seed, act in GIVING_UP:
        instance = woven(seed, act)
        best, _ = brute_force(instance)
        table = VariantTable(instance, enumerate_columns(instance, budget=1))
        generation = ColumnGeneration(table, None, params=params)
        outcome = generation.run(time.perf_counter() + 600.0)
        if generation.slow:
            slow += 1
            stats = generation.stats
            assert stats.listings == stats.listings_slow == 1, (seed, act, stats)
        if outcome.complete:  # by the listing's first solve, or a bound past the incumbent's objective
            assert not generation.slow or generation.settled(), (seed, act)
            assert outcome.incumbent is not None and same(table.objective(outcome.incumbent), best), (seed, act)
            continue
        assert generation.slow and outcome.converged
        tree = BranchAndPrice(generation).run(time.perf_counter() + 600.0)
        assert tree.complete and tree.incumbent is not None and same(table.objective(tree.incumbent), best)
        branched += 1
    assert slow >= 5 and branched >= 1, (slow, branched)


def test_co_exploration_keeps_the_listing() -> None:
    """With candidate capacities the LP also mixes capacities, which pair rules leave fractional: the
    listing is never given up for branching there."""
    instance = small_instance(9, 2, act_kb=(2, 4, 8), weight_kb=(1, 2))
    table = VariantTable(instance, ColumnSet((), False, 1, 0))
    outcome = ColumnGeneration(table, None, params=FORCED).run(None)
    assert outcome.complete and not outcome.converged and outcome.nodes == 0


def test_branch_and_price_needs_an_inner_point_and_a_partition() -> None:
    table = VariantTable(crossed(600), enumerate_columns(crossed(600), budget=1))
    with pytest.raises(ValueError, match="column generation with an inner point"):
        BranchAndPrice(ColumnGeneration(table, None))


@pytest.mark.parametrize("method", ["milp-highs", "cpsat"])
def test_the_models_say_when_branching_proved_the_optimum(method: str) -> None:
    result = generated(method, crossed(600), ProofParams(colgen=FORCED))
    assert result.status is Status.OPTIMAL and result.objective == 4672
    assert "the incumbent proven optimal by branch-and-price" in result.stats.native_status
    assert "tree: node 0 []: branched on " in result.stats.native_status


STOPPED_ROOTS = [(10, 700, 1), (37, 700, 1), (75, 800, 1), (83, 700, 1), (118, 800, 1)]
"""(seed, activation bytes, rounds) of :data:`FRACTIONAL` instances whose root column generation has an
inner point after that many rounds and goes on after them (the fewest rounds that do)."""


def fractional_root(seed: int, act: int, rounds: int) -> tuple[PartitionInstance, ColumnGeneration, bool]:
    """A :func:`woven` instance's root column generation stopped after ``rounds`` pricing rounds, then
    given back the default limit; whether it stopped with an inner point, unconverged."""
    instance = woven(seed, act)
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None, rounds=rounds, params=FORCED)
    root = generation.run(None)
    generation.rounds = FORCED.max_rounds
    return instance, generation, not root.complete and not root.converged and generation.inner is not None


def test_a_root_stopped_before_convergence_is_priced_in_the_tree() -> None:
    """A root whose pricing rounds stopped early (as at their deadline) goes on as the tree's first
    node, from the inner point it proved (its rounds go on there before any child's): the tree still
    proves brute force's optimum."""
    rooted = 0
    for seed, act, rounds in STOPPED_ROOTS:
        instance, generation, stopped = fractional_root(seed, act, rounds)
        assert stopped, (seed, act, rounds)
        best, _ = brute_force(instance)
        generation.incumbent = generation.master.solve_integer(None, None)
        tree = BranchAndPrice(generation)
        bound, before = generation.bound, generation.stats.rounds
        assert bound is not None
        pruned_at_once = bound > tree.prune_level()  # its bound proves the integer program's partition optimal
        outcome = tree.run(None, priced=False)
        if not pruned_at_once:  # the root, the first node taken, was priced on (no rule yet)
            assert generation.stats.rounds > before and tree.log[0].startswith("node 0 []: "), (seed, act)
            rooted += 1
        else:
            assert tree.log == [f"node 0 []: pruned, bound {bound:.12g}"], tree.log
        assert outcome.complete and outcome.incumbent is not None, (seed, act, outcome.stopped)
        assert same(generation.table.objective(outcome.incumbent), best), (seed, act)
        assert outcome.bound is not None and outcome.bound <= best + 1e-6 * abs(best)
    assert rooted >= 3, rooted


def test_prepare_hands_a_root_stopped_at_its_deadline_to_the_tree(caplog: pytest.LogCaptureFixture) -> None:
    """A root whose rounds stop short of convergence (here after three rounds, ``root_rounds``, with
    rounds left as at a deadline) is handed to the tree, unconverged (the DEBUG record of
    :data:`~accelsched.formulations.partition.fixed_capacity.LOGGER`), which proves the optimum. No
    warm start and no listing: the partition the tree needs comes from the integer program over the
    master."""
    instance = woven(10, 700)  # its root has not converged after three rounds
    best, _ = brute_force(instance)
    caplog.set_level(logging.DEBUG, logger=partition_fixed.LOGGER.name)
    result = generated("milp-highs", instance, ProofParams(root_rounds=3, colgen=FORCED))
    handed = [r.getMessage() for r in caplog.records if r.name == partition_fixed.LOGGER.name]
    assert handed == ["root stopped unconverged after 3 rounds (root_rounds): handed to branch-and-price"]
    assert result.status is Status.OPTIMAL and same(result.objective, best)
    assert "the incumbent proven optimal by branch-and-price" in result.stats.native_status


def test_tailing_off_branches_early_and_stays_exact() -> None:
    """With any gap counted as tailing off, the exact pricing in every round, and no node pruned
    by its bound unless its rules leave no partition, every node whose LP lies below the level
    branches after its first exact pricing that adds columns, its master not optimal: the tree
    still proves brute force's optimum where the LP is fractional. (No subset-row cuts: a node they
    cut is priced again, which is not what is counted here.)"""
    params = forced(tailing_gap=math.inf, stall_rounds=0)
    tree_params = BranchParams(subset_row_rounds=0, prune_ratio=10.0)
    tailed = 0
    for seed, act in [(10, 1000), (37, 700), (79, 700)]:  # FRACTIONAL's whose trees tail off most
        instance = woven(seed, act)
        best, _ = brute_force(instance)
        table = VariantTable(instance, enumerate_columns(instance, budget=1))
        generation = ColumnGeneration(table, None, params=params)
        if generation.run(None).complete:
            continue
        outcome = BranchAndPrice(generation, tree_params).run(None)
        tailed += generation.stats.tailed_off
        assert outcome.complete and outcome.incumbent is not None, (seed, act, outcome.stopped)
        assert same(table.objective(outcome.incumbent), best), (seed, act, table.objective(outcome.incumbent), best)
    assert tailed >= 6, tailed


def test_tailing_off_needs_a_gap_below_the_prune_level() -> None:
    """The master tails off only when its LP value is at most the level (converging could not prune
    it) and within ``TAILING_GAP`` of the bound; never in co-exploration, nor at the root before a
    listing gave up."""
    instance = crossed(600)
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None)
    generation.run(None)
    lp = generation.master.solve_lp(None)
    assert generation.bound is not None
    generation.bound = lp.value * (1 - generation.params.tailing_gap / 2)
    assert generation.tails(lp, lp.value)
    assert not generation.tails(lp, lp.value - 1.0)
    generation.bound = lp.value * (1 - 2 * generation.params.tailing_gap)
    assert not generation.tails(lp, lp.value)
    generation.bound = lp.value
    generation.slow = False
    assert not generation.tails(lp)
    generation.slow = True  # then the level is the incumbent's, 4672 - 1 here, above the LP's 4160
    assert generation.prune_level() > lp.value and generation.tails(lp)
    coexplored = small_instance(7, 1, act_kb=(2, 4, 8), weight_kb=(1, 2))
    other = ColumnGeneration(VariantTable(coexplored, enumerate_columns(coexplored, budget=1)), None)
    other.run(None)
    assert not other.tails(other.master.solve_lp(None), math.inf)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"budget": 0}, "column budget must be at least 1, got 0"),
        ({"rounds": 0}, "round limit must be at least 1, got 0"),
        ({"decompose_above": -1}, "decompose_above must be None or at least 0, got -1"),
        ({"backend": "gurobi"}, "unknown linear backend 'gurobi'; known: highs"),
        ({"pairs": frozenset()}, "pairs must be None or pairs of capacities of at least 0 bytes, got frozenset()"),
        ({"pairs": frozenset({(1024, -1)})}, "pairs must be None or pairs of capacities of at least 0 bytes"),
    ],
)
def test_proof_settings_say_what_is_wrong(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        ProofSettings(**fields)


def resumed_until_proven(instance: PartitionInstance, step: int) -> list[tuple[Any, VariantTable]]:
    """The tree of ``instance`` run ``step`` nodes at a time (its node limit), each run resuming the open nodes
    of the last in a new column generation (a later run's process) over the smallest columns and those
    the last one generated (a pair's ledger keeps them), until one completes; each run's outcome, with
    its table. Deep trees: no node is settled by its integer program nor pruned by the incumbent."""
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None, params=FORCED)
    root = generation.run(None)
    if root.complete:
        return [(root, table)]
    outcomes = [(BranchAndPrice(generation, TREE_ALONE_PARAMS).run(None, node_limit=step), table)]
    while not outcomes[-1][0].complete:
        last = outcomes[-1][0]
        assert last.left is not None and last.left.nodes and last.bound is not None
        assert same(last.left.bound, last.bound)
        assert last.incumbent is not None
        incumbent = table.solution(last.incumbent)
        kept = [*incumbent.indices(instance), *(column.members for column in table.columns if len(column.members) > 1)]
        table = VariantTable(instance, enumerate_columns(instance, budget=1), kept)
        generation = ColumnGeneration(table, table.assignment(incumbent), params=FORCED)
        tree = BranchAndPrice(generation, TREE_ALONE_PARAMS)
        outcomes.append((tree.run(None, resume=last.left, node_limit=step), table))
    return outcomes


@pytest.mark.parametrize("step", [1])  # 2 also passes (about 50 s); every node is the harder case
def test_a_tree_resumed_from_its_open_nodes_reaches_brute_force(step: int) -> None:
    """The tree stopped every ``step`` nodes and resumed from what it left (each open node's rules,
    inner point and bound, the cycles cut, the subset-row cuts, which some runs must leave) in a new
    column generation proves brute force's optimum, and each run's bound is valid and never falls.
    Deep trees: no node is settled by its integer program nor pruned by the incumbent. (Without the
    cycles, a node that cuts one and is priced again finds it again after each resume, and a tree
    stopped every node or two never ends.)"""
    resumes, with_cuts = 0, 0
    for seed, act in RESUMED:
        instance = woven(seed, act)
        best, _ = brute_force(instance)
        outcomes = resumed_until_proven(instance, step)
        final, table = outcomes[-1]
        assert final.complete and final.incumbent is not None, (seed, act)
        assert same(table.objective(final.incumbent), best), (seed, act, table.objective(final.incumbent), best)
        bounds = [outcome.bound for outcome, _ in outcomes]
        assert all(b is not None and b <= best + 1e-6 * abs(best) for b in bounds), (seed, act, bounds, best)
        assert all(b <= c + 1e-9 * abs(c) for b, c in itertools.pairwise(bounds)), bounds
        assert len(outcomes) > 1, (seed, act)
        resumes += len(outcomes) - 1
        with_cuts += sum(bool(outcome.left and outcome.left.cuts) for outcome, _ in outcomes)
    assert resumes >= len(RESUMED), resumes
    assert with_cuts, "no run left subset-row cuts to resume with"


def root_left_open(
    instance: PartitionInstance, params: ColumnGenerationParams = FORCED
) -> tuple[VariantTable, ColumnGeneration]:
    """The table of ``instance`` (its smallest columns) and its column generation run at the root,
    which must leave the instance open (its LP fractional)."""
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None, params=params)
    assert not generation.run(None).complete
    return table, generation


def root_stopped_after_its_cuts(
    instance: PartitionInstance, params: BranchParams = DEFAULTS
) -> tuple[VariantTable, Any]:
    """The table of ``instance`` and the outcome of its tree stopped at once after the root's column
    generation: the root gets its subset-row cuts and is left to be priced again (which the instance
    must need). The tree's node limit is 1, so that no node after the root runs, and the root gets no
    integer program (``node_integer_s`` 0: nothing settles it before its cuts); ``params`` are the
    tree's otherwise."""
    table, generation = root_left_open(instance)
    stopped = BranchAndPrice(generation, dataclasses.replace(params, node_integer_s=0.0)).run(None, node_limit=1)
    assert stopped.left is not None and stopped.left.cuts and stopped.incumbent is not None
    return table, stopped


def test_an_open_node_is_the_same_after_a_resume_and_a_stop() -> None:
    """A node a stopped tree left open comes back with its rules, inner point, bound, exactness and
    rounds of cuts, a serial of the new run and not yet priced, and is left open as it was."""
    left = OpenNode(
        frozenset({PairRule(1, 4, True), PairRule(2, 3, False)}), InnerPoint((0.5, -1.0, 2.0), 123.5), True, 2
    )
    node = Node.resumed(left, 7)
    assert (node.serial, node.priced, node.bound) == (7, False, 123.5)
    assert node.left_open() == left
    fields = {f.name for f in dataclasses.fields(OpenNode)}
    assert fields == {"rules", "inner", "exact", "cut_rounds"}, "a new field needs Node.resumed and Node.left_open"


@pytest.mark.parametrize("case", [(37, 700)])  # of TREE_ALONE, a root whose LP violates cuts again
@pytest.mark.parametrize("kept", [True, False])
def test_a_resumed_node_gets_no_more_rounds_of_subset_row_cuts_than_it_had_left(
    kept: bool, case: tuple[int, int]
) -> None:
    """With one round of subset-row cuts per node, the root stopped after its round (to be priced
    again) is left with its round counted, and, resumed in a new column generation, is not cut again;
    with its rounds forgotten (a tree written before they were kept), it is. Either way the resumed
    tree proves brute force's optimum."""
    # the resumed root is neither pruned nor settled by an integer program
    params = dataclasses.replace(TREE_ALONE_PARAMS, subset_row_rounds=1)
    instance = woven(*case)
    best, _ = brute_force(instance)
    table, stopped = root_stopped_after_its_cuts(instance, params)
    assert [node.cut_rounds for node in stopped.left.nodes] == [1]
    tree = stopped.left
    if not kept:
        tree = dataclasses.replace(tree, nodes=tuple(dataclasses.replace(n, cut_rounds=0) for n in tree.nodes))
    incumbent = table.solution(stopped.incumbent)
    kept_columns = [*incumbent.indices(instance), *(c.members for c in table.columns if len(c.members) > 1)]
    fresh = VariantTable(instance, enumerate_columns(instance, budget=1), kept_columns)
    resumed = BranchAndPrice(ColumnGeneration(fresh, fresh.assignment(incumbent), params=FORCED), params)
    outcome = resumed.run(None, resume=tree)
    assert outcome.complete and outcome.incumbent is not None
    assert same(fresh.objective(outcome.incumbent), best)
    cut_again = [line for line in resumed.log if line.startswith("node 0 [") and "subset-row cuts" in line]
    assert bool(cut_again) != kept, resumed.log


def test_a_node_is_pruned_once_its_bound_is_within_the_proofs_tolerance(caplog: pytest.LogCaptureFixture) -> None:
    """With energy as the metric (no whole objective), the prune level is U less the proof's tolerance
    n * eps * |U| (the one that settles a node by a partition and a pair of the capacity decomposition
    by its bound), not U less eps * |U|: nodes whose bound lies between the two are pruned (in the tree
    of every :data:`BANDED` instance). Their trees still end within that tolerance of brute force's
    optimum, with a bound no higher; the pricing's tolerance is raised from 1e-7 to 1e-4 to widen the
    band. A node's band is read from its log record: its bound, and the prune level when it was pruned
    (U (1 - n eps), so U at that time)."""
    eps = 1e-4
    params = forced(pricing_eps=eps)
    caplog.set_level(logging.INFO, logger=partition_branch.LOGGER.name)
    record = re.compile(r"node \d+ \[[^]]*\]: pruned[^;]*, bound (\S+); \d+ nodes solved, prune level (\S+)")
    for seed, act in BANDED:
        instance = dataclasses.replace(woven(seed, act), metric=Metric.ENERGY)
        best, _ = brute_force(instance)
        tolerance = instance.n_layers * eps * max(1.0, abs(best))
        table = VariantTable(instance, enumerate_columns(instance, budget=1))
        generation = ColumnGeneration(table, None, params=params)
        root = generation.run(None)
        tree = BranchAndPrice(generation)
        caplog.clear()
        outcome = root if root.complete else tree.run(None, node_limit=1000)  # U - eps |U| never ends
        assert outcome.complete and outcome.incumbent is not None, (seed, act, outcome.stopped)
        value = table.objective(outcome.incumbent)
        assert best - 1e-9 * abs(best) <= value <= best + tolerance, (seed, act, value, best)
        assert outcome.bound is not None and outcome.bound <= best + 1e-6 * abs(best), (seed, act)
        upper = tree.upper
        assert tree.prune_level() == upper - instance.n_layers * eps * max(1.0, abs(upper)), (seed, act)
        banded = []
        for message in (r.getMessage() for r in caplog.records if r.name == partition_branch.LOGGER.name):
            match = record.match(message)
            if match:
                bound, level = map(float, match.groups())
                then = level / (1.0 - instance.n_layers * eps)  # U when the node was pruned (U > 1 here)
                banded += [bound] if bound <= then - eps * then else []
        assert banded, (seed, act, "no node pruned in the band")


def test_a_tree_resumed_past_its_deadline_solves_no_node() -> None:
    """A resumed tree whose deadline has passed starts no node, not even its first: it reports none
    solved and leaves the nodes it was given open as they were, with their bound, and its cuts."""
    instance = woven(10, 1000)
    table, stopped = root_stopped_after_its_cuts(instance)
    tree = stopped.left
    resumed = BranchAndPrice(ColumnGeneration(table, stopped.incumbent, params=FORCED))
    outcome = resumed.run(time.perf_counter() - 1.0, resume=tree)
    assert not outcome.complete and outcome.nodes == 0
    assert outcome.left is not None and outcome.left.nodes == tree.nodes and outcome.left.cuts == tree.cuts
    assert outcome.bound is not None and same(outcome.bound, stopped.bound)
    assert all("open at the deadline" in line for line in resumed.log), resumed.log


@pytest.mark.parametrize(("artificial", "cut"), [(0.0, True), (1e-9, True), (1e-3, False), (0.5, False)])
def test_a_vertex_is_cut_unless_it_keeps_more_artificial_cover_than_phase_ones_tolerance(
    artificial: float, cut: bool
) -> None:
    """A root vertex that violates subset rows gets them when its artificial variables sum to at
    most ``covered`` (:class:`~accelsched.formulations.partition.colgen_params.ColumnGenerationParams`;
    rounding noise of an LP that covers every layer), and none when they sum to more."""
    _, generation = root_left_open(woven(10, 1000))
    lp = generation.master.solve_lp(None, vertex=True)
    assert lp.artificial == 0.0
    tree = BranchAndPrice(generation)
    root = Node(lp.value, 0, frozenset(), ())
    added = tree._cut(root, dataclasses.replace(lp, artificial=artificial))
    assert bool(added) == cut and len(generation.cuts) == added


@pytest.mark.parametrize(("seed", "act"), [(76, 800), (104, 700)])
def test_a_probe_is_the_masters_lp_under_the_nodes_rules_and_one_more(seed: int, act: int) -> None:
    """Strong branching's probes (one dual-simplex model; a rule's breaking variants held at 0, then
    released) give the values of the master's own LP built under the node's rules and that rule
    (interior point, the variants held at 0 by :meth:`RestrictedMaster.forbidden`): both rules on
    each fractional pair of the root's vertex, at the root and under a rule on another pair."""
    _, _, generation, root = rooted(seed, act)
    assert not root.complete
    master = generation.master
    pairs = BranchAndPrice(generation).branching_pairs(master.solve_lp(None, vertex=True))
    assert len(pairs) >= 3, pairs
    for node in (frozenset(), frozenset({PairRule(*pairs[-1], False)})):
        rules = [PairRule(*pair, together) for pair in pairs[:-1] for together in (True, False)]
        master.rules = node
        probes = master.probe(rules)
        assert len(probes) == len(rules)
        for rule, probe in zip(rules, probes, strict=True):
            master.rules = node | {rule}
            assert math.isclose(probe.value, master.solve_lp().value, rel_tol=1e-6), (node, rule, probe)
    master.rules = frozenset()


def test_strong_branching_takes_the_pair_whose_children_gain_most() -> None:
    """The chosen pair has the largest product of its children's LP gains over the node's LP, each
    capped at the distance to the prune level (a child left partly to an artificial variable, or
    whose solve stopped, counts as the cap) and at least a millionth of it; ties go to the pair
    nearer 1/2 (earlier), probes cut short by the deadline leave the pairs probed in full (none:
    the first pair), and with one candidate, or a node LP its deadline stopped, nothing is probed."""
    pairs = [(0, 1), (0, 2), (1, 2), (2, 3)]

    def choice(probes: list[Probe]) -> tuple[tuple[int, int], str]:
        return strong_choice(pairs, probes, 100.0, 110.0)

    level = [Probe(100.0, 0.0), Probe(130.0, 0.0)]  # (0, 1): 0 and 30, capped at 10: 1e-5 x 10
    middle = [Probe(104.0, 0.0), Probe(104.0, 0.0), Probe(105.0, 0.0), Probe(103.0, 0.0)]  # 16, 15
    pair, how = choice([*level, *middle, Probe(1e12, 1.0), Probe(102.0, 0.0)])  # (2, 3): an artificial kept: 10 x 2
    assert pair == (2, 3), how
    assert re.fullmatch(
        r" \(strong branching over 4 pairs in \d+\.\d s: its children's LPs \+10 together, \+2 apart\)", how
    )
    middle = [Probe(105.0, 0.0), Probe(104.0, 0.0), Probe(99.0, 0.0), Probe(90.0, 0.0)]  # 20, 1e-10
    assert choice([*level, *middle, Probe(math.inf, 0.0), Probe(102.0, 0.0)])[0] == (0, 2)  # (2, 3): a stopped solve
    assert choice([*level, Probe(105.0, 0.0)])[0] == (0, 1)  # the deadline came after three probes
    assert choice([Probe(105.0, 0.0)]) == ((0, 1), "")
    _, _, generation, _ = rooted(76, 800)
    lp = MasterLp(value=100.0, duals=(), support=(), base=0.0, least=0.0, n=0)
    unprobed = BranchAndPrice(generation, BranchParams(strong_candidates=1))
    assert unprobed._strong_pair(pairs, lp, None) == ((0, 1), "")  # one candidate: no probe
    tree = BranchAndPrice(generation)
    assert tree._strong_pair(pairs, dataclasses.replace(lp, value=math.inf), None) == ((0, 1), "")


def test_a_node_whose_cuts_hold_at_its_vertex_is_branched_without_pricing_again() -> None:
    """Cuts that a node's LP vertex keeps leave its LP over the columns it has where it was, and
    pricing, which only adds columns, cannot raise its bound past that: the node is branched at once,
    never priced again for them. Separation made to return only such triples (valid cuts, none
    violated; the tree's ``separate``), the trees of :data:`TREE_ALONE` still prove brute force's optimum."""

    def kept_at_the_vertex(
        members: Sequence[Sequence[int]], values: Sequence[float], n_layers: int, limit: int
    ) -> list[tuple[int, int, int]]:
        shared = {pair for subgraph in members for pair in itertools.combinations(sorted(subgraph), 2)}
        kept = (
            triple
            for triple in itertools.combinations(range(n_layers), 3)
            if shared.isdisjoint(itertools.combinations(triple, 2))  # no fractional column holds two
        )
        return list(itertools.islice(kept, min(limit, 2)))

    skipped = 0
    for seed, act in TREE_ALONE:
        best, table, generation, root = rooted(seed, act)
        if root.complete:
            continue
        outcome = BranchAndPrice(generation, TREE_ALONE_PARAMS, kept_at_the_vertex).run(None)
        assert outcome.complete and outcome.incumbent is not None, (seed, act, outcome.stopped)
        assert same(table.objective(outcome.incumbent), best), (seed, act)
        cut_lines = [line for line in outcome.tree if "subset-row cuts" in line]
        assert not [line for line in cut_lines if "priced again" in line], cut_lines
        skipped += sum("pricing again cannot raise its bound" in line for line in cut_lines)
    assert skipped, "no node got cuts to skip"


def test_prepare_resumes_a_tree_from_its_open_nodes_without_the_root() -> None:
    """Given the open nodes a stopped tree left (here the root, priced again after its subset-row cuts)
    and its partition, ``prepare`` goes straight to them, with the cuts and no column generation at the
    root, and the tree proves brute force's optimum, also when the level differs in its last bit (the
    incumbent evaluated again). A tree whose nodes were closed at a prune level below the incumbent's is
    not resumed: the root runs."""
    instance = woven(10, 700)
    best, _ = brute_force(instance)
    table, stopped = root_stopped_after_its_cuts(instance)
    assert len(stopped.left.nodes) == 1
    warm = table.solution(stopped.incumbent)
    settings = ProofSettings(budget=1, params=ProofParams(colgen=FORCED))
    hair = dataclasses.replace(stopped.left, level=math.nextafter(stopped.left.level, -math.inf))
    for tree in (stopped.left, hair):
        prepared = prepare(instance, SolveOptions(), warm, time.perf_counter(), settings, tree=tree)
        assert prepared.table.complete and prepared.tree is None and prepared.warm is not None
        assert same(prepared.table.objective(prepared.warm), best)
        resumed = f"branch-and-price resumed from 1 open node of an earlier run, with {len(tree.cuts)} subset-row cuts"
        assert resumed in prepared.notes
    lower = dataclasses.replace(stopped.left, level=-math.inf)
    prepared = prepare(instance, SolveOptions(), warm, time.perf_counter(), settings, tree=lower)
    assert prepared.table.complete and not [note for note in prepared.notes if "resumed" in note]  # the root ran


def test_a_resumed_tree_proves_its_bound_past_the_cutoff_over_every_column() -> None:
    """A pair of the capacity decomposition resumes its tree with a cutoff below the optimum. The
    final model's bound says nothing past the cutoff, but the tree's does: the least bound of its
    closed nodes, each proven by pricing every column, is :attr:`Prepared.proven_bound`, at most
    brute force's optimum and past the cutoff's level, far past it when the open node's bound
    already was (it is closed at once). The pairs within inherit it (a resumed tree once recorded
    its pair's cutoff alone, losing the 1 % its root had proven above it)."""
    instance = woven(10, 700)
    best, _ = brute_force(instance)
    table, stopped = root_stopped_after_its_cuts(instance)
    warm = table.solution(stopped.incumbent)
    (node,) = stopped.left.nodes
    assert node.inner.bound < best - 1.0
    settings, tree = ProofSettings(budget=1, params=ProofParams(colgen=FORCED)), stopped.left
    for cutoff in (0.9 * node.inner.bound, (node.inner.bound + best) / 2):
        prepared = prepare(instance, SolveOptions(), warm, time.perf_counter(), settings, cutoff=cutoff, tree=tree)
        assert prepared.table.complete and prepared.proven_bound is not None
        assert cutoff - 1.0 < prepared.proven_bound <= best, (cutoff, prepared.proven_bound, best)
        if cutoff < node.inner.bound:
            assert prepared.proven_bound >= node.inner.bound
