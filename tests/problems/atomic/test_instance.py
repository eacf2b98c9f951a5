"""The atomic instance and its options: bad input, the DAG's validation, a solution's own sizes, ``sizes=``."""

from __future__ import annotations

import pytest

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.problems.atomic import AtomDag, AtomicInstance, AtomSize, RoundSchedule, check, make_instance
from tests.problems.atomic.helpers import KC, chain


def test_bad_options_zero_engines_and_batch_zero_are_clear_errors() -> None:
    with pytest.raises(InputError, match="engines='0'"):
        make_instance(chain(), KC, {"engines": "0"})
    with pytest.raises(InputError, match="not four integers"):
        make_instance(chain(), KC, {"atom": "4,4"})
    with pytest.raises(InputError, match="unknown option"):
        make_instance(chain(), KC, {"rounds": "3"})
    with pytest.raises(InputError, match="unknown mapping 'best'"):
        make_instance(chain(), KC, {"mapping": "best"})
    with pytest.raises(InputError, match="at least 1 engine"):
        AtomicInstance(AtomDag.random(3, 0), 0)
    with pytest.raises((InputError, ValueError), match="batch"):
        make_instance(chain().with_batch(0), KC, {})


def test_the_dag_rejects_cycles_and_bad_edges() -> None:
    atoms = AtomDag.random(3, 0).atoms
    with pytest.raises(ValueError, match="cycle"):
        AtomDag("c", atoms, ((0, 1, 1), (1, 2, 1), (2, 0, 1)))
    with pytest.raises(ValueError, match="bad edge"):
        AtomDag("c", atoms, ((0, 5, 1),))
    with pytest.raises(ValueError, match="twice"):
        AtomDag("c", atoms, ((0, 1, 1), (0, 1, 2)))


def test_a_solution_with_sizes_of_its_own_gets_its_own_dag() -> None:
    instance = make_instance(chain(), KC, {"engines": "4"})
    sizes = {"a": AtomSize(4, 8, 32, 32), "b": AtomSize(8, 8, 32, 32)}
    rounds = ((0, 1), (2,))
    schedule = RoundSchedule.with_sizes(rounds, sizes, engines=(0, 1, 0))
    check(instance, schedule)
    assert len(instance.dag_for(schedule).atoms) == 3
    assert RoundSchedule.from_dict(schedule.to_dict()) == schedule
    with pytest.raises(InfeasibleSolution, match="rule 5: sizes miss layers \\['b'\\]"):
        check(instance, RoundSchedule.with_sizes(rounds, {"a": sizes["a"]}))
    with pytest.raises(InfeasibleSolution, match=r"rule 5: .*ci=8 is not a multiple"):
        check(instance, RoundSchedule.with_sizes(rounds, {**sizes, "b": AtomSize(8, 8, 8, 32)}))
