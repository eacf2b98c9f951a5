"""Stopping criteria: each rule, its validation, and their combination."""

from __future__ import annotations

import pytest

from accelsched.heuristics.stopping import AnyOf, MaxIterations, MaxRuntime, NoImprovement


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def calls_until_stop(criterion: object, costs: list[float]) -> int:
    for k, cost in enumerate(costs):
        if criterion(cost):  # type: ignore[operator]
            return k
    return len(costs)


def test_max_iterations_allows_exactly_that_many() -> None:
    assert calls_until_stop(MaxIterations(3), [1.0] * 10) == 3
    assert calls_until_stop(MaxIterations(0), [1.0] * 10) == 0


def test_max_runtime_counts_from_construction_or_start() -> None:
    clock = FakeClock()
    limit = MaxRuntime(5.0, clock=clock)
    assert not limit(1.0)
    clock.now += 4.9
    assert not limit(1.0)
    clock.now += 0.1
    assert limit(1.0)
    assert MaxRuntime(5.0, clock=clock, start=clock.now - 6.0)(1.0)


def test_no_improvement_resets_on_a_strictly_better_cost() -> None:
    rule = NoImprovement(2)
    assert [rule(c) for c in (5.0, 5.0, 4.0, 4.0, 4.0)] == [False, False, False, False, True]


def test_any_of_stops_on_the_first_rule_and_keeps_every_counter_in_step() -> None:
    iterations, stale = MaxIterations(5), NoImprovement(3)
    both = AnyOf(iterations, stale)
    assert calls_until_stop(both, [3.0, 2.0, 1.0, 0.5, 0.4, 0.3]) == 5
    assert iterations.calls == 6 and stale.stale == 0
    assert calls_until_stop(AnyOf(MaxIterations(50), NoImprovement(3)), [1.0] * 10) == 3


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: MaxIterations(-1), "max_iterations must be an integer >= 0"),
        (lambda: MaxIterations(True), "max_iterations must be an integer >= 0"),
        (lambda: NoImprovement(0), "max_iterations must be >= 1"),
        (lambda: MaxRuntime(0.0), "max_runtime_s must be a finite number > 0"),
        (lambda: MaxRuntime(float("inf")), "max_runtime_s must be a finite number > 0"),
        (lambda: AnyOf(), "at least one stopping criterion"),
    ],
)
def test_bad_parameters_are_named(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]
