"""The SA loop: the acceptance rule, the schedules, determinism and the trace."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accelsched.heuristics.anneal import GeometricSchedule, HyperbolicSchedule, anneal, relative_acceptance
from accelsched.heuristics.stopping import MaxIterations


def test_relative_acceptance_is_exp_of_the_relative_increase_over_t() -> None:
    assert relative_acceptance(10.0, 100.0, 0.1) == pytest.approx(math.exp(-1.0))
    assert relative_acceptance(10.0, -100.0, 0.05) == pytest.approx(math.exp(-2.0))
    assert relative_acceptance(1.0, 100.0, 0.0) == 0.0
    assert relative_acceptance(1.0, 1000.0, 1.0) > relative_acceptance(1.0, 10.0, 1.0)


def test_schedules() -> None:
    assert GeometricSchedule(2.0, 0.5)(3) == pytest.approx(0.25)
    set_schedule = HyperbolicSchedule(0.07, 8.0, 100)
    assert set_schedule(0) == pytest.approx(0.07)
    assert set_schedule(50) == pytest.approx(0.07 * 0.5 / 5.0)
    assert set_schedule(100) == 0.0 and set_schedule(150) == 0.0
    with pytest.raises(ValueError, match="rate must be in"):
        GeometricSchedule(1.0, 1.5)
    with pytest.raises(ValueError, match="horizon must be an integer >= 1"):
        HyperbolicSchedule(1.0, 1.0, 0)
    with pytest.raises(ValueError, match="t0 must be a finite number > 0"):
        HyperbolicSchedule(0.0, 1.0, 10)


def walk(state: int, rng: np.random.Generator) -> int:
    return state + int(rng.choice([-1, 1]))


def test_anneal_is_deterministic_under_a_seed_and_traces_improvements() -> None:
    def run(seed: int) -> tuple[int, float, int]:
        out = anneal(40, lambda x: (x - 3) ** 2 + 1.0, walk, GeometricSchedule(0.5, 0.99), MaxIterations(500),
                     np.random.default_rng(seed))  # fmt: skip
        values = [v for _, v in out.trace]
        assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
        assert out.trace[-1][1] == out.best_cost and out.iterations == 500
        return out.best, out.best_cost, out.accepted

    assert run(1) == run(1)
    assert run(1)[1] == 1.0


def test_a_zero_temperature_accepts_no_worse_move() -> None:
    cold = anneal(0, lambda x: float(abs(x)), walk, GeometricSchedule(1e-300, 1e-10), MaxIterations(200),
                  np.random.default_rng(0))  # fmt: skip
    assert cold.accepted == 0 and cold.best == 0


def test_a_hot_search_accepts_worse_moves_with_the_relative_probability() -> None:
    # from cost 100 every move goes to 110 (dC/C = 0.1, T = 0.1: p = exp(-1)) and back for free
    moves = 4000
    out = anneal(0, lambda x: 100.0 if x == 0 else 110.0, lambda x, rng: 1 - x, GeometricSchedule(0.1, 1.0),
                 MaxIterations(moves), np.random.default_rng(3))  # fmt: skip
    downhill = out.accepted // 2
    uphill = out.accepted - downhill
    assert uphill / (moves - downhill) == pytest.approx(math.exp(-1.0), abs=0.03)


def test_moves_that_do_not_apply_count_as_iterations() -> None:
    out = anneal(5, float, lambda x, rng: None, GeometricSchedule(1.0, 0.9), MaxIterations(7), np.random.default_rng(0))
    assert out.iterations == 7 and out.accepted == 0 and out.best == 5
