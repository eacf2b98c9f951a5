"""The depth-first problem as the registry and the CLI see it: options, evaluator, objective."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accelsched.errors import InputError
from accelsched.hardware.spec import Accelerator
from accelsched.models.workload import Workload
from accelsched.problems.base import ProblemSpec
from accelsched.problems.depth_first.check import check
from accelsched.problems.depth_first.evaluate import evaluate, objective
from accelsched.problems.depth_first.instance import DepthFirstInstance
from accelsched.problems.depth_first.solution import DepthFirstSolution

__all__ = ["OPTIONS", "PROBLEM", "make_instance"]

OPTIONS = ("metric",)
"""``--option`` keys of :func:`make_instance`."""


def make_instance(workload: Workload, accelerator: Accelerator, options: Mapping[str, str]) -> DepthFirstInstance:
    """Instance from CLI-style options (``metric=energy|latency|edp``); ``InputError`` on bad ones."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise InputError(f"unknown depth-first option {unknown[0]!r}", "--option", "options: metric")
    try:
        return DepthFirstInstance(workload, accelerator, options.get("metric", "energy"))
    except ValueError as exc:
        raise InputError(str(exc), "--option metric / --hardware / --workload") from None



def _solution_from_dict(data: Any) -> DepthFirstSolution:
    return DepthFirstSolution.from_dict(data)


PROBLEM = ProblemSpec(
    name="depth-first",
    description="DeFiNES: fused stacks x tile size x overlap mode on one core's memory hierarchy",
    make_instance=make_instance,
    check=check,
    evaluate=evaluate,
    objective=objective,
    solution_from_dict=_solution_from_dict,
)
"""The depth-first problem as the registry and the CLI see it."""
