"""Benchmark: subgraph evaluations per second of the Cocco cost model.

Usage::

    python -m accelsched.bench.partition_evals [--workload resnet50] [--hardware cocco-simba-separate]
                                               [--subgraphs 2000] [--repeats 5] [--seed 0] [--out FILE.json]

Protocol: a fixed, seeded list of connected subgraphs of 1-12 layers is drawn by
random growth from random layers (the kind of subgraph a GA or SA visits). *Cold*
builds a fresh cost model for each repetition (the per-layer primitives stay
cached, as they are in any search) and costs every subgraph; *cached* costs them
again on the warm model. Each figure is the median over ``--repeats`` repetitions.
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

from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.partition import PartitionCostModel
from accelsched.models.registry import load_workload


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print (and optionally save) the figures."""
    parser = argparse.ArgumentParser(prog="python -m accelsched.bench.partition_evals", description=__doc__)
    parser.add_argument("--workload", default="resnet50")
    parser.add_argument("--hardware", default="cocco-simba-separate")
    parser.add_argument("--subgraphs", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write the figures as JSON")
    args = parser.parse_args(argv)
    result = measure(args.workload, args.hardware, args.subgraphs, args.repeats, args.seed)
    print(
        f"{result['workload']} on {result['hardware']}: {result['distinct_subgraphs']} distinct subgraphs of "
        f"{result['mean_layers']:.1f} layers on average, median of {result['repeats']}:\n"
        f"  cold   {result['cold_subgraphs_per_s']:12.0f} subgraph evaluations / s\n"
        f"  cached {result['cached_subgraphs_per_s']:12.0f} subgraph lookups / s"
    )
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)
            handle.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
