"""Atomic Dataflow figures: a per-engine Gantt chart of a round schedule.

Usage::

    python -m accelsched.bench.atomic gantt --workload random:5:2 [--hardware atomic-8x8-kc]
        [--option engines=4 --option atoms=exact] [--method dp] [--time-limit S] --out gantt.png

The schedule comes from :func:`accelsched.registry.run_method` (checked and
re-evaluated). Each atom is a box on its engine from the time the round
evaluator (:func:`accelsched.problems.atomic.cost.simulate`) starts it to its end,
coloured by layer, hatched before it for its NoC load and after it for the part of
its HBM transfers the computation does not hide (they are double-buffered under
it); dashed lines mark the round
boundaries, so the idle tail of each engine in a round (the synchronisation cost
that atom sizing minimizes) is visible.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from accelsched.entry import run_entry
from accelsched.errors import InputError
from accelsched.hardware import load_accelerator
from accelsched.models.registry import load_workload
from accelsched.problems.atomic import PROBLEM, AtomicInstance, RoundSchedule, simulate
from accelsched.registry import get_method, make_instance, run_method
from accelsched.solvers import SolveOptions

__all__ = ["draw_gantt", "main"]


def draw_gantt(instance: AtomicInstance, schedule: RoundSchedule, path: str | Path, title: str = "") -> Path:
    """Write the Gantt chart of a checked ``schedule`` (engines: its own, else the slot order in each round)."""
    import matplotlib  # optional heavy backend: imported only to draw

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # optional heavy backend, as above

    dag = instance.dag_for(schedule)
    run = simulate(instance, schedule)
    layers = list(dict.fromkeys(a.layer for a in dag.atoms))
    colours = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(10, 0.35 * instance.n_engines + 1.5))
    for a, atom in enumerate(dag.atoms):
        engine, start = int(run.engine[a]), float(run.start_cycles[a])
        load, compute = float(run.load_cycles[a]), float(atom.duration_cycles)
        colour = colours(layers.index(atom.layer) % 20)
        ax.broken_barh([(start + load, compute)], (engine - 0.4, 0.8), facecolors=colour, edgecolors="white")
        moves = [(start, load), (start + load + compute, float(run.store_cycles[a]))]
        ax.broken_barh([m for m in moves if m[1] > 0], (engine - 0.4, 0.8), facecolors="none", edgecolors=colour,
                       hatch="///", linewidth=0.3)  # fmt: skip
    for end in run.round_end_cycles:
        ax.axvline(float(end), color="grey", linestyle="--", linewidth=0.5)
    ax.set_xlabel("cycles")
    ax.set_ylabel("engine")
    ax.set_ylim(-0.6, instance.n_engines - 0.4)
    ax.set_title(title or f"{len(schedule.rounds)} rounds, {run.latency_cycles:,.0f} cycles")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours(i % 20)) for i in range(len(layers))]
    ax.legend(handles, layers, fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="layer")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m accelsched.bench.atomic", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("command", choices=["gantt"])
    parser.add_argument("--workload", required=True)
    parser.add_argument("--hardware", default="atomic-8x8-kc")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--method", default="dp")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    try:
        options = dict(item.split("=", 1) for item in args.option)
        instance = make_instance(PROBLEM, load_workload(args.workload), load_accelerator(args.hardware), options)
        result = run_method(PROBLEM, instance, get_method("atomic", args.method),
                            SolveOptions(time_limit_s=args.time_limit))  # fmt: skip
    except (InputError, ValueError) as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    if result.solution is None:
        parser.exit(1, f"{parser.prog}: {args.method} found no schedule ({result.status.name})\n")
    print(draw_gantt(instance, result.solution, args.out, f"{args.workload} on {args.hardware}, {args.method}"))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(run_entry(main))
