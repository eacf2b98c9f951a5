"""Branch-and-price of the partition models: the rules, the nodes, and exactness against brute force."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import logging
import math
import random
import re
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from accelsched.formulations.partition import branch as partition_branch
from accelsched.formulations.partition import colgen as partition_colgen
from accelsched.formulations.partition.branch import BranchAndPrice, Node, ProofSettings, prepare
from accelsched.formulations.partition.colgen import ColumnGeneration, Outcome
from accelsched.formulations.partition.common import InnerPoint, OpenNode, VariantTable
from accelsched.formulations.partition.master import MasterLp, Probe, RestrictedMaster
from accelsched.formulations.partition.pricing import PricingAnswer, PricingModel, TrafficTerms
from accelsched.formulations.partition.rules import PairRule
from accelsched.problems.partition import Metric, PartitionInstance
from accelsched.problems.partition_columns import ColumnSet, enumerate_columns
from accelsched.solvers import SolveOptions, Status
from tests.formulations.partition.helpers import crossed, run, same, woven
from tests.formulations.partition.test_colgen import favouring, generated
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


def forced_to_branch(monkeypatch: pytest.MonkeyPatch) -> None:
    """No listing before the master is optimal, and the one after gives up at once, whatever its first
    solve would find (its integer program still runs): branching decides."""
    monkeypatch.setattr(partition_colgen, "CLOSE_GAP", -math.inf)
    monkeypatch.setattr(partition_colgen, "LISTING_LIMIT", 0)
    close = ColumnGeneration._close

    def giving_up(
        self: ColumnGeneration, deadline: float | None, limit: int | None = None, give_up: float | None = None
    ) -> Outcome | None:
        if limit is None:
            return close(self, deadline)
        with monkeypatch.context() as patch:
            patch.setattr(self.pricing, "solve", lambda *_, **__: PricingAnswer([], -math.inf, False))
            return close(self, deadline, limit, give_up)

    monkeypatch.setattr(ColumnGeneration, "_close", giving_up)


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
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """On ``crossed`` with 600 B of activations the LP takes every conv-add pair at 1/2 (4160 B), and
    its integral covers form cycles (cut by the integer programs): the tree branches and proves
    4672 B. Each node's line is logged as it ends, with the nodes solved and the prune level."""
    forced_to_branch(monkeypatch)
    caplog.set_level(logging.INFO, logger=partition_branch.LOGGER.name)
    instance = crossed(600)
    best, _ = brute_force(instance)
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None)
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
        *(("open at the deadline",) if open_at_deadline else ()),
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
    log = tuple(f"node {serial} []: pruned, bound 1" for serial in range(partition_branch.TREE_NOTE_LINES + 3))
    note = partition_branch.tree_note(log)
    assert note.startswith("tree: node 0 []: pruned, bound 1; node 1 []") and note.endswith("; (3 more)")
    assert note.count("pruned") == partition_branch.TREE_NOTE_LINES
    assert partition_branch.tree_note(log[:2]) == "tree: node 0 []: pruned, bound 1; node 1 []: pruned, bound 1"


@pytest.mark.parametrize("seed", range(24))
def test_branch_and_price_agrees_with_brute_force(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the MILP model, with the listing forced to give up and no node pruned by its bound
    (only an integer program or an integral vertex settles one): the optimum is still brute force's."""
    forced_to_branch(monkeypatch)
    monkeypatch.setattr(BranchAndPrice, "prune_level", lambda self: math.inf)
    instance = small_instance(6 + seed % 3, seed, **FIXED_CONFIGS[seed % len(FIXED_CONFIGS)])
    best, _ = brute_force(instance)
    result = generated("milp-highs", instance)
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


def rooted(seed: int, act: int) -> tuple[float, VariantTable, ColumnGeneration, Outcome]:
    """Brute force's optimum of ``woven(seed, act)``, its table from the smallest enumeration, and the
    root's column generation over it, run to its end (complete, or handed to a tree)."""
    instance = woven(seed, act)
    best, _ = brute_force(instance)
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None)
    return best, table, generation, generation.run(None)


@pytest.mark.parametrize(
    ("settle", "cuts", "strong"), [(True, True, 8), (False, True, 8), (False, False, 8), (False, False, 1)]
)
def test_the_tree_alone_reaches_brute_force_where_the_lp_is_fractional(
    settle: bool, cuts: bool, strong: int, monkeypatch: pytest.MonkeyPatch
) -> None:
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
    forced_to_branch(monkeypatch)
    monkeypatch.setattr(partition_branch, "STRONG_CANDIDATES", strong)
    if not cuts:
        monkeypatch.setattr(partition_branch, "SUBSET_ROW_ROUNDS", 0)
    if not settle:
        monkeypatch.setattr(BranchAndPrice, "prune_level", lambda self: 10.0 * self.upper)
        monkeypatch.setattr(partition_branch, "NODE_INTEGER_S", 0.0)
    phase_one = ColumnGeneration._phase_one
    decided: list[bool | None] = []

    def spy(self: ColumnGeneration, deadline: float | None) -> bool | None:
        decided.append(phase_one(self, deadline))
        return decided[-1]

    monkeypatch.setattr(ColumnGeneration, "_phase_one", spy)
    branched, cut, probed = 0, 0, 0
    cases = BRANCHING if settle else TREE_ALONE
    for seed, act in cases:
        best, table, generation, root = rooted(seed, act)
        if root.complete:  # the listing's first solve found nothing below the gap
            assert root.incumbent is not None and same(table.objective(root.incumbent), best), seed
            continue
        outcome = BranchAndPrice(generation).run(None)
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
    assert None not in decided
    assert bool(cut) == cuts, cut
    if not settle and not cuts:  # nodes whose rules leave no partition, proven so by phase one
        assert decided.count(False) >= 3, decided


def spied_cutoffs(monkeypatch: pytest.MonkeyPatch) -> tuple[list[bool], list[bool]]:
    """Whether each pricing round's cutoff, then each Dinkelbach step's, from now on, was lowered to
    the level (below the pricing's tolerance; below 0)."""
    rounds: list[bool] = []
    steps: list[bool] = []
    cutoff_of = ColumnGeneration._cutoff

    def spy(
        self: ColumnGeneration, lp: MasterLp, level: float | None, ceiling: float | None = None, per_layer: float = 0.0
    ) -> float:
        cutoff = cutoff_of(self, lp, level, ceiling, per_layer)
        if ceiling is None:
            rounds.append(cutoff < -self._tolerance(lp))
        else:
            steps.append(cutoff < ceiling)
        return cutoff

    monkeypatch.setattr(ColumnGeneration, "_cutoff", spy)
    return rounds, steps


def test_pricing_to_the_level_stays_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """Roots and nodes whose LP lies above their prune level price below ``MasterLp.beta_above``'s
    cutoff, lower than the pricing's tolerance (some do, on these instances), and are pruned or
    settled from what that pricing proves: every tree still proves brute force's optimum, with a
    valid bound."""
    forced_to_branch(monkeypatch)
    lowered, _ = spied_cutoffs(monkeypatch)

    for seed, act in BRANCHING:
        best, table, generation, root = rooted(seed, act)
        outcome = root if root.complete else BranchAndPrice(generation).run(None)
        assert outcome.complete and outcome.incumbent is not None, (seed, act)
        assert same(table.objective(outcome.incumbent), best), (seed, act)
        assert outcome.bound is not None and outcome.bound <= best + 1e-6 * abs(best), (seed, act)
    assert sum(lowered) >= 3, (sum(lowered), len(lowered))


def test_a_cutoff_below_the_optimum_is_proven_with_steps_to_the_level(monkeypatch: pytest.MonkeyPatch) -> None:
    """Column generation with a cutoff at 0.8 of brute force's optimum (a pair of the capacity
    decomposition that holds no better partition) ends complete, settled by its bound or with every
    column below its gap listed, and its bound stays below the optimum. Every round is exact (no
    heuristic pricing), so the Dinkelbach steps run, and those whose charge's bound at 0 passes the
    level price below 0, to the level (some do, on these instances)."""
    monkeypatch.setattr(partition_colgen, "STALL_ROUNDS", 0)
    _, stepped = spied_cutoffs(monkeypatch)
    for seed, act in BRANCHING:
        instance = woven(seed, act)
        best, _ = brute_force(instance)
        generation = ColumnGeneration(
            VariantTable(instance, enumerate_columns(instance, budget=1)), None, cutoff=0.8 * best
        )
        outcome = generation.run(None)
        assert outcome.complete, (seed, act)
        assert outcome.bound is not None and outcome.bound <= best + 1e-6 * abs(best), (seed, act)
    assert sum(stepped) >= 3, (sum(stepped), len(stepped))


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
    caplog.set_level(logging.INFO, logger=partition_colgen.__name__)
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


def test_phase_one_proves_a_node_without_partitions(monkeypatch: pytest.MonkeyPatch) -> None:
    """On ``crossed`` with 600 B, the two convolutions ``x`` and ``q`` share a subgraph only with an
    add, and three layers do not fit: no partition keeps them together. The node's LP keeps an
    artificial variable, and phase one proves the node empty (bound infinite); apart, it is not."""
    forced_to_branch(monkeypatch)
    instance = crossed(600)
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None)
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
        tolerance = instance.n_layers * partition_colgen.PRICING_EPS * max(1.0, abs(lp.value)) + 1e-9
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


def test_a_tree_out_of_time_gives_the_least_open_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A deadline already passed leaves the root's children open: no proof, the root's bound."""
    forced_to_branch(monkeypatch)
    table = VariantTable(crossed(600), enumerate_columns(crossed(600), budget=1))
    generation = ColumnGeneration(table, None)
    root = generation.run(None)
    tree = BranchAndPrice(generation)
    with untimed_lps():
        outcome = tree.run(time.perf_counter() - 1.0)
    assert not outcome.complete and outcome.bound == root.bound and outcome.incumbent is not None
    assert "time limit reached during branch-and-price (1 nodes solved, 2 open" in outcome.stopped
    assert len(outcome.tree) == 3 and "branched on" in outcome.tree[0]
    assert all(line.endswith(f"open at the deadline, bound {root.bound:.12g}") for line in outcome.tree[1:])
    assert_tree_logged(tree.log, open_at_deadline=True)


def test_a_node_whose_lp_vertex_the_deadline_stops_is_left_open_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a machine too slow for any LP in the time left (every LP with a deadline stops at once),
    the root of a tree whose deadline has passed is left open at the deadline with its bound, neither
    cut nor branched on an LP it did not solve, nor reported as a vertex that keeps an artificial
    variable; resumed with time, the tree proves brute force's optimum."""
    forced_to_branch(monkeypatch)
    instance = crossed(600)
    best, _ = brute_force(instance)
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None)
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
    resumed = BranchAndPrice(ColumnGeneration(table, outcome.incumbent)).run(None, resume=outcome.left)
    assert resumed.complete and resumed.incumbent is not None and same(table.objective(resumed.incumbent), best)


GIVING_UP = [(10, 700), (79, 700), (83, 700), (92, 800), (92, 1000), (104, 700), (118, 800), (118, 1000)]
""":data:`FRACTIONAL` instances with ``LISTING_SHARE`` 0: five give the listing up, three complete at its
first solve; of the five, (118, 800) completes later as its bound passes the incumbent's objective, four
go to the tree."""


def test_a_listing_that_gives_up_for_time_is_the_last(monkeypatch: pytest.MonkeyPatch) -> None:
    """A listing stopped by ``LISTING_SHARE`` (here 0: after its first solve) marks the listing slow:
    none is tried again, before the master is optimal nor after, and branching decides, still
    exactly, unless the bound passes the incumbent's objective first. (A first solve that finds
    nothing below the gap completes the proof instead.)"""
    monkeypatch.setattr(partition_colgen, "CLOSE_GAP", math.inf)  # a listing at every new inner bound
    monkeypatch.setattr(partition_colgen, "LISTING_SHARE", 0.0)
    close = ColumnGeneration._close
    calls: list[float | None] = []

    def spy(
        self: ColumnGeneration, deadline: float | None, limit: int | None = None, give_up: float | None = None
    ) -> Any:
        calls.append(give_up)
        return close(self, deadline, limit, give_up)

    monkeypatch.setattr(ColumnGeneration, "_close", spy)
    slow = branched = 0
    for seed, act in GIVING_UP:
        calls.clear()
        instance = woven(seed, act)
        best, _ = brute_force(instance)
        table = VariantTable(instance, enumerate_columns(instance, budget=1))
        generation = ColumnGeneration(table, None)
        outcome = generation.run(time.perf_counter() + 600.0)
        if generation.slow:
            slow += 1
            assert len(calls) == 1 and calls[0] is not None, (seed, act, calls)
        if outcome.complete:  # by the listing's first solve, or a bound past the incumbent's objective
            assert not generation.slow or generation.settled(), (seed, act)
            assert outcome.incumbent is not None and same(table.objective(outcome.incumbent), best), (seed, act)
            continue
        assert generation.slow and outcome.converged
        tree = BranchAndPrice(generation).run(time.perf_counter() + 600.0)
        assert tree.complete and tree.incumbent is not None and same(table.objective(tree.incumbent), best)
        branched += 1
    assert slow >= 5 and branched >= 1, (slow, branched)


def test_co_exploration_keeps_the_listing(monkeypatch: pytest.MonkeyPatch) -> None:
    """With candidate capacities the LP also mixes capacities, which pair rules leave fractional: the
    listing is never given up for branching there."""
    forced_to_branch(monkeypatch)
    instance = small_instance(9, 2, act_kb=(2, 4, 8), weight_kb=(1, 2))
    table = VariantTable(instance, ColumnSet((), False, 1, 0))
    outcome = ColumnGeneration(table, None).run(None)
    assert outcome.complete and not outcome.converged and outcome.nodes == 0


def test_branch_and_price_needs_an_inner_point_and_a_partition() -> None:
    table = VariantTable(crossed(600), enumerate_columns(crossed(600), budget=1))
    with pytest.raises(ValueError, match="column generation with an inner point"):
        BranchAndPrice(ColumnGeneration(table, None))


@pytest.mark.parametrize("method", ["milp-highs", "cpsat"])
def test_the_models_say_when_branching_proved_the_optimum(method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    forced_to_branch(monkeypatch)
    result = generated(method, crossed(600))
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
    generation = ColumnGeneration(table, None, rounds=rounds)
    root = generation.run(None)
    generation.rounds = partition_colgen.DEFAULT_ROUNDS
    return instance, generation, not root.complete and not root.converged and generation.inner is not None


def test_a_root_stopped_before_convergence_is_priced_in_the_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """A root whose pricing rounds stopped early (as at their deadline) goes on as the tree's first
    node, from the inner point it proved (its rounds go on there before any child's): the tree still
    proves brute force's optimum."""
    forced_to_branch(monkeypatch)
    solve_node = ColumnGeneration.solve_node
    priced: list[tuple[frozenset[PairRule], int]] = []

    def spy(self: ColumnGeneration, rules: frozenset[PairRule], *args: Any, **kwargs: Any) -> Any:
        done = self.done
        lp = solve_node(self, rules, *args, **kwargs)
        priced.append((rules, self.done - done))
        return lp

    monkeypatch.setattr(ColumnGeneration, "solve_node", spy)
    rooted = 0
    for seed, act, rounds in STOPPED_ROOTS:
        instance, generation, stopped = fractional_root(seed, act, rounds)
        assert stopped, (seed, act, rounds)
        best, _ = brute_force(instance)
        generation.incumbent = generation.master.solve_integer(None, None)
        priced.clear()
        tree = BranchAndPrice(generation)
        outcome = tree.run(None, priced=False)
        if priced:  # else its bound proved the integer program's partition optimal at once
            assert priced[0][0] == frozenset() and priced[0][1] > 0, (seed, act, priced[0])
            rooted += 1
        else:
            assert tree.log == [f"node 0 []: pruned, bound {generation.bound:.12g}"], tree.log
        assert outcome.complete and outcome.incumbent is not None, (seed, act, outcome.stopped)
        assert same(generation.table.objective(outcome.incumbent), best), (seed, act)
        assert outcome.bound is not None and outcome.bound <= best + 1e-6 * abs(best)
    assert rooted >= 3, rooted


def test_prepare_hands_a_root_stopped_at_its_deadline_to_the_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a time limit, a root whose rounds stop short of convergence (here after three rounds, with
    rounds left as at a deadline) is handed to the tree, which proves the optimum. No warm start and
    no listing: the partition the tree needs comes from the integer program over the master."""
    forced_to_branch(monkeypatch)
    run_root = ColumnGeneration.run
    handed: list[bool] = []

    def stopped_early(self: ColumnGeneration, deadline: float | None, listing: float | None = None) -> Any:
        rounds, self.rounds = self.rounds, 3
        outcome = run_root(self, deadline, listing)
        self.rounds = rounds
        handed.append(not outcome.converged and not outcome.complete)
        return outcome

    monkeypatch.setattr(ColumnGeneration, "run", stopped_early)
    instance = woven(10, 700)  # its root has not converged after three rounds
    best, _ = brute_force(instance)
    result = generated("milp-highs", instance, time_limit_s=600.0)
    assert handed == [True]
    assert result.status is Status.OPTIMAL and same(result.objective, best)
    assert "the incumbent proven optimal by branch-and-price" in result.stats.native_status


def test_tailing_off_branches_early_and_stays_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """With any gap counted as tailing off, the exact pricing in every round, and no node pruned
    by its bound unless its rules leave no partition, every node whose LP lies below the level
    branches after its first exact pricing that adds columns, its master not optimal: the tree
    still proves brute force's optimum where the LP is fractional. (No subset-row cuts: a node they
    cut is priced again, which is not what is counted here.)"""
    forced_to_branch(monkeypatch)
    monkeypatch.setattr(partition_branch, "SUBSET_ROW_ROUNDS", 0)
    monkeypatch.setattr(partition_colgen, "TAILING_GAP", math.inf)
    monkeypatch.setattr(partition_colgen, "STALL_ROUNDS", 0)
    monkeypatch.setattr(BranchAndPrice, "prune_level", lambda self: 10.0 * self.upper)
    tails = ColumnGeneration.tails
    tailed: list[bool] = []

    def spy(self: ColumnGeneration, lp: Any, prune_above: float | None = None) -> bool:
        tailed.append(tails(self, lp, prune_above))
        return tailed[-1]

    monkeypatch.setattr(ColumnGeneration, "tails", spy)
    for seed, act in [(10, 1000), (37, 700), (79, 700)]:  # FRACTIONAL's whose trees tail off most
        instance = woven(seed, act)
        best, _ = brute_force(instance)
        table = VariantTable(instance, enumerate_columns(instance, budget=1))
        generation = ColumnGeneration(table, None)
        if generation.run(None).complete:
            continue
        outcome = BranchAndPrice(generation).run(None)
        assert outcome.complete and outcome.incumbent is not None, (seed, act, outcome.stopped)
        assert same(table.objective(outcome.incumbent), best), (seed, act, table.objective(outcome.incumbent), best)
    assert tailed.count(True) >= 6, tailed.count(True)


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
    generation.bound = lp.value * (1 - partition_colgen.TAILING_GAP / 2)
    assert generation.tails(lp, lp.value)
    assert not generation.tails(lp, lp.value - 1.0)
    generation.bound = lp.value * (1 - 2 * partition_colgen.TAILING_GAP)
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


class _StopAfter:
    """A clock for :mod:`partition_branch` that runs out after a number of settled nodes: it gives the
    real time until ``nodes`` nodes went through ``BranchAndPrice._settle``, then a time past any
    deadline (the column generation keeps the real clock, so only the tree's node loop stops)."""

    def __init__(self, nodes: int) -> None:
        self.nodes = nodes
        self.settled = 0

    def perf_counter(self) -> float:
        return time.perf_counter() if self.settled < self.nodes else math.inf


def resumed_until_proven(
    instance: PartitionInstance, step: int, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[Any, VariantTable]]:
    """The tree of ``instance`` run ``step`` settled nodes at a time, each run resuming the open nodes
    of the last in a new column generation (a later run's process) over the smallest columns and those
    the last one generated (a pair's ledger keeps them), until one completes; each run's outcome, with
    its table."""
    clock = _StopAfter(step)
    settle = BranchAndPrice._settle

    def counted(self: BranchAndPrice, node: Any, deadline: float | None) -> Any:
        clock.settled += 1
        return settle(self, node, deadline)

    monkeypatch.setattr(BranchAndPrice, "_settle", counted)
    monkeypatch.setattr(partition_branch, "time", clock)
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None)
    root = generation.run(None)
    if root.complete:
        return [(root, table)]
    outcomes = [(BranchAndPrice(generation).run(time.perf_counter() + 3600.0), table)]
    while not outcomes[-1][0].complete:
        last = outcomes[-1][0]
        assert last.left is not None and last.left.nodes and last.bound is not None
        assert same(last.left.bound, last.bound)
        assert last.incumbent is not None
        incumbent = table.solution(last.incumbent)
        kept = [*incumbent.indices(instance), *(column.members for column in table.columns if len(column.members) > 1)]
        table = VariantTable(instance, enumerate_columns(instance, budget=1), kept)
        generation = ColumnGeneration(table, table.assignment(incumbent))
        clock.nodes = clock.settled + step
        outcomes.append((BranchAndPrice(generation).run(time.perf_counter() + 3600.0, resume=last.left), table))
    return outcomes


@pytest.mark.parametrize("step", [1])  # 2 also passes (about 50 s); every node is the harder case
def test_a_tree_resumed_from_its_open_nodes_reaches_brute_force(step: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tree stopped every ``step`` nodes and resumed from what it left (each open node's rules,
    inner point and bound, the cycles cut, the subset-row cuts, which some runs must leave) in a new
    column generation proves brute force's optimum, and each run's bound is valid and never falls.
    Deep trees: no node is settled by its integer program nor pruned by the incumbent. (Without the
    cycles, a node that cuts one and is priced again finds it again after each resume, and a tree
    stopped every node or two never ends.)"""
    forced_to_branch(monkeypatch)
    monkeypatch.setattr(BranchAndPrice, "prune_level", lambda self: 10.0 * self.upper)
    monkeypatch.setattr(partition_branch, "NODE_INTEGER_S", 0.0)
    resumes, with_cuts = 0, 0
    for seed, act in RESUMED:
        instance = woven(seed, act)
        best, _ = brute_force(instance)
        outcomes = resumed_until_proven(instance, step, monkeypatch)
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


@contextlib.contextmanager
def untimed_lps() -> Iterator[None]:
    """Within it, the master's LPs ignore their deadline. A tree run with a deadline already passed,
    to stop after the root, would leave the root's LPs HiGHS's least time limit (1 ms): on a loaded
    machine its vertex LP then stopped unsolved, and the root was left open as it was, not cut or
    branched (:func:`test_a_node_whose_lp_vertex_the_deadline_stops_is_left_open_as_it_was`)."""
    solve_lp = RestrictedMaster.solve_lp

    def untimed(master: RestrictedMaster, deadline: float | None = None, vertex: bool = False) -> MasterLp:
        return solve_lp(master, None, vertex)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RestrictedMaster, "solve_lp", untimed)
        yield


def root_left_open(instance: PartitionInstance) -> tuple[VariantTable, ColumnGeneration]:
    """The table of ``instance`` (its smallest columns) and its column generation run at the root,
    which must leave the instance open (its LP fractional)."""
    table = VariantTable(instance, enumerate_columns(instance, budget=1))
    generation = ColumnGeneration(table, None)
    assert not generation.run(None).complete
    return table, generation


def root_stopped_after_its_cuts(instance: PartitionInstance) -> tuple[VariantTable, Any]:
    """The table of ``instance`` and the outcome of its tree stopped at once after the root's column
    generation: the root gets its subset-row cuts and is left to be priced again (which the instance
    must need). The deadline has passed before the tree starts, so that no node after the root does;
    the root's LPs are solved without it (:func:`untimed_lps`)."""
    table, generation = root_left_open(instance)
    with untimed_lps():
        stopped = BranchAndPrice(generation).run(time.perf_counter() - 1.0)
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
    kept: bool, case: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one round of subset-row cuts per node, the root stopped after its round (to be priced
    again) is left with its round counted, and, resumed in a new column generation, is not cut again;
    with its rounds forgotten (a tree written before they were kept), it is. Either way the resumed
    tree proves brute force's optimum."""
    forced_to_branch(monkeypatch)
    monkeypatch.setattr(partition_branch, "SUBSET_ROW_ROUNDS", 1)
    monkeypatch.setattr(BranchAndPrice, "prune_level", lambda self: 10.0 * self.upper)  # the resumed root is
    monkeypatch.setattr(partition_branch, "NODE_INTEGER_S", 0.0)  # neither pruned nor settled by an integer program
    instance = woven(*case)
    best, _ = brute_force(instance)
    table, stopped = root_stopped_after_its_cuts(instance)
    assert [node.cut_rounds for node in stopped.left.nodes] == [1]
    tree = stopped.left
    if not kept:
        tree = dataclasses.replace(tree, nodes=tuple(dataclasses.replace(n, cut_rounds=0) for n in tree.nodes))
    incumbent = table.solution(stopped.incumbent)
    kept_columns = [*incumbent.indices(instance), *(c.members for c in table.columns if len(c.members) > 1)]
    fresh = VariantTable(instance, enumerate_columns(instance, budget=1), kept_columns)
    resumed = BranchAndPrice(ColumnGeneration(fresh, fresh.assignment(incumbent)))
    outcome = resumed.run(time.perf_counter() + 3600.0, resume=tree)
    assert outcome.complete and outcome.incumbent is not None
    assert same(fresh.objective(outcome.incumbent), best)
    cut_again = [line for line in resumed.log if line.startswith("node 0 [") and "subset-row cuts" in line]
    assert bool(cut_again) != kept, resumed.log


def test_a_node_is_pruned_once_its_bound_is_within_the_proofs_tolerance(monkeypatch: pytest.MonkeyPatch) -> None:
    """With energy as the metric (no whole objective), the prune level is U less the proof's tolerance
    n * eps * |U| (the one that settles a node by a partition and a pair of the capacity decomposition
    by its bound), not U less eps * |U|: nodes whose bound lies between the two are pruned (in the tree
    of every :data:`BANDED` instance). Their trees still end within that tolerance of brute force's
    optimum, with a bound no higher; the pricing's tolerance is raised from 1e-7 to 1e-4 to widen the
    band."""
    forced_to_branch(monkeypatch)
    eps = 1e-4
    for module in (partition_colgen, partition_branch):
        monkeypatch.setattr(module, "PRICING_EPS", eps)
    banded: list[tuple[int, int, float]] = []
    close = BranchAndPrice._close

    def recording(tree: BranchAndPrice, node: Node, how: str) -> None:
        upper = tree.upper
        if how.startswith("pruned") and node.bound <= upper - eps * max(1.0, abs(upper)):
            banded.append((seed, act, node.bound))
        close(tree, node, how)

    monkeypatch.setattr(BranchAndPrice, "_close", recording)
    for seed, act in BANDED:
        instance = dataclasses.replace(woven(seed, act), metric=Metric.ENERGY)
        best, _ = brute_force(instance)
        tolerance = instance.n_layers * eps * max(1.0, abs(best))
        table = VariantTable(instance, enumerate_columns(instance, budget=1))
        generation = ColumnGeneration(table, None)
        root = generation.run(None)
        tree = BranchAndPrice(generation)
        outcome = root if root.complete else tree.run(time.perf_counter() + 60.0)  # U - eps |U| never ends
        assert outcome.complete and outcome.incumbent is not None, (seed, act, outcome.stopped)
        value = table.objective(outcome.incumbent)
        assert best - 1e-9 * abs(best) <= value <= best + tolerance, (seed, act, value, best)
        assert outcome.bound is not None and outcome.bound <= best + 1e-6 * abs(best), (seed, act)
        upper = tree.upper
        assert tree.prune_level() == upper - instance.n_layers * eps * max(1.0, abs(upper)), (seed, act)
        assert (seed, act) in {(s, a) for s, a, _ in banded}, (seed, act, "no node pruned in the band")


def test_a_tree_resumed_past_its_deadline_solves_no_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """A resumed tree whose deadline has passed starts no node, not even its first: it reports none
    solved and leaves the nodes it was given open as they were, with their bound, and its cuts."""
    forced_to_branch(monkeypatch)
    instance = woven(10, 1000)
    table, stopped = root_stopped_after_its_cuts(instance)
    tree = stopped.left
    resumed = BranchAndPrice(ColumnGeneration(table, stopped.incumbent))
    outcome = resumed.run(time.perf_counter() - 1.0, resume=tree)
    assert not outcome.complete and outcome.nodes == 0
    assert outcome.left is not None and outcome.left.nodes == tree.nodes and outcome.left.cuts == tree.cuts
    assert outcome.bound is not None and same(outcome.bound, stopped.bound)
    assert all("open at the deadline" in line for line in resumed.log), resumed.log


@pytest.mark.parametrize(("artificial", "cut"), [(0.0, True), (1e-9, True), (1e-3, False), (0.5, False)])
def test_a_vertex_is_cut_unless_it_keeps_more_artificial_cover_than_phase_ones_tolerance(
    artificial: float, cut: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A root vertex that violates subset rows gets them when its artificial variables sum to at
    most :data:`~accelsched.formulations.partition.colgen.COVERED` (rounding noise of an LP that
    covers every layer), and none when they sum to more."""
    forced_to_branch(monkeypatch)
    _, generation = root_left_open(woven(10, 1000))
    lp = generation.master.solve_lp(None, vertex=True)
    assert lp.artificial == 0.0
    tree = BranchAndPrice(generation)
    root = Node(lp.value, 0, frozenset(), ())
    added = tree._cut(root, dataclasses.replace(lp, artificial=artificial))
    assert bool(added) == cut and len(generation.cuts) == added


@pytest.mark.parametrize(("seed", "act"), [(76, 800), (104, 700)])
def test_a_probe_is_the_masters_lp_under_the_nodes_rules_and_one_more(
    seed: int, act: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Strong branching's probes (one dual-simplex model; a rule's breaking variants held at 0, then
    released) give the values of the master's own LP built under the node's rules and that rule
    (interior point, the variants held at 0 by :meth:`RestrictedMaster.forbidden`): both rules on
    each fractional pair of the root's vertex, at the root and under a rule on another pair."""
    forced_to_branch(monkeypatch)
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


def test_strong_branching_takes_the_pair_whose_children_gain_most(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chosen pair has the largest product of its children's LP gains over the node's LP, each
    capped at the distance to the prune level (a child left partly to an artificial variable, or
    whose solve stopped, counts as the cap) and at least a millionth of it; ties go to the pair
    nearer 1/2 (earlier), probes cut short by the deadline leave the pairs probed in full (none:
    the first pair), and with one candidate, or a node LP its deadline stopped, nothing is probed."""
    forced_to_branch(monkeypatch)
    _, _, generation, _ = rooted(76, 800)
    tree = BranchAndPrice(generation)
    monkeypatch.setattr(BranchAndPrice, "prune_level", lambda self: 110.0)
    lp = MasterLp(value=100.0, duals=(), support=(), base=0.0, least=0.0, n=0)
    pairs = [(0, 1), (0, 2), (1, 2), (2, 3)]
    asked = [PairRule(*pair, together) for pair in pairs for together in (True, False)]

    def probing(values: list[Probe]) -> None:
        def probe(self: RestrictedMaster, rules: Sequence[PairRule], deadline: float | None = None) -> list[Probe]:
            assert list(rules) == asked
            return values

        monkeypatch.setattr(RestrictedMaster, "probe", probe)

    level = [Probe(100.0, 0.0), Probe(130.0, 0.0)]  # (0, 1): 0 and 30, capped at 10: 1e-5 x 10
    middle = [Probe(104.0, 0.0), Probe(104.0, 0.0), Probe(105.0, 0.0), Probe(103.0, 0.0)]  # 16, 15
    probing([*level, *middle, Probe(1e12, 1.0), Probe(102.0, 0.0)])  # (2, 3): an artificial kept: 10 x 2
    pair, how = tree._strong_pair(pairs, lp, None)
    assert pair == (2, 3), how
    assert re.fullmatch(
        r" \(strong branching over 4 pairs in \d+\.\d s: its children's LPs \+10 together, \+2 apart\)", how
    )
    middle = [Probe(105.0, 0.0), Probe(104.0, 0.0), Probe(99.0, 0.0), Probe(90.0, 0.0)]  # 20, 1e-10
    probing([*level, *middle, Probe(math.inf, 0.0), Probe(102.0, 0.0)])  # (2, 3): a stopped solve: 10 x 2
    assert tree._strong_pair(pairs, lp, None)[0] == (0, 2)
    probing([*level, Probe(105.0, 0.0)])  # the deadline came after three probes
    assert tree._strong_pair(pairs, lp, None)[0] == (0, 1)
    probing([Probe(105.0, 0.0)])
    assert tree._strong_pair(pairs, lp, None) == ((0, 1), "")
    monkeypatch.setattr(partition_branch, "STRONG_CANDIDATES", 1)
    monkeypatch.setattr(RestrictedMaster, "probe", None)
    assert tree._strong_pair(pairs, lp, None) == ((0, 1), "")
    monkeypatch.setattr(partition_branch, "STRONG_CANDIDATES", 8)
    assert tree._strong_pair(pairs, dataclasses.replace(lp, value=math.inf), None) == ((0, 1), "")


def test_a_node_whose_cuts_hold_at_its_vertex_is_branched_without_pricing_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cuts that a node's LP vertex keeps leave its LP over the columns it has where it was, and
    pricing, which only adds columns, cannot raise its bound past that: the node is branched at once,
    never priced again for them. Separation made to return only such triples (valid cuts, none
    violated), the trees of :data:`TREE_ALONE` still prove brute force's optimum."""
    forced_to_branch(monkeypatch)
    monkeypatch.setattr(BranchAndPrice, "prune_level", lambda self: 10.0 * self.upper)
    monkeypatch.setattr(partition_branch, "NODE_INTEGER_S", 0.0)

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

    monkeypatch.setattr(partition_branch, "violated_subset_rows", kept_at_the_vertex)
    skipped = 0
    for seed, act in TREE_ALONE:
        best, table, generation, root = rooted(seed, act)
        if root.complete:
            continue
        outcome = BranchAndPrice(generation).run(None)
        assert outcome.complete and outcome.incumbent is not None, (seed, act, outcome.stopped)
        assert same(table.objective(outcome.incumbent), best), (seed, act)
        cut_lines = [line for line in outcome.tree if "subset-row cuts" in line]
        assert not [line for line in cut_lines if "priced again" in line], cut_lines
        skipped += sum("pricing again cannot raise its bound" in line for line in cut_lines)
    assert skipped, "no node got cuts to skip"


def test_prepare_resumes_a_tree_from_its_open_nodes_without_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Given the open nodes a stopped tree left (here the root, priced again after its subset-row cuts)
    and its partition, ``prepare`` goes straight to them, with the cuts and no column generation at the
    root, and the tree proves brute force's optimum, also when the level differs in its last bit (the
    incumbent evaluated again). A tree whose nodes were closed at a prune level below the incumbent's is
    not resumed: the root runs."""
    forced_to_branch(monkeypatch)
    instance = woven(10, 700)
    best, _ = brute_force(instance)
    table, stopped = root_stopped_after_its_cuts(instance)
    assert len(stopped.left.nodes) == 1
    warm = table.solution(stopped.incumbent)
    roots: list[int] = []
    run_root = ColumnGeneration.run

    def spy(self: ColumnGeneration, *args: Any) -> Any:
        roots.append(1)
        return run_root(self, *args)

    monkeypatch.setattr(ColumnGeneration, "run", spy)
    hair = dataclasses.replace(stopped.left, level=math.nextafter(stopped.left.level, -math.inf))
    for tree in (stopped.left, hair):
        prepared = prepare(instance, SolveOptions(), warm, time.perf_counter(), ProofSettings(budget=1), tree=tree)
        assert roots == [] and prepared.table.complete and prepared.tree is None and prepared.warm is not None
        assert same(prepared.table.objective(prepared.warm), best)
        resumed = f"branch-and-price resumed from 1 open node of an earlier run, with {len(tree.cuts)} subset-row cuts"
        assert resumed in prepared.notes
    lower = dataclasses.replace(stopped.left, level=-math.inf)
    prepared = prepare(instance, SolveOptions(), warm, time.perf_counter(), ProofSettings(budget=1), tree=lower)
    assert roots == [1] and prepared.table.complete


def test_a_resumed_tree_proves_its_bound_past_the_cutoff_over_every_column(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pair of the capacity decomposition resumes its tree with a cutoff below the optimum. The
    final model's bound says nothing past the cutoff, but the tree's does: the least bound of its
    closed nodes, each proven by pricing every column, is :attr:`Prepared.proven_bound`, at most
    brute force's optimum and past the cutoff's level, far past it when the open node's bound
    already was (it is closed at once). The pairs within inherit it (a resumed tree once recorded
    its pair's cutoff alone, losing the 1 % its root had proven above it)."""
    forced_to_branch(monkeypatch)
    instance = woven(10, 700)
    best, _ = brute_force(instance)
    table, stopped = root_stopped_after_its_cuts(instance)
    warm = table.solution(stopped.incumbent)
    (node,) = stopped.left.nodes
    assert node.inner.bound < best - 1.0
    settings, tree = ProofSettings(budget=1), stopped.left
    for cutoff in (0.9 * node.inner.bound, (node.inner.bound + best) / 2):
        prepared = prepare(instance, SolveOptions(), warm, time.perf_counter(), settings, cutoff=cutoff, tree=tree)
        assert prepared.table.complete and prepared.proven_bound is not None
        assert cutoff - 1.0 < prepared.proven_bound <= best, (cutoff, prepared.proven_bound, best)
        if cutoff < node.inner.bound:
            assert prepared.proven_bound >= node.inner.bound
