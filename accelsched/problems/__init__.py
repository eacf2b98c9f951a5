"""Scheduling problems: one module (or subpackage) per problem with its instance, solution,
checker and evaluator, and the :class:`Result` every method returns."""

from accelsched.problems.base import MethodSpec, ProblemSpec
from accelsched.problems.result import ObjectiveMismatch, Result, verify_objective

__all__ = ["MethodSpec", "ObjectiveMismatch", "ProblemSpec", "Result", "verify_objective"]
