"""Throughput of the layer-cost primitive, cold (empty cache) and cached.

Usage::

    python -m accelsched.bench.cost_model [--workload resnet50] [--hardware set-edge-4x4]
                                          [--repeats 5] [--out results.json]

Protocol: every layer of the workload is costed on core 0 of the preset.
*Cold* clears the cache before each repetition: every distinct shape is computed
once (repeated shapes within the network then hit the cache, as they do in any
evaluator), and the figure is also given per distinct shape;
*cached* repeats the same calls on a warm cache. Each figure is the median over
``--repeats`` repetitions; the ratio cached / cold is printed beside them.
``--out`` writes the figures and the machine description as JSON (or CSV when
the file name ends in ``.csv``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from accelsched.entry import run_entry
from accelsched.hardware import load_accelerator
from accelsched.hardware.cost import clear_cache, layer_cost
from accelsched.models.registry import load_workload

__all__ = ["main", "measure"]


def measure(workload_name: str, hardware: str, repeats: int) -> dict[str, Any]:
    """Evaluations per second, cold and cached (medians over ``repeats``)."""
    workload = load_workload(workload_name)
    acc = load_accelerator(hardware)
    core = next(c for c in acc.cores if all(c.supports(layer.kind) for layer in workload))
    layers = list(workload)
    distinct = len({layer.shape_key() for layer in layers})
    cold, fresh, cached = [], [], []
    for _ in range(repeats):
        clear_cache()
        start = time.perf_counter()
        for layer in layers:
            layer_cost(layer, core, acc.offchip)
        elapsed = time.perf_counter() - start
        cold.append(len(layers) / elapsed)
        fresh.append(distinct / elapsed)
        start = time.perf_counter()
        for layer in layers:
            layer_cost(layer, core, acc.offchip)
        cached.append(len(layers) / (time.perf_counter() - start))
    cold_median, cached_median = statistics.median(cold), statistics.median(cached)
    return {
        "workload": workload.name,
        "hardware": acc.name,
        "core": core.name,
        "layers": len(layers),
        "distinct_shapes": distinct,
        "repeats": repeats,
        "cold_evals_per_s": cold_median,
        "cold_new_shapes_per_s": statistics.median(fresh),
        "cached_evals_per_s": cached_median,
        "cached_over_cold": cached_median / cold_median,
        "python": platform.python_version(),
        "machine": f"{platform.machine()} {os.cpu_count()} cpu(s), {platform.platform()}",
    }


def _write(result: dict[str, Any], out: Path) -> None:
    if out.suffix == ".csv":
        with out.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(result))
            writer.writeheader()
            writer.writerow(result)
    else:
        out.write_text(json.dumps(result, indent=2) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m accelsched.bench.cost_model", description=__doc__)
    parser.add_argument("--workload", default="resnet50")
    parser.add_argument("--hardware", default="set-edge-4x4")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    result = measure(args.workload, args.hardware, args.repeats)
    print(
        f"{result['workload']} ({result['layers']} layers, {result['distinct_shapes']} distinct shapes) "
        f"on {result['hardware']} core '{result['core']}', median of {result['repeats']}:\n"
        f"  cold   {result['cold_evals_per_s']:12.1f} layer evaluations / s "
        f"({result['cold_new_shapes_per_s']:.1f} new shapes computed / s)\n"
        f"  cached {result['cached_evals_per_s']:12.1f} layer evaluations / s  "
        f"({result['cached_over_cold']:.0f}x)"
    )
    if args.out is not None:
        _write(result, args.out)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_entry(main))
