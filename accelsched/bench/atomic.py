"""Atomic Dataflow figures: a per-engine Gantt chart of a round schedule.

Usage::

    python -m accelsched.bench.atomic gantt --workload random:5:2 [--hardware atomic-8x8-kc]
        [--option engines=4 --option atoms=exact] [--method dp] [--time-limit S] --out gantt.png

The schedule comes from :func:`accelsched.registry.run_method` (checked and
re-evaluated). Rounds run back to back; each atom is a box on its engine from its
round's start for its own duration, coloured by layer; dashed lines mark the
round boundaries, so the idle tail of each engine in a round (the synchronisation
cost that atom sizing minimizes) is visible.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from accelsched.errors import InputError
from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.rounds import round_durations
from accelsched.models.registry import load_workload
from accelsched.problems.atomic import PROBLEM, AtomicInstance, RoundSchedule, make_instance
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions

__all__ = ["draw_gantt", "main"]


def draw_gantt(instance: AtomicInstance, schedule: RoundSchedule, path: str | Path, title: str = "") -> Path:
    """Write the Gantt chart of a checked ``schedule`` (engines: its own, else the slot order in each round)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    layers = list(dict.fromkeys(a.layer for a in instance.dag.atoms))
    colours = plt.get_cmap("tab20")
    fig, ax = plt.subplots(figsize=(10, 0.35 * instance.n_engines + 1.5))
    start = 0
    for members, length in zip(schedule.rounds, round_durations(instance, schedule), strict=True):
        for slot, atom in enumerate(members):
            engine = schedule.engines[atom] if schedule.engines is not None else slot
            a = instance.dag.atoms[atom]
            ax.broken_barh([(start, a.duration_cycles)], (engine - 0.4, 0.8),
                           facecolors=colours(layers.index(a.layer) % 20), edgecolors="white")  # fmt: skip
        start += length
        ax.axvline(start, color="grey", linestyle="--", linewidth=0.5)
    ax.set_xlabel("cycles")
    ax.set_ylabel("engine")
    ax.set_ylim(-0.6, instance.n_engines - 0.4)
    ax.set_title(title or f"{len(schedule.rounds)} rounds, {start:,} cycles")
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
        instance = make_instance(load_workload(args.workload), load_accelerator(args.hardware), options)
        result = run_method(PROBLEM, instance, get_method("atomic", args.method),
                            SolveOptions(time_limit_s=args.time_limit))  # fmt: skip
    except (InputError, ValueError) as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    if result.solution is None:
        parser.exit(1, f"{parser.prog}: {args.method} found no schedule ({result.status.name})\n")
    print(draw_gantt(instance, result.solution, args.out, f"{args.workload} on {args.hardware}, {args.method}"))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
