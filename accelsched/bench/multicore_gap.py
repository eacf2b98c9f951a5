"""The multicore GA's gap to the CP-SAT optimum on seeded random instances of 10-40 computation nodes.

Usage::

    python -m accelsched.bench.multicore_gap run [--instances 30] [--ga-seeds 3] [--time-limit S] [--out FILE.json]
    python -m accelsched.bench.multicore_gap render FILE.json [--out FILE.md]

Protocol
--------
Instance ``i`` (0-based) is the seeded random DAG ``random:N:SEED`` with ``N = 5 + i % 10``
layers and ``SEED = 100 + i``, on the heterogeneous quad-core ``stream-mc-hetero`` for
even ``i`` and the homogeneous ``stream-mc-homtpu`` for odd ``i``, fused granularity, one
stack, latency priority, objective latency. The rows per CN are tried in the order
``ROWS[(i // 2) % 3:] + ROWS[:(i // 2) % 3]`` of ``ROWS = (8, 4, 2)`` (so that the sizes
spread over the range) and the first that gives 10-40 CNs is kept; a candidate with
none is skipped and counted, so every reported instance has 10-40 CNs.

Per instance: ``manual`` (Stream's manual allocation), the GA (method ``ga``, Stream's
NSGA-II, default parameters) with seeds ``0 .. ga_seeds-1``, and ``cpsat`` (one thread,
seed 0) warm-started by the GA's best schedule, as the method is meant to be used. The
GA's gap is ``(GA - reference) / reference`` with the reference CP-SAT's objective when
it proved optimality, else its best bound (the gap is then an upper bound of the true
gap); the summary keeps the two apart. The CP-SAT model holds every schedule that loads a
layer's weights once; the list scheduler the GA uses can also evict and reload weights,
so a GA result below a proven optimum would be a schedule outside the model's space:
it is reported as a violation (``ga_below_optimum``), not hidden.

Every number comes from :func:`accelsched.registry.run_method`: the schedule passed the
problem's ``check`` and was re-evaluated by the shared cost model.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

from accelsched.bench.commands import percent, run_or_render, run_render_parser
from accelsched.bench.conditions import conditions_line, machine_conditions
from accelsched.bench.files import write_json
from accelsched.entry import run_entry
from accelsched.hardware import load_accelerator
from accelsched.models.registry import load_workload
from accelsched.problems.multicore import PROBLEM, MulticoreInstance, make_instance
from accelsched.problems.result import Result
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions, Status

__all__ = ["CN_RANGE", "GapInstance", "gap_instances", "main", "render", "run"]

CN_RANGE = (10, 40)
"""Least and most CNs of a reported instance."""

PRESETS = ("stream-mc-hetero", "stream-mc-homtpu")
"""Heterogeneous (even instances) and homogeneous (odd instances) quad-cores."""

ROWS = (8, 4, 2)
"""Output rows per CN tried, rotated per instance."""

RELATIVE_TOLERANCE = 1e-9
"""Relative difference below which two objectives are equal."""


class GapInstance:
    """One instance of the protocol: its workload spec, preset, rows per CN and the instance itself."""

    def __init__(self, index: int, workload: str, hardware: str, rows: int, instance: MulticoreInstance) -> None:
        self.index = index
        self.workload = workload
        self.hardware = hardware
        self.rows = rows
        self.instance = instance

    @property
    def cns(self) -> int:
        """Number of computation nodes."""
        return len(self.instance.graph.cns)


def _instance(index: int) -> GapInstance | None:
    """Instance ``index`` of the protocol, or None when no row count puts it in :data:`CN_RANGE`."""
    workload = f"random:{5 + index % 10}:{100 + index}"
    hardware = PRESETS[index % 2]
    net, acc = load_workload(workload), load_accelerator(hardware)
    first = (index // 2) % len(ROWS)
    for rows in ROWS[first:] + ROWS[:first]:
        options = {"granularity": "fused", "rows": str(rows), "objective": "latency", "priority": "latency"}
        instance = make_instance(net, acc, options)
        if CN_RANGE[0] <= len(instance.graph.cns) <= CN_RANGE[1]:
            return GapInstance(index, workload, hardware, rows, instance)
    return None


def gap_instances(count: int) -> tuple[list[GapInstance], int]:
    """The first ``count`` protocol instances with 10-40 CNs, and how many candidates were skipped."""
    found: list[GapInstance] = []
    index = skipped = 0
    while len(found) < count:
        item = _instance(index)
        if item is None:
            skipped += 1
        else:
            found.append(item)
        index += 1
    return found, skipped


def _objective(result: Result[Any]) -> float | None:
    return result.objective if result.status.has_solution else None


def _measure(item: GapInstance, ga_seeds: int, time_limit_s: float) -> dict[str, Any]:
    """Every method on one instance; the row of the table."""
    instance = item.instance

    def solve(method: str, seed: int, warm_start: Any = None) -> tuple[Result[Any], float]:
        options = SolveOptions(time_limit_s=time_limit_s, seed=seed, threads=1)
        start = time.perf_counter()
        result = run_method(PROBLEM, instance, get_method("multicore", method), options, warm_start)
        return result, time.perf_counter() - start

    manual, _ = solve("manual", 0)
    ga_runs = [solve("ga", seed) for seed in range(ga_seeds)]
    ga_values = [v for v in (_objective(r) for r, _ in ga_runs) if v is not None]
    solved = [(r.objective, seed, r.solution) for seed, (r, _) in enumerate(ga_runs) if r.objective is not None]
    exact, exact_s = solve("cpsat", 0, min(solved)[2] if solved else None)
    proven = exact.status is Status.OPTIMAL
    reference = _objective(exact) if proven else exact.bound
    row: dict[str, Any] = {
        "index": item.index, "workload": item.workload, "hardware": item.hardware, "rows_per_cn": item.rows,
        "layers": len(instance.workload.names), "cns": item.cns, "objective": instance.objective,
        "cpsat_status": exact.status.name, "cpsat_latency_cycles": _objective(exact), "cpsat_bound": exact.bound,
        "cpsat_time_s": exact_s, "manual_latency_cycles": _objective(manual),
        "ga_latency_cycles": ga_values, "ga_time_s": statistics.median(t for _, t in ga_runs),
        "reference": reference, "reference_kind": "optimum" if proven else ("bound" if reference else None),
    }  # fmt: skip
    if reference:
        row["ga_gaps"] = [(v - reference) / reference for v in ga_values]
        manual_value = _objective(manual)
        row["manual_gap"] = None if manual_value is None else (manual_value - reference) / reference
    row["ga_below_optimum"] = proven and any(g < -RELATIVE_TOLERANCE for g in row.get("ga_gaps", []))
    return row


def _summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Gap statistics over the instances with a proven optimum; the others listed apart with their gap bounds."""
    gapped = [r for r in rows if r.get("ga_gaps") and r["reference_kind"] == "optimum"]
    best = [min(r["ga_gaps"]) for r in gapped]
    median = [statistics.median(r["ga_gaps"]) for r in gapped]
    manual = [r["manual_gap"] for r in gapped if r.get("manual_gap") is not None]
    at_optimum = sum(1 for r in gapped if min(r["ga_gaps"]) <= RELATIVE_TOLERANCE)
    unproven = [r for r in rows if r["reference_kind"] != "optimum"]
    return {
        "instances": len(rows), "proven_optimal": len(gapped),
        "unproven_ga_gap_bounds": {r["workload"]: min(r["ga_gaps"]) if r.get("ga_gaps") else None for r in unproven},
        "ga_best_gap_mean": statistics.fmean(best) if best else None, "ga_best_gap_max": max(best, default=None),
        "ga_median_gap_mean": statistics.fmean(median) if median else None,
        "ga_median_gap_max": max(median, default=None), "ga_reaches_optimum": at_optimum,
        "manual_gap_mean": statistics.fmean(manual) if manual else None, "manual_gap_max": max(manual, default=None),
        "ga_below_optimum": sum(bool(r["ga_below_optimum"]) for r in rows),
        "cns_min": min(r["cns"] for r in rows), "cns_max": max(r["cns"] for r in rows),
    }  # fmt: skip


def run(
    count: int = 30, ga_seeds: int = 3, time_limit_s: float = 60.0, out: str | None = None, verbose: bool = False
) -> dict[str, Any]:
    """Measure the protocol's first ``count`` instances; write the JSON to ``out`` when given.

    Raises
    ------
    ValueError
        ``count`` or ``ga_seeds`` below 1, or a time limit that is not positive.
    """
    if count < 1 or ga_seeds < 1 or not time_limit_s > 0:
        raise ValueError(f"count and ga_seeds must be >= 1 and the time limit > 0, got {count}, {ga_seeds}, "
                         f"{time_limit_s}")  # fmt: skip
    start = time.perf_counter()
    items, skipped = gap_instances(count)
    rows = []
    for item in items:
        rows.append(_measure(item, ga_seeds, time_limit_s))
        if verbose:
            r = rows[-1]
            gaps = ", ".join(f"{g:.2%}" for g in r.get("ga_gaps", []))
            print(f"  {r['workload']:<14} {r['hardware']:<17} {r['cns']:>3} CNs  cpsat {r['cpsat_status']:<9} "
                  f"{r['cpsat_latency_cycles']}  GA gaps {gaps}", flush=True)  # fmt: skip
    data = {
        "kind": "multicore_gap", "ga_seeds": ga_seeds, "time_limit_s": time_limit_s, "skipped_candidates": skipped,
        "wall_s": time.perf_counter() - start, "conditions": machine_conditions(), "rows": rows,
        "summary": _summary(rows),
    }  # fmt: skip
    if out:
        write_json(out, data)
    return data


def render(data: dict[str, Any]) -> str:
    """Markdown of a :func:`run` result."""
    s = data["summary"]
    unproven = ", ".join(f"{w} <= {percent(g)}" for w, g in s["unproven_ga_gap_bounds"].items())
    lines = [
        "# Multicore: the GA's gap to the CP-SAT optimum", "",
        f"{s['instances']} seeded random instances of {s['cns_min']}-{s['cns_max']} CNs (protocol in "
        "`accelsched/bench/multicore_gap.py`), objective latency; GA with "
        f"{data['ga_seeds']} seeds, CP-SAT one thread, time limit {data['time_limit_s']:g} s per run.", "",
        f"- CP-SAT proved the optimum on {s['proven_optimal']}/{s['instances']} instances; the gaps below are over "
        "those" + (f" (the others, gap to CP-SAT's bound: {unproven})" if unproven else ""),
        f"- GA best of its seeds: mean gap {percent(s['ga_best_gap_mean'])}, max {percent(s['ga_best_gap_max'])}; "
        f"reaches the optimum on {s['ga_reaches_optimum']}/{s['proven_optimal']}",
        f"- GA median over its seeds: mean gap {percent(s['ga_median_gap_mean'])}, "
        f"max {percent(s['ga_median_gap_max'])}",
        f"- manual allocation: mean gap {percent(s['manual_gap_mean'])}, max {percent(s['manual_gap_max'])}",
        f"- GA below a proven optimum: {s['ga_below_optimum']} instance(s)", "",
        "| workload | preset | rows/CN | layers | CNs | CP-SAT status | reference cycles | GA gap best | "
        "GA gap median | GA gap worst | manual gap | CP-SAT s | GA s (median) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for r in data["rows"]:
        gaps = r.get("ga_gaps") or []
        ref = "-" if r["reference"] is None else f"{r['reference']:.0f} ({r['reference_kind']})"
        lines.append(
            f"| {r['workload']} | {r['hardware']} | {r['rows_per_cn']} | {r['layers']} | {r['cns']} | "
            f"{r['cpsat_status']} | {ref} | {percent(min(gaps, default=None))} | "
            f"{percent(statistics.median(gaps) if gaps else None)} | {percent(max(gaps, default=None))} | "
            f"{percent(r.get('manual_gap'))} | {r['cpsat_time_s']:.2f} | {r['ga_time_s']:.2f} |"
        )
    lines += ["", f"Conditions: {conditions_line(data['conditions'])} when written; {data['wall_s']:.0f} s wall in "
              "total. Every number is from a schedule that passed `check` and the shared evaluator."]  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry (see the module docstring)."""
    parser = run_render_parser("python -m accelsched.bench.multicore_gap", __doc__)
    parser.add_argument("--instances", type=int, default=30)
    parser.add_argument("--ga-seeds", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args(argv)
    if args.command == "run" and (args.instances < 1 or args.ga_seeds < 1 or not args.time_limit > 0):
        parser.error("--instances and --ga-seeds must be >= 1 and --time-limit > 0")
    return run_or_render(
        parser, args, render, lambda: run(args.instances, args.ga_seeds, args.time_limit, args.out, verbose=True)
    )


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(run_entry(main))
