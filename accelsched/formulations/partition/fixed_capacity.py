"""The exact proof of a fixed-capacity partition instance: its columns, column generation, branch-and-price.

:func:`list_columns` checks the warm start, lists the columns (or takes those given) and builds
the table the master starts from; :func:`prove_fixed` completes it for one pair of capacities:
nothing more when the listing is complete, else column generation
(:class:`~accelsched.formulations.partition.colgen.ColumnGeneration`), its listing of the columns
below the gap, and branch-and-price
(:class:`~accelsched.formulations.partition.branch.BranchAndPrice`) when that listing gives up or
the root stops at its deadline. :func:`~accelsched.formulations.partition.proof.prepare` runs both
for an instance, and the capacity decomposition runs them for each of its pairs.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter

from accelsched.formulations.partition.branch import BranchAndPrice, tree_note
from accelsched.formulations.partition.colgen import ColumnGeneration
from accelsched.formulations.partition.colgen_core import Outcome
from accelsched.formulations.partition.common import (
    Assignment,
    InnerPoint,
    Prepared,
    TreeState,
    VariantTable,
    checked_warm_start,
)
from accelsched.formulations.partition.proof_params import ProofSettings
from accelsched.problems.partition import PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import ColumnSet, enumerate_columns
from accelsched.solvers import SolveOptions

__all__ = ["LOGGER", "Listing", "list_columns", "master_columns", "prove_fixed"]

LOGGER = logging.getLogger(__name__)
"""A root column generation that stopped unconverged (at its deadline, or by ``root_rounds``) and is
handed to branch-and-price, at DEBUG (:func:`prove_fixed`)."""


@dataclass(frozen=True)
class Listing:
    """An instance's columns as listed, and the table its master starts from (:func:`list_columns`).

    Attributes
    ----------
    instance
        The instance.
    warm
        The checked warm start, or None (a rejected one is said so in :attr:`notes`).
    columns
        Its enumeration (or the columns given), complete or not.
    master
        The columns the master starts from (:func:`master_columns`).
    table
        The table over :attr:`master`, with the warm start's columns and the seeds.
    assignment
        The warm start in :attr:`table`, or None.
    notes
        What the stats say so far.
    """

    instance: PartitionInstance
    warm: PartitionSolution | None
    columns: ColumnSet
    master: ColumnSet
    table: VariantTable
    assignment: Assignment | None
    notes: tuple[str, ...]


def list_columns(
    instance: PartitionInstance,
    options: SolveOptions,
    warm_start: PartitionSolution | None,
    start: float,
    settings: ProofSettings,
    *,
    listed: ColumnSet | None = None,
    seeds: Sequence[Sequence[int]] = (),
) -> Listing:
    """Check the warm start, list the columns (in at most a quarter of the time limit, from ``start``,
    a :func:`time.perf_counter` value) and build the table its master starts from.

    ``listed``: the instance's columns when they are known already (the decomposition's pairs), in
    place of the enumeration. ``seeds``: subgraphs (layer indices, each a valid column of the
    instance) that the table holds beside the smallest listed columns: those an earlier solve of the
    same pair or of a pair within it generated.
    """
    warm, note = checked_warm_start(instance, warm_start)
    limit = options.time_limit_s
    columns = (
        enumerate_columns(instance, settings.budget, None if limit is None else start + limit / 4)
        if listed is None
        else listed
    )
    notes = [note] if note else []
    master = master_columns(columns, settings.params.branch.master_columns)
    table = VariantTable(instance, master, [*(warm.indices(instance) if warm else ()), *seeds])
    assignment = table.assignment(warm) if warm else None
    if assignment is not None:
        notes = [f"{note} (objective {table.objective(assignment):.12g})"]
    return Listing(instance, warm, columns, master, table, assignment, tuple(notes))


def prove_fixed(
    listing: Listing,
    options: SolveOptions,
    start: float,
    settings: ProofSettings,
    *,
    cutoff: float = math.inf,
    inner: InnerPoint | None = None,
    tree: TreeState | None = None,
    reach: Sequence[float] = (),
) -> Prepared:
    """Complete a listing's table for the models: as it is when the listing is complete, else by column
    generation and branch-and-price (fixed capacities).

    Column generation (:class:`ColumnGeneration`) starts no pricing round after three quarters of
    the time limit, a listing of the columns below the gap may go on until all but
    ``final_share`` of it (:class:`~accelsched.formulations.partition.proof_params.ProofParams`;
    the last step of the proof: the models then solve over a table that already holds the
    incumbent), and its best partition becomes the solvers' start when it beats the warm start.
    When that listing gives up with the master optimal or tailing off, branch-and-price
    (:class:`BranchAndPrice`) takes the same time; so does it when the pricing rounds stop at their
    deadline with an inner point and a partition (the root is then priced on in the tree, a DEBUG
    record of :data:`LOGGER` says so). Its proof that the incumbent is optimal completes the table
    too (the table holds the incumbent's columns).

    ``cutoff``: the objective above which the instance cannot matter (:class:`ColumnGeneration`; a
    pair of the capacity decomposition). ``inner``: an inner point proven for the instance or for a
    pair containing it, which column generation starts from; the returned :attr:`Prepared.inner`
    is the root's, before any branching (a node's holds only under its rules). ``tree``: the open
    nodes an earlier run's tree left for the instance; the work resumes from them, skipping the
    root's column generation, when the incumbent's prune level allows it
    (:meth:`BranchAndPrice.resumable`) and a partition is known (the warm start's, or one over the
    master's columns). :attr:`Prepared.tree` is what the tree leaves, when it stops short of the
    proof. ``reach``: levels above ``cutoff`` that the root's column generation pushes its bound to
    (:class:`ColumnGeneration`; the cutoffs of the decomposition's pairs within this one). Its bound
    and the tree's, each valid over every column (a tree's is the least bound of its nodes, each
    proven by pricing every column under the node's rules, past the cutoff when a node's pricing
    passed it), give :attr:`Prepared.proven_bound`.
    """
    table, assignment, columns, master = listing.table, listing.assignment, listing.columns, listing.master
    notes = list(listing.notes)
    params = settings.params
    limit = options.time_limit_s
    deadline = None if limit is None else start + limit
    if columns.complete:
        if settings.pairs is not None:
            notes.append(f"every column listed ({len(columns)}): solved whole, not pair by pair as the pairs given ask")
        return Prepared(table, assignment, tuple(notes), deadline)
    if master is not columns:
        most = params.branch.master_columns
        notes.append(f"column generation starts from the {most} smallest of {len(columns)} columns")
    generation = ColumnGeneration(
        table, assignment, options.threads, settings.round_limit, cutoff, inner, reach, params=params.colgen
    )
    proof_deadline = params.proof_deadline(start, limit)
    root, proven = generation.inner_point, None
    proven_by_tree: Outcome | None = None
    resumed = _resumed_tree(generation, tree, proof_deadline, settings)
    if resumed is not None:
        assert tree is not None
        outcome = proven_by_tree = resumed
        nodes = f"{len(tree.nodes)} open node{'s' if len(tree.nodes) > 1 else ''}"
        cuts = f", with {len(tree.cuts)} subset-row cuts" if tree.cuts else ""
        notes.append(f"branch-and-price resumed from {nodes} of an earlier run{cuts}")
    else:
        rounds = generation.rounds
        if params.root_rounds is not None:
            generation.rounds = min(rounds, params.root_rounds)
        outcome = generation.run(None if limit is None else start + 3 * limit / 4, proof_deadline)
        stopped_by_rounds = generation.rounds < rounds and generation.done >= generation.rounds
        generation.rounds = rounds
        root, proven = generation.inner_point, generation.bound
        handover = outcome.converged or _unfinished_root(generation, outcome, proof_deadline, stopped_by_rounds)
        if handover and generation.incumbent is None:  # a stopped root, with no warm start and no listing yet
            generation.incumbent = generation.master.solve_integer(None, proof_deadline)
        if handover and generation.incumbent is not None:
            if not outcome.converged:
                LOGGER.debug(
                    "root stopped unconverged after %d rounds (%s): handed to branch-and-price",
                    outcome.rounds,
                    "root_rounds" if stopped_by_rounds else "its deadline",
                )
            branching = BranchAndPrice(generation, params.branch)
            outcome = proven_by_tree = branching.run(proof_deadline, priced=outcome.converged)
    if proven_by_tree is not None and proven_by_tree.bound is not None:  # its nodes' bounds, past any cutoff
        proven = max(proven_by_tree.bound, -math.inf if proven is None else proven)
    reason = columns.stopped if outcome.complete else f"{columns.stopped}; {outcome.stopped}"
    table.column_set = dataclasses.replace(
        master, complete=outcome.complete, stopped=reason, bound=outcome.bound, columns=tuple(table.columns)
    )
    table.complete = outcome.complete
    # an incomplete set's stop reasons are in the result's note on the bound (partition_result)
    progress = f"column generation: {outcome.rounds} rounds, {len(table.columns)} columns"
    if outcome.nodes:
        progress += f", branch-and-price: {outcome.nodes} nodes"
    if outcome.complete and outcome.nodes:
        notes.append(f"{columns.stopped}; {progress}, the incumbent proven optimal by branch-and-price")
    elif outcome.complete:
        notes.append(f"{columns.stopped}; {progress}, every column below the gap listed ({outcome.listed} added)")
    else:
        notes.append(progress)
    if outcome.tree:
        notes.append(tree_note(outcome.tree, params.branch.tree_note_lines))
    better = outcome.incumbent is not None and (
        assignment is None or table.objective(outcome.incumbent) < table.objective(assignment)
    )
    warm_or_better = outcome.incumbent if better else assignment
    return Prepared(table, warm_or_better, tuple(notes), deadline, better, root, outcome.left, proven)


def master_columns(columns: ColumnSet, most: int) -> ColumnSet:
    """The listed columns the master starts from (:func:`list_columns`): all of them, or, when the listing
    stopped early with more than ``most`` (:attr:`BranchParams.master_columns
    <accelsched.formulations.partition.proof_params.BranchParams>`), that many of the smallest, with
    :attr:`~accelsched.problems.partition_columns.ColumnSet.listed_below` lowered to the size of the
    first one left out (every column the master misses has at least that many layers)."""
    if columns.complete or len(columns.columns) <= most:
        return columns
    smallest = sorted(columns.columns, key=lambda column: (len(column.members), column.members))
    kept = tuple(sorted(smallest[:most], key=attrgetter("members")))
    below = min(columns.listed_below, len(smallest[most].members))
    return dataclasses.replace(columns, columns=kept, listed_below=below)


def _resumed_tree(
    generation: ColumnGeneration, tree: TreeState | None, deadline: float | None, settings: ProofSettings
) -> Outcome | None:
    """The tree resumed from an earlier run's open nodes until ``deadline``; None when there are
    none, the incumbent's prune level does not allow it (:meth:`BranchAndPrice.resumable`), or no
    partition is known (the warm start, else the integer program over the master's columns)."""
    if tree is None or generation.instance.co_exploration or generation.inner is None:
        return None
    if generation.incumbent is None:
        generation.incumbent = generation.master.solve_integer(None, deadline)
        if generation.incumbent is None:
            return None
    branching = BranchAndPrice(generation, settings.params.branch)
    return branching.run(deadline, resume=tree) if branching.resumable(tree) else None


def _unfinished_root(
    generation: ColumnGeneration, outcome: Outcome, deadline: float | None, stopped_by_rounds: bool = False
) -> bool:
    """Whether a root column generation stopped at its deadline (or by ``root_rounds``,
    ``stopped_by_rounds``: :class:`~accelsched.formulations.partition.proof_params.ProofParams`) goes
    on in the tree until ``deadline``: with fixed capacities and an inner point, before the round
    limit, with time left (and a partition, which :func:`prove_fixed` finds over the master when
    neither the warm start nor a listing gave one)."""
    return (
        not outcome.complete
        and not outcome.converged
        and not generation.instance.co_exploration
        and generation.inner is not None
        and generation.done < generation.rounds
        and (stopped_by_rounds or (deadline is not None and time.perf_counter() < deadline))
    )
