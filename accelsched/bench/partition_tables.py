"""Cocco's comparisons, reproduced with checked results: Fig. 11 (partition only) and
Tables 1-2 (capacity co-exploration).

Usage::

    python -m accelsched.bench.partition_tables fig11  [--workloads vgg16,resnet50,...] [--time-limit 300]
    python -m accelsched.bench.partition_tables coexplore [--workloads resnet50,...] [--time-limit 300]
        [--designs shared,separate] [--threads 1] [--ledger-dir DIR]
    python -m accelsched.bench.partition_tables ledger --ledger-dir DIR [--workloads ...] [--designs ...]
    python -m accelsched.bench.partition_tables merge --ledger-dir DIR --from-dir OTHER [--base-dir BASE]
        [--workloads ...] [--designs ...]
    (both: --out-dir bench/results, --seed 0; the GA runs its published 20 x 500)

Protocol
--------
*fig11*: external memory access (EMA) with the paper's default buffers (1 MB
activations + 1.125 MB weights, ``cocco-simba-separate``), batch 1. Methods
greedy (Halide), dp (Irregular-NN), sa, ga (20 x 500) and the exact MILP (HiGHS)
with the given time limit, warm-started by the best heuristic solution (so a time
limit still leaves the exact row at least as good as every heuristic, with a bound).
EMA is normalised to greedy; each method's gap is taken to the proven optimum when
the exact model proves it, else to the best bound.

*coexplore*: energy, alpha = 0.002, Cocco's candidate ranges, shared
(``cocco-simba-shared``) and separate buffers. Methods: the exact MILP and CP-SAT
(warm-started by the best solution of every heuristic row, so a time limit still
leaves them at least as good as each), ga, sa (co-exploring capacity with the
partition), and the paper's decoupled baselines,
each a GA over the partition for fixed capacities: *fixed S / M / L* (the 1st, middle
and last candidate), *grid+GA* (every 8th candidate of each list, a GA limited to 5 s per
point) and *random+GA* (as many random candidate points, seeded). Their objective is
the co-exploration objective ``capacity + alpha * energy`` of the best point.
A large graph can take hours per pair of candidates to prove
(:mod:`accelsched.formulations.partition.capacity`): ``--threads N`` has the exact models
solve N pairs at once, and ``--ledger-dir DIR`` keeps what each run proved (every pair's
bound, the best partition) in a pair ledger per workload and design, which the next run
with the same directory starts from; ``--designs`` and ``--workloads`` choose the rows, and
``--merge`` puts them into the committed table (rows run at once into one directory each keep
the other's: the results file is held while it is merged and written). *ledger* prints where
each proof stands: the incumbent, the bound (once every pair is settled, that the incumbent is
proven optimal, how far the bound is below it and the proof's tolerance), and per pair still open
or solved its bound, its cutoff, how far the bound is short of it, its ceiling (the LP value of
its master, which its root's bound cannot pass), the time spent and the open pairs within it
that its root may settle (a run solves the pair with the most first; such pairs are the ones to
give the runs of a divided proof). *merge* puts a proof divided between runs back together: the
pairs another run (another process or machine, started from a copy of ``--base-dir``'s ledgers,
given its share of the pairs by ``accelsched solve ... --ledger FILE --pairs ACT/WEIGHT,...``)
solved go into ``--ledger-dir``'s, each pair keeping the higher bound. A ledger is held by the
process working with it (a solve, a merge): a second one on the same file is refused rather than
let overwrite it.

Every number comes from :func:`accelsched.registry.run_method`: the solution
passed the problem's ``check`` and was re-evaluated by the shared cost model.
Results go to ``partition_<table>.json`` (every run) and ``.md`` (the table).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from accelsched.bench.partition_ledgers import (
    COEXPLORE_OPTIONS,
    DESIGN_PRESETS,
    ledger_name,
    ledger_report,
    merge_ledgers,
)
from accelsched.entry import run_entry
from accelsched.errors import InputError
from accelsched.filelock import exclusive, write_atomic
from accelsched.formulations.partition import capacity as partition_capacity
from accelsched.formulations.partition.driver import with_ledger, with_proof_params
from accelsched.formulations.partition.ledger import check_ledger
from accelsched.formulations.partition.proof_params import ProofParams
from accelsched.hardware import load_accelerator
from accelsched.logs import show_records
from accelsched.models.registry import load_workload
from accelsched.problems.partition import PROBLEM, PartitionInstance, PartitionSolution
from accelsched.problems.result import Result
from accelsched.registry import get_method, make_instance, run_method
from accelsched.solvers import SolveOptions

FIG11_WORKLOADS = ("vgg16", "resnet50", "googlenet", "randwire_a", "resnet152", "randwire_b", "transformer_base",
                   "gpt2", "nasnet")  # fmt: skip
COEXPLORE_WORKLOADS = ("resnet50", "googlenet", "randwire_a", "nasnet")
HEURISTICS = ("greedy", "dp", "sa", "ga")
EXACT = "milp-highs"
COEXPLORE_EXACT = ("milp-highs", "cpsat")
"""The exact methods of every co-exploration row, whose proven optimum (else their best bound) is the
reference of its gaps (:func:`_reference`)."""
DESIGNS = tuple(DESIGN_PRESETS)


@dataclass(frozen=True)
class Row:
    """One checked run."""

    table: str
    workload: str
    design: str
    method: str
    status: str
    objective: float | None
    bound: float | None
    runtime_s: float
    detail: dict[str, Any]

    @classmethod
    def of(cls, table: str, workload: str, design: str, method: str, result: Result[Any], **detail: Any) -> Row:
        """From a checked result."""
        extra: dict[str, Any] = {"native_status": result.stats.native_status}
        if result.solution is not None:
            extra["subgraphs"] = len(result.solution.subgraphs)
            extra["capacity_kb"] = (
                result.solution.act_capacity_bytes // 1024,
                result.solution.weight_capacity_bytes // 1024,
            )
        if result.cost is not None:
            extra["dram_bytes"] = result.cost.dram_bytes
            extra["energy_pj"] = result.cost.energy_pj
        return cls(table, workload, design, method, result.status.name, result.objective, result.bound,
                   result.runtime_s, {**extra, **detail})  # fmt: skip


def _run(
    instance: PartitionInstance,
    method: str,
    options: SolveOptions,
    warm_start: PartitionSolution | None = None,
    ledger: Path | None = None,
    params: ProofParams | None = None,
) -> Result[Any]:
    """Run a method through the checked entry point (an exact one with its pair ledger, if any, and
    the proof's parameters ``params`` when given: its own defaults otherwise)."""
    start = time.perf_counter()
    spec = get_method(PROBLEM.name, method)
    if params is not None:
        spec = with_proof_params(spec, params)
    if ledger is not None:
        spec = with_ledger(spec, ledger)
    result = run_method(PROBLEM, instance, spec, options, warm_start)
    print(f"    {method:<12} {result.status.name:<22} {result.objective or float('nan'):>16.6g} "
          f"{time.perf_counter() - start:8.1f} s", flush=True)  # fmt: skip
    return result


def _best(results: Iterable[Result[Any]]) -> PartitionSolution | None:
    """The best solution among heuristic results (the exact model's warm start)."""
    return _best_of((r.objective, r.solution) for r in results)


def _best_of(found: Iterable[tuple[float | None, PartitionSolution | None]]) -> PartitionSolution | None:
    """The solution of least objective among ``(objective, solution)`` pairs with both."""
    kept = [(value, k, solution) for k, (value, solution) in enumerate(found) if value is not None and solution]
    return min(kept)[2] if kept else None


def _reference(exact: Sequence[Row]) -> float | None:
    """The proven optimum when some exact row proves it, else the best (largest) lower bound."""
    proven = [r.objective for r in exact if r.status == "OPTIMAL" and r.objective is not None]
    if proven:
        return min(proven)
    bounds = [r.bound for r in exact if r.bound is not None]
    return max(bounds) if bounds else None


def _gap(value: float | None, reference: float | None) -> str:
    if value is None or reference is None:
        return "-"
    return f"{(value - reference) / max(abs(reference), 1e-12):.2%}"


# ------------------------------------------------------------------ fig. 11
def fig11(workloads: Sequence[str], options: SolveOptions, out_dir: Path, merge: bool = False) -> list[Row]:
    """Partition only: EMA of every method per workload."""
    rows: list[Row] = []
    acc = load_accelerator("cocco-simba-separate")
    for name in workloads:
        instance = make_instance(PROBLEM, load_workload(name), acc, {})
        print(f"  {name}: {instance.n_layers} layers", flush=True)
        results = {method: _run(instance, method, options) for method in HEURISTICS}
        exact = _run(instance, EXACT, options, _best(results.values()))
        for method, result in (*results.items(), (EXACT, exact)):
            rows.append(Row.of("fig11", name, "separate", method, result, layers=instance.n_layers,
                               time_limit_s=options.time_limit_s))  # fmt: skip
    return _publish(rows, out_dir / "partition_fig11", partial(_fig11_markdown, options=options), options, merge)


def _fig11_markdown(rows: list[Row], options: SolveOptions) -> str:
    sources = {_bound_source(r) for r in rows if r.method == EXACT}
    older = "; older rows: the compulsory traffic, without the forced part" if "compulsory traffic" in sources else ""
    lines = [
        "# Partition only (Cocco Fig. 11 style): external memory access, MB",
        "",
        f"cocco-simba-separate (1 MB activations + 1.125 MB weights), batch 1; exact = MILP on HiGHS "
        f"warm-started by the best heuristic, {_limit_text(rows, options)}; GA 20 x 500, seed {options.seed}. "
        "Cells: EMA in MB (ratio to greedy). Gap = to the proven optimum. When the column budget stops the "
        "enumeration, column generation completes the column set and the proof (by listing the columns below "
        "the gap, or by branch-and-price when that listing is too slow); when the time limit stops it "
        "first, the gap is to the best valid lower bound (column *bound from*: column generation's, over every "
        "column, or the forced traffic: every weight, the network input and output once, and the tensors "
        f"and streaming reads no subgraph that fits the buffers can avoid{older}), so it overstates the true gap.",
        "",
        "| workload | layers | greedy | dp | sa | ga | exact | exact status | exact time s | bound | bound from "
        "| greedy gap | dp gap | sa gap | ga gap | exact gap |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in dict.fromkeys(r.workload for r in rows):
        by = {r.method: r for r in rows if r.workload == name}
        exact = by[EXACT]
        reference = _reference([exact])
        greedy = by["greedy"].objective or float("nan")
        cells = [f"{(by[m].objective or float('nan')) / 1e6:.2f} ({(by[m].objective or 0) / greedy:.2f})"
                 for m in (*HEURISTICS, EXACT)]  # fmt: skip
        gaps = [_gap(by[m].objective, reference) for m in (*HEURISTICS, EXACT)]
        bound = "-" if exact.bound is None else f"{exact.bound / 1e6:.2f}"
        layers = exact.detail.get("layers", "")
        lines.append(f"| {name} | {layers} | " + " | ".join(cells) + f" | {exact.status} | {exact.runtime_s:.1f} | "
                     f"{bound} | {_bound_source(exact)} | " + " | ".join(gaps) + " |")  # fmt: skip
    return "\n".join(lines) + "\n"


def _bound_source(exact: Row) -> str:
    """Where an exact row's bound comes from, as its native status says."""
    if exact.status == "OPTIMAL":
        return "optimum"
    status = str(exact.detail.get("native_status", ""))
    if "bound = column generation's bound" in status:
        return "column generation"
    if "bound = the capacity decomposition's bound" in status:
        return "capacity decomposition"
    for source in ("forced traffic", "compulsory traffic"):
        if f"bound = {source}" in status:
            return source
    return "solver" if exact.bound is not None else "-"


# --------------------------------------------------------------- tables 1-2
def _fixed(instance: PartitionInstance, act: int, weight: int) -> PartitionInstance:
    weights = (weight,) if weight else ()
    return replace(instance, act_candidates_bytes=(act,), weight_candidates_bytes=weights)


@dataclass(frozen=True)
class Decoupled:
    """The best fixed-capacity GA run of a decoupled baseline."""

    objective: float
    """Co-exploration objective of the best point (inf when no point holds every layer)."""
    point: tuple[int, int]
    solution: PartitionSolution | None
    """The best partition, with the point's capacities (a solution of the co-exploration instance)."""
    points: int
    """Capacity points tried."""
    runtime_s: float


def _decoupled(instance: PartitionInstance, points: list[tuple[int, int]], options: SolveOptions) -> Decoupled:
    """Best co-exploration objective of a GA run at each fixed capacity point; time used."""
    best, best_point, start = float("inf"), points[0], time.perf_counter()
    solution = None
    for act, weight in points:
        fixed = _fixed(instance, act, weight)
        if fixed.infeasibility:
            continue
        result = run_method(PROBLEM, fixed, get_method(PROBLEM.name, "ga"), options)
        if result.cost is None:
            continue
        value = instance.objective_value(act + weight, instance.metric_of_report(result.cost))
        if value < best:
            best, best_point, solution = value, (act, weight), result.solution
    return Decoupled(best, best_point, solution, len(points), time.perf_counter() - start)


def coexplore(
    workloads: Sequence[str],
    options: SolveOptions,
    small_ga: SolveOptions,
    out_dir: Path,
    merge: bool = False,
    *,
    designs: Sequence[str] = DESIGNS,
    threads: int = 1,
    ledger_dir: Path | None = None,
) -> list[Row]:
    """Co-exploration: the exact optimum against the co-exploring and decoupled heuristics.

    ``threads``: pairs of candidates the exact models' capacity decomposition solves at once (the
    heuristics keep one thread, so that their rows do not depend on it). ``ledger_dir``: each
    workload and design keeps a pair ledger there (``partition_coexplore_<workload>_<design>.json``,
    :mod:`accelsched.formulations.partition.ledger`), which both exact models start from and add
    to, so that a later run goes on with the proof.
    """
    rows: list[Row] = []
    rng = np.random.default_rng(options.seed)
    exact_options = replace(options, threads=threads)
    for design in designs:
        acc = load_accelerator(DESIGN_PRESETS[design])
        for name in workloads:
            instance = make_instance(PROBLEM, load_workload(name), acc, COEXPLORE_OPTIONS)
            print(f"  {name} ({design}): {instance.n_layers} layers", flush=True)
            ledger = None if ledger_dir is None else ledger_dir / ledger_name(name, design)
            check_ledger(ledger, instance)  # a ledger refused or in use stops the run before the heuristics
            results = {method: _run(instance, method, options) for method in ("ga", "sa")}
            acts, weights = instance.act_candidates_bytes, instance.weight_candidates_bytes or (0,)
            fixed_points = {
                "fixed-S": (acts[0], weights[0]),
                "fixed-M": (acts[len(acts) // 2], weights[len(weights) // 2]),
                "fixed-L": (acts[-1], weights[-1]),
            }
            grid = [(a, w) for a in acts[::8] for w in weights[::8]]
            random_points = [(int(rng.choice(acts)), int(rng.choice(weights))) for _ in grid]
            decoupled: dict[str, Decoupled] = {}
            for label, points, opts in (
                *((k, [p], options) for k, p in fixed_points.items()),
                ("grid+GA", grid, small_ga),
                ("random+GA", random_points, small_ga),
            ):
                decoupled[label] = found = _decoupled(instance, points, opts)
                print(f"    {label:<12} {'FEASIBLE' if found.solution else 'NO_FIT':<22} {found.objective:>16.6g} "
                      f"{found.runtime_s:8.1f} s")  # fmt: skip
            heuristic = [(r.objective, r.solution) for r in results.values()]
            warm = _best_of([*heuristic, *((d.objective, d.solution) for d in decoupled.values())])
            exact = {method: _run(instance, method, exact_options, warm, ledger) for method in COEXPLORE_EXACT}
            detail: dict[str, Any] = {"time_limit_s": options.time_limit_s}
            for method, result in exact.items():
                more = {"threads": threads} | ({"ledger": ledger.as_posix()} if ledger else {})
                rows.append(Row.of("coexplore", name, design, method, result, **detail, **more))
            for method, result in results.items():
                rows.append(Row.of("coexplore", name, design, method, result, **detail))
            for label, found in decoupled.items():
                finite = found.objective if found.solution else None
                rows.append(Row("coexplore", name, design, label, "FEASIBLE" if finite else "INFEASIBLE", finite,
                                None, found.runtime_s, {"capacity_kb": (found.point[0] // 1024, found.point[1] // 1024),
                                                        "points": found.points}))  # fmt: skip
    return _publish(
        rows, out_dir / "partition_coexplore", partial(_coexplore_markdown, options=options), options, merge
    )


def _coexplore_markdown(rows: list[Row], options: SolveOptions) -> str:
    methods = list(dict.fromkeys(r.method for r in rows))
    lines = [
        "# Capacity co-exploration (Cocco Tables 1-2 style): objective = capacity bytes + 0.002 x energy pJ",
        "",
        f"Cocco's candidate ranges; exact = MILP on HiGHS and CP-SAT, both warm-started by the best heuristic row "
        f"({_limit_text(rows, options)}, each). Cells: objective (1e6), gap to the proven optimum (or, when "
        "neither model proves it, to the best bound), chosen capacities in KB (act / weight).",
        "",
        "| workload | buffer | " + " | ".join(methods) + " |",
        "|---|---|" + "---|" * len(methods),
    ]
    for name, design in dict.fromkeys((r.workload, r.design) for r in rows):
        by = {r.method: r for r in rows if (r.workload, r.design) == (name, design)}
        reference = _reference([by[m] for m in COEXPLORE_EXACT])
        cells = []
        for m in methods:
            r = by[m]
            cap = r.detail.get("capacity_kb")
            value = "-" if r.objective is None else f"{r.objective / 1e6:.3f}"
            cells.append(f"{value} ({_gap(r.objective, reference)}; {cap[0]}/{cap[1]})" if cap else value)
        lines.append(f"| {name} | {design} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Exact status per row: " + ", ".join(
        f"{r.workload}/{r.design} {r.method}: {r.status} in {r.runtime_s:.0f} s{_bound_text(r)}" for r in rows
        if r.method in COEXPLORE_EXACT))  # fmt: skip
    return "\n".join(lines) + "\n"


def _bound_text(exact: Row) -> str:
    """The bound of an exact row that does not prove its optimum, and where it comes from."""
    if exact.status == "OPTIMAL" or exact.bound is None:
        return ""
    return f" (bound {exact.bound / 1e6:.3f}, {_bound_source(exact)})"


def _limit_text(rows: Sequence[Row], options: SolveOptions) -> str:
    """The time limit the table states: one value, or the common one and the workloads run with another."""
    limits = {r.workload: r.detail.get("time_limit_s", options.time_limit_s) for r in rows}
    counts = Counter(limits.values())
    common = counts.most_common(1)[0][0] if counts else options.time_limit_s
    others = [f"{name}: {_seconds(limit)}" for name, limit in limits.items() if limit != common]
    return f"time limit {_seconds(common)}" + (f" ({', '.join(others)})" if others else "")


def _seconds(limit: float | None) -> str:
    return "none" if limit is None else f"{limit:g} s"


def _merge_conflict(stem: Path, options: SolveOptions) -> str | None:
    """Why ``--merge`` cannot add to the results file ``stem.json`` (made with another seed: the
    table states one), or None. Time limits may differ: every row records its own."""
    path = stem.with_suffix(".json")
    if not path.exists():
        return None
    seed = json.loads(path.read_text(encoding="utf-8"))["meta"].get("seed")
    if seed == options.seed:
        return None
    return f"--merge: {path} was made with seed {seed}, this run uses seed {options.seed}; use that seed or no --merge"


def _merged(rows: list[Row], stem: Path) -> list[Row]:
    """``rows`` in place of the rows of the same workload and buffer design in the results file
    ``stem.json`` (if any); rows of a new workload and design go last."""
    path = stem.with_suffix(".json")
    if not path.exists():
        return rows
    payload = json.loads(path.read_text(encoding="utf-8"))
    limit = payload["meta"].get("time_limit_s")
    fresh: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        fresh.setdefault((row.workload, row.design), []).append(row)
    merged: list[Row] = []
    placed: set[tuple[str, str]] = set()
    for row in (Row(**r) for r in payload["rows"]):
        row.detail.setdefault("time_limit_s", limit)
        key = (row.workload, row.design)
        if key not in fresh:
            merged.append(row)
        elif key not in placed:
            merged.extend(fresh[key])
            placed.add(key)
    return merged + [r for r in rows if (r.workload, r.design) not in placed]


PUBLISH_WAIT_S = 600.0
"""How long a table waits for another process writing the same results file, seconds."""


def _publish(
    rows: list[Row],
    stem: Path,
    markdown: Callable[[list[Row]], str],
    options: SolveOptions,
    merge: bool,
    wait_s: float = PUBLISH_WAIT_S,
) -> list[Row]:
    """Write a table's results file ``stem.json`` and its Markdown, ``rows`` merged into the file's
    rows when ``merge`` (:func:`_merged`); returns the rows written.

    The file is held against other processes from the read to the write, so that two tables run at
    once into one directory each keep the other's rows (the second waits up to ``wait_s`` seconds,
    :data:`PUBLISH_WAIT_S` by default)."""
    fix = "wait for the other table to finish, or give this one another --out-dir"
    with exclusive(stem.with_suffix(".json"), what="results file", fix=fix, wait_s=wait_s):
        rows = _merged(rows, stem) if merge else rows
        _write(rows, stem, markdown(rows), options)
    return rows


def _write(rows: list[Row], stem: Path, markdown: str, options: SolveOptions) -> None:
    meta = {"python": platform.python_version(), "machine": platform.machine(), "cpus": _cpus(),
            "time_limit_s": options.time_limit_s, "seed": options.seed}  # fmt: skip
    payload = {"meta": meta, "rows": [r.__dict__ for r in rows]}
    write_atomic(stem.with_suffix(".json"), json.dumps(payload, indent=1) + "\n")
    write_atomic(stem.with_suffix(".md"), markdown)
    print(markdown)


def render(path: Path) -> None:
    """Redraw the Markdown table of a results file (``partition_fig11.json`` or ``partition_coexplore.json``)."""
    payload = json.loads(path.read_text(encoding="utf-8"))
    rows = [Row(**row) for row in payload["rows"]]
    limit = payload["meta"].get("time_limit_s")
    options = SolveOptions(time_limit_s=limit, seed=payload["meta"].get("seed", 0))
    markdown = _fig11_markdown(rows, options) if rows[0].table == "fig11" else _coexplore_markdown(rows, options)
    write_atomic(path.with_suffix(".md"), markdown)
    print(markdown)


def _cpus() -> int:
    import os

    return os.cpu_count() or 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run one table and write it."""
    parser = argparse.ArgumentParser(prog="python -m accelsched.bench.partition_tables", description=__doc__)
    parser.add_argument("table", choices=["fig11", "coexplore", "ledger", "merge", "render"])
    parser.add_argument("results", nargs="?", help="render: a partition_<table>.json to redraw as Markdown")
    parser.add_argument("--workloads", default=None, help="comma-separated (default: the paper's)")
    parser.add_argument("--time-limit", type=float, default=300.0, help="per exact solve and per heuristic, s")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", default="bench/results")
    parser.add_argument(
        "--merge", action="store_true", help="replace only these workloads' rows in the existing results file"
    )
    parser.add_argument(
        "--designs", default=",".join(DESIGNS), help="coexplore: comma-separated buffer designs (shared, separate)"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="coexplore: pairs of candidates the exact models solve at once"
    )
    parser.add_argument(
        "--ledger-dir", default=None, help="coexplore: keep a pair ledger per workload and design here, to resume"
    )
    parser.add_argument("--from-dir", default=None, help="merge: the ledgers of another run, merged into --ledger-dir")
    parser.add_argument("--base-dir", default=None, help="merge: the ledgers that other run started from")
    args = parser.parse_args(argv)
    designs = tuple(d for d in args.designs.split(",") if d)
    unknown = sorted(set(designs) - set(DESIGNS))
    if unknown or not designs:
        parser.error(f"--designs: unknown {unknown or 'empty list'}; choose from {', '.join(DESIGNS)}")
    if args.threads < 1:
        parser.error(f"--threads: {args.threads}; give at least 1")
    options = SolveOptions(time_limit_s=args.time_limit, seed=args.seed)
    out_dir = Path(args.out_dir)
    if args.merge and args.table != "render":
        conflict = _merge_conflict(out_dir / f"partition_{args.table}", options)
        if conflict:
            parser.error(conflict)
    if args.table == "render":
        if not args.results:
            parser.error("render needs the results JSON file")
        render(Path(args.results))
    elif args.table == "ledger":
        if args.ledger_dir is None:
            parser.error("ledger needs --ledger-dir")
        workloads = args.workloads.split(",") if args.workloads else COEXPLORE_WORKLOADS
        try:
            print(ledger_report(workloads, designs, Path(args.ledger_dir)))
        except InputError as exc:
            parser.exit(2, f"{parser.prog}: error: {exc.one_line()}\n")
    elif args.table == "merge":
        if args.ledger_dir is None or args.from_dir is None:
            parser.error("merge needs --ledger-dir (merged into) and --from-dir (merged from)")
        workloads = args.workloads.split(",") if args.workloads else COEXPLORE_WORKLOADS
        base_dir = None if args.base_dir is None else Path(args.base_dir)
        try:
            print(merge_ledgers(workloads, designs, Path(args.ledger_dir), Path(args.from_dir), base_dir))
        except InputError as exc:
            parser.exit(2, f"{parser.prog}: error: {exc.one_line()}\n")
    elif args.table == "fig11":
        fig11(args.workloads.split(",") if args.workloads else FIG11_WORKLOADS, options, out_dir, args.merge)
    else:
        small = SolveOptions(time_limit_s=min(args.time_limit, 5.0), seed=args.seed)
        workloads = args.workloads.split(",") if args.workloads else COEXPLORE_WORKLOADS
        ledger_dir = None if args.ledger_dir is None else Path(args.ledger_dir)
        # each pair of candidates of the exact models' capacity decomposition as it starts and ends
        hide = show_records(
            sys.stdout, "      %(asctime)s %(message)s", logger=partition_capacity.__name__, datefmt="%H:%M:%S"
        )
        try:
            coexplore(
                workloads,
                options,
                small,
                out_dir,
                args.merge,
                designs=designs,
                threads=args.threads,
                ledger_dir=ledger_dir,
            )
        except InputError as exc:  # a ledger refused: for another instance, or not a ledger
            parser.exit(2, f"{parser.prog}: error: {exc.one_line()}\n")
        finally:
            hide()
    return 0


if __name__ == "__main__":
    raise SystemExit(run_entry(main))
