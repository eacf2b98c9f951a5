"""Cocco's co-exploration claims (Tables 1-2): Cocco's GA co-exploring partition and capacities against the
other methods, at each scale; the baselines and the protocol are in the module docstring of
:mod:`accelsched.bench.claims_cocco` (*Baselines*)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from accelsched.bench.claims import Measurement, PaperFigure, Scale
from accelsched.bench.claims_cocco_common import (
    COCCO_ENERGY,
    FAST_NETS,
    FAST_SEPARATE,
    SEED,
    Design,
    Net,
    Optimum,
    Run,
    checked,
    find_optimum,
    ga_params,
    pct,
)
from accelsched.heuristics.partition.ga import PartitionGAParams, ga_method
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PROBLEM, PartitionInstance, PartitionSolution
from accelsched.registry import get_method
from accelsched.solvers import SolveOptions

__all__ = ["COEXPLORE", "MAX_FIGURE", "MIN_FIGURE", "CoexploreSetting", "coexplore_runs", "measure_coexplore_max",
           "measure_coexplore_min"]

_ABSTRACT = "abstract"
MAX_FIGURE = PaperFigure.of_saving(50.33, "up to 50.33 % lower cost", f"{_ABSTRACT}; Tables 1-2")
MIN_FIGURE = PaperFigure.of_saving(1.89, "at least 1.89 % lower cost", f"{_ABSTRACT}; Tables 1-2")


@dataclass(frozen=True)
class CoexploreSetting:
    """How the co-exploration claims are measured at one scale.

    Attributes
    ----------
    nets, designs
        The rows: every workload on every buffer design.
    ga
        Cocco's GA, which co-explores (20 x 500 at FULL).
    fixed_ga
        The partition GA of the fixed S / M / L baselines.
    point_ga
        The GA run at each point of grid+GA and random+GA.
    grid_stride
        grid+GA takes every ``grid_stride``-th candidate of each list.
    committed, exact_time_limit_s
        As in :class:`PartitionSetting`.
    """

    nets: tuple[Net, ...]
    designs: tuple[Design, ...]
    ga: PartitionGAParams
    fixed_ga: PartitionGAParams
    point_ga: PartitionGAParams
    grid_stride: int
    committed: str | None
    exact_time_limit_s: float = 20.0




COEXPLORE = {
    Scale.FULL: CoexploreSetting(
        nets=tuple(Net(n) for n in ("resnet50", "googlenet", "randwire_a", "nasnet")),
        designs=(
            Design("shared", "cocco-simba-shared", COCCO_ENERGY),
            Design("separate", "cocco-simba-separate", COCCO_ENERGY),
        ),
        ga=PartitionGAParams(),
        fixed_ga=ga_params(10, 200),
        point_ga=ga_params(3, 50),
        grid_stride=8,
        committed="partition_coexplore.json",
    ),
    Scale.FAST: CoexploreSetting(
        nets=FAST_NETS,
        designs=(
            Design("shared", "cocco-simba-shared", (("shared_kb", "64-512:64"), ("metric", "energy"))),
            Design("separate", "cocco-simba-separate", FAST_SEPARATE),
        ),
        ga=ga_params(5, 40),
        fixed_ga=ga_params(5, 40),
        point_ga=ga_params(3, 20),
        grid_stride=3,
        committed=None,
    ),
}
"""The co-exploration measurement at each scale."""



# --------------------------------------------------------------- tables 1-2
@dataclass(frozen=True)
class Baseline:
    """One other method on one co-exploration row: its objective and its (best) capacities, KB."""

    method: str
    objective: float
    capacity_kb: tuple[int, int]


@dataclass(frozen=True)
class CoexploreRow:
    """One model on one buffer design: Cocco's GA, the other methods, the optimum."""

    net: str
    design: str
    cocco: float
    cocco_kb: tuple[int, int]
    baselines: tuple[Baseline, ...]
    optimum: Optimum

    @property
    def label(self) -> str:
        """``net/design``."""
        return f"{self.net}/{self.design}"


@dataclass(frozen=True)
class CoexploreRuns:
    """The co-exploration measurement: a row per model and design, and what was run."""

    rows: tuple[CoexploreRow, ...]
    setup: str


def _kb(solution: PartitionSolution) -> tuple[int, int]:
    return solution.act_capacity_bytes // 1024, solution.weight_capacity_bytes // 1024


def _decoupled(
    instance: PartitionInstance, method: str, points: Sequence[tuple[int, int]], ga: MethodSpec,
    options: SolveOptions,
) -> tuple[Baseline | None, list[Run]]:  # fmt: skip
    """A decoupled baseline: the GA's partition at each fixed capacity point (those holding every
    layer), scored by the co-exploration objective; its best point, or None when no point fits."""
    best: Baseline | None = None
    found: list[Run] = []
    for act, weight in points:
        fixed = replace(instance, act_candidates_bytes=(act,), weight_candidates_bytes=(weight,) if weight else ())
        if fixed.infeasibility:
            continue
        result = checked(fixed, ga, options)
        value = instance.objective_value(act + weight, instance.metric_of_report(result.cost))
        found.append(result)
        if best is None or value < best.objective:
            best = Baseline(method, value, (act // 1024, weight // 1024))
    return best, found


@cache
def coexplore_runs(scale: Scale) -> CoexploreRuns:
    """Cocco's co-exploring GA and the other methods on every model and design at ``scale`` (run once)."""
    setting = COEXPLORE[scale]
    ga, fixed_ga = ga_method(setting.ga), ga_method(setting.fixed_ga, "ga-fixed")
    point_ga = ga_method(setting.point_ga, "ga-point")
    options = SolveOptions(seed=SEED)
    rows = []
    for d, design in enumerate(setting.designs):
        for n, net in enumerate(setting.nets):
            instance = design.instance(net.load())
            cocco = checked(instance, ga, options)
            sa = checked(instance, get_method(PROBLEM.name, "sa"), options)
            acts, weights = instance.act_candidates_bytes, instance.weight_candidates_bytes or (0,)
            stride = setting.grid_stride
            grid = [(a, w) for a in acts[::stride] for w in weights[::stride]]
            rng = np.random.default_rng((SEED, d, n))
            random_points = [(int(rng.choice(acts)), int(rng.choice(weights))) for _ in grid]
            baselines = [Baseline("sa", sa.objective, _kb(sa.solution))]
            for method, points, spec in (
                ("fixed-S", [(acts[0], weights[0])], fixed_ga),
                ("fixed-M", [(acts[len(acts) // 2], weights[len(weights) // 2])], fixed_ga),
                ("fixed-L", [(acts[-1], weights[-1])], fixed_ga),
                ("grid+GA", grid, point_ga),
                ("random+GA", random_points, point_ga),
            ):
                found, _ = _decoupled(instance, method, points, spec, options)
                if found is not None:
                    baselines.append(found)
            optimum = find_optimum(instance, net.name, design.name, setting.committed, setting.exact_time_limit_s,
                               [cocco, sa])  # fmt: skip
            optimum = optimum if optimum.value <= min(b.objective for b in baselines) else Optimum(
                min(b.objective for b in baselines), False, "a baseline here")  # fmt: skip
            rows.append(CoexploreRow(net.name, design.name, cocco.objective, _kb(cocco.solution), tuple(baselines),
                                     optimum))  # fmt: skip
    reference = (f"optima: the exact rows of the committed bench/results/{setting.committed}"
                 if setting.committed else f"optima: milp-highs ({setting.exact_time_limit_s:g} s limit)")  # fmt: skip
    lists = "; ".join(f"{d.name}: {d.preset} " + (", ".join(f"{k}={v}" for k, v in d.options)) for d in setting.designs)
    setup = (f"{', '.join(n.name for n in setting.nets)}, shared and separate buffers ({lists}); objective "
             f"capacity bytes + 0.002 x energy pJ; Cocco = GA {setting.ga.ga.generations} x "
             f"{setting.ga.ga.population_size} co-exploring; others: sa (co-exploring), fixed-S/M/L (a GA "
             f"{setting.fixed_ga.ga.generations} x {setting.fixed_ga.ga.population_size} at the first / middle / "
             f"last candidates), grid+GA (candidates at stride {setting.grid_stride} of each "
             f"list) and random+GA (as many random points), each point a GA {setting.point_ga.ga.generations} x "
             f"{setting.point_ga.ga.population_size}; seed {SEED}; saving = 1 - Cocco / other, over every row "
             f"and other method; {reference}")  # fmt: skip
    return CoexploreRuns(tuple(rows), setup)


def _savings(runs: CoexploreRuns) -> list[tuple[float, CoexploreRow, Baseline]]:
    """``(other / Cocco, row, other)`` for every row and other method."""
    return [(b.objective / r.cocco, r, b) for r in runs.rows for b in r.baselines]


def _saving_text(ratio: float) -> str:
    return f"{(1 - 1 / ratio) * 100:.2f} % lower" if ratio >= 1 else f"{(1 / ratio - 1) * 100:.2f} % higher"


def _row_gap(row: CoexploreRow) -> str:
    opt = row.optimum
    return (
        f"the GA ({row.cocco / 1e6:.3f}, {row.cocco_kb[0]}/{row.cocco_kb[1]} KB) is {pct(row.cocco / opt.value)} "
        f"above the {opt.word} {opt.value / 1e6:.3f}"
    )


def measure_coexplore_max(scale: Scale) -> Measurement:
    """The largest saving of Cocco's co-exploration over another method (a ratio other / Cocco)."""
    runs = coexplore_runs(scale)
    ratio, row, other = max(_savings(runs), key=lambda item: item[0])
    text = f"{_saving_text(ratio)} ({ratio:.2f}x; {row.label} against {other.method})"
    cause = None
    if ratio <= 1 or max(ratio / MAX_FIGURE.value, MAX_FIGURE.value / ratio) > 1.5:
        cause = (
            f"the largest gap is to {other.method} on {row.label}: {other.objective / 1e6:.3f} at "
            f"{other.capacity_kb[0]}/{other.capacity_kb[1]} KB against {row.cocco / 1e6:.3f}; {_row_gap(row)}"
        )
    return Measurement(ratio, text, runs.setup, cause)


def measure_coexplore_min(scale: Scale) -> Measurement:
    """The smallest saving of Cocco's co-exploration over another method (negative: another method wins)."""
    runs = coexplore_runs(scale)
    savings = _savings(runs)
    ratio, row, other = min(savings, key=lambda item: item[0])
    beaten = sorted({r.label for q, r, _ in savings if q < 1 - 1e-9})
    text = f"{_saving_text(ratio)} ({ratio:.3f}x; {row.label} against {other.method})"
    cause = None
    if ratio <= 1 or max(ratio / MIN_FIGURE.value, MIN_FIGURE.value / ratio) > 1.5:
        winners = sorted({b.method for q, _, b in savings if q < 1 - 1e-9})
        decoupled = [item for item in savings if item[2].method != "sa"]
        q, drow, dother = min(decoupled, key=lambda item: item[0])
        alone = (f"; against the decoupled baselines alone the least saving is {_saving_text(q)} ({drow.label}, "
                 f"{dother.method})")  # fmt: skip
        cause = (f"{other.method} is {(1 / ratio - 1) * 100:.2f} % below Cocco's GA on {row.label} "
                 f"({other.objective / 1e6:.3f} at {other.capacity_kb[0]}/{other.capacity_kb[1]} KB vs "
                 f"{row.cocco / 1e6:.3f}); another method beats the GA on {len(beaten)} of {len(runs.rows)} rows "
                 f"({', '.join(winners) or 'none'}); {_row_gap(row)}{alone}")  # fmt: skip
    return Measurement(ratio, text, runs.setup, cause)


