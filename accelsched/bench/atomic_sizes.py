"""Atom sizing on zoo networks: the exact least-variance sizes against Algorithm 1's annealing.

Usage::

    python -m accelsched.bench.atomic_sizes run [--workloads vgg19,...] [--presets atomic-8x8-kc,...]
        [--seeds 3] [--out FILE.json]
    python -m accelsched.bench.atomic_sizes render FILE.json [--out FILE.md]

Per workload and preset (64 engines, batch 1): the candidate table of
:func:`accelsched.problems.atomic.instance_size_table` as instances build it (at most
4 atoms per engine, at least one output block per engine, within 1/0.9 of each
layer's fastest lock-step time), the exact scan's
variance of the layers' atom cycles and its time, and the annealing's
(:func:`accelsched.heuristics.atom_sizes_sa.sa_sizes`, default parameters) best and
median variance over ``--seeds`` seeds with its median time. The exact variance is
never above the annealing's (asserted while running).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence
from typing import Any

from accelsched.bench.commands import closing_lines, run_or_render, run_render_parser
from accelsched.bench.conditions import machine_conditions
from accelsched.bench.files import write_json
from accelsched.entry import run_entry
from accelsched.formulations.atom_sizes import exact_sizes
from accelsched.hardware import load_accelerator
from accelsched.heuristics.atom_sizes_sa import sa_sizes
from accelsched.models.registry import load_workload
from accelsched.problems.atomic import instance_size_table

__all__ = ["main", "render", "run"]

WORKLOADS = ("vgg19", "resnet50", "inception_v3", "efficientnet_b0")
PRESETS = ("atomic-8x8-kc", "atomic-8x8-yx")


def run(workloads: Sequence[str] = WORKLOADS, presets: Sequence[str] = PRESETS, seeds: int = 3,
        out: str | None = None, verbose: bool = False) -> dict[str, Any]:  # fmt: skip
    """Measure every workload x preset; write the JSON to ``out`` when given."""
    rows = []
    start = time.perf_counter()
    for preset in presets:
        accelerator = load_accelerator(preset)
        for workload in workloads:
            t0 = time.perf_counter()
            # the table the atoms=exact|sa steps choose from, on every engine at batch 1
            table = instance_size_table(load_workload(workload), accelerator, accelerator.n_cores)
            t1 = time.perf_counter()
            _, exact = exact_sizes(table)
            t2 = time.perf_counter()
            annealed, times = [], []
            for seed in range(seeds):
                t3 = time.perf_counter()
                annealed.append(sa_sizes(table, seed)[1])
                times.append(time.perf_counter() - t3)
            assert exact <= min(annealed) + 1e-9 * max(1.0, exact), (workload, preset, exact, annealed)
            rows.append({"workload": workload, "preset": preset, "layers": len(table.layers),
                         "candidates": sum(len(c) for c in table.candidates), "table_s": t1 - t0,
                         "exact_variance": exact, "exact_s": t2 - t1, "sa_variance": annealed,
                         "sa_s": statistics.median(times)})  # fmt: skip
            if verbose:
                print(f"  {preset:<14} {workload:<16} exact std {math.sqrt(exact):>10.0f} cycles  SA best std "
                      f"{math.sqrt(min(annealed)):>10.0f}", flush=True)  # fmt: skip
    data = {"kind": "atomic_sizes", "seeds": seeds, "wall_s": time.perf_counter() - start,
            "conditions": machine_conditions(), "rows": rows}  # fmt: skip
    if out:
        write_json(out, data)
    return data


def render(data: dict[str, Any]) -> str:
    """Markdown of a :func:`run` result (standard deviations in cycles: the square roots of the variances)."""
    lines = ["# Atom sizing: exact least variance vs Algorithm 1's annealing", "",
             f"Standard deviation of the layers' atom cycles (lower is better); SA over {data['seeds']} seeds.", "",
             "| preset | workload | layers | candidates | exact std | SA std best | SA std median | SA / exact "
             "(median) | table s | exact s | SA s |", "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in data["rows"]:
        exact, sa = math.sqrt(r["exact_variance"]), [math.sqrt(v) for v in r["sa_variance"]]
        ratio = statistics.median(sa) / exact if exact > 0 else float("nan")
        lines.append(f"| {r['preset']} | {r['workload']} | {r['layers']} | {r['candidates']} | {exact:.0f} | "
                     f"{min(sa):.0f} | {statistics.median(sa):.0f} | {ratio:.2f} | {r['table_s']:.1f} | "
                     f"{r['exact_s']:.2f} | {r['sa_s']:.2f} |")  # fmt: skip
    return "\n".join(lines + closing_lines(data)) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry (see the module docstring)."""
    parser = run_render_parser("python -m accelsched.bench.atomic_sizes", __doc__)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    if args.command == "run" and args.seeds < 1:
        parser.error("--seeds must be >= 1")
    split = [[p.strip() for p in text.split(",") if p.strip()] for text in (args.workloads, args.presets)]
    return run_or_render(parser, args, render, lambda: run(split[0], split[1], args.seeds, args.out, verbose=True))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(run_entry(main))
