"""The one-stack tile sweep of the depth-first problem (DeFiNES case study 1), timed, and its heatmaps.

*sweep* (DeFiNES case study 1): the whole workload as ONE stack, every tile of a
grid x the three overlap modes (fully-recompute, h-cached, fully-cached). The
grid is the last layer's output ``OX x OY`` cut

* by default (``--sizes N``, N = 6): ``geometric_sizes(OX, N) x
  geometric_sizes(OY, N)`` (:func:`accelsched.problems.depth_first.strategies.geometric_sizes`,
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
and the median per point are reported. The repeats must agree exactly (the evaluator is
deterministic). ``--png-prefix P`` draws ``P_energy.png`` and ``P_latency.png``:
one panel per mode, tile_x on x and tile_y on y as categorical axes (log-spaced
for these grids), one shared logarithmic colour scale, the best point of the three
panels marked with a star, each panel's best with a red frame.

The code fingerprint (:func:`code_fingerprint`) and machine conditions
(:func:`conditions`) recorded with every depth-first benchmark result are defined
here too.
"""

from __future__ import annotations

import hashlib
import math
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from accelsched.bench.conditions import machine_conditions
from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.layer_cost import clear_cache
from accelsched.models.registry import load_workload
from accelsched.problems.depth_first import (
    OverlapMode,
    Strategy,
    geometric_sizes,
    make_instance,
    single_stack_solution,
)
from accelsched.registry import get_problem

__all__ = ["PROBLEM_NAME", "SOURCES", "code_fingerprint", "conditions", "halving_sizes", "plot_sweep", "sweep",
           "sweep_grid"]  # fmt: skip

PROBLEM_NAME = "depth-first"


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
    "accelsched/problems/depth_first/__init__.py",
    "accelsched/problems/depth_first/check.py",
    "accelsched/problems/depth_first/evaluate.py",
    "accelsched/problems/depth_first/instance.py",
    "accelsched/problems/depth_first/problem.py",
    "accelsched/problems/depth_first/solution.py",
    "accelsched/problems/depth_first/strategies.py",
    "accelsched/hardware/cost/fused_stack.py",
    "accelsched/hardware/cost/depth_first_tiles.py",
    "accelsched/hardware/cost/layer_cost.py",
    "accelsched/formulations/depth_first_dp.py",
    "accelsched/heuristics/depth_first_rules.py",
)
"""The code a depth-first number depends on, fingerprinted in every result."""


def code_fingerprint() -> dict[str, Any]:
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


def conditions() -> dict[str, Any]:
    """The machine conditions and code fingerprint recorded with every result."""
    return {**machine_conditions(), "code": code_fingerprint()}


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
    recorded = conditions()
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
            "best": best, **recorded, "points": points}  # fmt: skip


def sweep_grid(data: dict[str, Any], mode: str, metric: str) -> list[list[float]]:
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
    import matplotlib  # optional heavy backend: only the plots need it

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
        grids = {mode: [[v * scale for v in row] for row in sweep_grid(data, mode, metric)] for mode in data["modes"]}
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
