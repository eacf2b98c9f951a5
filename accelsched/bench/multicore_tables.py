"""Stream reproduction tables: architectures x workloads (LBL vs fused) and manual vs GA allocation.

Usage::

    python -m accelsched.bench.multicore_tables archs [--archs stream-sc-tpu,...] [--workloads resnet18,...]
                                                      [--method ga] [--time-limit S] [--seed 0] [--out FILE.json]
    python -m accelsched.bench.multicore_tables fig12 [--workload resnet18] [--archs stream-mc-homtpu,stream-mc-hetero]
                                                      [--time-limit S] [--seed 0] [--out FILE.json]
    python -m accelsched.bench.multicore_tables render FILE.json [--out FILE.md]

Protocols
---------
*archs* (Stream's architecture exploration): for every architecture (the seven
``stream-*`` presets by default) and workload (ResNet-18, MobileNetV2, SqueezeNet,
Tiny-YOLO, FSRCNN by default), the best EDP found at layer-by-layer granularity
and at fused granularity (one CN per output row, the automatic layer stacks of
:func:`accelsched.problems.multicore.auto_stacks`), latency priority. The
allocation is searched by ``--method`` (the GA by default) on the multi-core
presets; on a single-core preset there is one allocation (compute layers on the
compute core, pooling and element-wise layers on the SIMD core) and ``manual``
finds it. Per architecture the geometric mean over the workloads of LBL EDP / fused
EDP is set beside the figures of Stream's arXiv v1 abstract (2.4x on single-core, up to
30x on the heterogeneous multi-core; none for the homogeneous multi-cores).

*fig12* (Stream's Fig. 12): one workload at fused granularity on the homogeneous
and the heterogeneous quad-cores, with the latency and the memory priority, the
manual allocation against the GA's (objective EDP): latency, energy, EDP and peak
memory of each.

Every number comes from :func:`accelsched.registry.run_method`: the schedule passed
the problem's ``check`` and was re-evaluated by the shared cost model.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from typing import Any

from accelsched.bench.conditions import conditions_line, machine_conditions
from accelsched.bench.files import render_command, write_json
from accelsched.entry import run_entry
from accelsched.hardware import load_accelerator, preset_names
from accelsched.models.registry import load_workload
from accelsched.problems.multicore import PROBLEM, make_instance
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions

__all__ = ["PAPER_RANGES", "archs", "fig12", "main", "render"]

WORKLOADS = ("resnet18", "mobilenet_v2", "squeezenet", "tiny_yolo", "fsrcnn")
"""Stream's five workloads."""

PAPER_RANGES = {"single": "2.4x (v1)", "homogeneous": "not printed", "heterogeneous": "up to 30x (v1)"}
"""LBL / fused EDP gains Stream reports per architecture class: the abstract of arXiv 2212.10612v1 (v2's
abstract prints "up to 2.2x lower EDP" instead); no homogeneous multi-core figure is printed there."""


def _class(accelerator_name: str) -> str:
    acc = load_accelerator(accelerator_name)
    compute = [c for c in acc.cores if any(k.has_w_operand for k in c.supported)]
    if len(compute) == 1:
        return "single"
    return "homogeneous" if len({c.cost_key() for c in compute}) == 1 else "heterogeneous"


def _run(
    workload: str, hardware: str, options: dict[str, str], method: str, limit: float | None, seed: int
) -> dict[str, Any]:
    instance = make_instance(load_workload(workload), load_accelerator(hardware), options)
    start = time.perf_counter()
    result = run_method(PROBLEM, instance, get_method("multicore", method), SolveOptions(time_limit_s=limit, seed=seed))
    row: dict[str, Any] = {"workload": workload, "hardware": hardware, "method": method, **options,
                           "cns": len(instance.graph.cns), "status": result.status.name,
                           "time_s": time.perf_counter() - start}  # fmt: skip
    if result.cost is not None:
        row.update(latency_cycles=result.cost.latency_cycles, energy_pj=result.cost.energy_pj, edp=result.cost.edp,
                   dram_bytes=result.cost.dram_bytes, peak_memory_bytes=result.cost.peak_memory_bytes)  # fmt: skip
    return row


def archs(
    architectures: Sequence[str],
    workloads: Sequence[str],
    method: str,
    limit: float | None,
    seed: int,
    out: str | None = None,
) -> dict[str, Any]:
    """The architecture exploration of the module docstring; ``out`` is rewritten after each cell."""
    rows: list[dict[str, Any]] = []
    result: dict[str, Any] = {}
    for hardware in architectures:
        kind = _class(hardware)
        chosen = "manual" if kind == "single" else method
        for name in workloads:
            for granularity in ("layer", "fused"):
                options = {"granularity": granularity, "objective": "edp"}
                if granularity == "fused":
                    options["stacks"] = "auto"
                row = _run(name, hardware, options, chosen, limit, seed)
                print(f"  {hardware:<18} {name:<13} {granularity:<6} {row['status']:<10} "
                      f"EDP {row.get('edp', math.nan):.4g}  {row['time_s']:.1f} s", flush=True)  # fmt: skip
                rows.append(row)
        result = {"kind": "archs", "method": method, "time_limit_s": limit, "seed": seed, "rows": rows,
                  "summary": _summary(rows), "conditions": machine_conditions()}  # fmt: skip
        if out:
            write_json(out, result)
    return result


def _summary(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per architecture: LBL / fused EDP per workload and the geometric mean."""
    out = []
    for hardware in dict.fromkeys(r["hardware"] for r in rows):
        ratios = {}
        for r in rows:
            if r["hardware"] != hardware or r["granularity"] != "layer" or "edp" not in r:
                continue
            fused = [f for f in rows if f["hardware"] == hardware and f["workload"] == r["workload"]
                     and f["granularity"] == "fused" and "edp" in f]  # fmt: skip
            if fused:
                ratios[r["workload"]] = r["edp"] / fused[0]["edp"]
        geomean = math.exp(sum(map(math.log, ratios.values())) / len(ratios)) if ratios else None
        kind = _class(hardware)
        out.append({"hardware": hardware, "class": kind, "lbl_over_fused_edp": ratios, "geomean": geomean,
                    "paper": PAPER_RANGES[kind]})  # fmt: skip
    return out


def fig12(
    workload: str, architectures: Sequence[str], limit: float | None, seed: int, out: str | None
) -> dict[str, Any]:
    """Manual vs GA allocation, both priorities, on each architecture (fused granularity, objective EDP)."""
    rows = []
    for hardware in architectures:
        for priority in ("latency", "memory"):
            options = {"granularity": "fused", "stacks": "auto", "priority": priority, "objective": "edp"}
            for method in ("manual", "ga"):
                row = _run(workload, hardware, options, method, limit, seed)
                print(f"  {hardware:<18} {priority:<8} {method:<7} latency {row.get('latency_cycles', math.nan):.4g} "
                      f"energy {row.get('energy_pj', math.nan):.4g}  {row['time_s']:.1f} s", flush=True)  # fmt: skip
                rows.append(row)
    result = {"kind": "fig12", "workload": workload, "time_limit_s": limit, "seed": seed, "rows": rows,
              "conditions": machine_conditions()}  # fmt: skip
    if out:
        write_json(out, result)
    return result


def _g(value: float | None) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3g}"


def render(data: dict[str, Any]) -> str:
    """Markdown of an ``archs`` or ``fig12`` result."""
    lines = ["# Stream (multicore) benchmarks", ""]
    if data["kind"] == "archs":
        workloads = list(dict.fromkeys(r["workload"] for r in data["rows"]))
        lines += [f"## Architectures x workloads: best EDP, layer-by-layer (LBL) vs fused (allocation by "
                  f"`{data['method']}`, seed {data['seed']}, time limit {data['time_limit_s']} s per run)", "",
                  "LBL EDP / fused EDP per workload and their geometric mean, beside Stream's reported range.", "",
                  f"| architecture | class | {' | '.join(workloads)} | geomean | Stream |",
                  "|---|---|" + "---|" * len(workloads) + "---|---|"]  # fmt: skip
        for s in data["summary"]:
            cells = " | ".join(_g(s["lbl_over_fused_edp"].get(w)) for w in workloads)
            lines.append(f"| {s['hardware']} | {s['class']} | {cells} | {_g(s['geomean'])} | {s['paper']} |")
        lines += ["", "| architecture | workload | granularity | method | CNs | status | latency cycles | energy uJ | "
                  "EDP pJ*cycles | DRAM MB | peak kB | time s |", "|---" * 12 + "|"]  # fmt: skip
        for r in data["rows"]:
            lines.append(_row(r, (r["hardware"], r["workload"], r["granularity"], r["method"], r["cns"])))
    else:
        lines += [f"## Manual vs GA allocation: {data['workload']}, fused, objective EDP (seed {data['seed']}, "
                  f"time limit {data['time_limit_s']} s per run)", "",
                  "| architecture | priority | method | CNs | status | latency cycles | energy uJ | EDP pJ*cycles | "
                  "DRAM MB | peak kB | time s |", "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for r in data["rows"]:
            lines.append(_row(r, (r["hardware"], r["priority"], r["method"], r["cns"])))
    lines += ["", f"Conditions: {conditions_line(data['conditions'])} when written. Every number is from a "
              "schedule that passed `check` and the shared evaluator."]  # fmt: skip
    return "\n".join(lines) + "\n"


def _row(r: dict[str, Any], head: tuple[Any, ...]) -> str:
    energy = r.get("energy_pj")
    dram = r.get("dram_bytes")
    peak = r.get("peak_memory_bytes")
    return (f"| {' | '.join(map(str, head))} | {r['status']} | {_g(r.get('latency_cycles'))} | "
            f"{_g(energy / 1e6 if energy is not None else None)} | {_g(r.get('edp'))} | "
            f"{_g(dram / 1e6 if dram is not None else None)} | {_g(peak / 1e3 if peak is not None else None)} | "
            f"{r['time_s']:.1f} |")  # fmt: skip


def _split(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m accelsched.bench.multicore_tables", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("command", choices=["archs", "fig12", "render"])
    parser.add_argument("files", nargs="*", help="render: a JSON result")
    parser.add_argument("--archs", default=None)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--workload", default="resnet18")
    parser.add_argument("--method", default="ga")
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    if args.time_limit is not None and not args.time_limit > 0:
        parser.error(f"--time-limit must be > 0, got {args.time_limit}")
    if args.command == "render":
        return render_command(parser, args.files, args.out, render)
    if args.command == "archs":
        names = _split(args.archs) if args.archs else [n for n in preset_names() if n.startswith("stream-")]
        result = archs(names, _split(args.workloads), args.method, args.time_limit, args.seed, args.out)
        for s in result["summary"]:
            print(f"  {s['hardware']:<18} LBL/fused EDP geomean {_g(s['geomean'])} (Stream: {s['paper']})")
        return 0
    names = _split(args.archs) if args.archs else ["stream-mc-homtpu", "stream-mc-hetero"]
    fig12(args.workload, names, args.time_limit, args.seed, args.out)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(run_entry(main))
