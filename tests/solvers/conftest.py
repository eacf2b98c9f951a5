"""Fixtures of the solver-layer tests."""

from __future__ import annotations

import pytest

from accelsched.solvers import LinearModel


@pytest.fixture
def m() -> LinearModel:
    """An empty model."""
    return LinearModel("t")
