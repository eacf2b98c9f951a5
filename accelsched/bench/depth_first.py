"""Benchmarks of the depth-first problem (DeFiNES, HPCA'23).

Usage::

    python -m accelsched.bench.depth_first sweep [--workload fsrcnn] [--hardware defines-meta-proto-df]
                                                 [--sizes 6 | --paper] [--repeats 3] [--out FILE.json]
                                                 [--png-prefix PREFIX]
    python -m accelsched.bench.depth_first cases [--hardware defines-meta-proto-df]
                                                 [--workloads fsrcnn,dmcnn_vd,mccnn,mobilenet_v1,resnet18]
                                                 [--methods sl,lbl,fixed-df,single,auto,dp] [--time-limit S]
                                                 [--out FILE.json]
    python -m accelsched.bench.depth_first archs [--archs defines-ascend,...] [--workloads ...]
                                                 [--methods lbl,dp] [--time-limit S] [--out FILE.json] [--resume]
    python -m accelsched.bench.depth_first render FILE.json [FILE.json ...] [--out FILE.md] [--png-prefix PREFIX]

Every command takes ``--note TEXT``, stored in the JSON and printed by ``render``
(for the conditions of a run: a shared machine, a reduced workload list).

Protocols
---------
*sweep* (DeFiNES case study 1): the whole workload as ONE stack, every tile of a
grid x the three overlap modes (fully-recompute, h-cached, fully-cached). The
grid is the last layer's output ``OX x OY`` cut

* by default (``--sizes N``, N = 6): ``geometric_sizes(OX, N) x
  geometric_sizes(OY, N)`` (:func:`accelsched.formulations.depth_first_dp.geometric_sizes`,
  N sizes from the extent down to 1, evenly spaced in log scale, the DP's grid);
  for FSRCNN (960 x 540) x = 960, 243, 62, 16, 4, 1 and y = 540, 153, 44, 12, 4, 1:
  36 tiles x 3 modes = 108 points;
* with ``--paper``: :func:`halving_sizes` of each axis, the extent halved
  k = 0, 1, ... times, rounded half up, at least 1, until the quotient is at most
  1, duplicates merged; for FSRCNN x = 960, 480, 240, 120, 60, 30, 15, 8, 4, 2, 1
  (11 sizes) and y = 540, 270, 135, 68, 34, 17, 8, 4, 2, 1 (10 sizes, 1.05 and
  0.53 both round to 1): a 110-tile grid x 3 modes = 330 points.

Each point is a one-stack solution, passed through the problem's ``check`` and
priced by the shared evaluator (the problem's ``evaluate``, as
:func:`accelsched.registry.run_method` does). The whole sweep is timed
``--repeats`` times, each repeat with the per-layer primitive cache cleared
(:func:`accelsched.hardware.cost.layer_cost.clear_cache`) and a fresh instance
(empty evaluator cache) built inside the timed region; the median total seconds
and the median per point are reported (the must-hold: at most 10 s for the 108
points on 2 cores). The repeats must agree exactly (the evaluator is
deterministic). ``--png-prefix P`` draws ``P_energy.png`` and ``P_latency.png``:
one panel per mode, tile_x on x and tile_y on y as categorical axes (log-spaced
for these grids), one shared logarithmic colour scale, the best point of the three
panels marked with a star, each panel's best with a red frame.

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
architectures and their depth-first-friendly ``-df`` variants), per architecture
and workload LBL and the best depth-first schedule (``dp``), each on a fresh
instance with the primitive cache cleared; per architecture the geometric mean
over the workloads where both have a solution of LBL/DF energy and LBL/DF
latency (of the energy-optimal schedule). The paper reports gains of up to 6.0x
on the DF-friendly variants. A method that hits ``--time-limit`` is kept with its
status (``TIME_LIMIT_NO_SOLUTION``) and left out of the geometric mean, which
states over how many workloads it is taken. ``--resume`` reuses the rows already
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
import hashlib
import json
import math
import os
import statistics
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from accelsched.bench.conditions import machine_conditions
from accelsched.entry import run_entry
from accelsched.errors import InputError
from accelsched.formulations.depth_first_dp import geometric_sizes
from accelsched.hardware import load_accelerator, preset_names
from accelsched.hardware.cost.depth_first import single_stack_solution
from accelsched.hardware.cost.layer_cost import clear_cache
from accelsched.hardware.spec import Accelerator
from accelsched.models.registry import load_workload
from accelsched.models.workload import Workload
from accelsched.problems.depth_first import DepthFirstSolution, OverlapMode, Strategy, make_instance
from accelsched.registry import get_method, get_problem, run_method
from accelsched.solvers import SolveOptions

__all__ = [
    "ARCH_METHODS",
    "CASE_METHODS",
    "CASE_WORKLOADS",
    "PAPER_SL_OVER_BEST",
    "archs",
    "cases",
    "halving_sizes",
    "main",
    "plot_sweep",
    "render",
    "sweep",
]

PROBLEM_NAME = "depth-first"

CASE_WORKLOADS = ("fsrcnn", "dmcnn_vd", "mccnn", "mobilenet_v1", "resnet18")
"""DeFiNES' five workloads, as named in the zoo."""

CASE_METHODS = ("sl", "lbl", "fixed-df", "single", "auto", "dp")
"""Methods of case study 2, baselines first, the exact reference last."""

ARCH_METHODS = ("lbl", "dp")
"""Methods of case study 3: layer-by-layer and the best depth-first schedule."""

PAPER_SL_OVER_BEST: dict[str, str] = {
    "fsrcnn": "~10x",
    "dmcnn_vd": "~10x",
    "mccnn": "~10x",
    "mobilenet_v1": "5.7x",
}
"""DeFiNES' reported energy gain of the best depth-first schedule over SL (case study 2), as the project's notes
quote it: about 10x on the activation-heavy networks, 5.7x on MobileNetV1; none given for ResNet-18."""

PAPER_ARCH_GAIN = "up to 6.0x"
"""DeFiNES' reported gain of depth-first over LBL on the DF-friendly architectures (case study 3)."""

METHOD_LABELS = {"sl": "SL", "lbl": "LBL", "fixed-df": "fixed DF 4x72", "single": "single strategy",
                 "auto": "fuse rule + best per stack", "dp": "best (exact DP)"}  # fmt: skip


# ----------------------------------------------------------------------------- sweep


def halving_sizes(extent: int) -> tuple[int, ...]:
    """Tile sizes of the ``--paper`` grid: ``extent / 2**k`` for k = 0, 1, ..., rounded half up.

    Stops at the first quotient at most 1; every size is at least 1; duplicates are
    merged; largest first. FSRCNN's 960 gives 11 sizes (960 ... 8, 4, 2, 1), its 540
    gives 10 (540, 270, 135, 68, 34, 17, 8, 4, 2, 1).
    """
    if extent < 1:
        raise ValueError(f"halving_sizes: extent must be positive, got {extent}")
    sizes: set[int] = set()
    k = 0
    while True:
        quotient = extent / 2**k
        sizes.add(max(1, math.floor(quotient + 0.5)))
        if quotient <= 1:
            break
        k += 1
    return tuple(sorted(sizes, reverse=True))


SOURCES = (
    "accelsched/problems/depth_first.py",
    "accelsched/hardware/cost/depth_first.py",
    "accelsched/hardware/cost/depth_first_tiles.py",
    "accelsched/hardware/cost/layer_cost.py",
    "accelsched/formulations/depth_first_dp.py",
    "accelsched/heuristics/depth_first_rules.py",
)
"""The code a depth-first number depends on, fingerprinted in every result."""


def _code() -> dict[str, Any]:
    """Fingerprint of :data:`SOURCES` (SHA-256 of their contents) and, where git is at hand, the commit."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for name in SOURCES:
        path = root / name
        digest.update(path.read_bytes() if path.exists() else b"")
    code: dict[str, Any] = {"sources_sha256": digest.hexdigest()[:16], "git_commit": None, "sources_modified": None}
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10, check=True)  # fmt: skip
        status = subprocess.run(["git", "status", "--porcelain", "--", *SOURCES], cwd=root, capture_output=True,
                                text=True, timeout=10, check=True)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return code
    code["git_commit"] = head.stdout.strip()
    code["sources_modified"] = bool(status.stdout.strip())
    return code


def _conditions() -> dict[str, Any]:
    """The machine conditions and code fingerprint recorded with every result."""
    return {**machine_conditions(), "code": _code()}


def sweep(workload: str, hardware: str, sizes: int | None = 6, paper: bool = False, repeats: int = 3) -> dict[str, Any]:
    """Time and price the one-stack sweep of the module docstring.

    Parameters
    ----------
    workload, hardware
        Zoo name (or file) of the workload, preset name (or file) of the accelerator.
    sizes
        Tile sizes per axis of the geometric grid (ignored with ``paper``).
    paper
        Use the halving grid (:func:`halving_sizes`) instead.
    repeats
        Timed passes over the whole sweep; the median is reported.

    Returns
    -------
    dict
        Conditions, timing (``median_total_s``, ``median_per_point_ms``, ``runs_s``)
        and ``points`` (tile_x, tile_y, mode, energy_pj, latency_cycles, dram_bytes,
        peak_memory_bytes, macs).
    """
    if repeats < 1:
        raise ValueError(f"sweep: repeats must be at least 1, got {repeats}")
    problem = get_problem(PROBLEM_NAME)
    net = load_workload(workload)
    accelerator = load_accelerator(hardware)
    last = net[net.names[-1]]
    if paper:
        grid = "paper"
        sizes_x, sizes_y = halving_sizes(last.OX), halving_sizes(last.OY)
    else:
        if sizes is None or sizes < 1:
            raise ValueError(f"sweep: sizes must be at least 1, got {sizes}")
        grid = f"geometric {sizes}"
        sizes_x, sizes_y = geometric_sizes(last.OX, sizes), geometric_sizes(last.OY, sizes)
    strategies = [Strategy(x, y, mode) for mode in OverlapMode for y in sizes_y for x in sizes_x]
    conditions = _conditions()
    runs_s: list[float] = []
    points: list[dict[str, Any]] = []
    for repeat in range(repeats):
        clear_cache()
        start = time.perf_counter()
        instance = make_instance(net, accelerator, {})
        layers = instance.order
        rows = []
        for strategy in strategies:
            solution = single_stack_solution(layers, strategy)
            problem.check(instance, solution)
            report = problem.evaluate(instance, solution)
            rows.append({"tile_x": strategy.tile_x, "tile_y": strategy.tile_y, "mode": strategy.mode.value,
                         "energy_pj": report.energy_pj, "latency_cycles": report.latency_cycles,
                         "dram_bytes": report.dram_bytes, "peak_memory_bytes": report.peak_memory_bytes,
                         "macs": report.macs})  # fmt: skip
        runs_s.append(time.perf_counter() - start)
        if repeat and rows != points:
            raise AssertionError("sweep: two repeats priced the same points differently (non-deterministic evaluator)")
        points = rows
        print(f"  repeat {repeat + 1}/{repeats}: {len(rows)} points in {runs_s[-1]:.2f} s", flush=True)
    median = statistics.median(runs_s)
    best = {
        metric: min(points, key=lambda p, m=metric: p[m])  # type: ignore[misc]
        for metric in ("energy_pj", "latency_cycles")
    }
    return {"kind": "sweep", "workload": workload, "hardware": hardware, "layers": len(net.names),
            "output_x": last.OX, "output_y": last.OY, "grid": grid, "sizes_x": list(sizes_x),
            "sizes_y": list(sizes_y), "modes": [m.value for m in OverlapMode], "n_points": len(points),
            "repeats": repeats, "cache": "fresh instance and layer_cost.clear_cache() per repeat",
            "runs_s": runs_s, "median_total_s": median, "median_per_point_ms": median / len(points) * 1e3,
            "best": best, **conditions, "points": points}  # fmt: skip


def _grid(data: dict[str, Any], mode: str, metric: str) -> list[list[float]]:
    """``metric`` of ``mode`` as rows of tile_y (ascending) x columns of tile_x (ascending)."""
    xs, ys = sorted(data["sizes_x"]), sorted(data["sizes_y"])
    value = {(p["tile_x"], p["tile_y"]): p[metric] for p in data["points"] if p["mode"] == mode}
    return [[value[(x, y)] for x in xs] for y in ys]


def plot_sweep(data: dict[str, Any], prefix: str) -> list[str]:
    """Draw ``PREFIX_energy.png`` and ``PREFIX_latency.png`` from a sweep result (matplotlib, imported here).

    Returns
    -------
    list of str
        The paths written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Rectangle
    from matplotlib.ticker import FuncFormatter

    xs, ys = sorted(data["sizes_x"]), sorted(data["sizes_y"])
    annotate = len(xs) <= 8 and len(ys) <= 8
    paths = []
    panels = (("energy_pj", "energy", "mJ", 1e-9), ("latency_cycles", "latency", "M cycles", 1e-6))
    for metric, name, unit, scale in panels:
        grids = {mode: [[v * scale for v in row] for row in _grid(data, mode, metric)] for mode in data["modes"]}
        values = [v for g in grids.values() for row in g for v in row]
        norm = LogNorm(vmin=min(values), vmax=max(values))
        best = data["best"][metric]
        fig, axes = plt.subplots(1, len(grids), figsize=(4.6 * len(grids) + 1.2, 4.4), sharey=True)
        image = None
        for ax, (mode, g) in zip(axes, grids.items(), strict=True):
            image = ax.imshow(g, origin="lower", cmap="viridis", norm=norm, aspect="auto")
            ax.set_xticks(range(len(xs)), [str(x) for x in xs], rotation=45 if len(xs) > 8 else 0)
            ax.set_yticks(range(len(ys)), [str(y) for y in ys])
            ax.set_xlabel("tile_x (pixels)")
            ax.set_title(mode)
            if annotate:
                for i, row in enumerate(g):
                    for j, v in enumerate(row):
                        dark = norm(v) < 0.5
                        ax.text(j, i, f"{v:.0f}" if v >= 100 else f"{v:.3g}", ha="center", va="center", fontsize=7,
                                color="white" if dark else "black")  # fmt: skip
            _, low_i, low_j = min((v, i, j) for i, row in enumerate(g) for j, v in enumerate(row))
            ax.add_patch(
                Rectangle((low_j - 0.5, low_i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2.5, clip_on=False)
            )
            if mode == best["mode"]:
                ax.plot(xs.index(best["tile_x"]) - 0.3, ys.index(best["tile_y"]) + 0.28, "*", markersize=13,
                        color="red", markeredgecolor="white", markeredgewidth=0.7)  # fmt: skip
        axes[0].set_ylabel("tile_y (pixels)")
        assert image is not None
        bar = fig.colorbar(image, ax=list(axes), shrink=0.9, pad=0.02)
        bar.set_label(f"{name} ({unit}, log scale)")
        bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        bar.ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:g}"[0] in "1235" else ""))
        fig.suptitle(f"{data['workload']} as one stack of {data['layers']} layers on {data['hardware']}: {name}; "
                     f"best {best['tile_x']}x{best['tile_y']} {best['mode']} = {best[metric] * scale:.4g} {unit} "
                     "(star; red frame: best of the panel)", fontsize=10)  # fmt: skip
        path = f"{prefix}_{name}.png"
        fig.savefig(path, dpi=120, bbox_inches="tight")
        plt.close(fig)
        paths.append(path)
    return paths


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
                  "time_limit_s": limit, "note": note, **_conditions(), "summary": summary, "rows": rows}  # fmt: skip
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
                      "note": note, **_conditions(), "geomeans": geomeans, "rows": rows}  # fmt: skip
            if out:
                _save(result, out)
    return result


def _save(result: dict[str, Any], path: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
        handle.write("\n")


# ----------------------------------------------------------------------------- render


def _num(value: float | None, scale: float = 1.0, fmt: str = ".4g") -> str:
    return "-" if value is None else format(value * scale, fmt)


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _render_sweep(data: dict[str, Any]) -> list[str]:
    xs, ys = sorted(data["sizes_x"]), sorted(data["sizes_y"])
    grid = "halving (--paper)" if data["grid"] == "paper" else data["grid"]
    lines = [f"## Sweep: {data['workload']} as one stack of {data['layers']} layers on {data['hardware']}", "",
             f"Grid {grid}: tile_x in {', '.join(map(str, xs))}; tile_y in {', '.join(map(str, ys))}; "
             f"x {len(data['modes'])} modes = {data['n_points']} points. Timing ({data['cache']}): median "
             f"{data['median_total_s']:.2f} s for the sweep, {data['median_per_point_ms']:.1f} ms per point, over "
             f"{data['repeats']} repeats ({', '.join(f'{t:.2f}' for t in data['runs_s'])} s).", "",
             "| mode | best tile (energy) | energy mJ | its latency M cycles | best tile (latency) "
             "| latency M cycles |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for mode in data["modes"]:
        pts = [p for p in data["points"] if p["mode"] == mode]
        e = min(pts, key=lambda p: p["energy_pj"])
        lat = min(pts, key=lambda p: p["latency_cycles"])
        lines.append(f"| {mode} | {e['tile_x']}x{e['tile_y']} | {e['energy_pj'] / 1e9:.4g} | "
                     f"{e['latency_cycles'] / 1e6:.4g} | {lat['tile_x']}x{lat['tile_y']} | "
                     f"{lat['latency_cycles'] / 1e6:.4g} |")  # fmt: skip
    for metric, unit, scale in (("energy_pj", "mJ", 1e-9), ("latency_cycles", "M cycles", 1e-6)):
        for mode in data["modes"]:
            lines += ["", f"{metric.split('_')[0]} ({unit}), {mode}: rows tile_y, columns tile_x", "",
                      "| tile_y \\ tile_x | " + " | ".join(map(str, xs)) + " |",
                      "|---" * (len(xs) + 1) + "|"]  # fmt: skip
            for y, row in zip(ys, _grid(data, mode, metric), strict=True):
                lines.append(f"| {y} | " + " | ".join(f"{v * scale:.4g}" for v in row) + " |")
    return lines


def _render_cases(data: dict[str, Any]) -> list[str]:
    limit = data["time_limit_s"]
    lines = [f"## Case study 2: methods on {data['hardware']} ({data['metric']} metric"
             f"{f', time limit {limit:.0f} s per method' if limit else ''})", "",
             "| workload | method | status | energy mJ | latency M cycles | DRAM MB | E / best | L / best | time s | "
             "stacks |", "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in data["rows"]:
        stacks = (
            "-"
            if r["stacks"] is None
            else "; ".join(f"{s['layers']}L {s['tile_x']}x{s['tile_y']} {s['mode']}" for s in r["stacks"])
        )
        if r["stacks"] is not None and len(r["stacks"]) > 3:
            stacks = f"{len(r['stacks'])} stacks"
        lines.append(f"| {r['workload']} | {METHOD_LABELS.get(r['method'], r['method'])} | {r['status']} | "
                     f"{_num(r['energy_pj'], 1e-9)} | {_num(r['latency_cycles'], 1e-6)} | "
                     f"{_num(r['dram_bytes'], 1e-6)} | {_ratio(r['energy_over_ref'])} | "
                     f"{_ratio(r['latency_over_ref'])} | {r['runtime_s']:.1f} | {stacks} |")  # fmt: skip
    lines += ["", "Energy gain of the best schedule over single-layer execution (SL / best):", "",
              "| workload | best = | SL / best (ours) | SL / best (DeFiNES, reported) |",
              "|---|---|---|---|"]  # fmt: skip
    for s in data["summary"]:
        lines.append(f"| {s['workload']} | {s['reference'] or '-'} | {_ratio(s['sl_over_ref_energy'])} | "
                     f"{s['paper_sl_over_best'] or '-'} |")  # fmt: skip
    lines += ["", "E / best and L / best are energy and latency over those of the best schedule (`dp`, exact over "
              "6x6 tiles x 3 modes and every cut; another method only where `dp` has no solution). The paper's "
              "column is DeFiNES' reported gain as quoted in the project's notes (no number is given for "
              "ResNet-18)."]  # fmt: skip
    return lines


def _render_archs(data: dict[str, Any]) -> list[str]:
    limit = data["time_limit_s"]
    df = data["df_method"]
    workloads = data["workloads"]
    lines = [f"## Case study 3: LBL vs best depth-first (`{df}`) on the DeFiNES architectures ({data['metric']} "
             f"metric{f', time limit {limit:.0f} s per method' if limit else ''})", "",
             "LBL / DF energy per workload, and the geometric means over the workloads where both have a solution "
             f"(DeFiNES reports {PAPER_ARCH_GAIN} on the DF-friendly `-df` variants).", "",
             "| architecture | " + " | ".join(workloads) + " | geomean E | geomean L | workloads |",
             "|---" * (len(workloads) + 4) + "|"]  # fmt: skip
    for g in data["geomeans"]:
        cells = []
        for w in workloads:
            if w in g["lbl_over_df_energy"]:
                cells.append(f"{g['lbl_over_df_energy'][w]:.2f}")
                continue
            statuses = [f"{r['method']} {r['status']}" for r in data["rows"]
                        if (r["hardware"], r["workload"]) == (g["hardware"], w) and r["energy_pj"] is None]  # fmt: skip
            cells.append(", ".join(statuses) or "not run")
        lines.append(f"| {g['hardware']} | " + " | ".join(cells) + f" | {_ratio(g['geomean_lbl_over_df_energy'])} | "
                     f"{_ratio(g['geomean_lbl_over_df_latency'])} | {len(g['workloads'])} |")  # fmt: skip
    df_gains = [g["geomean_lbl_over_df_energy"] for g in data["geomeans"]
                if g["hardware"].endswith("-df") and g["geomean_lbl_over_df_energy"] is not None]  # fmt: skip
    other = [g["geomean_lbl_over_df_energy"] for g in data["geomeans"]
             if not g["hardware"].endswith("-df") and g["geomean_lbl_over_df_energy"] is not None]  # fmt: skip
    if df_gains:
        single = max((v, g["hardware"], w) for g in data["geomeans"] if g["hardware"].endswith("-df")
                     for w, v in g["lbl_over_df_energy"].items())  # fmt: skip
        lines += ["", f"Largest geometric-mean LBL/DF energy gain on a `-df` variant: {max(df_gains):.2f}x "
                  f"(DeFiNES: {PAPER_ARCH_GAIN}); on the other five: {_ratio(max(other, default=None))}x. "
                  f"Largest single-workload gain on a `-df` variant: {single[0]:.2f}x ({single[2]} on "
                  f"{single[1]})."]  # fmt: skip
    lines += ["", "| architecture | workload | method | status | energy mJ | latency M cycles | DRAM MB | time s |",
              "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in data["rows"]:
        lines.append(f"| {r['hardware']} | {r['workload']} | {r['method']} | {r['status']} | "
                     f"{_num(r['energy_pj'], 1e-9)} | {_num(r['latency_cycles'], 1e-6)} | "
                     f"{_num(r['dram_bytes'], 1e-6)} | {r['runtime_s']:.1f} |")  # fmt: skip
    return lines


def _render_conditions(data: dict[str, Any]) -> str:
    """One line: Python, CPUs, load when the result was written, code fingerprint."""
    code = data.get("code") or {}
    modified = {True: "modified", False: "unmodified", None: "unknown"}[code.get("sources_modified")]
    load = data.get("load_average_1_5_15") or []
    return (
        f"Conditions: Python {data.get('python')}, {data.get('cpu_count')} CPUs, load average "
        f"{' / '.join(f'{v:.1f}' for v in load) or '-'} (1/5/15 min, when written); code: commit "
        f"{code.get('git_commit') or '-'} (depth-first sources {modified}), sources SHA-256 "
        f"{code.get('sources_sha256') or '-'}."
    )


def render(paths: Sequence[str]) -> str:
    """Markdown of sweep, cases and archs results, one section per file."""
    lines = ["# Depth-first (DeFiNES) benchmarks", ""]
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        kind = data.get("kind")
        if kind == "sweep":
            lines += _render_sweep(data)
        elif kind == "cases":
            lines += _render_cases(data)
        elif kind == "archs":
            lines += _render_archs(data)
        else:
            raise InputError(
                f"not a depth-first benchmark result (kind {kind!r})", path, "give a sweep, cases or archs JSON"
            )
        lines += ["", _render_conditions(data)]
        if data.get("note"):
            lines += ["", f"Note: {data['note']}"]
        lines.append("")
    lines.append("Every number is from a solution that passed `check` and the shared evaluator.")
    return "\n".join(lines) + "\n"


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
        names = _split(args.archs) if args.archs else [n for n in preset_names() if n.startswith("defines-")]
        previous: list[dict[str, Any]] = []
        if args.resume and args.out and os.path.exists(args.out):
            with open(args.out, encoding="utf-8") as handle:
                earlier = json.load(handle)
            if (
                earlier.get("kind") != "archs"
                or earlier.get("code", {}).get("sources_sha256") != _code()["sources_sha256"]
            ):
                parser.error(f"--resume: {args.out} is not an archs result of the current depth-first code")
            previous = earlier["rows"]
            print(f"  reusing {len(previous)} rows of {args.out}", flush=True)
        result = archs(names, _split(args.workloads), methods, args.time_limit, args.out, args.note, previous)
        for g in result["geomeans"]:
            print(f"  {g['hardware']:<24} LBL/DF geomean energy {_ratio(g['geomean_lbl_over_df_energy'])}, "
                  f"latency {_ratio(g['geomean_lbl_over_df_latency'])} over {len(g['workloads'])} "
                  "workloads")  # fmt: skip
    if args.out:
        _save(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(run_entry(main))
