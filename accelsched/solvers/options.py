"""Solver options shared by every backend, validated once."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_SEED", "SolveOptions"]

MAX_SEED = 2**31 - 1
"""Largest seed every backend accepts (HiGHS and CBC take a signed 32-bit seed)."""


@dataclass(frozen=True)
class SolveOptions:
    """Limits and settings of one solve, mapped by each adapter to its native parameters.

    ==============  ======================  =============  ================  ==========================
    field           CP-SAT                  highspy        PuLP (CBC)        Pyomo ``appsi_highs``
    ==============  ======================  =============  ================  ==========================
    time_limit_s    max_time_in_seconds     time_limit     timeLimit         ``solve(timelimit=)``
    threads         num_workers             threads        threads           options ``threads``
    rel_gap         relative_gap_limit      mip_rel_gap    gapRel            options ``mip_rel_gap``
    seed            random_seed             random_seed    ``randomCbcSeed``  options ``random_seed``
    log             log_search_progress     output_flag    msg               ``tee``
    presolve        cp_model_presolve       presolve       presolve          options ``presolve``
    node_limit      (ignored)               mip_max_nodes  ``maxNodes``      options ``mip_max_nodes``
    work_limit      max_deterministic_time  (ignored)      (ignored)         (ignored)
    ==============  ======================  =============  ================  ==========================

    Parameters
    ----------
    time_limit_s
        Wall-clock limit in seconds, or None for no limit.
    threads
        Number of solver threads (CP-SAT workers), at least 1. HiGHS fixes its thread
        pool on the first solve of the process; later solves asking for a different
        number get that first pool (see :mod:`accelsched.solvers.highs`).
    rel_gap
        Relative optimality gap at which a MIP / CP-SAT search stops and reports
        OPTIMAL; 0 (the default) asks for a proof of optimality.
    seed
        Random seed, in [0, 2**31 - 1].
    log
        Print the solver's log.
    presolve
        Let the solver presolve the model (its default); False switches presolve off
        (``"off"`` for HiGHS, ``-presolve off`` for CBC, ``cp_model_presolve`` for
        CP-SAT). Some models solve faster without it: set-partitioning models with
        many columns can spend most of the solve in HiGHS' probing, and CP-SAT's presolve
        can weaken the objective bound of its linear relaxation.
    node_limit
        Branch-and-bound nodes after which a MIP search stops with what it has (status
        FEASIBLE or TIME_LIMIT_NO_SOLUTION), >= 0, or None for no limit; 0 stops before
        the search, so a MIP start comes back as the answer. CP-SAT has no node count
        and ignores it. Unlike the time limit, it does not depend on the machine's speed.
    work_limit
        CP-SAT's deterministic time limit (``max_deterministic_time``: work units of
        about a second each, the same on every machine), > 0, or None for no limit; the
        linear backends ignore it.

    Raises
    ------
    ValueError
        A field has a bad value; the message names the field and the value.
    """

    time_limit_s: float | None = None
    threads: int = 1
    rel_gap: float = 0.0
    seed: int = 0
    log: bool = False
    presolve: bool = True
    node_limit: int | None = None
    work_limit: float | None = None

    def __post_init__(self) -> None:
        limit = self.time_limit_s
        if limit is not None and (not _is_real(limit) or not math.isfinite(limit) or limit <= 0):
            _bad("time_limit_s", limit, "a positive finite number of seconds or None")
        if not _is_int(self.threads) or self.threads < 1:
            _bad("threads", self.threads, "an integer >= 1")
        if not _is_real(self.rel_gap) or not 0 <= self.rel_gap < 1:
            _bad("rel_gap", self.rel_gap, "a number in [0, 1)")
        if not _is_int(self.seed) or not 0 <= self.seed <= MAX_SEED:
            _bad("seed", self.seed, f"an integer in [0, {MAX_SEED}]")
        if not isinstance(self.log, bool):
            _bad("log", self.log, "True or False")
        if not isinstance(self.presolve, bool):
            _bad("presolve", self.presolve, "True or False")
        if self.node_limit is not None and (not _is_int(self.node_limit) or self.node_limit < 0):
            _bad("node_limit", self.node_limit, "an integer >= 0 or None")
        work = self.work_limit
        if work is not None and (not _is_real(work) or not math.isfinite(work) or work <= 0):
            _bad("work_limit", work, "a positive finite number or None")
        if limit is not None:
            object.__setattr__(self, "time_limit_s", float(limit))
        object.__setattr__(self, "rel_gap", float(self.rel_gap))
        object.__setattr__(self, "threads", int(self.threads))
        object.__setattr__(self, "seed", int(self.seed))
        if self.node_limit is not None:
            object.__setattr__(self, "node_limit", int(self.node_limit))
        if work is not None:
            object.__setattr__(self, "work_limit", float(work))


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and not math.isnan(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _bad(field: str, value: Any, expected: str) -> None:
    raise ValueError(f"SolveOptions: field {field} must be {expected}, got {value!r}")
