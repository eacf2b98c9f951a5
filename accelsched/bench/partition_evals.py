"""Benchmark: subgraph evaluations per second of the Cocco cost model.

Usage::

    python -m accelsched.bench.partition_evals [--workload resnet50] [--hardware cocco-simba-separate]
                                               [--subgraphs 2000] [--repeats 5] [--seed 0] [--out FILE.json]
                                               [--ga-seeds 3]

Protocol: a fixed, seeded list of connected subgraphs of 1-12 layers is drawn by
random growth from random layers (the kind of subgraph a GA or SA visits). *Cold*
builds a fresh cost model for each repetition (the per-layer primitives stay
cached, as they are in any search) and costs every subgraph; *cached* costs them
again on the warm model. Each figure is the median over ``--repeats`` repetitions.

*GA*: the registered ``ga`` method (Cocco's 20 generations x 500 genomes, no time
limit) on the workload with the preset's buffers and the EMA metric, once per seed
``0 .. --ga-seeds - 1`` in a fresh process state (a new instance, so a cold cost
model); the median wall time, the subgraph evaluations, and the gap of the GA's
best to the optimum proven by ``milp-highs``. Every result passed the problem's
``check`` and the shared evaluator (:func:`accelsched.registry.run_method`).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from accelsched.entry import run_entry
from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.partition import PartitionCostModel
from accelsched.models.registry import load_workload
from accelsched.problems.partition import PROBLEM
from accelsched.registry import get_method, make_instance, run_method
from accelsched.solvers import SolveOptions


def random_subgraphs(model: PartitionCostModel, count: int, seed: int, max_size: int = 12) -> list[tuple[int, ...]]:
    """``count`` connected subgraphs grown from random layers by random neighbours."""
    rng = np.random.default_rng(seed)
    n = len(model.layers)
    out = []
    for _ in range(count):
        members = {int(rng.integers(n))}
        target = int(rng.integers(1, max_size + 1))
        while len(members) < target:
            frontier = sorted({v for u in members for v in (*model.preds[u], *model.succs[u])} - members)
            if not frontier:
                break
            members.add(frontier[int(rng.integers(len(frontier)))])
        out.append(tuple(sorted(members)))
    return out


def measure(workload_name: str, hardware: str, count: int, repeats: int, seed: int) -> dict[str, Any]:
    """Median cold and cached subgraph evaluations per second."""
    workload = load_workload(workload_name)
    acc = load_accelerator(hardware)
    core = acc.cores[0]
    subgraphs = random_subgraphs(PartitionCostModel(workload, core, acc.offchip), count, seed)
    distinct = len(set(subgraphs))
    cold, cached = [], []
    for _ in range(repeats):
        model = PartitionCostModel(workload, core, acc.offchip)
        start = time.perf_counter()
        for members in subgraphs:
            model.subgraph(members)
        cold.append(model.evaluations / (time.perf_counter() - start))
        start = time.perf_counter()
        for members in subgraphs:
            model.subgraph(members)
        cached.append(len(subgraphs) / (time.perf_counter() - start))
    return {
        "workload": workload.name,
        "hardware": acc.name,
        "subgraphs": count,
        "distinct_subgraphs": distinct,
        "mean_layers": float(np.mean([len(s) for s in subgraphs])),
        "repeats": repeats,
        "cold_subgraphs_per_s": statistics.median(cold),
        "cached_subgraphs_per_s": statistics.median(cached),
        "python": platform.python_version(),
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
    }


def measure_ga(workload_name: str, hardware: str, seeds: int) -> dict[str, Any]:
    """Median wall time of the 20 x 500 GA over ``seeds`` seeds, and its gap to the proven optimum."""
    acc = load_accelerator(hardware)
    exact = run_method(
        PROBLEM,
        make_instance(PROBLEM, load_workload(workload_name), acc, {}),
        get_method(PROBLEM.name, "milp-highs"),
        SolveOptions(time_limit_s=600),
    )
    runs: list[dict[str, Any]] = []
    walls: list[float] = []
    for seed in range(seeds):
        instance = make_instance(PROBLEM, load_workload(workload_name), acc, {})
        start = time.perf_counter()
        result = run_method(PROBLEM, instance, get_method(PROBLEM.name, "ga"), SolveOptions(seed=seed))
        wall = time.perf_counter() - start
        walls.append(wall)
        gap = None
        if exact.status.name == "OPTIMAL" and result.objective is not None and exact.objective:
            gap = (result.objective - exact.objective) / exact.objective
        runs.append(
            {
                "seed": seed,
                "wall_s": wall,
                "objective": result.objective,
                "gap": gap,
                "evaluations": instance.cost_model.evaluations,
                "note": result.stats.native_status,
            }
        )
    return {
        "ga_median_wall_s": statistics.median(walls),
        "ga_max_wall_s": max(walls),
        "exact_status": exact.status.name,
        "exact_objective": exact.objective,
        "ga_runs": runs,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print (and optionally save) the figures."""
    parser = argparse.ArgumentParser(prog="python -m accelsched.bench.partition_evals", description=__doc__)
    parser.add_argument("--workload", default="resnet50")
    parser.add_argument("--hardware", default="cocco-simba-separate")
    parser.add_argument("--subgraphs", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write the figures as JSON")
    parser.add_argument("--ga-seeds", type=int, default=3, help="GA runs to time (0: skip)")
    args = parser.parse_args(argv)
    result = measure(args.workload, args.hardware, args.subgraphs, args.repeats, args.seed)
    print(
        f"{result['workload']} on {result['hardware']}: {result['distinct_subgraphs']} distinct subgraphs of "
        f"{result['mean_layers']:.1f} layers on average, median of {result['repeats']}:\n"
        f"  cold   {result['cold_subgraphs_per_s']:12.0f} subgraph evaluations / s\n"
        f"  cached {result['cached_subgraphs_per_s']:12.0f} subgraph lookups / s"
    )
    if args.ga_seeds > 0:
        result.update(measure_ga(args.workload, args.hardware, args.ga_seeds))
        print(
            f"  GA 20 x 500: median {result['ga_median_wall_s']:.1f} s, max {result['ga_max_wall_s']:.1f} s "
            f"over {args.ga_seeds} seeds; exact {result['exact_status']} {result['exact_objective']:.6g}"
        )
        for run in result["ga_runs"]:
            gap = "-" if run["gap"] is None else f"{run['gap']:.2%}"
            print(
                f"    seed {run['seed']}: {run['wall_s']:5.1f} s, {run['evaluations']} evaluations, "
                f"objective {run['objective']:.6g}, gap {gap}"
            )
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)
            handle.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_entry(main))
