"""Benchmarks of the RA-tree problem (SET).

Usage::

    python -m accelsched.bench.ra_tree evals [--workload set-resnet50] [--hardware set-edge-4x4] [--batch 1]
                                             [--trees 30] [--repeats 5] [--out FILE.json]
    python -m accelsched.bench.ra_tree compare [--cases set-resnet50:1,set-resnet50:8,googlenet:1]
                                               [--hardware set-edge-4x4] [--time-limit 600]
                                               [--methods dp-ls,dp-lp,sa-ls,sa-lp,sa] [--threads 1] [--out FILE.json]
    python -m accelsched.bench.ra_tree render FILE.json [FILE.json ...] --out FILE.md
    python -m accelsched.bench.ra_tree plot --tree FILE [--workload W] [--hardware H] [--batch B] --out FILE.png
    python -m accelsched.bench.ra_tree rate  [--instances 50] [--first-seed 0] [--layers 5] [--batch 2]
                                             [--chains 4] [--hot-chains 4] [--six] [--sa-repeats 1]
                                             [--out FILE.json]

Protocols
---------
*evals*: one RA-tree evaluation (analysis + evaluator, the SA's inner loop) of the
layer-sequential tree and of ``--trees`` trees reached from it by random SET moves,
on a warm cache of per-layer costs (as inside a search); the median over
``--repeats`` passes of the per-tree time.

*compare*: per case (workload:batch) on ``--hardware`` with SET's default objective,
the exact LS and LP programs (``dp-ls``, ``dp-lp``), the restricted SAs (``sa-ls``,
``sa-lp``) and the full-space ``sa``, seed 0, each with the time limit and
``--threads`` (the SAs' chains run in that many processes): energy, latency, objective
and time; the exact subspace optimum is never worse than the SA
restricted to it, and the full SA is compared with both.

*render*: the SET Fig. 8 style table of ``compare`` results: per platform and case,
energy, latency and objective of LS (``dp-ls``), LP (``dp-lp``) and SET's SA, each
normalized to the SA; the paper's claim is that SA is best on every case.

*plot*: the S-T graph of a tree (SET text form or JSON): time on x, tiles (positions
in the serpentine numbering) on y, one box per run of a leaf.

*rate*: ``--instances`` seeded random DAGs of ``--layers`` layers (seeds from
``--first-seed``; channels 4-16, 8x8 maps, the given batch) on ``set-edge-4x4`` with
E^2 D: the optimum by exhaustive enumeration and the ``sa`` method (SET's budget, 100 x
layers iterations per chain; ``--chains`` at SET's T0 and ``--hot-chains`` at the hot
one, the method's 4 and 4 by default; ``--six``: SET's six operators without flip), seed =
instance seed; the share of instances where SA reaches the optimum (1e-9 relative),
its mean and largest gap. With ``--sa-repeats R`` the SA runs R times per instance
(repeat r with seed ``instance + r * 100000``) and the rate of every repeat is
reported too: one repeat's rate depends on the SA's seeds as well as on the
instances. Every result passed ``check`` and the shared evaluator
(:func:`accelsched.registry.run_method`).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from accelsched.entry import run_entry
from accelsched.errors import InfeasibleSolution
from accelsched.hardware import load_accelerator
from accelsched.heuristics.ra_tree_moves import OPERATORS, neighbour
from accelsched.heuristics.ra_tree_sa import SA_OPERATORS, RATreeSAParams, solve_sa
from accelsched.models.random_dag import random_workload
from accelsched.models.registry import load_workload
from accelsched.problems.base import MethodSpec
from accelsched.problems.ra_tree import (
    PROBLEM,
    RATree,
    RATreeInstance,
    check_structure,
    evaluate_tree,
    make_instance,
    parse_tree,
    sequential_tree,
    st_graph,
)
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions


def measure_evals(workload: str, hardware: str, batch: int, trees: int, repeats: int) -> dict[str, Any]:
    """Median evaluation time of an RA tree, milliseconds."""
    instance = RATreeInstance(load_workload(workload, batch=batch), load_accelerator(hardware), 2, 1)
    rng = np.random.default_rng(0)
    edges = frozenset(instance.workload.edges)
    pool: list[RATree] = [sequential_tree(instance.workload)]
    current = pool[0]
    while len(pool) < trees + 1:
        moved = neighbour(current, edges, rng)
        if moved is None:
            continue
        try:
            check_structure(instance, moved)
        except InfeasibleSolution:  # an invalid move is skipped, as in the SA
            continue
        pool.append(moved)
        current = moved
    for tree in pool:  # warm the per-layer cache
        evaluate_tree(instance, tree)
    passes = []
    for _ in range(repeats):
        start = time.perf_counter()
        for tree in pool:
            evaluate_tree(instance, tree)
        passes.append((time.perf_counter() - start) / len(pool) * 1e3)
    return {"workload": workload, "hardware": hardware, "batch": batch, "trees": len(pool),
            "median_ms_per_tree": statistics.median(passes), "passes_ms": passes}  # fmt: skip


REPEAT_SEED_STRIDE = 100_000
"""Repeat ``r`` of the rate benchmark runs the SA of instance ``s`` with seed ``s + r * REPEAT_SEED_STRIDE``."""


def measure_rate(
    instances: int,
    layers: int,
    batch: int,
    chains: int,
    hot_chains: int,
    six: bool = False,
    first_seed: int = 0,
    repeats: int = 1,
) -> dict[str, Any]:
    """Share of random instances where SA reaches the enumeration optimum (module docstring, *rate*).

    Parameters
    ----------
    instances, layers, batch
        Instances ``first_seed`` .. ``first_seed + instances - 1``: random DAGs of
        ``layers`` layers at ``batch`` samples.
    chains, hot_chains
        SA chains per run at SET's initial temperature and at the hot one.
    six
        Draw SET's six operators only (default: the operators of the ``sa`` method).
    repeats
        SA runs per instance; the first has seed = instance seed (the headline rate),
        repeat ``r`` seed ``instance + r * REPEAT_SEED_STRIDE``.
    """
    rows: list[dict[str, Any]] = []
    params = RATreeSAParams(chains=chains, hot_chains=hot_chains, operators=OPERATORS if six else SA_OPERATORS)
    method = MethodSpec("sa", PROBLEM.name, "heuristic", lambda i, o, w: solve_sa(i, o, w, params))
    for seed in range(first_seed, first_seed + instances):
        workload = random_workload(layers, seed, channels=(4, 8, 16), height=8, width=8, batch=batch)
        instance = RATreeInstance(workload, load_accelerator("set-edge-4x4"), 2, 1)
        best = run_method(PROBLEM, instance, get_method(PROBLEM.name, "enumerate"), SolveOptions())
        assert best.objective is not None
        runs = [run_method(PROBLEM, instance, method, SolveOptions(seed=seed + r * REPEAT_SEED_STRIDE))
                for r in range(repeats)]  # fmt: skip
        values = [run.objective for run in runs]
        assert all(value is not None for value in values)
        gaps = [value / best.objective - 1 for value in values if value is not None]
        rows.append({"seed": seed, "optimum": best.objective, "sa": values[0], "gap": gaps[0],
                     "sa_s": runs[0].runtime_s, "enumerate_s": best.runtime_s, "repeat_gaps": gaps})  # fmt: skip
        print(f"  instance {seed:4d}: gap {gaps[0]:8.3%}  optimum in {sum(g <= 1e-9 for g in gaps)}/{repeats} runs"
              f"  sa {runs[0].runtime_s:5.2f} s  enumerate {best.runtime_s:5.2f} s", flush=True)  # fmt: skip
    first: list[float] = [r["gap"] for r in rows]
    per_repeat: list[list[float]] = [[r["repeat_gaps"][k] for r in rows] for k in range(repeats)]
    rates = [sum(g <= 1e-9 for g in column) / len(column) for column in per_repeat]
    return {"instances": instances, "first_seed": first_seed, "layers": layers, "batch": batch, "chains": chains,
            "hot_chains": hot_chains, "t0": params.t0, "hot_t0": params.hot_t0,
            "operators": params.operators, "repeats": repeats, "optimum_rate": rates[0],
            "mean_gap": statistics.fmean(first), "max_gap": max(first),
            "repeat_optimum_rates": rates, "mean_optimum_rate": statistics.fmean(rates),
            "repeat_mean_gaps": [statistics.fmean(column) for column in per_repeat], "rows": rows}  # fmt: skip


COMPARED = ("dp-ls", "dp-lp", "sa-ls", "sa-lp", "sa")


def compare(
    cases: Sequence[str],
    hardware: str,
    limit: float,
    methods: Sequence[str] = COMPARED,
    out: str | None = None,
    threads: int = 1,
) -> dict[str, Any]:
    """The subspace optima, the restricted SAs and the full SA on each case (``out`` rewritten after each case)."""
    rows: list[dict[str, Any]] = []
    for case in cases:
        name, _, batch = case.rpartition(":")
        if not batch.isdigit() or not name:
            name, batch = case, "1"
        instance = make_instance(load_workload(name, batch=int(batch)), load_accelerator(hardware), {})
        print(f"  {name} batch {instance.batch} on {hardware} (E^{instance.energy_exponent} D^"
              f"{instance.delay_exponent}):", flush=True)  # fmt: skip
        for method in methods:
            result = run_method(
                PROBLEM, instance, get_method(PROBLEM.name, method), SolveOptions(time_limit_s=limit, threads=threads)
            )
            cost = result.cost
            rows.append({"workload": name, "batch": instance.batch, "method": method, "status": result.status.name,
                         "objective": result.objective, "runtime_s": result.runtime_s,
                         "energy_pj": cost.energy_pj if cost else None,
                         "latency_cycles": cost.latency_cycles if cost else None,
                         "note": result.stats.native_status})  # fmt: skip
            print(f"    {method:<6} {result.status.name:<24} {result.objective or float('nan'):12.4g} "
                  f"{result.runtime_s:8.1f} s", flush=True)  # fmt: skip
        if out:
            _save({"hardware": hardware, "time_limit_s": limit, "threads": threads, "rows": rows}, out)
    return {"hardware": hardware, "time_limit_s": limit, "threads": threads, "rows": rows}


def _save(result: dict[str, Any], path: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({**result, "python": platform.python_version()}, handle, indent=1)
        handle.write("\n")


LABELS = {"dp-ls": "LS (exact)", "dp-lp": "LP (exact)", "sa-ls": "LS (SA)", "sa-lp": "LP (SA)", "sa": "SET (SA)",
          "tangram": "Tangram-like"}  # fmt: skip


def search_note(row: Mapping[str, Any]) -> str:
    """The chains of an SA row (``2 chains``, ``4 + 4 hot chains``) and ``time-limited`` when it was; ``-`` else."""
    note = str(row.get("note") or "")
    found = re.match(r"(\d+) chains(?: at T0 = \S+ and (\d+) at T0)?", note)
    parts = []
    if found:
        parts.append(f"{found[1]} + {found[2]} hot chains" if found[2] else f"{found[1]} chains")
    if "stopped by the time limit" in note:
        parts.append("time-limited")
    return ", ".join(parts) or "-"


def render(paths: Sequence[str]) -> str:
    """Markdown tables of ``compare`` results, one per file (platform)."""
    lines = ["# RA trees: LS, LP and SET's SA (SET Fig. 8 style)", ""]
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        batches = ", ".join(str(b) for b in sorted({r["batch"] for r in data["rows"]}))
        lines += [f"## {data['hardware']}, batch {batches} (time limit {data['time_limit_s']:.0f} s per method)", "",
                  "| workload | batch | method | energy uJ | latency M cycles | objective | x SET | time s | search |",
                  "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        cases = list(dict.fromkeys((r["workload"], r["batch"]) for r in data["rows"]))
        for workload, batch in cases:
            rows = [r for r in data["rows"] if (r["workload"], r["batch"]) == (workload, batch)]
            reference = next((r["objective"] for r in rows if r["method"] == "sa" and r["objective"]), None)
            for r in rows:
                if r["objective"] is None:
                    lines.append(f"| {workload} | {batch} | {LABELS.get(r['method'], r['method'])} | - | - | "
                                 f"{r['status']} | - | {r['runtime_s']:.0f} | {search_note(r)} |")  # fmt: skip
                    continue
                ratio = f"{r['objective'] / reference:.2f}" if reference else "-"
                lines.append(f"| {workload} | {batch} | {LABELS.get(r['method'], r['method'])} | "
                             f"{r['energy_pj'] / 1e6:.1f} | {r['latency_cycles'] / 1e6:.3f} | {r['objective']:.4g} | "
                             f"{ratio} | {r['runtime_s']:.0f} | {search_note(r)} |")  # fmt: skip
        lines.append("")
    lines.append("Every number is from a tree that passed `check` and the shared evaluator. *search*: the SA's "
                 "chains (at SET's T0, + hot ones at a higher T0), and whether the time limit stopped "
                 "them.")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one benchmark, print its figures, optionally save them."""
    parser = argparse.ArgumentParser(prog="python -m accelsched.bench.ra_tree", description=__doc__)
    parser.add_argument("what", choices=["evals", "rate", "compare", "plot", "render"])
    parser.add_argument("files", nargs="*", help="render: compare results (JSON)")
    parser.add_argument("--tree", default=None, help="plot: the tree file")
    parser.add_argument("--cases", default="set-resnet50:1,set-resnet50:8,googlenet:1")
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument("--methods", default=",".join(COMPARED), help="compare: methods to run")
    parser.add_argument("--workload", default="set-resnet50")
    parser.add_argument("--hardware", default="set-edge-4x4")
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--trees", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--instances", type=int, default=50)
    parser.add_argument("--layers", type=int, default=5)
    parser.add_argument("--chains", type=int, default=RATreeSAParams().chains, help="rate: chains at SET's T0")
    parser.add_argument("--hot-chains", type=int, default=RATreeSAParams().hot_chains, help="rate: hot chains")
    parser.add_argument("--threads", type=int, default=1, help="compare: processes of the SAs' chains")
    parser.add_argument("--six", action="store_true", help="rate: SET's six operators only (no flip)")
    parser.add_argument("--first-seed", type=int, default=0, help="rate: seed of the first instance")
    parser.add_argument("--sa-repeats", type=int, default=1, help="rate: SA runs per instance (seeds in the docstring)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    for flag, value, least in (("--sa-repeats", args.sa_repeats, 1), ("--threads", args.threads, 1),
                               ("--chains", args.chains, 1), ("--hot-chains", args.hot_chains, 0)):  # fmt: skip
        if value < least:
            parser.error(f"{flag} must be >= {least}, got {value}")
    if args.what == "render":
        markdown = render(args.files)
        print(markdown)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as handle:
                handle.write(markdown)
        return 0
    if args.what == "plot":
        if not args.tree or not args.out:
            parser.error("plot needs --tree FILE and --out FILE.png")
        instance = make_instance(
            load_workload(args.workload, batch=args.batch or 1), load_accelerator(args.hardware), {}
        )
        with open(args.tree, encoding="utf-8") as handle:
            text = handle.read()
        tree = RATree.from_dict(json.loads(text)) if text.lstrip().startswith("{") else parse_tree(text, args.tree)
        st_graph(instance, tree, args.out)
        print(f"S-T graph written to {args.out}")
        return 0
    if args.what == "compare":
        result = compare(args.cases.split(","), args.hardware, args.time_limit, args.methods.split(","), args.out,
                         args.threads)  # fmt: skip
    elif args.what == "evals":
        result = measure_evals(args.workload, args.hardware, args.batch or 1, args.trees, args.repeats)
        print(f"{args.workload} on {args.hardware}, batch {result['batch']}: median "
              f"{result['median_ms_per_tree']:.2f} ms per RA-tree evaluation over {result['trees']} trees")  # fmt: skip
    else:
        result = measure_rate(args.instances, args.layers, args.batch or 2, args.chains, args.hot_chains, args.six,
                              args.first_seed, args.sa_repeats)  # fmt: skip
        print(f"SA reaches the optimum on {result['optimum_rate']:.0%} of {args.instances} instances of "
              f"{args.layers} layers; mean gap {result['mean_gap']:.3%}, largest {result['max_gap']:.3%}")  # fmt: skip
        if args.sa_repeats > 1:
            rates = result["repeat_optimum_rates"]
            print(f"over {args.sa_repeats} SA seeds per instance: {result['mean_optimum_rate']:.1%} on average "
                  f"({min(rates):.0%} to {max(rates):.0%})")  # fmt: skip
    if args.out:
        _save(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(run_entry(main))
