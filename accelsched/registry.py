"""Problems, their methods, and the one solve entry point that checks every solution.

Problem modules expose ``PROBLEM: ProblemSpec``; formulation and heuristic
modules expose ``METHODS: tuple[MethodSpec, ...]``. The registry imports the
modules listed in :data:`PROBLEM_MODULES` and :data:`METHOD_MODULES` (so that
nothing below it has to import it); code outside the package can add its own
with :func:`register_problem` and :func:`register_method`.

:func:`run_method` is how every result reaches a user: it runs the method, then
re-checks the solution with the problem's ``check``, re-evaluates it with the
shared cost model, and compares the method's objective with the evaluator's.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import time
from typing import Any

from accelsched.errors import InputError
from accelsched.problems.base import MethodSpec, ProblemSpec
from accelsched.solvers import Result, SolveOptions, Status, verify_objective

__all__ = [
    "METHOD_MODULES",
    "PROBLEM_MODULES",
    "get_method",
    "get_problem",
    "methods",
    "problems",
    "register_method",
    "register_problem",
    "run_method",
]

PROBLEM_MODULES: tuple[str, ...] = (
    "accelsched.problems.partition",
    "accelsched.problems.ra_tree",
    "accelsched.problems.depth_first",
    "accelsched.problems.multicore",
    "accelsched.problems.atomic",
)
"""Modules defining ``PROBLEM``; each problem issue adds its module here."""

METHOD_MODULES: tuple[str, ...] = (
    "accelsched.formulations.partition_enumerate",
    "accelsched.formulations.partition_milp",
    "accelsched.formulations.partition_cpsat",
    "accelsched.heuristics.partition_greedy",
    "accelsched.heuristics.partition_dp",
    "accelsched.heuristics.partition_sa",
    "accelsched.heuristics.partition_ga",
    "accelsched.formulations.ra_tree_enumerate",
    "accelsched.formulations.ra_tree_dp",
    "accelsched.heuristics.ra_tree_sa",
    "accelsched.heuristics.ra_tree_tangram",
    "accelsched.formulations.depth_first_dp",
    "accelsched.heuristics.depth_first_rules",
    "accelsched.heuristics.multicore_manual",
    "accelsched.heuristics.multicore_ga",
    "accelsched.formulations.core_allocation",
    "accelsched.formulations.multicore_enumerate",
    "accelsched.formulations.atomic_rounds",
    "accelsched.formulations.atomic_jobshop",
    "accelsched.heuristics.atomic_dp",
    "accelsched.heuristics.atomic_ls",
    "accelsched.heuristics.atomic_cnnp",
    "accelsched.heuristics.atomic_ilpipe",
)
"""Modules defining ``METHODS``; each formulation or heuristic module is added here."""

_PROBLEMS: dict[str, ProblemSpec] = {}
_METHODS: dict[str, dict[str, MethodSpec]] = {}
_loaded = False


def register_problem(problem: ProblemSpec) -> None:
    """Make ``problem`` available to :func:`get_problem` and the CLI."""
    existing = _PROBLEMS.get(problem.name)
    if existing is not None and existing is not problem:
        raise ValueError(f"problem {problem.name!r} is registered twice")
    _PROBLEMS[problem.name] = problem
    _METHODS.setdefault(problem.name, {})


def register_method(method: MethodSpec) -> None:
    """Make ``method`` available for its problem (which must be registered)."""
    if method.problem not in _PROBLEMS:
        raise ValueError(f"method {method.name!r}: problem {method.problem!r} is not registered")
    table = _METHODS[method.problem]
    existing = table.get(method.name)
    if existing is not None and existing is not method:
        raise ValueError(f"method {method.name!r} of problem {method.problem!r} is registered twice")
    table[method.name] = method


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in PROBLEM_MODULES:
        register_problem(importlib.import_module(name).PROBLEM)
    for name in METHOD_MODULES:
        for method in importlib.import_module(name).METHODS:
            register_method(method)


def problems() -> dict[str, ProblemSpec]:
    """Registered problems by name."""
    _load()
    return dict(_PROBLEMS)


def methods(problem: str) -> dict[str, MethodSpec]:
    """Registered methods of ``problem`` by name."""
    get_problem(problem)
    return dict(_METHODS[problem])


def get_problem(name: str) -> ProblemSpec:
    """The problem called ``name``; ``InputError`` listing the known ones otherwise."""
    _load()
    if name not in _PROBLEMS:
        known = ", ".join(sorted(_PROBLEMS)) or "none yet"
        close = difflib.get_close_matches(name, list(_PROBLEMS), n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise InputError(f"unknown problem {name!r}", "PROBLEM", f"{hint}registered problems: {known}")
    return _PROBLEMS[name]


def get_method(problem: str, name: str) -> MethodSpec:
    """The method ``name`` of ``problem``; ``InputError`` listing the known ones otherwise."""
    table = methods(problem)
    if name not in table:
        known = ", ".join(sorted(table)) or "none yet"
        raise InputError(f"unknown method {name!r} for problem {problem!r}", "--method", f"methods: {known}")
    return table[name]


def run_method(
    problem: ProblemSpec,
    instance: Any,
    method: MethodSpec,
    options: SolveOptions | None = None,
    warm_start: Any = None,
) -> Result:
    """Run ``method`` on ``instance`` and return its checked, re-evaluated result.

    The returned result's ``cost`` comes from ``problem.evaluate``; its
    ``objective`` must equal ``problem.objective`` of that report within 1e-6
    relative (otherwise :class:`accelsched.solvers.ObjectiveMismatch` is raised:
    the method or its formulation has a bug). An infeasible solution raises
    :class:`accelsched.errors.InfeasibleSolution`. A method that fails with an
    ``InputError`` propagates it; any status without a solution is returned as is.

    Raises
    ------
    ValueError
        If ``method`` does not solve ``problem``.
    """
    if method.problem != problem.name:
        raise ValueError(f"method {method.name!r} solves {method.problem!r}, not {problem.name!r}")
    options = options or SolveOptions()
    start = time.perf_counter()
    result: Result = method.run(instance, options, warm_start)
    elapsed = time.perf_counter() - start
    if result.solution is None:
        if result.status in (Status.OPTIMAL, Status.FEASIBLE):
            raise ValueError(f"method {method.name!r} reported {result.status.name} without a solution")
        return result
    problem.check(instance, result.solution)
    report = problem.evaluate(instance, result.solution)
    value = problem.objective(instance, result.solution, report)
    if result.objective is not None:
        verify_objective(result.objective, value)
    return dataclasses.replace(
        result,
        objective=value if result.objective is None else result.objective,
        cost=report,
        runtime_s=result.runtime_s if result.runtime_s > 0 else elapsed,
    )
