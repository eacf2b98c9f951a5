"""Searching a few configurations of an atomic method: each schedule built, buffered, priced, the best kept.

Shared by the methods that try several settings (``cnn-p``'s clusters, ``il-pipe``'s row
tiles, ``dp``'s samples in flight): a configuration whose rounds do not fit the engine
buffers even with every held output written back
(:func:`accelsched.problems.atomic.placement.buffer_failure`) is skipped; the others are
priced by the instance's objective of the round evaluator
(:func:`accelsched.problems.atomic.placement.price`); the time limit stops the
search once one schedule is kept. :func:`search_result` turns the search into the
method's result.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from accelsched.problems.atomic import PROBLEM, AtomicInstance, RoundSchedule, price
from accelsched.problems.result import Result
from accelsched.solvers import SolveOptions, SolveStats, Status

__all__ = ["Described", "Search", "search_result", "search_schedules"]

Choice = TypeVar("Choice")


class Described(Protocol):
    """A choice that says what it is in one line."""

    def describe(self) -> str: ...


DescribedChoice = TypeVar("DescribedChoice", bound=Described)


@dataclass(frozen=True)
class Search(Generic[Choice]):
    """The best configuration (None when none fits), its schedule and objective, how many were built, and why the
    last one that did not fit failed."""

    choice: Choice | None
    schedule: RoundSchedule | None
    value: float | None
    tried: int
    failure: str | None


def search_schedules(
    instance: AtomicInstance,
    choices: Iterable[Choice],
    build: Callable[[Choice], RoundSchedule],
    options: SolveOptions,
    start: float,
) -> Search[Choice]:
    """Build the schedule of every choice (placed, with its write-backs) until the time limit, counted from
    ``start`` (a :func:`time.perf_counter` value), and keep the best that fits (module docstring)."""
    best: tuple[float, RoundSchedule, Choice] | None = None
    tried, failure = 0, None
    for choice in choices:
        if best is not None and options.time_limit_s is not None and time.perf_counter() - start > options.time_limit_s:
            break
        schedule = build(choice)
        tried += 1
        value, reason = price(instance, schedule)
        if value is None:
            failure = reason
            continue
        if best is None or value < best[0]:
            best = (value, schedule, choice)
    if best is None:
        return Search(None, None, None, tried, failure)
    return Search(best[2], best[1], best[0], tried, failure)


def search_result(method: str, found: Search[DescribedChoice], total: int, what: str) -> Result[RoundSchedule]:
    """``method``'s result of a search over ``total`` choices, each called a ``what`` (``"configuration"``): FEASIBLE
    with the best schedule, its objective and its choice's description, or INFEASIBLE saying why the last choice
    did not fit."""
    if found.choice is None or found.schedule is None or found.value is None:
        return Result.no_solution(Status.INFEASIBLE, PROBLEM.name, method, f"no {what} fits: {found.failure}",
                                  iterations=found.tried)  # fmt: skip
    note = f"{found.choice.describe()}; {found.tried} of {total} {what}s priced"
    return Result(Status.FEASIBLE, PROBLEM.name, method, solution=found.schedule, objective=found.value,
                  stats=SolveStats(iterations=found.tried, native_status=note))  # fmt: skip
