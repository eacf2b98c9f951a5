"""Problems, their methods, and the one solve entry point that checks every solution.

Problem modules expose ``PROBLEM: ProblemSpec``; formulation and heuristic
modules expose ``METHODS: tuple[MethodSpec, ...]``. The registry finds them by
importing every module of :data:`PACKAGES` (so that nothing below it has to
import it, and a new module needs no entry here); code outside the package can
add its own with :func:`register_problem` and :func:`register_method`.
:func:`methods` lists a problem's exact methods first, then its heuristics, then
its baselines, each kind in module order.

:func:`run_method` is how every result reaches a user: it runs the method, then
re-checks the solution with the problem's ``check``, re-evaluates it with the
shared cost model, and compares the method's objective with the evaluator's.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import pkgutil
import time
from collections.abc import Mapping
from typing import Any

from accelsched.errors import InputError
from accelsched.hardware.spec import Accelerator
from accelsched.models.workload import Workload
from accelsched.problems.base import Hint, InstanceStep, MethodSpec, ProblemSpec
from accelsched.problems.result import Result, verify_objective
from accelsched.solvers import SolveOptions, Status

__all__ = [
    "PACKAGES",
    "get_method",
    "get_problem",
    "make_instance",
    "methods",
    "problems",
    "register_method",
    "register_problem",
    "register_step",
    "run_method",
]

PACKAGES: tuple[str, ...] = ("accelsched.problems", "accelsched.formulations", "accelsched.heuristics")
"""Packages whose modules are searched, in name order, for ``PROBLEM`` (problems first) and ``METHODS``."""

_PROBLEMS: dict[str, ProblemSpec] = {}
_METHODS: dict[str, dict[str, MethodSpec]] = {}
_STEPS: dict[tuple[str, str, str], InstanceStep] = {}
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


def register_step(step: InstanceStep) -> None:
    """Make ``step`` prepare the instances of its problem (which must be registered) when
    ``step.option=step.value`` is given."""
    if step.problem not in _PROBLEMS:
        raise ValueError(f"step {step.option}={step.value}: problem {step.problem!r} is not registered")
    key = (step.problem, step.option, step.value)
    existing = _STEPS.get(key)
    if existing is not None and existing is not step:
        raise ValueError(f"step {step.option}={step.value} of problem {step.problem!r} is registered twice")
    _STEPS[key] = step


def _modules(package: str) -> list[str]:
    """Every module below ``package``, in name order."""
    root = importlib.import_module(package)
    return sorted(info.name for info in pkgutil.walk_packages(root.__path__, f"{package}."))


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    modules = [importlib.import_module(name) for package in PACKAGES for name in _modules(package)]
    for module in modules:
        if isinstance(getattr(module, "PROBLEM", None), ProblemSpec):
            register_problem(module.PROBLEM)
    for module in modules:
        for method in getattr(module, "METHODS", ()):
            register_method(method)
        for step in getattr(module, "STEPS", ()):
            register_step(step)


def problems() -> dict[str, ProblemSpec]:
    """Registered problems by name."""
    _load()
    return dict(_PROBLEMS)


_KIND_ORDER = {"exact": 0, "heuristic": 1, "baseline": 2}


def methods(problem: str) -> dict[str, MethodSpec]:
    """Registered methods of ``problem`` by name: exact ones first, then heuristics, then baselines."""
    get_problem(problem)
    table = _METHODS[problem]
    return {name: table[name] for name in sorted(table, key=lambda name: _KIND_ORDER[table[name].kind])}


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


def make_instance(
    problem: ProblemSpec, workload: Workload, accelerator: Accelerator, options: Mapping[str, str]
) -> Any:
    """``problem``'s instance of ``workload`` on ``accelerator`` with ``options``, after the
    :class:`~accelsched.problems.base.InstanceStep` each ``option=value`` selects has run.

    Raises
    ------
    InputError
        Bad options (from the step or from ``problem.make_instance``).
    """
    _load()
    prepared: Mapping[str, str] = dict(options)
    for option, value in dict(options).items():
        step = _STEPS.get((problem.name, option, value))
        if step is not None:
            prepared = step.run(workload, accelerator, prepared)
    return problem.make_instance(workload, accelerator, prepared)


def run_method(
    problem: ProblemSpec,
    instance: Any,
    method: MethodSpec,
    options: SolveOptions | None = None,
    warm_start: Any = None,
) -> Result:
    """Run ``method`` on ``instance`` and return its checked, re-evaluated result.

    When no ``warm_start`` is given and the method names a ``default_hint``, that method
    runs first (checked like any other, with the caller's seed and threads and no time
    limit: a hint method is a fast construction) and its solution reaches ``method.run``
    as a :class:`~accelsched.problems.base.Hint`. ``runtime_s`` of the returned result is
    the wall-clock time of both, measured here for every method (methods do not time
    themselves). Its ``cost`` comes from ``problem.evaluate``; its ``objective`` must
    equal ``problem.objective`` of that report within 1e-6 relative (otherwise
    :class:`accelsched.problems.result.ObjectiveMismatch` is raised: the method or its
    formulation has a bug). An infeasible solution raises
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
    if warm_start is None and method.default_hint:
        hinted = get_method(problem.name, method.default_hint)
        hint_options = SolveOptions(seed=options.seed, threads=options.threads)
        solution = run_method(problem, instance, hinted, hint_options).solution
        warm_start = None if solution is None else Hint(solution)
    result: Result = method.run(instance, options, warm_start)
    elapsed = time.perf_counter() - start
    if result.solution is None:
        if result.status in (Status.OPTIMAL, Status.FEASIBLE):
            raise ValueError(f"method {method.name!r} reported {result.status.name} without a solution")
        return dataclasses.replace(result, runtime_s=elapsed)
    problem.check(instance, result.solution)
    report = problem.evaluate(instance, result.solution)
    value = problem.objective(instance, result.solution, report)
    if result.objective is not None:
        verify_objective(result.objective, value)
    return dataclasses.replace(
        result,
        objective=value if result.objective is None else result.objective,
        cost=report,
        runtime_s=elapsed,
    )
