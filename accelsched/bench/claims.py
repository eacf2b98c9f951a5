"""The five papers' headline claims, each measured on accelsched's cost model, in one table.

Usage::

    python -m accelsched.bench.claims run [--fast] [--papers SET,Stream,...] [--claims KEY,...]
        [--out FILE.json]
    python -m accelsched.bench.claims render FILE.json [--out FILE.md]

A :class:`Claim` is one sentence of a paper with a number: a speed-up, an energy saving, which
strategy is best, an ordering, a spread. It carries the paper's figure and where it is printed
(:class:`PaperFigure`) and a function that measures the same quantity here (:class:`Measurement`).
The claims of each paper live in their own module (``claims_cocco``, ``claims_set``,
``claims_atomic``, ``claims_stream``, ``claims_defines``); this module runs them, judges them and
draws the table.

Verdicts
--------
Every claim is stated so that its figure ``r`` is a ratio above 1 in the paper's favour ("A over B
is r"), or a yes/no fact (an ordering, a best strategy) whose paper value is 1 (true). With ``q``
the measured ratio (or 1 / 0 for a fact):

* **reproduced**: ``q > 1`` (the same direction) and ``max(q / r, r / q) <= 1.5``; for a fact, it
  holds; for a saving (see below), the saved fractions ``1 - 1 / q`` and ``1 - 1 / r`` within 1.5x of
  each other;
* **direction only**: ``q > 1`` and the magnitude differs by more than 1.5x;
* **not reproduced**: ``q <= 1``, or a fact that does not hold. Such a row must name its measured
  cause (:attr:`Measurement.cause`, a figure), or the table says that the cause is not measured. A
  *direction only* row may name one too (what makes the magnitude differ).

A saving of ``s`` percent is stated as the ratio ``1 / (1 - s / 100)`` (:meth:`PaperFigure.saving`),
so that every figure reads the same way; its magnitude is judged on the saved fraction, because near
1 a ratio tolerance would accept any saving (against 1.89 %, every saving up to 34.6 %).

Scales
------
``Scale.FULL`` is what ``bench/results/claims.md`` comes from (the papers' networks and platforms);
``Scale.FAST`` runs every claim on a small size (a few layers, short limits) so that the test suite
checks that each claim still measures, within a few seconds each.
"""

from __future__ import annotations

import enum
import importlib
import math
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from accelsched.bench.commands import closing_lines, run_or_render, run_render_parser
from accelsched.bench.conditions import machine_conditions
from accelsched.bench.files import write_json
from accelsched.entry import run_entry

__all__ = [
    "CLAIM_MODULES",
    "MAGNITUDE_TOLERANCE",
    "Claim",
    "ClaimKind",
    "Measurement",
    "PaperFigure",
    "Scale",
    "Verdict",
    "all_claims",
    "judge",
    "main",
    "measure_claims",
    "render",
    "saving_as_ratio",
]

CLAIM_MODULES = ("claims_cocco", "claims_set", "claims_atomic", "claims_stream", "claims_defines")
"""The modules of :mod:`accelsched.bench` that each define ``CLAIMS``, one per paper, in table order."""

MAGNITUDE_TOLERANCE = 1.5
"""A measured ratio within this factor of the paper's (either way) is *reproduced*."""


class Scale(enum.Enum):
    """How large a claim's measurement is: the papers' sizes, or a few-second version for the tests."""

    FULL = "full"
    FAST = "fast"


class ClaimKind(enum.Enum):
    """A ratio in the paper's favour (judged by direction and magnitude), or a yes/no fact."""

    RATIO = "ratio"
    FACT = "fact"


class Verdict(enum.Enum):
    """The judgement of one claim (see the module docstring)."""

    REPRODUCED = "reproduced"
    DIRECTION_ONLY = "direction only"
    NOT_REPRODUCED = "not reproduced"


@dataclass(frozen=True)
class PaperFigure:
    """What a paper prints for a claim.

    Attributes
    ----------
    value
        The figure as a ratio above 1 in the claim's direction (a saving already converted by
        :func:`saving_as_ratio`); 1.0 for a fact.
    text
        The figure as the paper prints it (``"1.78x"``, ``"13.2 % less energy"``, ``"fully-cached is best"``).
    where
        Where it is printed (``"abstract; Sec. VI-B, Fig. 8"``).
    saving
        Whether the figure is a saving stated as a ratio (its magnitude is judged on the saved fraction).
    """

    value: float
    text: str
    where: str
    saving: bool = False

    @classmethod
    def of_saving(cls, percent: float, text: str, where: str) -> PaperFigure:
        """The figure of a saving of ``percent`` %: the ratio before / after, judged on the saved fraction."""
        return cls(saving_as_ratio(percent), text, where, saving=True)


@dataclass(frozen=True)
class Measurement:
    """What accelsched measures for a claim.

    Attributes
    ----------
    value
        The measured ratio in the claim's direction (above 1: the same direction as the paper), or
        1.0 / 0.0 for a fact that holds / does not.
    text
        The figure as printed in the table (``"2.76x"``, ``"holds: 1.9x"``).
    setup
        What was run: workload(s), preset(s), methods, limits.
    cause
        Required for a claim that is not reproduced, optional otherwise (what makes a magnitude
        differ): the measured reason, a figure (``"PE utilization 14 %: one 8 B/cycle port feeds 256
        PEs"``), computed by the measurement; None when there is none.
    """

    value: float
    text: str
    setup: str
    cause: str | None = None


@dataclass(frozen=True)
class Claim:
    """One headline claim of a paper and how it is measured here.

    Attributes
    ----------
    key
        A short stable identifier, unique over all papers (``"set-vs-tangram-speedup"``).
    paper
        The paper's short name (``"SET"``, ``"Atomic Dataflow"``, ``"Stream"``, ``"DeFiNES"``, ``"Cocco"``).
    statement
        The claim in one sentence, in the paper's direction.
    figure
        What the paper prints and where.
    kind
        A ratio or a fact.
    measure
        ``measure(scale) -> Measurement``: runs every schedule through the problem's ``check`` and the
        shared evaluator (:func:`accelsched.registry.run_method`) and returns the measured quantity.
    """

    key: str
    paper: str
    statement: str
    figure: PaperFigure
    kind: ClaimKind
    measure: Callable[[Scale], Measurement]


def saving_as_ratio(percent: float) -> float:
    """A saving of ``percent`` % (less energy, less latency) as the ratio before / after."""
    if not 0 <= percent < 100:
        raise ValueError(f"a saving is a percentage in [0, 100), got {percent}")
    return 1.0 / (1.0 - percent / 100.0)


def judge(
    kind: ClaimKind, paper: float, ours: float, *, saving: bool = False, tolerance: float = MAGNITUDE_TOLERANCE
) -> Verdict:
    """The verdict of a measured ``ours`` against the paper's ``paper`` (module docstring, *Verdicts*)."""
    if kind is ClaimKind.FACT:
        return Verdict.REPRODUCED if ours >= 1.0 else Verdict.NOT_REPRODUCED
    if not (math.isfinite(ours) and ours > 1.0):
        return Verdict.NOT_REPRODUCED
    a, b = (1.0 - 1.0 / ours, 1.0 - 1.0 / paper) if saving else (ours, paper)
    if max(a / b, b / a) <= tolerance:
        return Verdict.REPRODUCED
    return Verdict.DIRECTION_ONLY


def all_claims() -> tuple[Claim, ...]:
    """Every paper's claims, in :data:`CLAIM_MODULES` order; keys are checked to be unique."""
    claims: list[Claim] = []
    for name in CLAIM_MODULES:
        module = importlib.import_module(f"accelsched.bench.{name}")
        claims.extend(module.CLAIMS)
    keys = [c.key for c in claims]
    duplicated = sorted({k for k in keys if keys.count(k) > 1})
    if duplicated:
        raise ValueError(f"claim keys are not unique: {', '.join(duplicated)}")
    return tuple(claims)


def _select(claims: Sequence[Claim], papers: Sequence[str], keys: Sequence[str]) -> list[Claim]:
    known_papers = {c.paper.lower(): c.paper for c in claims}
    for paper in papers:
        if paper.lower() not in known_papers:
            raise SystemExit(f"claims: unknown paper {paper!r}; known: {', '.join(sorted(set(known_papers.values())))}")
    known_keys = {c.key for c in claims}
    for key in keys:
        if key not in known_keys:
            raise SystemExit(f"claims: unknown claim {key!r}; see `render` of a claims JSON for the keys")
    wanted_papers = {p.lower() for p in papers}
    return [c for c in claims if (not papers or c.paper.lower() in wanted_papers) and (not keys or c.key in keys)]


def measure_claims(
    claims: Sequence[Claim], scale: Scale, on_row: Callable[[dict[str, Any]], None] | None = None
) -> list[dict[str, Any]]:
    """Measure and judge ``claims``; one row per claim.

    A claim whose measurement raises is recorded with verdict ``error`` and the exception's last line,
    and the others still run: one broken measurement must not hide the rest of the table.
    """
    rows: list[dict[str, Any]] = []
    for claim in claims:
        start = time.perf_counter()
        row: dict[str, Any] = {
            "key": claim.key, "paper": claim.paper, "statement": claim.statement, "kind": claim.kind.value,
            "paper_value": claim.figure.value, "paper_text": claim.figure.text, "where": claim.figure.where,
        }  # fmt: skip
        try:
            m = claim.measure(scale)
        except Exception as exc:  # recorded in the table; the other claims still run
            row.update(ours=None, ours_text="-", setup="-", cause=None, verdict="error",
                       error=traceback.format_exception_only(exc)[-1].strip())  # fmt: skip
        else:
            verdict = judge(claim.kind, claim.figure.value, m.value, saving=claim.figure.saving)
            ratio = m.value / claim.figure.value if claim.kind is ClaimKind.RATIO else None
            row.update(ours=m.value, ours_text=m.text, setup=m.setup, cause=m.cause, verdict=verdict.value,
                       ratio=ratio)  # fmt: skip
        row["seconds"] = round(time.perf_counter() - start, 2)
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How many rows have each verdict, and how many not-reproduced rows lack a measured cause."""
    counts = {v.value: 0 for v in Verdict} | {"error": 0}
    for row in rows:
        counts[row["verdict"]] += 1
    counts["not reproduced without cause"] = sum(
        1 for r in rows if r["verdict"] == Verdict.NOT_REPRODUCED.value and not r.get("cause")
    )
    return counts


def _cell(text: str | None) -> str:
    return "-" if not text else str(text).replace("|", "\\|").replace("\n", " ")


def render(data: dict[str, Any]) -> str:
    """The Markdown table of a claims JSON: one row per claim, the verdict counts, and the run's ``note`` if any."""
    rows = data["rows"]
    counts = summary(rows)
    lines = [
        "# The papers' headline claims on accelsched's cost model",
        "",
        f"Scale: {data['scale']}. A claim is *reproduced* when our ratio has the paper's direction and is "
        f"within {MAGNITUDE_TOLERANCE:g}x of its figure, *direction only* when only the direction agrees. "
        "Every schedule behind a figure passed its problem's check and the shared evaluator.",
        "",
        "| claim | paper figure | where | ours | ours / paper | verdict | setup | cause |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ratio = row.get("ratio")
        ratio_text = "-" if ratio is None else f"{ratio:.2f}"
        cause = row.get("cause") or row.get("error")
        if row["verdict"] == Verdict.NOT_REPRODUCED.value and not cause:
            cause = "(cause not measured)"
        lines.append(
            f"| **{row['paper']}**: {_cell(row['statement'])} | {_cell(row['paper_text'])} | {_cell(row['where'])} "
            f"| {_cell(row['ours_text'])} | {ratio_text} | {row['verdict']} | {_cell(row['setup'])} | {_cell(cause)} |"
        )
    lines += [
        "",
        f"{len(rows)} claims: {counts['reproduced']} reproduced, {counts['direction only']} direction only, "
        f"{counts['not reproduced']} not reproduced ({counts['not reproduced without cause']} without a measured "
        f"cause), {counts['error']} errors.",
    ]
    if data.get("note"):
        lines += ["", f"Note: {data['note']}."]
    lines += closing_lines(data)
    return "\n".join(lines) + "\n"


def _split(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = run_render_parser("python -m accelsched.bench.claims", __doc__.split("\n\n")[0])
    parser.add_argument("--fast", action="store_true", help="the small sizes the test suite uses")
    parser.add_argument("--papers", default=None, help="comma-separated paper names (default: all)")
    parser.add_argument("--claims", default=None, help="comma-separated claim keys (default: all)")
    args = parser.parse_args(argv)

    def run() -> dict[str, Any]:
        scale = Scale.FAST if args.fast else Scale.FULL
        claims = _select(all_claims(), _split(args.papers), _split(args.claims))
        start = time.perf_counter()
        data: dict[str, Any] = {"scale": scale.value, "conditions": machine_conditions(), "rows": [], "wall_s": 0.0}

        def on_row(row: dict[str, Any]) -> None:
            data["rows"].append(row)
            data["wall_s"] = round(time.perf_counter() - start, 1)
            print(f"{row['key']}: {row['ours_text']} vs {row['paper_text']}: {row['verdict']} "
                  f"({row['seconds']:.1f} s)", file=sys.stderr, flush=True)  # fmt: skip
            if args.out:
                write_json(args.out, data)

        measure_claims(claims, scale, on_row)
        return data

    return run_or_render(parser, args, render, run)


if __name__ == "__main__":
    # run the imported module's main, not this __main__ copy: the claim modules import
    # accelsched.bench.claims, and their ClaimKind must be the one judge() compares with
    from accelsched.bench import claims as _claims

    raise SystemExit(run_entry(_claims.main))
