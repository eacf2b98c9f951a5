"""The proof driver of the partition models (Cocco): the table the exact models solve over, and its proof.

Column generation (:mod:`~accelsched.formulations.partition.colgen`) and branch-and-price
(:mod:`~accelsched.formulations.partition.branch`) complete the columns of a fixed-capacity
instance (:mod:`~accelsched.formulations.partition.fixed_capacity`); the capacity decomposition
(:mod:`~accelsched.formulations.partition.capacity`) solves a co-exploration instance pair of
candidates by pair. :func:`prepare` chooses between them and returns what the models need
(:class:`~accelsched.formulations.partition.common.Prepared`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from accelsched.formulations.partition.capacity import decompose
from accelsched.formulations.partition.common import InnerPoint, Prepared, TreeState
from accelsched.formulations.partition.fixed_capacity import list_columns, prove_fixed
from accelsched.formulations.partition.ledger import Ledger
from accelsched.formulations.partition.proof_params import DEFAULT_SETTINGS, ProofSettings
from accelsched.problems.partition import PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import ColumnSet
from accelsched.solvers import SolveOptions

__all__ = ["prepare"]


def prepare(
    instance: PartitionInstance,
    options: SolveOptions,
    warm_start: PartitionSolution | None,
    start: float,
    settings: ProofSettings = DEFAULT_SETTINGS,
    *,
    cutoff: float = math.inf,
    listed: ColumnSet | None = None,
    ledger: Ledger | None = None,
    seeds: Sequence[Sequence[int]] = (),
    inner: InnerPoint | None = None,
    tree: TreeState | None = None,
    reach: Sequence[float] = (),
) -> Prepared:
    """Check the warm start, list the columns, build the table; generate columns when the list stops early.

    The enumeration gets at most a quarter of the time limit
    (:func:`~accelsched.formulations.partition.fixed_capacity.list_columns`). With fixed capacities,
    an incomplete table is completed by column generation and branch-and-price
    (:func:`~accelsched.formulations.partition.fixed_capacity.prove_fixed`, which says how the time
    limit is shared and what ``cutoff``, ``inner``, ``tree`` and ``reach`` do). In co-exploration the
    capacity decomposition (:func:`~accelsched.formulations.partition.capacity.decompose`) takes the
    place of column generation: it solves one fixed-capacity problem per pair of candidates, each
    with the same two steps, and with the cutoff above which the pair cannot matter. A complete
    co-exploration table of more than ``settings.decompose_above`` columns is decomposed too, each
    pair's table filtered from it; ``settings.backend`` solves the pairs' MILPs (the MILP methods
    pass their own; CP-SAT's method has none and leaves HiGHS).

    ``start``: the :func:`time.perf_counter` value the time limit counts from. ``listed``: the
    instance's columns when they are known already, in place of the enumeration. ``ledger``: the
    decomposition starts from it and writes each solved pair to it
    (:mod:`~accelsched.formulations.partition.ledger`). ``seeds``: subgraphs (layer indices, each a
    valid column of the instance) that column generation starts from beside the smallest listed
    columns.

    Presolve is switched off for the solvers (:meth:`Prepared.solver_options`): on these
    set-partitioning models with many columns, HiGHS' presolve probing can take most of the
    solve, and CP-SAT's presolve weakens the bound of its linear relaxation (as
    :class:`~accelsched.solvers.SolveOptions` states for ``presolve``).
    """
    listing = list_columns(instance, options, warm_start, start, settings, listed=listed, seeds=seeds)
    columns = listing.columns
    large = settings.decompose_above is not None and len(columns) > settings.decompose_above
    if instance.co_exploration and (large or not columns.complete):
        notes = list(listing.notes)
        return decompose(instance, options, listing.table, listing.warm, notes, start, columns, settings, ledger)
    return prove_fixed(listing, options, start, settings, cutoff=cutoff, inner=inner, tree=tree, reach=reach)
