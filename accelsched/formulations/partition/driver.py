"""The run of an exact partition model over its column table, shared by the MILP and the CP-SAT methods.

:func:`solve_over_table` is a method's whole run but the model: the instance refused when some layer
fits no candidate, the pair ledger held and opened, the table prepared and proven
(:func:`~accelsched.formulations.partition.proof.prepare`), the model solved over it (the
method's :data:`ModelSolve`), the result built (never worse than the start;
:func:`~accelsched.formulations.partition.common.partition_result`) and offered to the ledger.
:func:`with_ledger` and :func:`with_proof_params` give such a method, as the registry holds it, a
ledger (and a share of the pairs) or other proof parameters than its defaults.
"""

from __future__ import annotations

import dataclasses
import inspect
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from accelsched.errors import InputError
from accelsched.formulations.partition.common import Assignment, Prepared, infeasible_result, partition_result
from accelsched.formulations.partition.ledger import keep_final, ledger_lock, open_ledger
from accelsched.formulations.partition.proof import prepare
from accelsched.formulations.partition.proof_params import ProofParams, ProofSettings
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PartitionInstance, PartitionSolution
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = [
    "ModelAnswer",
    "ModelSolve",
    "proof_settings",
    "solve_over_table",
    "takes_ledger",
    "with_ledger",
    "with_proof_params",
]


@dataclass(frozen=True)
class ModelAnswer:
    """What a model's solve over a prepared table gave.

    Attributes
    ----------
    status
        The solver's status.
    found
        Its decoded assignment, or None.
    bound
        Its bound of the exact objective, or None.
    stats
        Its statistics.
    notes
        What the result's note adds about the solve (after the table's notes).
    """

    status: Status
    found: Assignment | None
    bound: float | None
    stats: SolveStats
    notes: tuple[str, ...] = ()


ModelSolve = Callable[[Prepared, SolveOptions], ModelAnswer]
"""A method's model: built over the prepared table (:attr:`Prepared.table`), started from
:attr:`Prepared.warm`, solved with :meth:`Prepared.solver_options` of the options."""


def proof_settings(
    budget: int,
    rounds: int | None,
    pairs: Collection[tuple[int, int]] | None,
    params: ProofParams,
    backend: str = "highs",
) -> ProofSettings:
    """A method's :class:`ProofSettings` from its options.

    Parameters
    ----------
    budget
        Column budget of :func:`~accelsched.problems.partition_columns.enumerate_columns`; beyond it,
        column generation (:mod:`accelsched.formulations.partition.colgen`) completes the column set.
    rounds
        Largest number of column-generation rounds (None: ``max_rounds`` of the column generation's
        parameters).
    pairs
        With co-exploration, the pairs of candidates (activation bytes, weight bytes; 0 with a shared
        buffer) the capacity decomposition may solve, a share of a proof divided between runs
        (:attr:`ProofSettings.pairs`); None: every pair.
    params
        The proof's limits and shares (:class:`ProofParams`; a complete co-exploration table of more
        than its ``decompose_columns`` is decomposed too).
    backend
        The linear backend of the capacity decomposition's pairs.
    """
    return ProofSettings(
        budget, rounds, params.decompose_columns, backend, None if pairs is None else frozenset(pairs), params
    )


def solve_over_table(
    instance: PartitionInstance,
    options: SolveOptions,
    warm_start: PartitionSolution | None,
    *,
    method: str,
    backend: str,
    settings: ProofSettings,
    ledger: str | Path | None,
    solve_model: ModelSolve,
) -> Result[PartitionSolution]:
    """Prepare the table, solve ``solve_model`` over it, and return the result as ``method`` on ``backend``.

    Parameters
    ----------
    instance
        The partition instance.
    options
        Limits; the time limit, counted from the call, covers the column enumeration (at most a
        quarter of it), column generation (pricing rounds up to three quarters, the listing below
        the gap, the tree and the capacity decomposition's pairs up to all but ``final_share``,
        :class:`ProofParams`) and the model's solve (:func:`~accelsched.formulations.partition.proof.prepare`).
    warm_start
        A solution to start from (checked first; a rejected one is ignored and said so).
    method, backend
        Reported in the result.
    settings
        The proof's settings (:func:`proof_settings`).
    ledger
        With co-exploration, a pair ledger file (:mod:`~accelsched.formulations.partition.ledger`),
        held from its read to its last write: the capacity decomposition starts from what it holds
        and writes each solved pair to it, and the final partition is offered to it.
    solve_model
        The method's model over the prepared table.

    Returns
    -------
    Result
        Never worse than the start (the warm start, or column generation's better partition);
        OPTIMAL only with a complete column set and a proof from the model's solver. Its
        ``runtime_s`` is the registry's to measure (:func:`accelsched.registry.run_method`).
    """
    infeasible = infeasible_result(instance, method, backend)
    if infeasible is not None:
        return infeasible
    start = time.perf_counter()
    with ledger_lock(ledger):
        book = open_ledger(ledger, instance)
        run = prepare(instance, options, warm_start, start, settings, ledger=book)
        answer = solve_model(run, options)
        result = partition_result(
            run.table,
            method=method,
            backend=backend,
            status=answer.status,
            found=answer.found,
            bound=answer.bound,
            warm=run.warm,
            seed=options.seed,
            stats=answer.stats,
            notes=[*run.notes, *answer.notes],
            start_label=run.start_label,
        )
        keep_final(book, result.solution)
    return result


def takes_ledger(method: MethodSpec) -> bool:
    """Whether a method's run takes a pair ledger (the exact models of co-exploration)."""
    return "ledger" in inspect.signature(method.run).parameters


def with_ledger(
    method: MethodSpec,
    path: str | Path,
    pairs: Collection[tuple[int, int]] | None = None,
    *,
    takers: Sequence[str] = (),
) -> MethodSpec:
    """``method`` running with the pair ledger at ``path`` (opened and checked when it runs), solving
    only ``pairs`` (activation bytes, weight bytes) when given: its share of a divided proof
    (:attr:`ProofSettings.pairs <accelsched.formulations.partition.proof_params.ProofSettings>`).

    Parameters
    ----------
    method
        The method to run with the ledger.
    path
        The ledger file.
    pairs
        The pairs this run may solve, or None: every one.
    takers
        The names of the problem's methods that take a ledger (:func:`takes_ledger`), which the error
        for a method that takes none names; the caller, who knows the registry, gives them.

    Raises
    ------
    InputError
        ``method`` takes no ledger (a heuristic, the enumeration): the error names ``takers``.
    """
    if not takes_ledger(method):
        fix = f"use it with {', '.join(takers)}, or leave the ledger out" if takers else "leave the ledger out"
        raise InputError(f"method {method.name!r} ({method.problem}) takes no pair ledger", f"pair ledger {path}", fix)
    run: Callable[..., Any] = method.run  # solve_milp or solve_cpsat_partition (checked above)
    return dataclasses.replace(method, run=partial(run, ledger=path, pairs=pairs))


def with_proof_params(method: MethodSpec, params: ProofParams) -> MethodSpec:
    """``method`` (an exact model of the partition problem, :func:`takes_ledger`) running with the proof's
    parameters ``params`` (:class:`~accelsched.formulations.partition.proof_params.ProofParams`) in
    place of its defaults.

    Raises
    ------
    InputError
        ``method`` takes no proof parameters (a heuristic, the enumeration).
    """
    if not takes_ledger(method):
        raise InputError(
            f"method {method.name!r} ({method.problem}) proves no bound by column generation",
            "the proof's parameters (--decompose-above)",
            "use them with an exact model (milp-highs, milp-cbc, milp-pyomo, cpsat), or leave them out",
        )
    run: Callable[..., Any] = method.run  # solve_milp or solve_cpsat_partition (checked above)
    return dataclasses.replace(method, run=partial(run, params=params))
