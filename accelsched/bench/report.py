"""Tables and the Markdown report of a sweep (gaps and statistics: :mod:`accelsched.bench.summary`).

One Markdown file per sweep (a table of methods per problem, a section per instance,
the consistency warnings), the CSV of every run, and the figures of
:mod:`accelsched.bench.plots`. How references and gaps are taken is stated in
:mod:`accelsched.bench.summary`.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from accelsched.bench.plots import draw_figures
from accelsched.bench.summary import (
    GAP_FLOOR,
    Run,
    Summary,
    gap,
    method_stats,
    summarize,
)

__all__ = ["CSV_FIELDS", "render_markdown", "write_csv", "write_report"]


# ---------------------------------------------------------------------- formatting
def _pct(value: float | None, prefix: str = "") -> str:
    if value is None:
        return "-"
    if abs(value) < GAP_FLOOR:
        return "0"
    return f"{prefix}{100 * value:.3g}%"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def _statuses(runs: Sequence[Run]) -> str:
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.status] = counts.get(run.status, 0) + 1
    return ", ".join(name if n == 1 and len(runs) == 1 else f"{name} x{n}" for name, n in counts.items())


_REF_TEXT = {"optimum": "proven optimum", "bound": "best proven bound (no optimum proven)",
             "best-found": "best solution found (nothing proven)", "none": "no solution found"}  # fmt: skip


def _method_table(summary: Summary, problem: str) -> list[str]:
    lines = [
        "| method | kind | runs | solved | proved optimal | reached optimum | mean gap | max gap | "
        "gap to best found only | mean time s | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in method_stats(summary, problem):
        reached = f"{s.at_optimum}/{s.with_optimum} ({s.at_optimum / s.with_optimum:.0%})" if s.with_optimum else "-"
        lines.append(
            f"| {s.method} | {s.kind} | {s.runs} | {s.solved} | {s.proved} | {reached} | {_pct(s.mean_gap)} | "
            f"{_pct(s.max_gap)} | {s.unproven or '-'} | {s.mean_time_s:.2f} | {s.errors or '-'} |"
        )
    return lines


def _instance_section(summary: Summary, problem: str, instance: str) -> list[str]:
    rows = summary.select(problem, instance)
    ref = summary.references[(problem, instance)]
    first = rows[0][0]
    size = f", {first.n_layers} layers" if first.n_layers is not None else ""
    head = f"#### `{instance}`{size}: reference = {_REF_TEXT[ref.kind]}"
    if ref.value is not None:
        head += f" {ref.value:.6g} ({', '.join(ref.methods)})"
    lines = [head, "", "| method | runs | status | objective (best) | bound | gap (best) | gap mean | gap max | "
             "time s (mean) | note |", "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    mark = "~" if ref.kind == "best-found" else ""
    for method in dict.fromkeys(r.method for r, _ in rows):
        mine = [(r, g) for r, g in rows if r.method == method]
        runs = [r for r, _ in mine]
        gaps = [g for _, g in mine if g is not None]
        objectives = [r.objective for r in runs if r.objective is not None]
        best = (min if first.sense == "min" else max)(objectives) if objectives else None
        bounds = [r.bound for r in runs if r.bound is not None]
        bound = (max if first.sense == "min" else min)(bounds) if bounds else None
        notes = list(dict.fromkeys(r.note for r in runs if r.note and r.objective is None))
        many = len(runs) > 1
        mean_gap = _pct(statistics.fmean(gaps), mark) if many and gaps else ""
        max_gap = _pct(max(gaps), mark) if many and gaps else ""
        lines.append(
            f"| {method} | {len(runs)} | {_statuses(runs)} | {_num(best)} | {_num(bound)} | "
            f"{_pct(gap(best, ref, first.sense), mark)} | {mean_gap} | "
            f"{max_gap} | {statistics.fmean(r.runtime_s for r in runs):.2f} | "
            f"{'; '.join(notes)[:120].replace('|', '/')} |"
        )
    return [*lines, ""]


def _meta_lines(meta: Mapping[str, Any], summary: Summary) -> list[str]:
    lines = []
    if meta:
        limits = ", ".join(f"{p} {s:g} s" for p, s in meta.get("time_limit_s", {}).items())
        seeds = ", ".join(f"{p} {n}" for p, n in meta.get("seeds", {}).items())
        lines += [f"- suite `{meta.get('suite', '?')}`, problems {', '.join(meta.get('problems', []))}",
                  f"- time limit per run: {limits}; seeds of the seeded methods: {seeds}"]  # fmt: skip
        invocations = meta.get("invocations", [])
        for k, inv in enumerate(invocations, start=1):
            m = inv.get("machine", {})
            stopped = " (interrupted)" if inv.get("interrupted") else ""
            lines.append(
                f"- run {k}: {inv.get('started_at', '?')}, {inv.get('wall_s', 0):.0f} s wall, "
                f"{inv.get('ran', 0)} cells run, {inv.get('resumed', 0)} resumed{stopped}, on "
                f"{inv.get('executor', '?')}; {m.get('cpu', '?')}, {m.get('cores', '?')} cores, "
                f"{m.get('memory_gib', '?')} GiB, Python {m.get('python', '?')}, load average at start "
                f"{m.get('load_average')}, code {m.get('code', '?')}"
            )
    errors = sum(r.status == "ERROR" for r in summary.runs)
    lines.append(f"- {len(summary.runs)} runs, {errors} with status ERROR")
    return lines


def render_markdown(
    summary: Summary, meta: Mapping[str, Any] | None = None, figures: Mapping[str, Sequence[str]] | None = None
) -> str:
    """The Markdown report: sweep, per problem a method table, figures and per-instance tables."""
    meta = meta or {}
    figures = figures or {}
    title = f"# Benchmark report: suite `{meta['suite']}`" if meta.get("suite") else "# Benchmark report"
    lines = [title, "", *_meta_lines(meta, summary), "",
             "Every number comes from a `Result` whose solution passed the problem's `check` and was re-evaluated "
             "by the shared cost model (`accelsched.registry.run_method`). Gap = (objective - reference) / "
             "|reference|, the reference being the instance's proven optimum, else its best proven bound, else "
             "(marked ~, and not in the means) the best solution found; see `BENCHMARKING.md`.", ""]  # fmt: skip
    if summary.warnings:
        lines += ["**Consistency warnings**", "", *(f"- {w}" for w in summary.warnings), ""]
    for problem in summary.problems():
        lines += [f"## {problem}", "", "### Methods", "", *_method_table(summary, problem), ""]
        for path in figures.get(problem, ()):
            lines += [f"![{Path(path).stem}]({Path(path).name})", ""]
        lines += ["### Instances", ""]
        for instance in summary.instances(problem):
            lines += _instance_section(summary, problem, instance)
    return "\n".join(lines).rstrip() + "\n"


CSV_FIELDS = ("problem", "instance", "workload", "hardware", "batch", "options", "n_layers", "method", "kind", "seed",
              "time_limit_s", "status", "objective", "bound", "reference", "reference_kind", "gap", "runtime_s",
              "energy_pj", "latency_cycles", "note")  # fmt: skip


def write_csv(path: str | Path, summary: Summary) -> None:
    """One row per run with its gap and reference (the columns of :data:`CSV_FIELDS`)."""
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_FIELDS)
        for run, g in zip(summary.runs, summary.gaps, strict=True):
            ref = summary.references[(run.problem, run.instance)]
            writer.writerow([
                run.problem, run.instance, run.workload, run.hardware, run.batch, run.options, run.n_layers,
                run.method, run.kind, run.seed, run.time_limit_s, run.status, _raw(run.objective), _raw(run.bound),
                _raw(ref.value), ref.kind, _raw(g), run.runtime_s, _raw(run.energy_pj), _raw(run.latency_cycles),
                run.note,
            ])  # fmt: skip


def _raw(value: float | None) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else repr(value)


def write_report(out_dir: str | Path, records: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> list[Path]:
    """Write ``results.csv``, the PNG figures and ``report.md`` into ``out_dir``; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(records)
    write_csv(out / "results.csv", summary)
    figures = draw_figures(summary, out)
    report = out / "report.md"
    report.write_text(render_markdown(summary, meta, figures), encoding="utf-8")
    return [out / "results.csv", *(Path(p) for paths in figures.values() for p in paths), report]
