"""Atomic Dataflow's comparison on 8x8 engines, the DP's speed, and CP-SAT's bound on a full network.

Usage::

    python -m accelsched.bench.atomic_tables compare [--workloads vgg19,...] [--batches 1,20]
        [--hardware atomic-8x8-kc] [--atoms exact] [--time-limit S] [--out FILE.json] [--resume]
    python -m accelsched.bench.atomic_tables dp-time [--workload resnet50] [--batch 20] [--repeats 3]
        [--out FILE.json]
    python -m accelsched.bench.atomic_tables rolling [--workload resnet50] [--batch 1] [--time-limit 60]
        [--out FILE.json]
    python -m accelsched.bench.atomic_tables render FILE.json [--out FILE.md]

``compare``
    Per workload and batch, on one preset (64 engines): the layer-sequential (``ls``),
    CNN-partition (``cnn-p``) and inter-layer pipelining (``il-pipe``) baselines
    and Atomic Dataflow (AD: the instance's atom sizes, ``--atoms``, scheduled by the
    ``dp`` method, placed by the per-round assignment and buffered by Algorithm 3).
    Every schedule goes through :func:`accelsched.registry.run_method` (checked,
    re-evaluated); the figures come from
    :func:`accelsched.problems.atomic.cost.atomic_metrics`: latency (batch 1),
    throughput (larger batches), PE utilization, NoC overhead, HBM stall share,
    on-chip reuse, HBM traffic and energy. The JSON is rewritten after every cell, so
    ``--resume`` continues a stopped run.
``dp-time``
    The DP alone (:func:`accelsched.heuristics.atomic_dp.dp_rounds`) on a workload
    and batch, ``--repeats`` runs, median seconds; also the time of building the
    atoms, of placing and buffering, and of the evaluator.
``rolling``
    ``cpsat-rounds`` warm-started by the DP's schedule within a time limit (the
    rolling horizon when the DAG is too large for the whole model); its bound (the
    global lower bound), its compute latency before and after, and its gap.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from accelsched.bench.conditions import conditions_line, machine_conditions
from accelsched.bench.files import render_command, write_json
from accelsched.entry import run_entry
from accelsched.formulations.atomic_rounds import RoundsParams, compute_latency, rounds_method
from accelsched.hardware import load_accelerator
from accelsched.heuristics.atomic_dp import dp_rounds
from accelsched.models.registry import load_workload
from accelsched.problems.atomic import PROBLEM, atomic_metrics, evaluate_rounds, place_and_buffer
from accelsched.registry import get_method, make_instance, run_method
from accelsched.solvers import SolveOptions

__all__ = ["WORKLOADS", "compare", "dp_time", "main", "render", "rolling"]

WORKLOADS = ("vgg19", "resnet50", "inception_v3", "efficientnet_b0")
METHODS = (("LS", "ls"), ("CNN-P", "cnn-p"), ("IL-Pipe", "il-pipe"), ("AD", "dp"))
PAPER = {"CNN-P": (1.45, 2.30), "IL-Pipe": (1.42, 3.78)}
"""Atomic Dataflow's batch-1 latency speedups of AD over the baselines (ranges over its workloads)."""


def _cell(workload: str, batch: int, hardware: str, atoms: str, label: str, method: str, limit: float) -> dict:
    accelerator = load_accelerator(hardware)
    t0 = time.perf_counter()
    instance = make_instance(PROBLEM, load_workload(workload, batch=batch), accelerator, {"atoms": atoms})
    built = time.perf_counter() - t0
    result = run_method(PROBLEM, instance, get_method("atomic", method), SolveOptions(time_limit_s=limit, threads=1))
    row = {"workload": workload, "batch": batch, "method": label, "status": result.status.name,
           "runtime_s": result.runtime_s, "instance_s": built, "note": result.stats.native_status}  # fmt: skip
    if result.solution is None:
        return row
    metrics = atomic_metrics(instance, result.solution)
    return {**row, "atoms": len(instance.dag_for(result.solution).atoms), "rounds": len(result.solution.rounds),
            **{k: getattr(metrics, k) for k in ("latency_cycles", "throughput_samples_per_s", "pe_utilization",
                                                  "noc_overhead", "hbm_stall_share", "onchip_reuse", "hbm_bytes",
                                                  "energy_pj")}}  # fmt: skip


def compare(workloads: Sequence[str] = WORKLOADS, batches: Sequence[int] = (1, 20), hardware: str = "atomic-8x8-kc",
            atoms: str = "exact", time_limit_s: float = 600.0, out: str | None = None, resume: bool = False,
            verbose: bool = False) -> dict[str, Any]:  # fmt: skip
    """Run (or continue) the comparison; write the JSON to ``out`` after every cell."""
    data: dict[str, Any] = {"kind": "atomic_compare", "hardware": hardware, "atoms": atoms,
                            "clock_hz": load_accelerator(hardware).clock_hz, "rows": []}  # fmt: skip
    if resume and out and Path(out).exists():
        data = json.loads(Path(out).read_text(encoding="utf-8"))
    done = {(r["workload"], r["batch"], r["method"]) for r in data["rows"]}
    for workload in workloads:
        for batch in batches:
            for label, method in METHODS:
                if (workload, batch, label) in done:
                    continue
                row = _cell(workload, batch, hardware, atoms, label, method, time_limit_s)
                data["rows"].append(row)
                data["conditions"] = machine_conditions()
                if out:
                    write_json(out, data)
                if verbose and "latency_cycles" in row:
                    print(f"  {workload:<16} b{batch:<3} {label:<8} {row['latency_cycles']:>14,.0f} cycles  "
                          f"util {row['pe_utilization']:6.1%}  {row['runtime_s']:6.1f} s", flush=True)  # fmt: skip
                elif verbose:
                    print(f"  {workload:<16} b{batch:<3} {label:<8} {row['status']}: {row['note']}", flush=True)
    return data


def dp_time(workload: str = "resnet50", batch: int = 20, hardware: str = "atomic-8x8-kc", atoms: str = "exact",
            repeats: int = 3, out: str | None = None) -> dict[str, Any]:  # fmt: skip
    """Time the DP (median of ``repeats``) and the steps around it (module docstring)."""
    accelerator = load_accelerator(hardware)
    t0 = time.perf_counter()
    instance = make_instance(PROBLEM, load_workload(workload, batch=batch), accelerator, {"atoms": atoms})
    built = time.perf_counter() - t0
    times, schedule, stats = [], None, None
    for _ in range(repeats):
        t1 = time.perf_counter()
        schedule, stats = dp_rounds(instance)
        times.append(time.perf_counter() - t1)
    assert schedule is not None and stats is not None
    t2 = time.perf_counter()
    placed = place_and_buffer(instance, schedule)
    t3 = time.perf_counter()
    PROBLEM.check(instance, placed)
    report = evaluate_rounds(instance, placed)
    t4 = time.perf_counter()
    data = {"kind": "atomic_dp_time", "workload": workload, "batch": batch, "hardware": hardware, "atoms": atoms,
            "n_atoms": len(instance.dag.atoms), "n_edges": len(instance.dag.edge_array), "instance_s": built,
            "dp_s": times, "dp_median_s": statistics.median(times), "mode": stats.mode, "states": stats.states,
            "rounds": stats.rounds, "compute_latency_cycles": stats.compute_latency_cycles,
            "place_and_buffer_s": t3 - t2, "check_and_evaluate_s": t4 - t3,
            "latency_cycles": report.latency_cycles, "conditions": machine_conditions()}  # fmt: skip
    if out:
        write_json(out, data)
    return data


def rolling(workload: str = "resnet50", batch: int = 1, hardware: str = "atomic-8x8-kc", atoms: str = "exact",
            time_limit_s: float = 60.0, out: str | None = None,
            params: RoundsParams | None = None) -> dict[str, Any]:  # fmt: skip
    """``cpsat-rounds`` warm-started by the DP (module docstring), with the round method's ``params`` (default
    ``RoundsParams()``; a smaller ``max_atoms`` forces the rolling horizon)."""
    accelerator = load_accelerator(hardware)
    instance = make_instance(PROBLEM, load_workload(workload, batch=batch), accelerator, {"atoms": atoms})
    dp = run_method(PROBLEM, instance, get_method("atomic", "dp"), SolveOptions())
    options = SolveOptions(time_limit_s=time_limit_s, threads=1, seed=0)
    exact = run_method(PROBLEM, instance, rounds_method(params), options, warm_start=dp.solution)
    assert exact.solution is not None and exact.bound is not None, exact.stats.native_status
    compute = compute_latency(instance.dag, exact.solution.rounds)
    data = {"kind": "atomic_rolling", "workload": workload, "batch": batch, "hardware": hardware, "atoms": atoms,
            "n_atoms": len(instance.dag.atoms), "time_limit_s": time_limit_s,
            "dp": {"latency_cycles": dp.objective, "runtime_s": dp.runtime_s, "note": dp.stats.native_status},
            "cpsat": {"status": exact.status.name, "latency_cycles": exact.objective, "bound_cycles": exact.bound,
                      "gap": exact.gap, "runtime_s": exact.runtime_s, "note": exact.stats.native_status,
                      "compute_latency_cycles": compute, "compute_gap": (compute - exact.bound) / compute},
            "conditions": machine_conditions()}  # fmt: skip
    if out:
        write_json(out, data)
    return data


def _ratio(rows: dict[str, dict[str, Any]], base: str, key: str, higher: bool) -> str:
    if base not in rows or "AD" not in rows or not rows[base][key]:
        return "-"
    value = rows["AD"][key] / rows[base][key] if higher else rows[base][key] / rows["AD"][key]
    return f"{value:.2f}x"


def _against_paper(cells: dict[tuple[str, int], dict[str, dict[str, Any]]]) -> str:
    """A sentence per baseline of the paper: AD's batch-1 latency speedups here against the paper's range."""
    parts = []
    for base, (lo, hi) in PAPER.items():
        ratios = [rows[base]["latency_cycles"] / rows["AD"]["latency_cycles"] for (_, batch), rows in cells.items()
                  if batch == 1 and base in rows and "AD" in rows]  # fmt: skip
        if not ratios:
            continue
        low, high = min(ratios), max(ratios)
        where = ("inside" if lo <= low and high <= hi else "below" if high < lo else "above" if low > hi
                 else "overlapping")  # fmt: skip
        parts.append(f"over {base} {low:.2f}-{high:.2f}x, {where} the paper's {lo:.2f}-{hi:.2f}x")
    return ("AD's batch-1 latency speedup here: " + "; ".join(parts) + ".") if parts else ""


def render(data: dict[str, Any]) -> str:
    """Markdown of a :func:`compare`, :func:`dp_time` or :func:`rolling` result."""
    if data["kind"] == "atomic_dp_time":
        return (f"# DP speed: {data['workload']} batch {data['batch']} on {data['hardware']}\n\n"
                f"{data['n_atoms']:,} atoms, {data['n_edges']:,} edges ({data['atoms']} sizes); DP "
                f"{data['dp_median_s']:.1f} s median of {len(data['dp_s'])} ({data['mode']}, {data['states']:,} "
                f"states, {data['rounds']:,} rounds); building the atoms {data['instance_s']:.1f} s, placing and "
                f"buffering {data['place_and_buffer_s']:.1f} s, checking and evaluating "
                f"{data['check_and_evaluate_s']:.1f} s. {conditions_line(data['conditions'])}.\n")  # fmt: skip
    if data["kind"] == "atomic_rolling":
        c, d = data["cpsat"], data["dp"]
        gap = "-" if c["gap"] is None else f"{c['gap']:.1%}"
        return (f"# CP-SAT round model on {data['workload']} batch {data['batch']} ({data['n_atoms']:,} atoms)\n\n"
                f"DP: {d['latency_cycles']:,.0f} cycles in {d['runtime_s']:.1f} s ({d['note']}).\n\n"
                f"cpsat-rounds warm-started by it, {data['time_limit_s']:.0f} s: {c['status']}, "
                f"{c['latency_cycles']:,.0f} cycles, bound {c['bound_cycles']:,.0f}, gap {gap} "
                f"({c['note']}). The bound is on the rounds' compute latency, which transfers only lengthen: the "
                f"compute latency, {c['compute_latency_cycles']:,.0f} cycles, is {c['compute_gap']:.1%} above it. "
                f"{conditions_line(data['conditions'])}.\n")  # fmt: skip
    clock = data["clock_hz"]
    lines = [f"# Atomic Dataflow comparison on {data['hardware']} ({data['atoms']} atom sizes for AD)", "",
             "Batch 1: latency in ms; larger batches: throughput in samples/s. PE util = MACs over the engines' MAC "
             "slots during the run; NoC / HBM = share of the latency that mesh transfers / HBM transfers add; "
             "reuse = share of the bytes passed between atoms that stay on chip.", "",
             "| workload | batch | method | latency ms | samples/s | PE util | NoC | HBM | reuse | HBM MB | "
             "energy mJ | atoms | time s |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    cells: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    for r in data["rows"]:
        if "latency_cycles" not in r:
            lines.append(f"| {r['workload']} | {r['batch']} | {r['method']} | {r['status']}: {r['note']} |")
            continue
        cells.setdefault((r["workload"], r["batch"]), {})[r["method"]] = r
        lines.append(f"| {r['workload']} | {r['batch']} | {r['method']} | {r['latency_cycles'] / clock * 1e3:.2f} | "
                     f"{r['throughput_samples_per_s']:.1f} | {r['pe_utilization']:.1%} | {r['noc_overhead']:.1%} | "
                     f"{r['hbm_stall_share']:.1%} | {r['onchip_reuse']:.1%} | {r['hbm_bytes'] / 1e6:.1f} | "
                     f"{r['energy_pj'] / 1e9:.2f} | {r['atoms']:,} | {r['runtime_s']:.1f} |")  # fmt: skip
    lines += ["", "AD against each baseline (batch 1: latency speedup; larger batches: throughput gain):", "",
              "| workload | batch | vs LS | vs CNN-P | vs IL-Pipe |", "|---|---|---|---|---|"]  # fmt: skip
    for (workload, batch), rows in cells.items():
        key, higher = ("latency_cycles", False) if batch == 1 else ("throughput_samples_per_s", True)
        lines.append(f"| {workload} | {batch} | " + " | ".join(_ratio(rows, b, key, higher) for b in
                                                              ("LS", "CNN-P", "IL-Pipe")) + " |")  # fmt: skip
    lines += ["", _against_paper(cells), "", conditions_line(data.get("conditions", {})) + "."]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m accelsched.bench.atomic_tables", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("command", choices=["compare", "dp-time", "rolling", "render"])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--workload", default="resnet50")
    parser.add_argument("--batches", default="1,20")
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--hardware", default="atomic-8x8-kc")
    parser.add_argument("--atoms", default="exact", choices=["exact", "sa", "even"])
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "render":
        return render_command(parser, args.files, args.out, render)
    try:
        if args.command == "compare":
            batches = [int(b) for b in args.batches.split(",")]
            data = compare(args.workloads.split(","), batches, args.hardware, args.atoms,
                           args.time_limit or 600.0, args.out, args.resume, verbose=True)  # fmt: skip
        elif args.command == "dp-time":
            data = dp_time(args.workload, args.batch or 20, args.hardware, args.atoms, args.repeats, args.out)
        else:
            data = rolling(args.workload, args.batch or 1, args.hardware, args.atoms, args.time_limit or 60.0,
                           args.out)  # fmt: skip
    except ValueError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    print(render(data), end="")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(run_entry(main))
