"""What the benchmarks with a ``run`` and a ``render FILE.json`` command share: the parser, the dispatch,
percentages and the closing line of their Markdown."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from accelsched.bench.conditions import conditions_line
from accelsched.bench.files import render_command

__all__ = ["closing_lines", "percent", "run_or_render", "run_render_parser"]


def run_render_parser(prog: str, description: str | None) -> argparse.ArgumentParser:
    """A parser with the ``run`` / ``render`` command, the ``render`` file and ``--out``; the caller adds the
    options of ``run``."""
    parser = argparse.ArgumentParser(prog=prog, description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("command", choices=["run", "render"])
    parser.add_argument("files", nargs="*", help="render: a JSON result")
    parser.add_argument("--out", default=None)
    return parser


def run_or_render(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    render: Callable[[dict[str, Any]], str],
    run: Callable[[], dict[str, Any]],
) -> int:
    """Render the file of ``render FILE.json``, or call ``run`` and print its Markdown."""
    if args.command == "render":
        return render_command(parser, args.files, args.out, render)
    print(render(run()), end="")
    return 0


def closing_lines(data: dict[str, Any]) -> list[str]:
    """The last lines of a benchmark's Markdown: the machine conditions and the wall time of the run."""
    return ["", f"Conditions: {conditions_line(data['conditions'])}; {data['wall_s']:.0f} s wall."]


def percent(value: float | None) -> str:
    """``value`` (a fraction) as a percentage with two decimals, ``-`` for None."""
    return "-" if value is None else f"{100 * value:.2f}%"
