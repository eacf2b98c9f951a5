"""The atomic checker: every rule is named."""

from __future__ import annotations

import pytest

from accelsched.errors import InfeasibleSolution
from accelsched.problems.atomic import AtomSize, RoundSchedule, check
from tests.problems.atomic.helpers import tiny


@pytest.mark.parametrize(
    ("schedule", "rule"),
    [
        (RoundSchedule(((0, 1), ())), "rule 1: round 1 is empty"),
        (RoundSchedule(((0, 1, 2),)), "rule 2: round 0 holds 3 atoms > 2 engines"),
        (RoundSchedule(((0, 1), (1, 2))), "rule 1: atom 1"),
        (RoundSchedule(((0, 1),)), "rule 1: atom 2"),
        (RoundSchedule(((0, 2), (1,))), "rule 3: edge 0 -> 2 goes from round 0 to round 0"),
        (RoundSchedule(((2, 0, 1),), engines=(0, 0, 1)), "rule 3: edge 0 -> 2 .*listed after its consumer"),
        (RoundSchedule(((0, 1), (2,)), engines=(0, 2, 1)), "rule 2: atom 1 on engine 2, not in 0..1"),
        (RoundSchedule(((0, 1), (2,)), engines=(0, 1)), "rule 2: 2 engines given"),
        (RoundSchedule(((0, 1), (2,)), write_back=frozenset({7})), "rule 6: write-back names an atom"),
        (RoundSchedule.with_sizes(((0, 1), (2,)), {"l0": AtomSize(1, 1, 1, 1)}), "rule 5: .* no workload"),
    ],
)
def test_each_rule_is_named(schedule: RoundSchedule, rule: str) -> None:
    with pytest.raises(InfeasibleSolution, match=rule):
        check(tiny(), schedule)
