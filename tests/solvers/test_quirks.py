"""Regression tests for the backend quirks the adapters work around (see the module docstrings)."""

from __future__ import annotations

import warnings

import pulp
import pytest

from accelsched.solvers import SolveOptions, Status, available_backends, pulp_backend, solve
from tests.solvers.instances import planted, planted_milp


@pytest.mark.parametrize("backend", available_backends())
def test_tiny_time_limit_never_claims_infeasible(backend: str) -> None:
    """CBC whose limit expires in preprocessing says "infeasible" for a feasible model; the
    adapter re-runs without preprocessing. No backend may report a feasible model infeasible."""
    model, _ = planted_milp(planted())
    for _ in range(3):
        sol = solve(model, backend, SolveOptions(time_limit_s=0.001))
        assert sol.status in (Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION), sol.native_status


@pytest.mark.parametrize(("limit", "status"), [(0.001, Status.TIME_LIMIT_NO_SOLUTION), (None, Status.ERROR)])
def test_cbc_exiting_abnormally_is_a_status(
    monkeypatch: pytest.MonkeyPatch, limit: float | None, status: Status
) -> None:
    """CBC sometimes dies when a millisecond limit expires while it reads a MIP start (PulpSolverError)."""

    def crash(self: pulp.LpProblem, solver: object) -> None:
        raise pulp.PulpSolverError("Pulp: Error while trying to execute cbc")

    monkeypatch.setattr(pulp.LpProblem, "solve", crash)
    model, _ = planted_milp(planted())
    sol = solve(model, "pulp-cbc", SolveOptions(time_limit_s=limit))
    assert sol.status is status and sol.values is None
    assert sol.native_status.startswith("CBC exited abnormally: Pulp: Error while trying to execute")


def test_pulp_highs_tolerates_statuses_missing_from_pulps_table() -> None:
    """pulp.HiGHS raises KeyError for kSolutionLimit (a node limit); the adapter's subclass does not."""
    p = planted()
    model, x = planted_milp(p)
    mat = model.to_matrix()
    prob, _ = pulp_backend._build(mat)
    with warnings.catch_warnings(), pytest.raises(KeyError):
        warnings.simplefilter("ignore")
        prob.solve(pulp.HiGHS(msg=False, mip_max_nodes=1))

    prob, xs = pulp_backend._build(mat)
    prob.solve(pulp_backend._HiGHSWithStart(None, xs, msg=False, mip_max_nodes=1))
    assert prob.solverModel.getModelStatus().name == "kSolutionLimit"
    assert (prob.status, prob.sol_status) == (pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound)

    warm = pulp_backend.WarmStart.from_mapping(model, {xj: float(v) for xj, v in zip(x, p.hidden, strict=True)})
    prob, xs = pulp_backend._build(mat)
    prob.solve(pulp_backend._HiGHSWithStart(warm, xs, msg=False, mip_max_nodes=1))
    assert (prob.status, prob.sol_status) == (pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible)
