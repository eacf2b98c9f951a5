"""What the Cocco claims (:mod:`accelsched.bench.claims_cocco`) share: the networks and buffer designs they
run, the checked runs, and the optima they are measured against (module docstring of
:mod:`accelsched.bench.claims_cocco`, *Optima*)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from accelsched.hardware import load_accelerator
from accelsched.hardware.cost.report import CostReport
from accelsched.heuristics.genetic import GAParams
from accelsched.heuristics.partition.ga import PartitionGAParams
from accelsched.models.registry import load_workload, random_workload
from accelsched.models.workload import Workload
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PROBLEM, PartitionInstance, PartitionSolution, make_instance
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions, Status

__all__ = [
    "COCCO_ENERGY",
    "EXACT",
    "FAST_NETS",
    "FAST_SEPARATE",
    "PAPER",
    "RESULTS_DIR",
    "SEED",
    "Design",
    "Net",
    "Optimum",
    "Run",
    "checked",
    "find_optimum",
    "ga_params",
    "geomean",
    "pct",
]

PAPER = "Cocco"
RESULTS_DIR = Path(__file__).resolve().parents[2] / "bench" / "results"
"""Where the committed tables (and their exact rows, the FULL optima) are."""
EXACT = ("milp-highs", "cpsat")
"""The exact methods whose committed rows give the FULL optima."""
SEED = 0


@dataclass(frozen=True)
class Net:
    """A workload of a claim: a zoo network, or (``random_layers`` > 0) a seeded random DAG of
    56 x 56 feature maps and 32-128 channels, whose tensors outgrow small buffers."""

    name: str
    random_layers: int = 0
    seed: int = 0

    def load(self) -> Workload:
        """The workload."""
        if self.random_layers:
            return random_workload(self.random_layers, self.seed, channels=(32, 64, 96, 128), height=56, width=56)
        return load_workload(self.name)


@dataclass(frozen=True)
class Design:
    """A buffer organisation: its preset and the problem options (candidate lists, metric)."""

    name: str
    preset: str
    options: tuple[tuple[str, str], ...]

    def instance(self, workload: Workload) -> PartitionInstance:
        """The partition instance of ``workload`` on this design."""
        return make_instance(workload, load_accelerator(self.preset), dict(self.options))




def ga_params(generations: int, population: int) -> PartitionGAParams:
    return PartitionGAParams(ga=GAParams(population_size=population, generations=generations))


FAST_NETS = tuple(Net(f"random:10:{s}", 10, s) for s in (1, 2, 3))
COCCO_ENERGY = (("capacities", "cocco"), ("metric", "energy"))
FAST_SEPARATE = (("act_kb", "64-512:64"), ("weight_kb", "72-576:72"), ("metric", "energy"))

# ------------------------------------------------------------------ common
@dataclass(frozen=True)
class Run:
    """A checked, re-evaluated run that found a partition: its objective and the evaluator's report."""

    method: str
    status: Status
    solution: PartitionSolution
    objective: float
    cost: CostReport


def checked(
    instance: PartitionInstance, spec: MethodSpec, options: SolveOptions, warm: PartitionSolution | None = None
) -> Run:
    """Run ``spec`` through :func:`accelsched.registry.run_method` (the problem's ``check`` and the shared
    evaluator); a run without a partition is an error of the claim."""
    result = run_method(PROBLEM, instance, spec, options, warm)
    if result.solution is None or result.objective is None or result.cost is None:
        raise RuntimeError(f"{spec.name} found no partition: {result.status.name} {result.stats.native_status}")
    return Run(spec.name, result.status, result.solution, result.objective, result.cost)


def _committed_optima(name: str, design: str) -> dict[str, tuple[float, bool]]:
    """``workload -> (least objective of the exact rows, whether one of them is proven)`` of a committed
    table in ``bench/results`` for ``design``."""
    path = RESULTS_DIR / name
    if not path.exists():
        raise FileNotFoundError(f"{path}: the committed table whose exact rows are the FULL optima")
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    out: dict[str, tuple[float, bool]] = {}
    for row in rows:
        if row["method"] not in EXACT or row["design"] != design or row["objective"] is None:
            continue
        value, proven = out.get(row["workload"], (math.inf, False))
        out[row["workload"]] = (min(value, row["objective"]), proven or row["status"] == "OPTIMAL")
    return out


@dataclass(frozen=True)
class Optimum:
    """The reference of a row: the least objective known and whether it is proven optimal."""

    value: float
    proven: bool
    source: str

    @property
    def word(self) -> str:
        """``proven optimum`` or ``best known``."""
        return "proven optimum" if self.proven else "best known"


def find_optimum(
    instance: PartitionInstance, name: str, design: str, committed: str | None, limit: float,
    found: Sequence[Run],
) -> Optimum:  # fmt: skip
    """The row's reference: the committed exact rows' value (FULL) or ``milp-highs`` warm-started by the
    best of ``found`` (FAST), never above a partition found here."""
    best = min(found, key=lambda r: r.objective)
    if committed is not None:
        value, proven = _committed_optima(committed, design).get(name, (math.inf, False))
        source = f"committed {committed}"
    else:
        exact = checked(instance, get_method(PROBLEM.name, "milp-highs"),
                         SolveOptions(time_limit_s=limit, seed=SEED), best.solution)  # fmt: skip
        value, proven, source = exact.objective, exact.status is Status.OPTIMAL, "milp-highs"
    if best.objective < value * (1 - 1e-9):
        return Optimum(best.objective, False, f"{best.method} here (below {source})")
    return Optimum(value, proven, source)


def geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def pct(ratio: float) -> str:
    """A ratio above or below 1 as a signed percentage."""
    return f"{(ratio - 1) * 100:+.2f} %"


