"""Benchmarks of the depth-first problem (DeFiNES, HPCA'23).

Usage::

    python -m accelsched.bench.depth_first sweep [--workload fsrcnn] [--hardware defines-meta-proto-df]
                                                 [--sizes 6 | --paper] [--repeats 3] [--out FILE.json]
                                                 [--png-prefix PREFIX]
    python -m accelsched.bench.depth_first cases [--hardware defines-meta-proto-df]
                                                 [--workloads fsrcnn,dmcnn_vd,mccnn,...]
                                                 [--methods sl,lbl,fixed-df,single,auto,dp] [--time-limit S]
                                                 [--out FILE.json]
    python -m accelsched.bench.depth_first archs [--archs defines-ascend,...] [--workloads ...]
                                                 [--methods lbl,dp] [--time-limit S] [--out FILE.json] [--resume]
    python -m accelsched.bench.depth_first render FILE.json [FILE.json ...] [--out FILE.md] [--png-prefix PREFIX]

Every command takes ``--note TEXT``, stored in the JSON and printed by ``render``
(for the conditions of a run: a shared machine, a reduced workload list).

Protocols
---------
*sweep* (DeFiNES case study 1): the whole workload as one stack over a grid of tiles
x the three overlap modes, timed; protocol in :mod:`accelsched.bench.depth_first_sweep`.

*cases* (DeFiNES case study 2): per workload on ``--hardware`` with the energy
metric, the methods SL (``sl``), LBL (``lbl``), the fuse rule's stacks with fixed
fully-cached 4 x 72 tiles (``fixed-df``), with one strategy for all stacks
(``single``) and with the best strategy per stack (``auto``), and the exact best
over stacks x strategies (``dp``): energy, latency, DRAM bytes, status and time.
Each method runs on a fresh instance with the primitive cache cleared, so that
its time does not profit from an earlier method's pricing. Ratios are each
method's energy (latency) over the reference's, the reference being ``dp`` (or,
when ``dp`` found no solution, the method with the lowest energy, named in the
JSON); SL/dp is the gain of the best depth-first schedule over single-layer
execution. The paper's reported SL/best ratio is shown next to ours where the
project's notes give it (:data:`PAPER_SL_OVER_BEST`).

*archs* (DeFiNES case study 3): the ten ``defines-*`` presets (five
architectures and their depth-first-friendly ``-df`` variants; the ``-artifact``
readings of Ascend and TPU only when named in ``--archs``), per architecture
and workload LBL and the best depth-first schedule (``dp``), each on a fresh
instance with the primitive cache cleared; per architecture the geometric mean
over the workloads where both have a solution of LBL/DF energy and LBL/DF
latency (of the energy-optimal schedule), and per pair the DF-friendly gain, DF energy
on ``X`` over DF energy on ``X-df`` (:func:`accelsched.bench.depth_first_render.df_friendly_gains`;
DeFiNES' 6.0x / 4.3x for TPU-like / Edge-TPU-like is this ratio, not LBL/DF). A method
that hits ``--time-limit`` is kept with its status (``TIME_LIMIT_NO_SOLUTION``) and
left out of the geometric mean, which states over how many workloads it is taken. ``--resume`` reuses the rows already
in ``--out`` (written by the same depth-first code, checked by its fingerprint)
and runs only the missing (architecture, workload, method) triples, so that a
workload can be added to a finished run.

*render*: Markdown tables of any of the three JSON kinds; with ``--png-prefix``,
the heatmaps of a sweep result (the first file) redrawn from its JSON.

Every number comes from a solution that passed ``check`` and the shared
evaluator: the sweep calls them directly; ``cases`` and ``archs`` go through
:func:`accelsched.registry.run_method`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from collections.abc import Sequence
from typing import Any

from accelsched.bench.depth_first_render import PAPER_SL_OVER_BEST, ratio, render
from accelsched.bench.depth_first_sweep import (
    PROBLEM_NAME,
    code_fingerprint,
    conditions,
    plot_sweep,
    sweep,
)
from accelsched.entry import run_entry
from accelsched.hardware import load_accelerator, preset_names
from accelsched.hardware.cost.layer_cost import clear_cache
from accelsched.hardware.spec import Accelerator
from accelsched.models.registry import load_workload
from accelsched.models.workload import Workload
from accelsched.problems.depth_first import (
    DepthFirstSolution,
    make_instance,
)
from accelsched.registry import get_method, get_problem, run_method
from accelsched.solvers import SolveOptions

__all__ = [
    "ARCH_METHODS",
    "CASE_METHODS",
    "CASE_WORKLOADS",
    "archs",
    "cases",
    "default_archs",
    "main",
]

CASE_WORKLOADS = ("fsrcnn", "dmcnn_vd", "mccnn", "mobilenet_v1_defines", "resnet18_defines")
"""DeFiNES' five workloads at DeFiNES' sizes, as named in the zoo (not the 224x224 ``mobilenet_v1`` / ``resnet18``)."""


def default_archs() -> list[str]:
    """The ten architectures of case study 3: every ``defines-*`` preset but the ``-artifact`` readings."""
    return [n for n in preset_names() if n.startswith("defines-") and not n.endswith("-artifact")]

CASE_METHODS = ("sl", "lbl", "fixed-df", "single", "auto", "dp")
"""Methods of case study 2, baselines first, the exact reference last."""

ARCH_METHODS = ("lbl", "dp")
"""Methods of case study 3: layer-by-layer and the best depth-first schedule."""

# ----------------------------------------------------------------------------- cases and archs


def _describe(solution: DepthFirstSolution | None) -> list[dict[str, Any]] | None:
    """Stacks of a solution in short form: first and last layer, layer count, strategy."""
    if solution is None:
        return None
    return [{"first": s.layers[0], "last": s.last, "layers": len(s.layers), **s.strategy.to_dict()}
            for s in solution.stacks]  # fmt: skip


def _run_one(net: Workload, accelerator: Accelerator, method: str, limit: float | None) -> dict[str, Any]:
    """One method on a fresh instance with the primitive cache cleared, through ``run_method``."""
    problem = get_problem(PROBLEM_NAME)
    clear_cache()
    instance = make_instance(net, accelerator, {})
    start = time.perf_counter()
    try:
        result = run_method(problem, instance, get_method(PROBLEM_NAME, method), SolveOptions(time_limit_s=limit))
    except Exception as exc:  # a failing method is reported with its error, never dropped
        return {"method": method, "status": "ERROR", "objective": None, "energy_pj": None, "latency_cycles": None,
                "dram_bytes": None, "runtime_s": time.perf_counter() - start, "stacks": None,
                "note": f"{type(exc).__name__}: {exc}"}  # fmt: skip
    cost = result.cost
    return {"method": method, "status": result.status.name, "objective": result.objective,
            "energy_pj": cost.energy_pj if cost else None, "latency_cycles": cost.latency_cycles if cost else None,
            "dram_bytes": cost.dram_bytes if cost else None, "runtime_s": result.runtime_s,
            "stacks": _describe(result.solution), "note": result.stats.native_status}  # fmt: skip


def _reference(rows: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``dp`` row when it has a solution, else the row with the lowest energy (None when no row has one)."""
    solved = [r for r in rows if r["energy_pj"] is not None]
    dp = [r for r in solved if r["method"] == "dp"]
    if dp:
        return dp[0]
    return min(solved, key=lambda r: r["energy_pj"], default=None)


def _add_ratios(rows: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Set ``energy_over_ref`` and ``latency_over_ref`` on every solved row; return the reference row."""
    ref = _reference(rows)
    for r in rows:
        r["reference"] = ref["method"] if ref else None
        solved = ref is not None and r["energy_pj"] is not None
        r["energy_over_ref"] = r["energy_pj"] / ref["energy_pj"] if solved else None  # type: ignore[index]
        r["latency_over_ref"] = r["latency_cycles"] / ref["latency_cycles"] if solved else None  # type: ignore[index]
    return ref


def _print_row(prefix: str, row: dict[str, Any]) -> None:
    energy = f"{row['energy_pj']:12.4g} pJ" if row["energy_pj"] is not None else f"{'-':>15}"
    latency = f"{row['latency_cycles']:12.4g} cycles" if row["latency_cycles"] is not None else f"{'-':>19}"
    print(f"    {prefix}{row['method']:<9} {row['status']:<23} {energy} {latency} {row['runtime_s']:8.1f} s",
          flush=True)  # fmt: skip


def cases(
    workloads: Sequence[str],
    hardware: str,
    methods: Sequence[str] = CASE_METHODS,
    limit: float | None = None,
    out: str | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """Case study 2 (module docstring); ``out`` is rewritten after each workload."""
    accelerator = load_accelerator(hardware)
    rows: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    result: dict[str, Any] = {}
    for name in workloads:
        net = load_workload(name)
        print(f"  {name} ({len(net.names)} layers) on {hardware}:", flush=True)
        block = []
        for method in methods:
            row = {"workload": name, **_run_one(net, accelerator, method, limit)}
            _print_row("", row)
            block.append(row)
        ref = _add_ratios(block)
        rows += block
        sl = next((r for r in block if r["method"] == "sl" and r["energy_pj"] is not None), None)
        summary.append({"workload": name, "reference": ref["method"] if ref else None,
                        "sl_over_ref_energy": sl["energy_over_ref"] if sl else None,
                        "paper_sl_over_best": PAPER_SL_OVER_BEST.get(name)})  # fmt: skip
        result = {"kind": "cases", "hardware": hardware, "metric": "energy", "methods": list(methods),
                  "time_limit_s": limit, "note": note, **conditions(), "summary": summary, "rows": rows}  # fmt: skip
        if out:
            _save(result, out)
    return result


def _geomean(values: Sequence[float]) -> float | None:
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None


def _arch_geomeans(rows: Sequence[dict[str, Any]], hardware: str, df: str) -> dict[str, Any]:
    """Geometric means over workloads of LBL/DF energy and latency on one architecture."""
    per_workload = []
    for name in dict.fromkeys(r["workload"] for r in rows if r["hardware"] == hardware):
        lbl = next((r for r in rows if (r["hardware"], r["workload"], r["method"]) == (hardware, name, "lbl")), None)
        best = next((r for r in rows if (r["hardware"], r["workload"], r["method"]) == (hardware, name, df)), None)
        if lbl and best and lbl["energy_pj"] is not None and best["energy_pj"] is not None:
            per_workload.append((name, lbl["energy_pj"] / best["energy_pj"],
                                 lbl["latency_cycles"] / best["latency_cycles"]))  # fmt: skip
    return {"hardware": hardware, "df_method": df, "workloads": [w for w, _, _ in per_workload],
            "lbl_over_df_energy": {w: e for w, e, _ in per_workload},
            "lbl_over_df_latency": {w: lat for w, _, lat in per_workload},
            "geomean_lbl_over_df_energy": _geomean([e for _, e, _ in per_workload]),
            "geomean_lbl_over_df_latency": _geomean([lat for _, _, lat in per_workload])}  # fmt: skip


def archs(
    architectures: Sequence[str],
    workloads: Sequence[str],
    methods: Sequence[str] = ARCH_METHODS,
    limit: float | None = None,
    out: str | None = None,
    note: str | None = None,
    previous: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """Case study 3 (module docstring); ``out`` is rewritten after each (architecture, workload).

    ``previous`` rows (of an earlier run on the same code, see ``--resume``) are
    reused for the (architecture, workload, method) they cover, marked
    ``"reused": true``; everything else is run.
    """
    if "lbl" not in methods or len(methods) < 2:
        raise ValueError("archs: methods must contain lbl and at least one depth-first method")
    df = "dp" if "dp" in methods else [m for m in methods if m != "lbl"][-1]
    nets = {name: load_workload(name) for name in workloads}
    done = {(r["hardware"], r["workload"], r["method"]): r for r in previous}
    rows: list[dict[str, Any]] = []
    result: dict[str, Any] = {}
    for hardware in architectures:
        accelerator = load_accelerator(hardware)
        print(f"  {hardware}:", flush=True)
        for name, net in nets.items():
            block = []
            for m in methods:
                old = done.get((hardware, name, m))
                if old is not None:
                    block.append({**old, "reused": True})
                else:
                    block.append({"hardware": hardware, "workload": name, **_run_one(net, accelerator, m, limit)})
            _add_ratios(block)
            for row in block:
                _print_row(f"{name:<13} {'(reused) ' if row.get('reused') else ''}", row)
            rows += block
            geomeans = [_arch_geomeans(rows, h, df) for h in dict.fromkeys(r["hardware"] for r in rows)]
            result = {"kind": "archs", "architectures": list(architectures), "workloads": list(workloads),
                      "metric": "energy", "methods": list(methods), "df_method": df, "time_limit_s": limit,
                      "note": note, **conditions(), "geomeans": geomeans, "rows": rows}  # fmt: skip
            if out:
                _save(result, out)
    return result


def _save(result: dict[str, Any], path: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
        handle.write("\n")


# ----------------------------------------------------------------------------- CLI


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one benchmark, print its figures, optionally save them."""
    parser = argparse.ArgumentParser(
        prog="python -m accelsched.bench.depth_first",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("what", choices=["sweep", "cases", "archs", "render"])
    parser.add_argument("files", nargs="*", help="render: result files (JSON)")
    parser.add_argument("--workload", default="fsrcnn", help="sweep: the workload")
    parser.add_argument("--workloads", default=",".join(CASE_WORKLOADS), help="cases, archs: workloads")
    parser.add_argument("--hardware", default="defines-meta-proto-df", help="sweep, cases: the accelerator")
    parser.add_argument("--archs", default=None, help="archs: accelerators (default: every defines-* preset)")
    grid = parser.add_mutually_exclusive_group()
    grid.add_argument("--sizes", type=int, default=6, help="sweep: geometric tile sizes per axis")
    grid.add_argument("--paper", action="store_true", help="sweep: the 11 x 10 halving grid instead")
    parser.add_argument("--repeats", type=int, default=3, help="sweep: timed repeats")
    parser.add_argument("--methods", default=None, help="cases, archs: methods (default sl,...,dp / lbl,dp)")
    parser.add_argument("--time-limit", type=float, default=None, help="cases, archs: seconds per method")
    parser.add_argument(
        "--png-prefix", default=None, help="sweep, render: write PREFIX_energy.png and PREFIX_latency.png"
    )
    parser.add_argument("--resume", action="store_true",
                        help="archs: reuse the rows of --out (same code) and run only what is missing")  # fmt: skip
    parser.add_argument("--note", default=None, help="free text stored in the JSON (run conditions)")
    parser.add_argument("--out", default=None, help="JSON (or Markdown for render) to write")
    args = parser.parse_args(argv)
    if args.what == "render":
        if not args.files:
            parser.error("render needs at least one JSON file")
        markdown = render(args.files)
        print(markdown)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as handle:
                handle.write(markdown)
        if args.png_prefix:  # redraw the heatmaps of a sweep result
            with open(args.files[0], encoding="utf-8") as handle:
                data = json.load(handle)
            if data.get("kind") != "sweep":
                parser.error("render --png-prefix needs a sweep result as the first file")
            for path in plot_sweep(data, args.png_prefix):
                print(f"heatmap written to {path}")
        return 0
    if args.what == "sweep":
        result = sweep(args.workload, args.hardware, args.sizes, args.paper, args.repeats)
        if args.note:
            result["note"] = args.note
        best = result["best"]["energy_pj"]
        print(f"{args.workload} on {args.hardware}: {result['n_points']} points, median "
              f"{result['median_total_s']:.2f} s "
              f"({result['median_per_point_ms']:.1f} ms per point); best energy {best['energy_pj']:.4g} pJ at "
              f"{best['tile_x']}x{best['tile_y']} {best['mode']}")  # fmt: skip
        if args.png_prefix:
            for path in plot_sweep(result, args.png_prefix):
                print(f"heatmap written to {path}")
    elif args.what == "cases":
        methods = _split(args.methods) if args.methods else list(CASE_METHODS)
        result = cases(_split(args.workloads), args.hardware, methods, args.time_limit, args.out, args.note)
    else:
        methods = _split(args.methods) if args.methods else list(ARCH_METHODS)
        names = _split(args.archs) if args.archs else default_archs()
        previous: list[dict[str, Any]] = []
        if args.resume and args.out and os.path.exists(args.out):
            with open(args.out, encoding="utf-8") as handle:
                earlier = json.load(handle)
            if (
                earlier.get("kind") != "archs"
                or earlier.get("code", {}).get("sources_sha256") != code_fingerprint()["sources_sha256"]
            ):
                parser.error(f"--resume: {args.out} is not an archs result of the current depth-first code")
            previous = earlier["rows"]
            print(f"  reusing {len(previous)} rows of {args.out}", flush=True)
        result = archs(names, _split(args.workloads), methods, args.time_limit, args.out, args.note, previous)
        for g in result["geomeans"]:
            print(f"  {g['hardware']:<24} LBL/DF geomean energy {ratio(g['geomean_lbl_over_df_energy'])}, "
                  f"latency {ratio(g['geomean_lbl_over_df_latency'])} over {len(g['workloads'])} "
                  "workloads")  # fmt: skip
    if args.out:
        _save(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(run_entry(main))
