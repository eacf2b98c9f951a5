"""Searching a few configurations of an atomic method: each schedule built, buffered, priced, the best kept.

Shared by the methods that try several settings (``cnn-p``'s clusters, ``il-pipe``'s row
tiles, ``dp``'s samples in flight): a configuration whose rounds do not fit the engine
buffers even with every held output written back
(:func:`accelsched.problems.atomic_placement.buffer_failure`) is skipped; the others are
priced by the instance's objective of the round evaluator; the time limit stops the
search once one schedule is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from accelsched.problems.atomic import AtomicInstance, RoundSchedule, evaluate, objective
from accelsched.problems.atomic_placement import buffer_failure
from accelsched.solvers import SolveOptions

__all__ = ["Search", "search_schedules"]

Choice = TypeVar("Choice")


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
        reason = buffer_failure(instance, schedule)
        if reason is not None:
            failure = reason
            continue
        value = objective(instance, schedule, evaluate(instance, schedule))
        if best is None or value < best[0]:
            best = (value, schedule, choice)
    if best is None:
        return Search(None, None, None, tried, failure)
    return Search(best[2], best[1], best[0], tried, failure)
