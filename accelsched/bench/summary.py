"""The runs of a sweep, their references and gaps, and per-method statistics.

Gaps (``BENCHMARKING.md`` states the same rules): for each problem instance, the
*reference* is taken over every run of the sweep on that instance (all methods,
all seeds), for a minimized objective:

1. the **proven optimum**, when some run has status ``OPTIMAL``: the smallest
   objective among those runs (they must agree within 1e-6 relative, or the report
   lists a consistency warning);
2. else the **best proven bound**: the largest ``bound`` of any run; the gap is then
   an upper bound on the true gap;
3. else the **best objective found** by any run; such a gap is a lower bound on the
   true gap, shown with a ``~`` and left out of the methods' mean and max gaps;

and a run's gap is ``(objective - reference) / max(|reference|, 1e-9)`` (signs
swapped for a maximized objective). A run *reaches the optimum* when the reference
is a proven optimum and its gap is at most 1e-6.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from accelsched.bench.records import key_of

__all__ = [
    "AT_OPTIMUM_TOL",
    "GAP_FLOOR",
    "MethodStats",
    "Reference",
    "Run",
    "Summary",
    "gap",
    "method_stats",
    "reference",
    "summarize",
]

AT_OPTIMUM_TOL = 1e-6
"""Relative gap up to which a run counts as reaching the proven optimum (the project's objective tolerance)."""

GAP_FLOOR = 1e-9
"""Smallest ``|reference|`` a gap divides by (and the gap below which a table prints 0)."""

_PROVEN = ("optimum", "bound")


@dataclass(frozen=True)
class Run:
    """The fields of a results line that the report uses."""

    problem: str
    instance: str
    method: str
    kind: str
    seed: int
    time_limit_s: float
    n_layers: int | None
    status: str
    objective: float | None
    bound: float | None
    runtime_s: float
    sense: str
    trace: tuple[tuple[float, float], ...]
    note: str
    workload: str
    hardware: str
    batch: int
    options: str
    energy_pj: float | None
    latency_cycles: float | None

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> Run:
        """From a results line."""
        problem, instance, method, seed, limit = key_of(record)
        result = record["result"]
        spec = record.get("instance", {})
        cost = result.get("cost") or {}
        return cls(
            problem, instance, method, str(record.get("kind", "")), seed, limit, record.get("n_layers"),
            result["status"], result["objective"], result["bound"], float(result["runtime_s"]),
            result.get("sense", "min"), tuple((float(t), float(v)) for t, v in result["stats"]["trace"]),
            record.get("error") or result["stats"].get("native_status", ""), str(spec.get("workload", "")),
            str(spec.get("hardware", "")), int(spec.get("batch", 1)),
            ",".join(f"{k}={v}" for k, v in spec.get("options", {}).items()),
            cost.get("energy_pj"), cost.get("latency_cycles"),
        )  # fmt: skip


@dataclass(frozen=True)
class Reference:
    """What the gaps of one instance are measured against.

    Attributes
    ----------
    kind
        ``optimum``, ``bound``, ``best-found`` or ``none`` (no run found a solution).
    value
        The reference value, None for ``none``.
    methods
        Methods that proved the optimum, gave the bound, or found the best solution.
    best_found
        Best objective of any run.
    best_bound
        Best proven bound of any run.
    """

    kind: str
    value: float | None
    methods: tuple[str, ...]
    best_found: float | None
    best_bound: float | None


def _better(a: float, b: float, sense: str) -> bool:
    return a < b if sense == "min" else a > b


def reference(runs: Sequence[Run]) -> Reference:
    """The reference of one instance's runs (see the module docstring)."""
    sense = runs[0].sense if runs else "min"
    pick = min if sense == "min" else max
    found = [r for r in runs if r.objective is not None]
    bounds = [r for r in runs if r.bound is not None]
    best_found = pick(r.objective for r in found if r.objective is not None) if found else None
    best_bound = (max if sense == "min" else min)(r.bound for r in bounds if r.bound is not None) if bounds else None
    optimal = [r for r in found if r.status == "OPTIMAL"]
    value: float | None
    if optimal:
        value = pick(r.objective for r in optimal if r.objective is not None)
        kind, who = "optimum", optimal
    elif bounds:
        value, kind, who = best_bound, "bound", [r for r in bounds if r.bound == best_bound]
    elif found:
        value, kind, who = best_found, "best-found", [r for r in found if r.objective == best_found]
    else:
        return Reference("none", None, (), None, None)
    return Reference(kind, value, tuple(dict.fromkeys(r.method for r in who)), best_found, best_bound)


def gap(objective: float | None, ref: Reference, sense: str = "min") -> float | None:
    """``(objective - reference) / max(|reference|, 1e-9)`` (negated for ``max``); None without both."""
    if objective is None or ref.value is None:
        return None
    diff = objective - ref.value if sense == "min" else ref.value - objective
    return diff / max(abs(ref.value), GAP_FLOOR)


@dataclass(frozen=True)
class Summary:
    """Runs, their instances' references and their gaps.

    Attributes
    ----------
    runs
        Every run, in record order.
    gaps
        The gap of each run (same order), None without a solution or reference.
    references
        ``(problem, instance) -> Reference``.
    warnings
        Consistency problems found (exact methods disagreeing, objectives beyond a proven bound).
    """

    runs: tuple[Run, ...]
    gaps: tuple[float | None, ...]
    references: dict[tuple[str, str], Reference]
    warnings: tuple[str, ...]

    def problems(self) -> list[str]:
        """Problems in first-seen order."""
        return list(dict.fromkeys(r.problem for r in self.runs))

    def instances(self, problem: str) -> list[str]:
        """Instances of ``problem`` in first-seen order."""
        return list(dict.fromkeys(r.instance for r in self.runs if r.problem == problem))

    def select(self, problem: str, instance: str | None = None) -> list[tuple[Run, float | None]]:
        """``(run, gap)`` of a problem, or of one of its instances."""
        return [(r, g) for r, g in zip(self.runs, self.gaps, strict=True)
                if r.problem == problem and (instance is None or r.instance == instance)]  # fmt: skip


def summarize(records: Sequence[Mapping[str, Any]]) -> Summary:
    """References and gaps of a sweep's records."""
    runs = tuple(Run.of(r) for r in records)
    groups: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        groups.setdefault((run.problem, run.instance), []).append(run)
    refs = {key: reference(group) for key, group in groups.items()}
    warnings = []
    for (problem, instance), group in groups.items():
        ref = refs[(problem, instance)]
        if ref.kind == "optimum" and ref.value is not None:
            for run in group:
                if run.status == "OPTIMAL" and (gap(run.objective, ref, run.sense) or 0.0) > AT_OPTIMUM_TOL:
                    warnings.append(f"{problem} {instance}: {run.method} proved {run.objective:.9g}, "
                                    f"another method proved {ref.value:.9g}")  # fmt: skip
        if ref.best_bound is not None and ref.best_found is not None:
            probe = Reference("bound", ref.best_bound, (), None, None)
            below = gap(ref.best_found, probe, group[0].sense)
            if below is not None and below < -AT_OPTIMUM_TOL:
                warnings.append(f"{problem} {instance}: objective {ref.best_found:.9g} is beyond the proven bound "
                                f"{ref.best_bound:.9g}")  # fmt: skip
    gaps = tuple(gap(run.objective, refs[(run.problem, run.instance)], run.sense) for run in runs)
    return Summary(runs, gaps, refs, tuple(warnings))


@dataclass(frozen=True)
class MethodStats:
    """One method's results over a problem's instances.

    Attributes
    ----------
    method, kind
        The method and its kind.
    runs
        Cells run (instances x seeds).
    solved
        Runs that returned a solution.
    proved
        Runs with status OPTIMAL.
    at_optimum, with_optimum
        Runs that reached the proven optimum, out of the runs on instances with one.
    mean_gap, max_gap
        Over the runs with a solution on instances with a proven optimum or bound.
    unproven
        Runs whose gap is only to the best solution found (not in the mean / max).
    mean_time_s
        Mean runtime of the runs.
    errors
        Runs with status ERROR.
    """

    method: str
    kind: str
    runs: int
    solved: int
    proved: int
    at_optimum: int
    with_optimum: int
    mean_gap: float | None
    max_gap: float | None
    unproven: int
    mean_time_s: float
    errors: int


def method_stats(summary: Summary, problem: str) -> list[MethodStats]:
    """Per-method statistics of ``problem``, methods in first-seen order."""
    rows = summary.select(problem)
    out = []
    for method in dict.fromkeys(r.method for r, _ in rows):
        mine = [(r, g) for r, g in rows if r.method == method]
        refs = [summary.references[(r.problem, r.instance)] for r, _ in mine]
        proven = [g for (r, g), ref in zip(mine, refs, strict=True) if g is not None and ref.kind in _PROVEN]
        with_opt = [(g, ref) for (_, g), ref in zip(mine, refs, strict=True) if ref.kind == "optimum"]
        out.append(MethodStats(
            method, mine[0][0].kind, len(mine), sum(r.objective is not None for r, _ in mine),
            sum(r.status == "OPTIMAL" for r, _ in mine),
            sum(g is not None and g <= AT_OPTIMUM_TOL for g, _ in with_opt), len(with_opt),
            statistics.fmean(proven) if proven else None, max(proven) if proven else None,
            sum(g is not None and ref.kind == "best-found" for (_, g), ref in zip(mine, refs, strict=True)),
            statistics.fmean(r.runtime_s for r, _ in mine), sum(r.status == "ERROR" for r, _ in mine),
        ))  # fmt: skip
    return out
