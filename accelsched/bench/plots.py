"""The figures of a sweep report (matplotlib, imported here only).

Per problem:

``gaps_<problem>.png``
    gap profile: for each method, the share of its runs whose gap to the proven
    reference (optimum or bound) is at most x; runs without a solution never count,
    runs gapped only to the best solution found are left out.
``convergence_<problem>.png``
    the heuristics' convergence traces (best objective over time, every seed) on the
    instance with a proven optimum where they start farthest from it, against the
    optimum line.
``time_<problem>.png``
    solve time (mean over seeds) against the instance's number of layers, per method,
    with the time limit.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from accelsched.bench.summary import Run, Summary

__all__ = ["draw_figures", "plot_convergence", "plot_gap_profile", "plot_time_vs_size"]

_MARKERS = "osD^v<>pPX*h"
_STYLES = ("-", "--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)))


def _pyplot() -> Any:
    import matplotlib  # matplotlib is heavy and optional: imported only when a figure is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after use("Agg"), which must come first

    return plt


def _colours(methods: Sequence[str]) -> dict[str, Any]:
    cmap = _pyplot().get_cmap("tab10")
    return {m: cmap(k % 10) for k, m in enumerate(methods)}


def plot_gap_profile(summary: Summary, problem: str, path: str | Path) -> bool:
    """Draw the gap profile of ``problem``; False (nothing written) when no run has a proven gap."""
    plt = _pyplot()
    rows = summary.select(problem)
    methods = list(dict.fromkeys(r.method for r, _ in rows))
    series: dict[str, tuple[list[float], int]] = {}
    for method in methods:
        mine = [(r, g) for r, g in rows if r.method == method]
        proven = [(r, g) for r, g in mine if summary.references[(r.problem, r.instance)].kind in ("optimum", "bound")]
        if proven:
            series[method] = (sorted(max(g, 0.0) * 100 for _, g in proven if g is not None), len(proven))
    if not series:
        return False
    largest = max((v[-1] for v, _ in series.values() if v), default=0.0)
    right = max(largest * 1.5, 1.0)
    colours = _colours(methods)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for k, (method, (values, total)) in enumerate(series.items()):
        xs = [0.0, *values, right]
        ys = [0.0] + [(i + 1) / total for i in range(len(values))] + [len(values) / total]
        ax.step(xs, ys, where="post", label=method, color=colours[method], linestyle=_STYLES[k % len(_STYLES)],
                linewidth=2.2 - 0.15 * (k % 6))  # fmt: skip
    ax.set_xscale("symlog", linthresh=0.1, linscale=0.5)
    ticks = [t for t in (0.0, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0) if t <= right]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xlim(0, right)
    ax.set_ylim(-0.02, 1.04)
    ax.set_xlabel("gap to the proven optimum / bound (%)")
    ax.set_ylabel("share of runs with gap <= x")
    ax.set_title(f"{problem}: gap profile ({len(summary.instances(problem))} instances, all seeds)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _trace_of(run: Run) -> list[tuple[float, float]]:
    points = [(t, v) for t, v in run.trace]
    if points and run.objective is not None:
        points.append((max(run.runtime_s, points[-1][0]), run.objective))
    return points


def plot_convergence(summary: Summary, problem: str, path: str | Path) -> bool:
    """Draw the heuristics' traces against the optimum; False when no instance has both."""
    plt = _pyplot()
    best: tuple[float, str] | None = None
    for instance in summary.instances(problem):
        ref = summary.references[(problem, instance)]
        if ref.kind != "optimum" or not ref.value:
            continue
        starts = [r.trace[0][1] / ref.value for r, _ in summary.select(problem, instance)
                  if r.kind != "exact" and len(r.trace) >= 2]  # fmt: skip
        if starts and (best is None or max(starts) > best[0]):
            best = (max(starts), instance)
    if best is None:
        return False
    instance = best[1]
    ref = summary.references[(problem, instance)]
    assert ref.value is not None
    runs = [r for r, _ in summary.select(problem, instance) if r.kind != "exact" and len(r.trace) >= 2]
    methods = list(dict.fromkeys(r.method for r in runs))
    colours = _colours(methods)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    labelled: set[str] = set()
    for run in runs:
        points = _trace_of(run)
        ax.step([t for t, _ in points], [v / ref.value for _, v in points], where="post", color=colours[run.method],
                alpha=0.8, linewidth=1.2, label=None if run.method in labelled else run.method)  # fmt: skip
        labelled.add(run.method)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1, label="proven optimum")
    ax.set_xscale("symlog", linthresh=0.01)
    ax.set_xlim(left=0)
    if best[0] > 3:
        ax.set_yscale("log")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("best objective / proven optimum")
    ax.set_title(f"{problem}: heuristics' convergence on\n{instance}", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_time_vs_size(summary: Summary, problem: str, path: str | Path) -> bool:
    """Draw mean solve time per instance against its number of layers; False without sizes."""
    plt = _pyplot()
    rows = [r for r, _ in summary.select(problem) if r.n_layers is not None and r.status != "ERROR"]
    if not rows:
        return False
    methods = list(dict.fromkeys(r.method for r in rows))
    colours = _colours(methods)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for k, method in enumerate(methods):
        points: dict[str, tuple[int, list[float]]] = {}
        for r in rows:
            if r.method == method:
                assert r.n_layers is not None
                points.setdefault(r.instance, (r.n_layers, []))[1].append(max(r.runtime_s, 1e-4))
        xs = [n * (1 + 0.015 * (k - len(methods) / 2)) for n, _ in points.values()]
        ax.scatter(xs, [statistics.fmean(ts) for _, ts in points.values()], label=method, color=colours[method],
                   marker=_MARKERS[k % len(_MARKERS)], s=28)  # fmt: skip
    limit = max(r.time_limit_s for r in rows)
    ax.axhline(limit, color="grey", linestyle=":", linewidth=1, label=f"time limit {limit:g} s")
    ax.set_yscale("log")
    ax.set_xlabel("layers")
    ax.set_ylabel("solve time (s, mean over seeds)")
    ax.set_title(f"{problem}: solve time against instance size")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def draw_figures(summary: Summary, out_dir: str | Path) -> dict[str, list[str]]:
    """Every figure of every problem into ``out_dir``; ``problem -> file paths written``."""
    out = Path(out_dir)
    figures: dict[str, list[str]] = {}
    for problem in summary.problems():
        written = []
        for name, draw in (("gaps", plot_gap_profile), ("convergence", plot_convergence),
                           ("time", plot_time_vs_size)):  # fmt: skip
            path = out / f"{name}_{problem}.png"
            if draw(summary, problem, path):
                written.append(str(path))
        figures[problem] = written
    return figures
