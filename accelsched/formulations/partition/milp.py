r"""The MILP methods of the partition problem (Cocco): the MILP model over the column table.

Running
-------
:func:`solve_milp` enumerates the columns in at most a quarter of the time limit
and, when the enumeration stops at its budget, completes the column set by column
generation (pricing rounds until three quarters of it, the listing of the columns
below the gap until all but the last ``final_share`` of it; see
:func:`accelsched.formulations.partition.proof.prepare`: every column an optimal
partition needs, or a proven bound when time runs out; in co-exploration, one
fixed-capacity problem per pair of candidates instead:
:mod:`accelsched.formulations.partition.capacity`); then it builds the model
and solves it with presolve off. A warm start (or column generation's better
partition) becomes a complete MIP start (its subgraphs are added as columns if
missing), and the result is never worse than it. The status is OPTIMAL only when the
column set is complete and the solver proved optimality.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import partial
from pathlib import Path

from accelsched.formulations.partition.common import Prepared
from accelsched.formulations.partition.driver import ModelAnswer, proof_settings, solve_over_table
from accelsched.formulations.partition.milp_model import PartitionMilp
from accelsched.formulations.partition.proof_params import DEFAULT_PROOF, ProofParams
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PROBLEM, PartitionInstance, PartitionSolution
from accelsched.problems.partition_columns import DEFAULT_BUDGET
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, solve

__all__ = ["METHODS", "solve_milp"]


def solve_milp(
    instance: PartitionInstance,
    options: SolveOptions,
    warm_start: PartitionSolution | None = None,
    *,
    backend: str = "highs",
    method: str = "milp-highs",
    budget: int = DEFAULT_BUDGET,
    rounds: int | None = None,
    ledger: str | Path | None = None,
    pairs: Collection[tuple[int, int]] | None = None,
    params: ProofParams = DEFAULT_PROOF,
) -> Result[PartitionSolution]:
    """Enumerate the columns, build :class:`PartitionMilp` and solve it with one linear backend.

    Parameters
    ----------
    instance, options, warm_start, ledger
        As :func:`~accelsched.formulations.partition.driver.solve_over_table` takes them; the warm
        start (or column generation's better partition) becomes a complete MIP start.
    backend
        A linear backend of :func:`accelsched.solvers.solve` (in co-exploration it also solves the
        capacity decomposition's pairs).
    method
        Name reported in the Result.
    budget, rounds, pairs, params
        The proof's settings (:func:`~accelsched.formulations.partition.driver.proof_settings`); a
        complete co-exploration table of more than ``params.decompose_columns`` is solved pair by
        pair too.

    Returns
    -------
    Result
        OPTIMAL only with a complete column set and a proof from the solver.
    """
    settings = proof_settings(budget, rounds, pairs, params, backend)

    def solve_model(run: Prepared, options: SolveOptions) -> ModelAnswer:
        milp = PartitionMilp(run.table)
        answer = solve(milp.model, backend, run.solver_options(options), milp.start(run.warm) if run.warm else None)
        found = None if answer.values is None else milp.decode(answer.values)
        return ModelAnswer(answer.status, found, answer.bound, answer.stats)

    return solve_over_table(
        instance,
        options,
        warm_start,
        method=method,
        backend=backend,
        settings=settings,
        ledger=ledger,
        solve_model=solve_model,
    )


METHODS: tuple[MethodSpec, ...] = tuple(
    MethodSpec(
        name,
        PROBLEM.name,
        "exact",
        partial(solve_milp, backend=backend, method=name),
        f"MILP over enumerated subgraph columns, capacity candidates as binaries, solved by {label}",
    )
    for name, backend, label in (
        ("milp-highs", "highs", "HiGHS"),
        ("milp-cbc", "pulp-cbc", "CBC through PuLP"),
        ("milp-pyomo", "pyomo-highs", "HiGHS through Pyomo"),
    )
)
"""The MILP methods: ``milp-highs``, ``milp-cbc``, ``milp-pyomo``."""
