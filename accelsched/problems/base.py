"""What every problem module provides to the registry and the CLI."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from accelsched.hardware.cost.report import CostReport
from accelsched.hardware.spec import Accelerator
from accelsched.models.workload import Workload

__all__ = ["Hint", "InstanceStep", "MethodSpec", "ProblemSpec"]

SolutionT = TypeVar("SolutionT")


@dataclass(frozen=True)
class ProblemSpec:
    """A scheduling problem as seen by the solve entry point.

    Attributes
    ----------
    name
        Name on the command line (``accelsched solve NAME``).
    description
        One line.
    make_instance
        ``make_instance(workload, accelerator, options) -> instance``; ``options``
        are the ``--option KEY=VALUE`` pairs. Raises ``InputError`` on bad options.
    check
        ``check(instance, solution)``: raises ``InfeasibleSolution`` naming the
        violated rule; never trusts the method that produced the solution.
    evaluate
        ``evaluate(instance, solution) -> CostReport`` with the shared cost model.
    objective
        ``objective(instance, solution, report) -> float``: the value every method
        of the problem minimizes, computed from the evaluator's report (and, where
        the objective prices a decision the report does not hold, such as a chosen
        buffer capacity, from the solution).
    solution_from_dict
        Inverse of the solution's ``to_dict`` (for ``accelsched evaluate --solution``);
        raises ``ValueError`` naming the bad field.
    solution_from_text
        ``solution_from_text(text, source)``: a solution from a problem-specific text
        form (the SET tree format for ``ra-tree``), used when a solution file is not
        JSON; None when the problem has none. Raises ``ValueError`` naming the line.
    """

    name: str
    description: str
    make_instance: Callable[[Workload, Accelerator, Mapping[str, str]], Any]
    check: Callable[[Any, Any], None]
    evaluate: Callable[[Any, Any], CostReport]
    objective: Callable[[Any, Any, CostReport], float]
    solution_from_dict: Callable[[Any], Any]
    solution_from_text: Callable[[str, str], Any] | None = None

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"problem name must be a non-empty identifier, got {self.name!r}")


@dataclass(frozen=True)
class MethodSpec:
    """A method (exact model or heuristic) that solves one problem.

    Attributes
    ----------
    name
        Name on the command line (``--method NAME``).
    problem
        Name of the problem it solves.
    kind
        ``exact``, ``heuristic`` or ``baseline``.
    run
        ``run(instance, options, warm_start) -> Result`` where ``options`` is an
        :class:`accelsched.solvers.SolveOptions` and ``warm_start`` a solution of
        the problem or None.
    description
        One line.
    default_hint
        Name of a method of the same problem whose (checked) solution the registry hands
        ``run``, wrapped in a :class:`Hint`, when the caller gives no warm start; empty for
        none. This is how a heuristic's solution reaches an exact model without the two
        importing each other.
    """

    name: str
    problem: str
    kind: str
    run: Callable[[Any, Any, Any], Any]
    description: str = ""
    default_hint: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("exact", "heuristic", "baseline"):
            raise ValueError(f"method {self.name!r}: kind must be exact, heuristic or baseline, got {self.kind!r}")


@dataclass(frozen=True)
class InstanceStep:
    """A choice that needs a solver, made before a problem's instance is built.

    An instance is fixed before any method runs; a choice such as atom sizes of least
    variance needs an exact model or a heuristic, which live above the problems. Such a
    module exposes ``STEPS: tuple[InstanceStep, ...]``; the registry applies the step whose
    ``option=value`` the user gave (``--option atoms=exact``) and hands ``make_instance``
    the options the step returns, in which the choice is explicit.

    Attributes
    ----------
    problem
        Name of the problem whose instances the step prepares.
    option
        The option that selects the step (``"atoms"``).
    value
        The option's value that selects it (``"exact"``).
    run
        ``run(workload, accelerator, options) -> options``: the options with the choice
        made explicit, in a form ``make_instance`` reads without a solver.
    description
        One line.
    """

    problem: str
    option: str
    value: str
    run: Callable[[Workload, Accelerator, Mapping[str, str]], Mapping[str, str]]
    description: str = ""


@dataclass(frozen=True)
class Hint(Generic[SolutionT]):
    """A solution handed to a method in place of its warm start, as a hint only.

    A warm start is a promise to the caller: the method returns nothing worse (MethodSpec's
    ``run`` contract). A hint, which the registry makes from a method's ``default_hint``,
    only guides the search: the method may use it (CP-SAT's ``add_hint``) and returns what
    its own search found, so that the default run's result is the model's alone.

    Attributes
    ----------
    solution
        The hinted solution, checked against the instance.
    """

    solution: SolutionT
