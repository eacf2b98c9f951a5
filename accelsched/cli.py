"""The ``accelsched`` command line.

Commands
--------
``list workloads|hardware|methods``
    What is available.
``evaluate``
    Cost report of a fixed schedule family (today: layer-by-layer) on a workload and a preset.
``solve PROBLEM``
    Run one method of a registered problem; the solution is checked and re-evaluated.
``gap PROBLEM``
    Run several methods of a problem on the same instance and print their gaps.
``bench SUITE``
    Run a benchmark suite (tiny, small, paper; resumable) and write results and a gap report.
``demo``
    A short end-to-end example on built-in data.

Bad input exits with status 2 and one line on stderr (what, where, how to fix).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

from accelsched.bench.runner import bench
from accelsched.entry import run_entry
from accelsched.errors import AccelschedError, InfeasibleSolution, InputError
from accelsched.formulations.partition.capacity_points import check_share
from accelsched.formulations.partition.driver import takes_ledger, with_ledger, with_proof_params
from accelsched.formulations.partition.ledger import check_ledger
from accelsched.formulations.partition.proof_params import ProofParams
from accelsched.hardware import load_accelerator, preset_names
from accelsched.hardware.cost.layer_by_layer import evaluate_layer_by_layer, layer_by_layer_steps
from accelsched.hardware.cost.report import CostReport
from accelsched.heuristics.depth_first_rules import uniform_solution
from accelsched.logs import show_records
from accelsched.models import zoo
from accelsched.models.registry import load_workload
from accelsched.problems.base import MethodSpec
from accelsched.problems.depth_first import OverlapMode, Strategy, parse_tile
from accelsched.problems.partition import PartitionInstance
from accelsched.registry import get_method, get_problem, make_instance, methods, problems, run_method
from accelsched.solvers import SolveOptions

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"accelsched: error: {message} (run '{self.prog} --help')\n")


def _add_instance_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workload", required=True, help="zoo name, random:N:SEED, or a .onnx / .json file")
    p.add_argument("--hardware", required=True, help="preset name or a .toml file")
    p.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    p.add_argument("--atoms", default=None, choices=["even", "exact", "sa"],
                   help="atomic: atom sizes (same as --option atoms=...)")  # fmt: skip


def _parser() -> _Parser:
    parser = _Parser(prog="accelsched", description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p_list = sub.add_parser("list", help="list workloads, hardware presets or methods")
    p_list.add_argument("what", choices=["workloads", "hardware", "methods"])

    p_eval = sub.add_parser("evaluate", help="cost report of a problem's solution file, or of layer-by-layer execution")
    p_eval.add_argument("problem", nargs="?", default=None, help="problem of --solution (omit for layer-by-layer)")
    _add_instance_args(p_eval)
    p_eval.add_argument(
        "--solution",
        "--tree",
        dest="solution",
        default=None,
        metavar="FILE",
        help="solution JSON (or 'solve --json' output); for ra-tree also SET's tab-indented tree text",
    )
    p_eval.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="problem option")
    p_eval.add_argument("--tile", default=None, metavar="TXxTY", help="depth-first: one tile size for every stack")
    p_eval.add_argument(
        "--mode", default=None, help="depth-first: overlap mode (fully-recompute, h-cached, fully-cached)"
    )
    p_eval.add_argument("--schedule", choices=["layer-by-layer"], default="layer-by-layer")
    p_eval.add_argument("--cores", default="all", help="'all' or comma-separated core ids (default all)")
    p_eval.add_argument("--per-layer", action="store_true", help="also print one line per layer")
    p_eval.add_argument("--json", action="store_true", help="print one JSON object")

    for name, text in (("solve", "run one method on a problem instance"), ("gap", "compare methods on one instance")):
        p = sub.add_parser(name, help=text)
        p.add_argument("problem", help="problem name (accelsched list methods)")
        _add_instance_args(p)
        if name == "solve":
            p.add_argument("--method", required=True)
            p.add_argument(
                "--warm-start",
                default=None,
                metavar="METHOD|FILE",
                help="a method whose solution seeds this one, or a solution file (JSON, or 'solve --json' output)",
            )
            p.add_argument(
                "--ledger",
                default=None,
                metavar="FILE",
                help=(
                    "partition co-exploration, exact methods: a pair ledger to resume the capacity decomposition "
                    "from and record each solved pair in (created if missing)"
                ),
            )
            p.add_argument(
                "--pairs",
                default=None,
                metavar="ACT/WEIGHT,...",
                help=(
                    "with --ledger: solve only these pairs of candidates (KB; weight 0 with a shared buffer), "
                    "in the decomposition's running order, not the order given (first the pair whose root may "
                    "settle the most open pairs within it), this run's share of a proof divided between runs, "
                    "each on a copy of one ledger "
                    "(put together with 'python -m accelsched.bench.partition_tables merge')"
                ),
            )
            p.add_argument(
                "--decompose-above",
                type=int,
                default=None,
                metavar="N",
                help=(
                    "partition co-exploration, exact methods: solve a complete table of more than N columns "
                    "pair by pair too (default: the method's, 10000 for the MILPs; CP-SAT solves it whole)"
                ),
            )
        else:
            p.add_argument("--methods", default=None, help="comma-separated methods (default: all of the problem)")
        p.add_argument("--time-limit", type=float, default=None, metavar="S", help="time limit per method, seconds")
        p.add_argument(
            "-v",
            "--verbose",
            action="count",
            default=0,
            help=(
                "log progress to stderr with timestamps (partition's exact methods: each pair of the capacity "
                "decomposition as it starts and ends, each branch-and-price node as it ends, worker processes' "
                "with their pid); twice (-vv): also each exact pricing round of column generation, with its "
                "master's LP value, the bound and the time"
            ),
        )
        p.add_argument("--seed", type=int, default=0)
        p.add_argument(
            "--threads",
            type=int,
            default=1,
            metavar="N",
            help=(
                "threads of a solver (CP-SAT workers, HiGHS, CBC), processes of an SA's chains, or pairs of "
                "capacity candidates solved at once by the partition co-exploration's decomposition"
            ),
        )
        p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="problem option")
        p.add_argument("--json", action="store_true", help="print JSON")

    p_bench = sub.add_parser("bench", help="run a benchmark suite (resumable); write JSONL, CSV and a gap report")
    p_bench.add_argument("suite", help="tiny, small or paper")
    p_bench.add_argument("--problems", default=None, help="comma-separated problems (default: all with suites)")
    p_bench.add_argument("--time-limit", type=float, default=None, metavar="S", help="time limit per run, seconds")
    p_bench.add_argument("--seeds", type=int, default=None, metavar="N", help="seeds of the seeded methods")
    p_bench.add_argument("--out", default=None, metavar="DIR", help="output directory (default bench_SUITE)")
    p_bench.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="parallel workers (default: one per CPU; 0: in this process)",
    )
    p_bench.add_argument("--dask", default=None, metavar="ADDRESS", help="local, or tcp://HOST:PORT of a scheduler")
    p_bench.add_argument("--retry-errors", action="store_true", help="run again the cells recorded as ERROR")

    sub.add_parser("demo", help="a short end-to-end example on built-in data")
    return parser


# --------------------------------------------------------------------- output
def format_report(report: CostReport, clock_hz: float) -> str:
    """A cost report as aligned text lines."""
    lines = [
        f"  energy        {report.energy_pj / 1e6:12.3f} uJ",
    ]
    total = report.energy_pj or 1.0
    for key, value in sorted(report.energy_breakdown_pj.items(), key=lambda kv: -kv[1]):
        if value > 0:
            lines.append(f"    {key:<12}{value / 1e6:12.3f} uJ  {100 * value / total:5.1f} %")
    lines += [
        f"  latency       {report.latency_cycles:12.0f} cycles  ({report.latency_cycles / clock_hz * 1e3:.3f} ms)",
        f"  DRAM traffic  {report.dram_bytes / 1e6:12.3f} MB",
        f"  NoC traffic   {report.noc_byte_hops / 1e6:12.3f} MB*hops",
        f"  peak on-chip  {report.peak_memory_bytes / 1e3:12.1f} kB",
        f"  utilization   {100 * report.utilization:12.1f} %",
        f"  EDP           {report.edp:12.4g} pJ*cycles",
    ]
    return "\n".join(lines)


# -------------------------------------------------------------------- commands
def _cmd_list(what: str) -> int:
    if what == "workloads":
        print(f"{'name':<22}{'layers':>7}{'GMAC':>10}{'weights MB':>12}  description")
        for name, entry in zoo.entries().items():
            w = entry.build(1)
            print(f"{name:<22}{len(w):>7}{w.macs / 1e9:>10.3f}{w.weight_bytes / 1e6:>12.2f}  {entry.description}")
        print("random:N:SEED         a seeded random DAG of N layers; also any .onnx or .json workload file")
    elif what == "hardware":
        for name in preset_names():
            print(load_accelerator(name).summary())
    else:
        table = problems()
        if not table:
            print("no problem module is registered yet; 'accelsched evaluate' runs the layer-by-layer evaluator")
        for problem in table.values():
            print(f"{problem.name}: {problem.description}")
            for method in methods(problem.name).values():
                print(f"  {method.name:<24}{method.kind:<10}{method.description}")
            if not methods(problem.name):
                print(f"  (no methods yet: 'accelsched evaluate {problem.name} --solution FILE' evaluates a solution)")
    return 0


def _parse_cores(text: str) -> list[int] | None:
    if text == "all":
        return None
    try:
        return [int(c) for c in text.split(",")]
    except ValueError:
        raise InputError(f"bad core list {text!r}", "--cores", "write 'all' or ids such as 0,1,2") from None


def _read_solution(path: str, problem: Any) -> Any:
    """A solution from a JSON file holding it (or ``solve --json`` output), or from the problem's text form."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise InputError(f"cannot read solution file ({exc.strerror})", path, "give an existing JSON file") from None
    except UnicodeDecodeError:
        raise InputError("not a text file", path, "write the solution as JSON") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if problem.solution_from_text is None:
            raise InputError(f"not JSON: {exc.msg} at line {exc.lineno}", path, "write the solution as JSON") from None
        try:
            return problem.solution_from_text(text, path)
        except ValueError as text_error:
            raise InputError(str(text_error), "", f"write the {problem.name} text form or JSON") from None
    if isinstance(data, dict) and isinstance(data.get("solution"), dict):
        data = data["solution"]
    try:
        return problem.solution_from_dict(data)
    except (ValueError, TypeError, AttributeError) as exc:
        raise InputError(str(exc), path, "see the solution format in 'accelsched solve ... --json'") from None


def _cmd_evaluate_solution(args: argparse.Namespace) -> int:
    problem = get_problem(args.problem)
    if (args.tile is not None or args.mode is not None) and problem.name != "depth-first":
        raise InputError("--tile and --mode are options of depth-first", "--tile/--mode", "drop them")
    if args.solution is None and problem.name != "depth-first":
        raise InputError(f"evaluating a {args.problem} solution needs a file", "--solution", "add --solution FILE")
    workload = load_workload(args.workload, batch=args.batch)
    acc = load_accelerator(args.hardware)
    instance = make_instance(problem, workload, acc, _options(args, problem.name))
    if args.solution is None:
        solution = _depth_first_uniform(instance, args.tile, args.mode)
    else:
        solution = _read_solution(args.solution, problem)
    problem.check(instance, solution)
    report = problem.evaluate(instance, solution)
    value = problem.objective(instance, solution, report)
    source = args.solution or f"tile {args.tile}, {args.mode}"
    if args.json:
        print(
            json.dumps(
                {
                    "problem": problem.name,
                    "objective": value,
                    "solution": solution.to_dict(),
                    "cost": report.to_dict(),
                }
            )
        )
        return 0
    print(f"{workload.summary()}\n{acc.summary()}\n{problem.name} solution {source}: valid, objective {value:.6g}")
    if hasattr(solution, "describe"):
        print(solution.describe())
    print(format_report(report, acc.clock_hz))
    return 0


def _depth_first_uniform(instance: Any, tile: str | None, mode: str | None) -> Any:
    """The depth-first solution of ``evaluate depth-first --tile --mode``: one strategy, the fuse rule's stacks."""

    if tile is None or mode is None:
        raise InputError(
            "evaluating depth-first needs a solution file, or --tile and --mode",
            "--tile/--mode",
            "add e.g. --tile 60x72 --mode fully-cached, or --solution FILE",
        )
    try:
        tile_x, tile_y = parse_tile(tile)
    except ValueError as exc:
        raise InputError(str(exc), "--tile", "write TXxTY with both sizes >= 1, e.g. 60x72") from None
    try:
        overlap = OverlapMode.parse(mode)
    except ValueError as exc:
        raise InputError(str(exc), "--mode") from None
    last = instance.workload[instance.order[-1]]
    first = instance.workload[instance.order[0]]
    widest = max(layer.OX for layer in instance.workload)
    tallest = max(layer.OY for layer in instance.workload)
    if tile_x > widest or tile_y > tallest:
        raise InputError(
            f"tile {tile_x}x{tile_y} is larger than every output of {instance.workload.name} "
            f"(largest {widest}x{tallest}; first layer {first.OX}x{first.OY}, last {last.OX}x{last.OY})",
            "--tile",
            "give a tile no larger than the outputs (it is clipped to each stack's output)",
        )
    return uniform_solution(instance, Strategy(tile_x, tile_y, overlap))


def _cmd_evaluate(args: argparse.Namespace) -> int:
    if args.atoms is not None:
        raise InputError("--atoms applies to the atomic problem", "--atoms", "write: accelsched evaluate atomic ...")
    workload = load_workload(args.workload, batch=args.batch)
    acc = load_accelerator(args.hardware)
    cores = _parse_cores(args.cores)
    chosen = range(acc.n_cores) if cores is None else cores
    missing = [c for c in chosen if not 0 <= c < acc.n_cores]
    if missing:
        raise InputError(f"{acc.name} has no core {missing[0]} (cores are 0..{acc.n_cores - 1})", "--cores")
    for layer in workload:
        if not any(acc.core(c).supports(layer.kind) for c in chosen):
            raise InputError(
                f"no chosen core of {acc.name} runs layer {layer.name!r} ({layer.kind.value})",
                "--cores",
                "add a core that supports it (accelsched list hardware)",
            )
    report = evaluate_layer_by_layer(workload, acc, cores)
    if args.json:
        print(
            json.dumps(
                {
                    "workload": workload.name,
                    "hardware": acc.name,
                    "schedule": args.schedule,
                    "cost": report.to_dict(),
                }
            )
        )
        return 0
    print(f"{workload.summary()}\n{acc.summary()}\nschedule: {args.schedule}")
    print(format_report(report, acc.clock_hz))
    if args.per_layer:
        for step in layer_by_layer_steps(workload, acc, cores):
            print(
                f"  {step.layer:<24} cores {len(step.cores):>3} split {step.split_dim or '-':<3}"
                f" {step.latency_cycles:>12.0f} cyc {step.energy_pj / 1e6:>10.3f} uJ {step.dram_bytes / 1e3:>10.1f} kB"
            )
    return 0


def _options(args: argparse.Namespace, problem: str) -> dict[str, str]:
    """The ``--option KEY=VALUE`` pairs, with ``--atoms`` as the atomic problem's ``atoms`` option."""
    out = {}
    for pair in args.option:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"bad option {pair!r}", "--option", "write KEY=VALUE")
        out[key] = value
    if args.atoms is not None:
        if problem != "atomic":
            raise InputError(f"--atoms applies to the atomic problem, not {problem}", "--atoms", "drop it")
        if out.get("atoms", args.atoms) != args.atoms:
            raise InputError(f"--atoms {args.atoms} and --option atoms={out['atoms']} disagree", "--atoms",
                             "give one of them")  # fmt: skip
        out["atoms"] = args.atoms
    return out


def _decomposing(method: MethodSpec, columns: int) -> MethodSpec:
    """``method`` (an exact partition model) solving a complete co-exploration table of more than
    ``columns`` columns pair by pair (``--decompose-above``)."""

    try:
        params = ProofParams(decompose_columns=columns)
    except ValueError as exc:
        raise InputError(str(exc), "--decompose-above", "give a number of columns, 0 or more") from None
    return with_proof_params(method, params)


def _share(text: str, instance: PartitionInstance) -> frozenset[tuple[int, int]]:
    """The pairs of ``--pairs`` (``ACT/WEIGHT`` in KB, comma-separated) in bytes, checked against the
    instance's pairs of candidates."""

    pairs = set()
    for item in text.split(","):
        act, sep, weight = item.strip().partition("/")
        if not (sep and act.isdigit() and weight.isdigit()):
            raise InputError(
                f"bad pair {item.strip()!r}", "--pairs", "write ACT/WEIGHT in KB, comma-separated, e.g. 512/504,576/432"
            )
        pairs.add((int(act) * 1024, int(weight) * 1024))
    return check_share(instance, pairs)


def _cmd_solve_or_gap(args: argparse.Namespace) -> int:
    problem = get_problem(args.problem)
    workload = load_workload(args.workload, batch=args.batch)
    acc = load_accelerator(args.hardware)
    instance = make_instance(problem, workload, acc, _options(args, problem.name))
    try:
        options = SolveOptions(time_limit_s=args.time_limit, seed=args.seed, threads=args.threads)
    except ValueError as exc:
        raise InputError(str(exc), "--time-limit / --seed / --threads") from None
    if args.command == "solve":
        method = get_method(problem.name, args.method)
        if args.decompose_above is not None:
            method = _decomposing(method, args.decompose_above)
        if args.ledger is not None:
            takers = [name for name, spec in methods(problem.name).items() if takes_ledger(spec)]
            ledgered = with_ledger(method, args.ledger, takers=takers)  # a method without a ledger is refused first
            check_ledger(args.ledger, instance)  # a ledger refused or in use stops the run before any warm start
            share = None if args.pairs is None else _share(args.pairs, instance)
            method = ledgered if share is None else with_ledger(method, args.ledger, share, takers=takers)
        elif args.pairs is not None:
            raise InputError(
                "--pairs gives a run its share of a proof divided between runs, which only a pair ledger keeps",
                "--pairs",
                "give --ledger FILE too: each run a copy of one ledger, merged afterwards",
            )
        warm = None
        if args.warm_start:
            warm = _warm_start(args.warm_start, problem, instance, options)
        result = run_method(problem, instance, method, options, warm_start=warm)
        if args.json:
            print(json.dumps(result.to_dict()))
        else:
            print(_result_line(result))
            if result.cost is not None:
                print(format_report(result.cost, acc.clock_hz))
        return 0
    names = args.methods.split(",") if args.methods else list(methods(problem.name))
    results = [run_method(problem, instance, get_method(problem.name, n), options) for n in names]
    if args.json:
        print(json.dumps([r.to_dict() for r in results]))
        return 0
    best = min((r.objective for r in results if r.objective is not None), default=None)
    bound = max((r.bound for r in results if r.bound is not None), default=None)
    print(f"{'method':<24}{'status':<24}{'objective':>16}{'bound':>16}{'gap to best':>12}{'time s':>9}")
    for r in results:
        gap = "" if r.objective is None or best is None else f"{_relative(r.objective, best):.2%}"
        print(
            f"{r.method:<24}{r.status.name:<24}{_num(r.objective):>16}{_num(r.bound):>16}{gap:>12}{r.runtime_s:>9.2f}"
        )
    reasons = dict.fromkeys(r.stats.native_status for r in results if r.solution is None and r.stats.native_status)
    for reason in reasons:
        print(f"no solution: {reason}")
    if bound is not None:
        print(f"best proven bound: {bound:.6g}")
        below = [r.method for r in results if r.objective is not None and r.objective < bound * (1 - 1e-9)]
        if below:
            print(f"note: {', '.join(below)} finish below it: the bound covers the instance as built, and these "
                  "methods re-discretize it (the atomic baselines choose atom sizes of their own)")  # fmt: skip
    return 0


def _warm_start(source: str, problem: Any, instance: Any, options: Any) -> Any:
    """The solution ``--warm-start`` names: a method's (run here), or one read from a file and checked
    against the instance (a method's name wins over a file of the same name)."""

    known = methods(problem.name)
    if source not in known and os.path.isfile(source):
        solution = _read_solution(source, problem)
        try:
            problem.check(instance, solution)
        except InfeasibleSolution as exc:
            fix = "give a solution of the same workload, hardware and options"
            raise InputError(f"the warm start is not a solution of this instance: {exc}", source, fix) from None
        return solution
    if source not in known:
        fix = f"give an existing solution file or one of the methods: {', '.join(sorted(known))}"
        raise InputError(f"{source!r} is neither a method of {problem.name} nor a file", "--warm-start", fix)
    return run_method(problem, instance, get_method(problem.name, source), options).solution


def _relative(value: float, best: float) -> float:
    return abs(value - best) / max(abs(best), 1e-12)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def _result_line(result: Any) -> str:
    line = (
        f"{result.method} [{result.backend or '-'}]: {result.status.name}, objective {_num(result.objective)}, "
        f"bound {_num(result.bound)}, {result.runtime_s:.2f} s"
    )
    if result.solution is None and result.stats.native_status:
        line += f"\n  {result.stats.native_status}"
    return line


def _cmd_demo() -> int:
    start = time.perf_counter()
    cases = [
        ("resnet50", "set-edge-4x4", [0], "one tile"),
        ("resnet50", "set-edge-4x4", None, "all 16 tiles"),
        ("mobilenet_v2", "defines-edge-tpu", None, "single core"),
    ]
    print(
        "accelsched demo: layer-by-layer schedules evaluated by the shared analytical cost model, then one\n"
        "scheduling problem solved exactly and by the heuristics of the literature\n"
    )
    for workload_name, preset, cores, label in cases:
        workload = load_workload(workload_name)
        acc = load_accelerator(preset)
        report = evaluate_layer_by_layer(workload, acc, cores)
        print(f"{workload.summary()}\non {acc.summary()} ({label})")
        print(format_report(report, acc.clock_hz))
        print()
    _demo_partition()
    print(f"done in {time.perf_counter() - start:.1f} s; see 'accelsched --help' for more")
    return 0


def _demo_partition() -> None:
    """Cocco's partition of ResNet-50: the heuristics of the literature against the proven optimum."""

    problem = get_problem("partition")
    instance = make_instance(problem, load_workload("resnet50"), load_accelerator("cocco-simba-separate"), {})
    print("partition (Cocco): ResNet-50 as fused subgraphs on 1 MB + 1.125 MB buffers, external memory access")
    options = SolveOptions(time_limit_s=60, seed=0)
    results = [
        run_method(problem, instance, get_method(problem.name, m), options)
        for m in ("milp-highs", "greedy", "dp", "sa")
    ]
    exact = results[0]
    for r in results:
        gap = (
            ""
            if r.objective is None or exact.objective is None
            else f"gap {_relative(r.objective, exact.objective):6.2%}"
        )
        print(f"  {r.method:<12}{r.status.name:<10}{_num(r.objective):>12} B  {gap}  {r.runtime_s:5.2f} s")
    print()


def _cmd_bench(args: argparse.Namespace) -> int:
    chosen = [p for p in args.problems.split(",") if p] if args.problems else None
    return bench(args.suite, chosen, time_limit_s=args.time_limit, seeds=args.seeds, out=args.out,
                 workers=args.workers, dask=args.dask, retry_errors=args.retry_errors)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``accelsched`` command; returns the exit status."""
    args = _parser().parse_args(argv)

    def dispatch() -> int:
        with _progress(getattr(args, "verbose", 0)):
            return _dispatch(args)

    return run_entry(dispatch)  # the reader going away (``| head``) is not an error of ours


@contextlib.contextmanager
def _progress(verbose: int) -> Iterator[None]:
    """With ``verbose`` (``--verbose`` given that many times), the package's INFO records, or from 2 on
    its DEBUG records too, go to stderr with timestamps while the command runs (the solvers' own
    loggers, e.g. Pyomo's HiGHS output, stay quiet)."""
    if not verbose:
        yield
        return
    level = logging.DEBUG if verbose > 1 else logging.INFO
    hide = show_records(sys.stderr, "%(asctime)s %(name)s: %(message)s", level=level)
    try:
        yield
    finally:
        hide()


def _dispatch(args: argparse.Namespace) -> int:
    try:
        if args.command == "list":
            return _cmd_list(args.what)
        if args.command == "evaluate":
            return _cmd_evaluate_solution(args) if args.problem else _cmd_evaluate(args)
        if args.command in ("solve", "gap"):
            return _cmd_solve_or_gap(args)
        if args.command == "bench":
            return _cmd_bench(args)
        return _cmd_demo()
    except InputError as exc:
        print(f"accelsched: error: {exc.one_line()}", file=sys.stderr)
        return 2
    except AccelschedError as exc:
        print(f"accelsched: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
