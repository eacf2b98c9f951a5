"""The multicore problem as the registry and the CLI see it."""

from __future__ import annotations

from typing import Any

from accelsched.problems.base import ProblemSpec
from accelsched.problems.multicore.check import check
from accelsched.problems.multicore.evaluate import evaluate, objective
from accelsched.problems.multicore.options import make_instance
from accelsched.problems.multicore.solution import MulticoreSolution

__all__ = ["PROBLEM"]


def _solution_from_dict(data: Any) -> MulticoreSolution:
    return MulticoreSolution.from_dict(data)


PROBLEM = ProblemSpec(
    name="multicore",
    description="layer-core allocation and CN scheduling on a heterogeneous multi-core with a bus (Stream)",
    make_instance=make_instance,
    check=check,
    evaluate=evaluate,
    objective=objective,
    solution_from_dict=_solution_from_dict,
)
"""The multicore problem (Stream) for the registry."""
