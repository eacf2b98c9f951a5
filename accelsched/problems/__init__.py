"""Scheduling problems: one module per problem with its instance, solution and checker."""

from accelsched.problems.base import MethodSpec, ProblemSpec

__all__ = ["MethodSpec", "ProblemSpec"]
