"""Multicore (Stream) timelines and benchmarks: Gantt charts, Chrome traces, evaluation speed, R-tree vs naive.

Usage::

    python -m accelsched.bench.multicore gantt [SCHEDULE OPTIONS] --out FILE.png
    python -m accelsched.bench.multicore trace [SCHEDULE OPTIONS] --out FILE.json
    python -m accelsched.bench.multicore evals [--cases resnet18:auto,resnet18:one,resnet18@672:one]
                                               [--hardware stream-mc-homtpu] [--rows 1] [--allocations 20]
                                               [--repeats 7] [--seed 0] [--out FILE.json]
    python -m accelsched.bench.multicore deps [--cases fsrcnn,resnet18,...,chain:4096] [--repeats 3]
                                              [--out FILE.json]
    python -m accelsched.bench.multicore render FILE.json [FILE.json ...] [--out FILE.md]

Schedule options (``gantt``, ``trace``): ``--workload`` (a zoo name, ``random:N:SEED``,
a file, or ``resnet18@SIZE``, ResNet-18 at a SIZE x SIZE input), ``--hardware``,
``--granularity layer|fused``, ``--rows N``, ``--stacks auto|one|a,b|c,d`` (``one``:
every layer in one stack), ``--priority latency|memory``. The schedule is the
``manual`` method's: Stream's manual allocation
(:func:`~accelsched.heuristics.multicore_manual.manual_allocation`) list-scheduled and
then checked and priced by :func:`~accelsched.problems.multicore.evaluate.evaluate_schedule`.

Protocols
---------
*evals*: per case ``WORKLOAD:STACKS`` on ``--hardware`` at fused granularity with
``--rows`` rows per CN, one schedule evaluation is the list scheduler plus
:func:`evaluate_schedule` (which re-checks the schedule), the inner loop of the GA.
The allocations are the manual one and ``--allocations - 1`` seeded random ones (every
layer on a uniformly drawn allowed core), as in a GA population. *Cold*: the first
evaluation of the manual allocation on a fresh instance with the primitive cache
cleared (:func:`~accelsched.hardware.cost.layer_cost.clear_cache`), CN graph built
beforehand (its time is reported apart). *Warm*: after one pass over all
allocations has priced every (CN, core) pair they use, ``--repeats`` passes over
them; the per-evaluation mean of each pass, and the median over passes (the GA
state: the instance's cost cache is warm, as it is from the second generation on).
The issue's budget is 0.5 s per evaluation of ResNet-18 fused on the quad-core
TPU-like preset.

*deps*: for each case every layer is cut into one-row CNs (one fused stack), and
:func:`~accelsched.hardware.cost.cn_graph.dependencies_rtree` and
:func:`~accelsched.hardware.cost.cn_graph.dependencies_naive` are timed on the same CNs
(median of ``--repeats``; both must return the same edges). Cases: zoo workloads,
``resnet18@SIZE``, ``random:N:SEED@H`` (a seeded random DAG on an H x H input) and
``chain:H`` (eight 3x3 convolutions on an H x 16 map: H one-row CNs per layer, so
the naive baseline tests H^2 pairs per edge). The naive baseline's pair tests are
counted; ``naive / rtree`` > 1 means the R-tree wins.

*render*: Markdown tables of ``evals`` and ``deps`` results.

Every file records the machine conditions (Python, platform, CPUs, load average
before and after, nice level).
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from accelsched.bench.conditions import machine_conditions
from accelsched.entry import run_entry
from accelsched.hardware import load_accelerator
from accelsched.hardware.cost import clear_cache
from accelsched.hardware.cost.cn_graph import Granularity, build_cn_graph, dependencies_naive, dependencies_rtree
from accelsched.heuristics.multicore_manual import manual_allocation
from accelsched.models.builder import NetBuilder
from accelsched.models.random_dag import random_workload
from accelsched.models.registry import load_workload
from accelsched.models.workload import Workload
from accelsched.problems.multicore import (
    MulticoreEvaluation,
    MulticoreInstance,
    evaluate_schedule,
    list_schedule,
    make_instance,
)

__all__ = [
    "chrome_trace",
    "gantt_png",
    "load_bench_workload",
    "main",
    "manual_schedule",
    "measure_deps",
    "measure_evals",
    "render",
    "resnet18_at",
    "schedule_instance",
]

EVAL_CASES = ("resnet18:auto", "resnet18:one", "resnet18@672:one")
"""Default ``evals`` cases: the issue's configuration, every layer fused, and ~2,400 CNs (Stream's count)."""

DEPS_CASES = (
    "fsrcnn", "resnet18", "mobilenet_v2", "squeezenet", "tiny_yolo", "resnet18@672",
    "random:30:0@256", "random:30:1@1024", "chain:256", "chain:1024", "chain:2048", "chain:4096",
)  # fmt: skip
"""Default ``deps`` cases, small to large."""

BUDGET_S = 0.5
"""The issue's budget for one evaluation of ResNet-18 fused on the quad-core TPU-like preset."""

KIND_COLOURS = {"transfer": "#7f7f7f", "input": "#2ca02c", "weights": "#ff7f0e", "output": "#1f77b4",
                "spill": "#d62728", "fetch": "#9467bd"}  # fmt: skip
"""Colours of bus and DRAM-port activities in the Gantt chart."""


# ============================================================ workloads and schedules
def resnet18_at(size: int) -> Workload:
    """torchvision's ResNet-18 at a ``size x size`` input (at 224 it equals the zoo's ``resnet18``)."""
    b = NetBuilder(f"resnet18@{size}", 3, size, size)
    x = b.conv(b.input, 64, 7, stride=2, pad=3, name="conv1")
    x = b.pool(x, 3, stride=2, pad=1, name="maxpool")
    for stage, planes in enumerate((64, 128, 256, 512), start=1):
        for i in range(2):
            stride, name = (2 if stage > 1 and i == 0 else 1), f"layer{stage}_{i}"
            y = b.conv(x, planes, 3, stride=stride, pad=1, name=f"{name}_conv1")
            y = b.conv(y, planes, 3, pad=1, name=f"{name}_conv2")
            shortcut = x
            if stride != 1 or x.channels != planes:
                shortcut = b.conv(x, planes, 1, stride=stride, name=f"{name}_downsample")
            x = b.add(y, shortcut, name=f"{name}_add")
    b.fc(b.global_pool(x, name="avgpool"), 1000, name="fc")
    return b.build()


def _chain(height: int) -> Workload:
    """Eight 3x3 convolutions (8 channels) on a ``height x 16`` map."""
    b = NetBuilder(f"chain:{height}", 8, height, 16)
    x = b.input
    for i in range(8):
        x = b.conv(x, 8, 3, pad=1, name=f"conv{i}")
    return b.build()


def load_bench_workload(spec: str) -> Workload:
    """A workload of :func:`load_workload`, or ``resnet18@SIZE``, ``chain:H``, ``random:N:SEED@H``."""
    if spec.startswith("resnet18@"):
        return resnet18_at(int(spec.partition("@")[2]))
    if spec.startswith("chain:"):
        return _chain(int(spec.partition(":")[2]))
    if spec.startswith("random:") and "@" in spec:
        name, _, height = spec.partition("@")
        _, n, seed = name.split(":")
        return random_workload(int(n), int(seed), height=int(height), width=int(height))
    return load_workload(spec)


def schedule_instance(
    workload: Workload | str,
    hardware: str,
    granularity: str = "fused",
    rows: int = 1,
    stacks: str = "auto",
    priority: str = "latency",
) -> MulticoreInstance:
    """The multicore instance of the schedule options (``stacks``: ``auto``, ``one`` or ``a,b|c,d``)."""
    wl = load_bench_workload(workload) if isinstance(workload, str) else workload
    options = {"granularity": granularity, "rows": str(rows), "priority": priority}
    if stacks != "one":
        options["stacks"] = stacks
    return make_instance(wl, load_accelerator(hardware), options)


def manual_schedule(instance: MulticoreInstance) -> MulticoreEvaluation:
    """The ``manual`` method's schedule, checked and priced by the shared evaluator."""
    return evaluate_schedule(instance, list_schedule(instance, manual_allocation(instance)))


def _layer_of(instance: MulticoreInstance, label: str) -> str:
    """Layer of an activity label (``layer:part`` or ``layer:part -> core c``)."""
    graph = instance.graph
    return graph.cns[graph.names[label.split(" -> ")[0]]].layer


def _resources(instance: MulticoreInstance) -> list[tuple[str, str]]:
    """``(resource key of the activities, display name)``: cores, the bus, the DRAM port."""
    cores = [(f"core {c.id}", f"core {c.id} ({c.name})") for c in instance.accelerator.cores]
    return [*cores, ("bus", "bus"), ("dram", "DRAM port")]


# ============================================================ Chrome trace
def chrome_trace(instance: MulticoreInstance, evaluation: MulticoreEvaluation) -> dict[str, Any]:
    """A Chrome-trace / Perfetto timeline: one process (the accelerator), one thread per resource.

    Complete events (``"ph": "X"``) for every CN, bus transfer and DRAM-port access,
    ``ts`` / ``dur`` in microseconds (cycles over the clock), ``args`` with the cycles,
    the bytes and the layer; counter events (``"ph": "C"``) for the bytes held on
    each core (the memory trace).
    """
    acc = instance.accelerator
    us = 1e6 / acc.clock_hz
    resources = _resources(instance)
    tid = {key: i + 1 for i, (key, _) in enumerate(resources)}
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": 1, "tid": 0,
         "args": {"name": f"{acc.name}: {instance.workload.name}"}},
    ]  # fmt: skip
    for key, label in resources:
        events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid[key], "args": {"name": label}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": 1, "tid": tid[key],
                       "args": {"sort_index": tid[key]}})  # fmt: skip
    for a in evaluation.activities:
        events.append({
            "name": a.label if a.kind == "cn" else f"{a.kind} {a.label}",
            "cat": a.kind, "ph": "X", "pid": 1, "tid": tid[a.resource],
            "ts": a.start * us, "dur": (a.end - a.start) * us,
            "args": {"start_cycle": a.start, "end_cycle": a.end, "bytes": a.nbytes,
                     "layer": _layer_of(instance, a.label)},
        })  # fmt: skip
    for core, steps in evaluation.memory_trace.items():
        for cycle, held in steps:
            events.append({"name": f"memory core {core}", "ph": "C", "pid": 1, "tid": tid[f"core {core}"],
                           "ts": cycle * us, "args": {"bytes": held}})  # fmt: skip
    report = evaluation.report
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {"workload": instance.workload.name, "accelerator": acc.name, "clock_hz": acc.clock_hz,
                      "instance": instance.describe(), "latency_cycles": report.latency_cycles,
                      "energy_pj": report.energy_pj, "peak_memory_bytes": report.peak_memory_bytes},
    }  # fmt: skip


# ============================================================ Gantt chart
def gantt_png(instance: MulticoreInstance, evaluation: MulticoreEvaluation, path: str | Path) -> None:
    """Per-resource Gantt chart (CNs coloured by layer) over the per-core memory trace, as a PNG (matplotlib)."""
    import matplotlib  # optional heavy backend: only the charts need it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    resources = _resources(instance)
    row = {key: i for i, (key, _) in enumerate(resources)}
    layer_index = {name: i for i, name in enumerate(instance.workload.names)}
    palette = plt.get_cmap("tab20")
    bars: dict[tuple[int, Any], list[tuple[float, float]]] = defaultdict(list)
    for a in evaluation.activities:
        colour = (palette(layer_index[_layer_of(instance, a.label)] % 20) if a.kind == "cn"
                  else KIND_COLOURS.get(a.kind, "black"))  # fmt: skip
        bars[row[a.resource], colour].append((a.start / 1e3, max(a.end - a.start, 1) / 1e3))
    makespan = evaluation.report.latency_cycles
    n_cores = instance.accelerator.n_cores
    fig, (ax, mem_ax) = plt.subplots(2, 1, figsize=(12, 2.5 + 0.45 * len(resources) + 0.2 * n_cores), sharex=True,
                                     gridspec_kw={"height_ratios": [len(resources), 2 + 0.3 * n_cores]})  # fmt: skip
    for (y, colour), spans in bars.items():
        ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=colour, edgecolor="none")
    ax.set_yticks(range(len(resources)), [label for _, label in resources])
    ax.set_ylim(len(resources) - 0.5, -0.5)
    kinds = sorted({a.kind for a in evaluation.activities if a.kind != "cn"})
    handles = [Patch(color=KIND_COLOURS.get(k, "black"), label=k) for k in kinds]
    ax.legend(handles=handles, loc="upper right", fontsize=7, ncol=len(kinds) or 1,
              title="bus / DRAM (CNs: colour per layer)", title_fontsize=7)  # fmt: skip
    report = evaluation.report
    ax.set_title(f"{instance.describe()}\nlatency {report.latency_cycles / 1e6:.3f} M cycles, energy "
                 f"{report.energy_pj / 1e6:.2f} uJ, peak on-chip memory {report.peak_memory_bytes / 2**10:.0f} KiB",
                 fontsize=9)  # fmt: skip
    for core, steps in evaluation.memory_trace.items():
        xs = [t / 1e3 for t, _ in steps] + [makespan / 1e3]
        ys = [b / 2**10 for _, b in steps]
        mem_ax.step(xs, [*ys, ys[-1] if ys else 0.0], where="post", linewidth=0.8,
                    label=f"core {core} ({instance.accelerator.core(core).name})")  # fmt: skip
    mem_ax.set_ylabel("held on chip (KiB)")
    mem_ax.set_xlabel(f"time (k cycles at {instance.accelerator.clock_hz / 1e6:.0f} MHz)")
    mem_ax.set_xlim(0, makespan / 1e3)
    mem_ax.legend(fontsize=7, ncol=min(n_cores, 5), loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


# ============================================================ benchmarks


def _random_allocations(instance: MulticoreInstance, count: int, seed: int) -> list[dict[str, int]]:
    rng = random.Random(seed)
    allowed = instance.allowed_cores
    return [{name: rng.choice(allowed[name]) for name in instance.workload.names} for _ in range(count)]


def _evaluate(instance: MulticoreInstance, allocation: Mapping[str, int]) -> tuple[float, float, float]:
    """Seconds of the list scheduler and of the evaluator, and the latency."""
    t0 = time.perf_counter()
    solution = list_schedule(instance, allocation)
    t1 = time.perf_counter()
    evaluation = evaluate_schedule(instance, solution)
    return t1 - t0, time.perf_counter() - t1, evaluation.report.latency_cycles


def measure_case(case: str, hardware: str, rows: int, allocations: int, repeats: int, seed: int) -> dict[str, Any]:
    """The ``evals`` protocol for one ``WORKLOAD:STACKS`` case (see the module docstring)."""
    workload_spec, _, stacks = case.rpartition(":")
    if not workload_spec or stacks not in ("auto", "one"):
        raise ValueError(f"evals case must be WORKLOAD:auto or WORKLOAD:one, got {case!r}")
    workload = load_bench_workload(workload_spec)
    clear_cache()
    instance = schedule_instance(workload, hardware, "fused", rows, stacks)
    t0 = time.perf_counter()
    graph = instance.graph
    graph_s = time.perf_counter() - t0
    population = [manual_allocation(instance), *_random_allocations(instance, allocations - 1, seed)]
    cold_schedule_s, cold_evaluate_s, manual_latency = _evaluate(instance, population[0])
    for allocation in population:  # warm: price every (CN, core) pair the population uses
        _evaluate(instance, allocation)
    passes, schedule_s, evaluate_s = [], [], []
    for _ in range(repeats):
        timings = [_evaluate(instance, allocation) for allocation in population]
        passes.append(statistics.fmean(s + e for s, e, _ in timings))
        schedule_s.append(statistics.fmean(s for s, _, _ in timings))
        evaluate_s.append(statistics.fmean(e for _, e, _ in timings))
    return {"case": case, "workload": workload.name, "hardware": hardware, "granularity": "fused", "rows": rows,
            "stacks": stacks, "n_stacks": len(instance.stacks or [()]), "layers": len(workload),
            "cns": len(graph.cns), "cn_edges": len(graph.edges), "graph_build_s": graph_s,
            "cold_first_eval_s": cold_schedule_s + cold_evaluate_s, "cold_schedule_s": cold_schedule_s,
            "cold_evaluate_s": cold_evaluate_s, "allocations": len(population), "repeats": repeats,
            "warm_median_eval_s": statistics.median(passes), "warm_passes_s": passes,
            "warm_median_schedule_s": statistics.median(schedule_s),
            "warm_median_evaluate_s": statistics.median(evaluate_s), "manual_latency_cycles": manual_latency,
            "cost_cache_entries": len(instance.cost_cache)}  # fmt: skip


def measure_evals(
    cases: Sequence[str], hardware: str, rows: int, allocations: int, repeats: int, seed: int = 0
) -> dict[str, Any]:
    """The ``evals`` benchmark over ``cases``; the first case is checked against the 0.5 s budget."""
    before = machine_conditions()
    rows_out = []
    for case in cases:
        result = measure_case(case, hardware, rows, allocations, repeats, seed)
        rows_out.append(result)
        print(f"  {case:<20} {result['cns']:5d} CNs: warm {result['warm_median_eval_s'] * 1e3:8.1f} ms per "
              f"evaluation, cold first {result['cold_first_eval_s'] * 1e3:8.1f} ms", flush=True)  # fmt: skip
    first = rows_out[0]
    return {"kind": "evals", "budget_s": BUDGET_S, "within_budget": first["warm_median_eval_s"] <= BUDGET_S,
            "warm_cache": "the instance's CN-cost cache holds every (CN, core) pair of the allocations, as in a GA "
                          "from its second generation on; the list scheduler and the evaluator run in full",
            "cases": rows_out, **before,
            "load_average_after": machine_conditions()["load_average_1_5_15"]}  # fmt: skip


def _median_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def measure_deps(cases: Sequence[str], repeats: int) -> dict[str, Any]:
    """The ``deps`` benchmark: R-tree and naive dependency generation on the same one-row CNs."""
    before = machine_conditions()
    out = []
    for case in cases:
        workload = load_bench_workload(case)
        cns = build_cn_graph(workload, Granularity.FUSED, 1, None, index="naive").cns
        per_layer: dict[str, int] = defaultdict(int)
        for cn in cns:
            per_layer[cn.layer] += 1
        pairs = sum(per_layer[p] * per_layer[c.name] for c in workload for p in dict.fromkeys(c.inputs))
        rtree_s, rtree_edges = _median_time(functools.partial(dependencies_rtree, workload, cns), repeats)
        naive_s, naive_edges = _median_time(functools.partial(dependencies_naive, workload, cns), repeats)
        if rtree_edges != naive_edges:
            raise AssertionError(f"{case}: the R-tree and the naive baseline disagree on the CN dependencies")
        row = {"case": case, "workload": workload.name, "layers": len(workload), "cns": len(cns),
               "edges": len(rtree_edges), "max_cns_per_layer": max(per_layer.values()), "naive_pair_tests": pairs,
               "rtree_s": rtree_s, "naive_s": naive_s, "naive_over_rtree": naive_s / rtree_s}  # fmt: skip
        out.append(row)
        print(f"  {case:<18} {len(cns):6d} CNs {pairs:>11,d} pair tests: R-tree {rtree_s * 1e3:8.1f} ms, naive "
              f"{naive_s * 1e3:8.1f} ms, naive/R-tree {row['naive_over_rtree']:5.2f}", flush=True)  # fmt: skip
    return {"kind": "deps", "repeats": repeats, "granularity": "fused, 1 row per CN, every layer cut",
            "cases": out, **before, "load_average_after": machine_conditions()["load_average_1_5_15"]}  # fmt: skip


# ============================================================ render
def _conditions_line(data: Mapping[str, Any]) -> str:
    load = " / ".join(f"{v:.2f}" for v in data.get("load_average_1_5_15") or []) or "-"
    after = " / ".join(f"{v:.2f}" for v in data.get("load_average_after") or []) or "-"
    return (f"Conditions: Python {data.get('python')}, {data.get('cpu_count')} CPUs ({data.get('platform')}), "
            f"nice {data.get('nice')}, load average {load} before and {after} after (1/5/15 min).")  # fmt: skip


def _render_evals(data: Mapping[str, Any]) -> list[str]:
    lines = [f"## One schedule evaluation (list scheduling + evaluate_schedule) on {data['cases'][0]['hardware']}",
             "", f"Budget {data['budget_s']} s for the first case: "
             f"{'met' if data['within_budget'] else 'NOT met'}. Warm cache: {data['warm_cache']}.", "",
             "| case | layers | stacks | CNs | CN edges | warm median ms | of which scheduling ms | cold first ms | "
             "graph build ms |", "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in data["cases"]:
        lines.append(f"| {r['case']} | {r['layers']} | {r['n_stacks']} | {r['cns']} | {r['cn_edges']} | "
                     f"{r['warm_median_eval_s'] * 1e3:.1f} | {r['warm_median_schedule_s'] * 1e3:.1f} | "
                     f"{r['cold_first_eval_s'] * 1e3:.1f} | {r['graph_build_s'] * 1e3:.1f} |")  # fmt: skip
    return lines


def _render_deps(data: Mapping[str, Any]) -> list[str]:
    lines = [f"## CN dependencies: R-tree vs naive pairwise ({data['granularity']}, median of {data['repeats']})", "",
             "| case | layers | CNs | max CNs per layer | edges | naive pair tests | R-tree ms | naive ms | "
             "naive / R-tree | faster |", "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in data["cases"]:
        faster = "R-tree" if r["naive_over_rtree"] > 1 else "naive"
        lines.append(f"| {r['case']} | {r['layers']} | {r['cns']} | {r['max_cns_per_layer']} | {r['edges']} | "
                     f"{r['naive_pair_tests']:,} | {r['rtree_s'] * 1e3:.1f} | {r['naive_s'] * 1e3:.1f} | "
                     f"{r['naive_over_rtree']:.2f} | {faster} |")  # fmt: skip
    return lines


def render(paths: Sequence[str]) -> str:
    """Markdown of ``evals`` and ``deps`` results, one section per file."""
    lines = ["# Multicore (Stream) benchmarks", ""]
    for path in paths:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        kind = data.get("kind")
        if kind == "evals":
            lines += _render_evals(data)
        elif kind == "deps":
            lines += _render_deps(data)
        else:
            raise ValueError(f"{path}: not an evals or deps result (kind {kind!r})")
        lines += ["", _conditions_line(data), ""]
    return "\n".join(lines)


# ============================================================ CLI
def _save(data: Mapping[str, Any], path: str) -> None:
    Path(path).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m accelsched.bench.multicore", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("what", choices=["gantt", "trace", "evals", "deps", "render"])
    parser.add_argument("files", nargs="*", help="render: evals or deps results (JSON)")
    parser.add_argument("--workload", default="resnet18")
    parser.add_argument("--hardware", default="stream-mc-homtpu")
    parser.add_argument("--granularity", default="fused", choices=["layer", "fused"])
    parser.add_argument("--rows", type=int, default=1, help="output rows per CN (fused)")
    parser.add_argument("--stacks", default="auto", help="auto, one, or layer names a,b|c,d")
    parser.add_argument("--priority", default="latency", choices=["latency", "memory"])
    parser.add_argument("--cases", default=None, help="evals: WORKLOAD:auto|one,...; deps: workloads")
    parser.add_argument("--allocations", type=int, default=20, help="evals: allocations per pass")
    parser.add_argument("--repeats", type=int, default=None, help="evals: passes (7); deps: timings (3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    try:
        return _run(parser, args)
    except ValueError as exc:  # bad cases, workloads, options (InputError is a ValueError)
        parser.error(str(exc))
    return 2  # pragma: no cover - parser.error exits


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.what == "render":
        if not args.files:
            parser.error("render needs result files")
        markdown = render(args.files)
        print(markdown)
        if args.out:
            Path(args.out).write_text(markdown, encoding="utf-8")
        return 0
    if args.what in ("gantt", "trace"):
        if not args.out:
            parser.error(f"{args.what} needs --out FILE")
        instance = schedule_instance(args.workload, args.hardware, args.granularity, args.rows, args.stacks,
                                     args.priority)  # fmt: skip
        evaluation = manual_schedule(instance)
        if args.what == "gantt":
            gantt_png(instance, evaluation, args.out)
        else:
            _save(chrome_trace(instance, evaluation), args.out)
        print(f"{instance.describe()}: latency {evaluation.report.latency_cycles:.0f} cycles; written to {args.out}")
        return 0
    if args.allocations < 1 or (args.repeats is not None and args.repeats < 1):
        parser.error("--allocations and --repeats must be at least 1")
    if args.what == "evals":
        cases = args.cases.split(",") if args.cases else list(EVAL_CASES)
        result = measure_evals(cases, args.hardware, args.rows, args.allocations, args.repeats or 7, args.seed)
    else:
        cases = args.cases.split(",") if args.cases else list(DEPS_CASES)
        result = measure_deps(cases, args.repeats or 3)
    if args.out:
        _save(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(run_entry(main))
