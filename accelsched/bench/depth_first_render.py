"""Markdown tables of the depth-first benchmark results (sweep, cases, archs), with the paper's figures."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from accelsched.bench.depth_first_sweep import sweep_grid
from accelsched.errors import InputError

__all__ = ["METHOD_LABELS", "PAPER_ARCH_GAIN", "PAPER_SL_OVER_BEST", "df_friendly_gains", "ratio", "render"]

PAPER_SL_OVER_BEST: dict[str, str] = {
    "fsrcnn": "~10x",
    "dmcnn_vd": "~10x",
    "mccnn": "~10x",
    "mobilenet_v1": "5.7x",
    "mobilenet_v1_defines": "5.7x",
}
"""DeFiNES' reported energy gain of the best depth-first schedule over SL (case study 2), as the project's notes
quote it: about 10x on the activation-heavy networks, 5.7x on MobileNetV1; none given for ResNet-18."""

PAPER_ARCH_GAIN = "6.0x (TPU-like) / 4.3x (Edge-TPU-like)"
"""DeFiNES' case study 3 gain of a DF-friendly architecture over its default one, both scheduled depth-first
(energy of the best DF schedule on the default over that on the ``-df`` variant); not an LBL/DF ratio."""


def df_friendly_gains(data: dict[str, Any]) -> dict[str, float]:
    """Per architecture pair of an archs result: DF energy on ``X`` over DF energy on ``X-df``, geometric mean.

    Taken over the workloads where the DF method has a solution on both; pairs without one are left out.
    """
    df = data["df_method"]
    energy = {(r["hardware"], r["workload"]): r["energy_pj"] for r in data["rows"]
              if r["method"] == df and r["energy_pj"] is not None}  # fmt: skip
    gains: dict[str, float] = {}
    for hardware in dict.fromkeys(r["hardware"] for r in data["rows"]):
        friendly = f"{hardware}-df"
        ratios = [energy[(hardware, w)] / energy[(friendly, w)] for w in data["workloads"]
                  if (hardware, w) in energy and (friendly, w) in energy]  # fmt: skip
        if ratios:
            gains[hardware] = math.exp(sum(math.log(v) for v in ratios) / len(ratios))
    return gains

METHOD_LABELS = {"sl": "SL", "lbl": "LBL", "fixed-df": "fixed DF 4x72", "single": "single strategy",
                 "auto": "fuse rule + best per stack", "dp": "best (exact DP)"}  # fmt: skip


def _num(value: float | None, scale: float = 1.0, fmt: str = ".4g") -> str:
    return "-" if value is None else format(value * scale, fmt)


def ratio(value: float | None) -> str:
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
            for y, row in zip(ys, sweep_grid(data, mode, metric), strict=True):
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
                     f"{_num(r['dram_bytes'], 1e-6)} | {ratio(r['energy_over_ref'])} | "
                     f"{ratio(r['latency_over_ref'])} | {r['runtime_s']:.1f} | {stacks} |")  # fmt: skip
    lines += ["", "Energy gain of the best schedule over single-layer execution (SL / best):", "",
              "| workload | best = | SL / best (ours) | SL / best (DeFiNES, reported) |",
              "|---|---|---|---|"]  # fmt: skip
    for s in data["summary"]:
        lines.append(f"| {s['workload']} | {s['reference'] or '-'} | {ratio(s['sl_over_ref_energy'])} | "
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
             "LBL / DF energy per workload, and the geometric means over the workloads where both have a solution.",
             "",
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
        lines.append(f"| {g['hardware']} | " + " | ".join(cells) + f" | {ratio(g['geomean_lbl_over_df_energy'])} | "
                     f"{ratio(g['geomean_lbl_over_df_latency'])} | {len(g['workloads'])} |")  # fmt: skip
    df_gains = [g["geomean_lbl_over_df_energy"] for g in data["geomeans"]
                if g["hardware"].endswith("-df") and g["geomean_lbl_over_df_energy"] is not None]  # fmt: skip
    other = [g["geomean_lbl_over_df_energy"] for g in data["geomeans"]
             if not g["hardware"].endswith("-df") and g["geomean_lbl_over_df_energy"] is not None]  # fmt: skip
    if df_gains:
        single = max((v, g["hardware"], w) for g in data["geomeans"] if g["hardware"].endswith("-df")
                     for w, v in g["lbl_over_df_energy"].items())  # fmt: skip
        lines += ["", f"Largest geometric-mean LBL/DF energy gain on a `-df` variant: {max(df_gains):.2f}x; "
                  f"on the other five: {ratio(max(other, default=None))}x. "
                  f"Largest single-workload gain on a `-df` variant: {single[0]:.2f}x ({single[2]} on "
                  f"{single[1]})."]  # fmt: skip
    gains = df_friendly_gains(data)
    if gains:
        lines += ["", f"DF-friendly over default architecture, both `{df}` (geomean DF energy on X / on X-df; "
                  f"DeFiNES: {PAPER_ARCH_GAIN}): "
                  + ", ".join(f"{h} {v:.2f}x" for h, v in gains.items()) + "."]  # fmt: skip
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
