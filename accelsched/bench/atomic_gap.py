"""The atomic DP's gap to the round optimum on seeded random atom DAGs of 20-60 atoms.

Usage::

    python -m accelsched.bench.atomic_gap run [--instances 50] [--time-limit S] [--out FILE.json]
    python -m accelsched.bench.atomic_gap render FILE.json [--out FILE.md]

Protocol
--------
Instance ``i`` (0-based): :meth:`accelsched.problems.atomic.AtomDag.random` with
``20 + (17 i) mod 41`` atoms (20-60, spread), seed ``1000 + i``, edge probability
``3 / atoms`` (about three consumers per atom), on ``2 + i % 3`` engines. Per
instance: the DP (method ``dp``), ``cpsat-rounds`` warm-started by the DP (one
thread, seed 0, ``--time-limit``), and ``cpsat-jobshop`` (half that limit) for its
bound. The reference is the round optimum when ``cpsat-rounds`` proves it, else the
best valid lower bound: the largest of the round model's bound, the job shop's
bound, the longest path and the work over the engines; a gap to a bound is an
upper bound of the true gap and is marked. Every schedule passed the problem's
``check`` and the evaluator (:func:`accelsched.registry.run_method`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

from accelsched.bench.commands import closing_lines, percent, run_or_render, run_render_parser
from accelsched.bench.conditions import machine_conditions
from accelsched.bench.files import write_json
from accelsched.entry import run_entry
from accelsched.problems.atomic import PROBLEM, AtomDag, AtomicInstance, lower_bounds
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions, Status

__all__ = ["gap_instance", "main", "render", "run"]


def gap_instance(index: int) -> AtomicInstance:
    """Instance ``index`` of the protocol."""
    atoms = 20 + (index * 17) % 41
    return AtomicInstance(AtomDag.random(atoms, 1000 + index, edge_probability=3 / atoms), 2 + index % 3)


def _measure(index: int, time_limit_s: float, rel_gap: float) -> dict[str, Any]:
    instance = gap_instance(index)
    dp = run_method(PROBLEM, instance, get_method("atomic", "dp"), SolveOptions())
    start = time.perf_counter()
    exact = run_method(PROBLEM, instance, get_method("atomic", "cpsat-rounds"),
                       SolveOptions(time_limit_s=time_limit_s, threads=1, seed=0, rel_gap=rel_gap),
                       warm_start=dp.solution)  # fmt: skip
    exact_s = time.perf_counter() - start
    jobshop = run_method(PROBLEM, instance, get_method("atomic", "cpsat-jobshop"),
                         SolveOptions(time_limit_s=time_limit_s / 2, threads=1, seed=0, rel_gap=rel_gap))  # fmt: skip
    proven = exact.status is Status.OPTIMAL
    bounds = [b for b in (exact.bound, jobshop.bound) if b is not None] + list(lower_bounds(instance))
    reference = exact.objective if proven else max(bounds)
    assert dp.objective is not None and exact.objective is not None and reference
    return {
        "index": index, "atoms": len(instance.dag.atoms), "edges": len(instance.dag.edges),
        "engines": instance.n_engines, "dp_latency": dp.objective, "dp_time_s": dp.runtime_s,
        "cpsat_status": exact.status.name, "cpsat_latency": exact.objective, "cpsat_bound": exact.bound,
        "cpsat_time_s": exact_s, "jobshop_bound": jobshop.bound, "reference": reference,
        "reference_kind": "optimum" if proven else "bound", "dp_gap": (dp.objective - reference) / reference,
        "dp_gap_to_best_found": (dp.objective - exact.objective) / exact.objective,
    }  # fmt: skip


def run(count: int = 50, time_limit_s: float = 10.0, out: str | None = None, verbose: bool = False,
        rel_gap: float = 0.0) -> dict[str, Any]:  # fmt: skip
    """Measure the protocol's first ``count`` instances; write the JSON to ``out`` when given. ``rel_gap`` > 0
    stops the CP-SAT searches at that relative gap (the protocol's runs use 0: a proof or the time limit)."""
    if count < 1 or not time_limit_s > 0 or not 0 <= rel_gap < 1:
        raise ValueError(f"count must be >= 1, the time limit > 0 and rel_gap in [0, 1), got {count}, {time_limit_s}, "
                         f"{rel_gap}")  # fmt: skip
    start = time.perf_counter()
    rows = []
    for index in range(count):
        rows.append(_measure(index, time_limit_s, rel_gap))
        if verbose:
            r = rows[-1]
            print(f"  #{index:<3} {r['atoms']:>2} atoms {r['engines']} engines  DP {r['dp_latency']:>6.0f}  CP-SAT "
                  f"{r['cpsat_status']:<8} {r['cpsat_latency']:>6.0f}  gap {r['dp_gap']:.2%} ({r['reference_kind']})",
                  flush=True)  # fmt: skip
    proven = [r for r in rows if r["reference_kind"] == "optimum"]
    data = {
        "kind": "atomic_gap", "time_limit_s": time_limit_s, **({"rel_gap": rel_gap} if rel_gap else {}),
        "wall_s": time.perf_counter() - start,
        "conditions": machine_conditions(), "rows": rows,
        "summary": {
            "instances": len(rows), "proven_optimal": len(proven),
            "dp_gap_mean_proven": statistics.fmean(r["dp_gap"] for r in proven) if proven else None,
            "dp_gap_max_proven": max((r["dp_gap"] for r in proven), default=None),
            "dp_at_optimum": sum(r["dp_gap"] <= 1e-9 for r in proven),
            "dp_gap_bound_mean_unproven": statistics.fmean(r["dp_gap"] for r in rows if r not in proven)
            if len(proven) < len(rows) else None,
            "dp_gap_to_best_found_mean": statistics.fmean(r["dp_gap_to_best_found"] for r in rows),
            "dp_gap_to_best_found_max": max(r["dp_gap_to_best_found"] for r in rows),
        },
    }  # fmt: skip
    if out:
        write_json(out, data)
    return data


def render(data: dict[str, Any]) -> str:
    """Markdown of a :func:`run` result."""
    s = data["summary"]
    lines = [
        "# Atomic: the DP's gap to the round optimum", "",
        f"{s['instances']} seeded random atom DAGs of 20-60 atoms on 2-4 engines (protocol in "
        f"`accelsched/bench/atomic_gap.py`); CP-SAT one thread, {data['time_limit_s']:g} s, warm-started by the "
        "DP.", "",
        f"- CP-SAT proved the round optimum on {s['proven_optimal']}/{s['instances']}; there the DP's mean gap is "
        f"{percent(s['dp_gap_mean_proven'])}, max {percent(s['dp_gap_max_proven'])}, optimal on {s['dp_at_optimum']}",
        f"- elsewhere the gap to the best lower bound (an upper bound of the true gap) averages "
        f"{percent(s['dp_gap_bound_mean_unproven'])}",
        f"- DP against the best schedule found: mean {percent(s['dp_gap_to_best_found_mean'])}, max "
        f"{percent(s['dp_gap_to_best_found_max'])}", "",
        "| # | atoms | edges | engines | DP | CP-SAT | status | reference | DP gap | DP s | CP-SAT s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for r in data["rows"]:
        lines.append(f"| {r['index']} | {r['atoms']} | {r['edges']} | {r['engines']} | {r['dp_latency']:.0f} | "
                     f"{r['cpsat_latency']:.0f} | {r['cpsat_status']} | {r['reference']:.0f} ({r['reference_kind']}) | "
                     f"{percent(r['dp_gap'])} | {r['dp_time_s']:.2f} | {r['cpsat_time_s']:.1f} |")  # fmt: skip
    return "\n".join(lines + closing_lines(data)) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry (see the module docstring)."""
    parser = run_render_parser("python -m accelsched.bench.atomic_gap", __doc__)
    parser.add_argument("--instances", type=int, default=50)
    parser.add_argument("--time-limit", type=float, default=10.0)
    args = parser.parse_args(argv)
    if args.command == "run" and (args.instances < 1 or not args.time_limit > 0):
        parser.error("--instances must be >= 1 and --time-limit > 0")
    return run_or_render(parser, args, render, lambda: run(args.instances, args.time_limit, args.out, verbose=True))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(run_entry(main))
