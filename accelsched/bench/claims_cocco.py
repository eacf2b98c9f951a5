"""Cocco's headline claims (Tan, Zhu, Ma, ASPLOS'24, arXiv 2402.00629), measured on accelsched.

Where the figures are printed
-----------------------------
Every figure below is printed in the paper's abstract: "Cocco obtains lower external memory
access, lower bandwidth requirements, and more stable optimization for graph partition compared to
the greedy algorithm and dynamic programming introduced in prior works. Cocco also reduces the costs
by 1.89% to 50.33% using co-exploration compared to other typical methods." The per-model bars of
the partition comparison are its evaluation's Fig. 11 and the co-exploration rows its Tables 1-2
(`docs/notes/fidelity-partition.md` says what of the evaluation could be read). Each claim is one
sentence of that abstract:

* ``cocco-ga-vs-greedy-ema``, ``cocco-ga-vs-dp-ema``: the GA's partition has less external memory
  access (EMA) than greedy's / DP's (a fact: over the Fig. 11 models, the geometric mean of the GA's
  EMA over the baseline's is below 1, and the GA is lower on more models than it is higher);
* ``cocco-ga-bandwidth``: the GA's partition needs less DRAM bandwidth than both (a fact: the same
  test on the bandwidth requirement, against each);
* ``cocco-ga-stability``: the GA's optimization is more stable than both (a fact: its worst excess
  over the optimum, over the models, is below each baseline's);
* ``cocco-coexplore-max-saving`` / ``cocco-coexplore-min-saving``: co-exploration's cost is 50.33 %
  / 1.89 % below the other methods' at most / at least (ratios: the largest and the smallest of
  ``baseline cost / Cocco cost`` over the models, buffer designs and baselines).

Baselines
---------
The abstract names greedy and DP; the rest follows the project's Cocco tables
(``python -m accelsched.bench.partition_tables``). Graph partition (Fig. 11), at the paper's default
buffers (1 MB activations + 1.125 MB weights, ``cocco-simba-separate``), batch 1: *greedy* is
Halide's greedy fusion, *DP* Irregular-NN's dynamic programming over a topological order (methods
``greedy``, ``dp``), *Cocco* the GA of 20 generations x 500 genomes (``ga``). Co-exploration (Tables
1-2), objective ``capacity bytes + 0.002 x energy pJ`` over Cocco's candidate capacities, shared
(``cocco-simba-shared``) and separate buffers: *Cocco* is the GA co-exploring partition and
capacities; the other methods are simulated annealing co-exploring both (``sa``) and the decoupled
searches that fix the capacities, then partition with a GA, scored by the co-exploration objective
of their best point: *fixed S / M / L* (the first, middle and last candidate of each list), *grid+GA*
(every ``grid_stride``-th candidate of each list), *random+GA* (as many random points). Their GAs are
smaller than the table's, so that the FULL claims take minutes: 10 x 200 for fixed S / M / L
(``CoexploreSetting.fixed_ga``; 0-6.5 % above the table's 20 x 500 at those points, which can only
flatter Cocco's saving), 3 x 50 per point for grid+GA and random+GA (``point_ga``; the table gives
each point 5 s, which would make the claim depend on the machine's speed).

The bandwidth requirement
-------------------------
The DRAM bandwidth at which no subgraph waits for DRAM in the shared cost model's latency
(:mod:`accelsched.hardware.cost.partition`: a subgraph takes ``max(compute cycles, (its activation
traffic + the next subgraph's weights) / bandwidth)``), i.e.

    B = clock x max over subgraphs k of (act_k + w_(k+1)) / cycles_k,

in GB/s. Its average over the whole run is the EMA over the compute time, which orders the
partitions as the EMA does; the peak is what sizes the DRAM interface.

Optima
------
``Scale.FULL`` reads the proven optima (or, where no proof finished, the best known partition) from
the committed ``bench/results/partition_fig11.json`` and ``partition_coexplore.json`` (the exact
rows; proving them took up to hours per model), taking the least of that and every partition
measured here. ``Scale.FAST`` (three 10-layer random DAGs, small buffers and candidate lists, small
GAs) solves them with ``milp-highs``. Every schedule here passes the problem's ``check`` and the
shared evaluator (:func:`accelsched.registry.run_method`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from accelsched.bench.claims import Claim, ClaimKind, Measurement, PaperFigure, Scale
from accelsched.bench.claims_cocco_coexplore import (
    COEXPLORE,
    MAX_FIGURE,
    MIN_FIGURE,
    coexplore_runs,
    measure_coexplore_max,
    measure_coexplore_min,
)
from accelsched.bench.claims_cocco_common import (
    FAST_NETS,
    PAPER,
    SEED,
    Design,
    Net,
    Optimum,
    checked,
    find_optimum,
    ga_params,
    geomean,
    pct,
)
from accelsched.heuristics.partition.ga import PartitionGAParams, ga_method
from accelsched.problems.partition import PROBLEM, PartitionInstance, PartitionSolution
from accelsched.registry import get_method
from accelsched.solvers import SolveOptions

__all__ = ["CLAIMS", "COEXPLORE", "FIG11", "FIG11_METHODS", "PartitionSetting", "coexplore_runs", "no_stall_bandwidth",
           "partition_runs"]

@dataclass(frozen=True)
class PartitionSetting:
    """How the Fig. 11 claims are measured at one scale.

    Attributes
    ----------
    nets
        The workloads.
    design
        The platform and its fixed buffers.
    ga
        Cocco's GA (20 x 500 at FULL).
    committed
        The committed table whose exact rows are the optima (FULL), or None: solve them with
        ``milp-highs`` in ``exact_time_limit_s`` (FAST).
    exact_time_limit_s
        The exact model's limit when it runs.
    """

    nets: tuple[Net, ...]
    design: Design
    ga: PartitionGAParams
    committed: str | None
    exact_time_limit_s: float = 20.0




_FIG11_NETS = "vgg16 resnet50 googlenet randwire_a resnet152 randwire_b transformer_base gpt2 nasnet"
FIG11 = {
    Scale.FULL: PartitionSetting(
        nets=tuple(Net(n) for n in _FIG11_NETS.split()),
        design=Design("separate", "cocco-simba-separate", ()),
        ga=PartitionGAParams(),
        committed="partition_fig11.json",
    ),
    Scale.FAST: PartitionSetting(
        nets=FAST_NETS,
        design=Design("separate", "cocco-simba-separate", (("act_kb", "192"), ("weight_kb", "144"))),
        ga=ga_params(5, 40),
        committed=None,
    ),
}
"""The Fig. 11 measurement at each scale."""


# ------------------------------------------------------------------ fig. 11
FIG11_METHODS = ("greedy", "dp", "ga")


@dataclass(frozen=True)
class Peak:
    """A partition's bandwidth requirement, bytes/s, and the subgraph that sets it."""

    bytes_per_s: float
    text: str


def no_stall_bandwidth(instance: PartitionInstance, solution: PartitionSolution) -> Peak:
    """The DRAM bandwidth at which no subgraph of ``solution`` waits for DRAM (module docstring, *The
    bandwidth requirement*): ``clock x max_k (act_k + w_(k+1)) / cycles_k``."""
    costs = [instance.cost_model.subgraph(members) for members in solution.indices(instance)]
    clock = instance.accelerator.clock_hz
    peak = Peak(0.0, "")
    for k, cost in enumerate(costs):
        mode = cost.mode_for(instance.shared, solution.act_capacity_bytes, solution.weight_capacity_bytes)
        if mode is None:
            raise ValueError(f"subgraph {k} does not fit its buffers")
        following = costs[k + 1].weight_dram_bytes if k + 1 < len(costs) else 0
        need = (cost.activation_dram_bytes(mode) + following) / max(cost.compute_cycles, 1) * clock
        if need > peak.bytes_per_s:
            text = (f"subgraph {k + 1} of {len(costs)}: {len(cost.members)} layers, {cost.compute_cycles / 1e3:.1f} "
                    f"kcycles, {cost.activation_dram_bytes(mode) / 1e6:.2f} MB activations + {following / 1e6:.2f} MB "
                    "of the next weights")  # fmt: skip
            peak = Peak(need, text)
    return peak


@dataclass(frozen=True)
class PartitionRow:
    """One Fig. 11 model: EMA (bytes) and bandwidth requirement (bytes/s) of each method, the optimum."""

    net: str
    layers: int
    ema: Mapping[str, float]
    bandwidth: Mapping[str, float]
    peak: Mapping[str, str]
    optimum: Optimum


@dataclass(frozen=True)
class PartitionRuns:
    """The Fig. 11 measurement: a row per model, and what was run."""

    rows: tuple[PartitionRow, ...]
    setup: str


@cache
def partition_runs(scale: Scale) -> PartitionRuns:
    """Greedy, DP and Cocco's GA on every Fig. 11 model at ``scale`` (run once per scale)."""
    setting = FIG11[scale]
    ga = ga_method(setting.ga)
    options = SolveOptions(seed=SEED)
    rows = []
    for net in setting.nets:
        instance = setting.design.instance(net.load())
        results = {m: checked(instance, ga if m == "ga" else get_method(PROBLEM.name, m), options)
                   for m in FIG11_METHODS}  # fmt: skip
        optimum = find_optimum(instance, net.name, setting.design.name, setting.committed, setting.exact_time_limit_s,
                           list(results.values()))  # fmt: skip
        peaks = {m: no_stall_bandwidth(instance, r.solution) for m, r in results.items()}
        rows.append(PartitionRow(
            net.name, instance.n_layers,
            {m: float(r.cost.dram_bytes) for m, r in results.items()},
            {m: peaks[m].bytes_per_s for m in results},
            {m: peaks[m].text for m in results},
            optimum,
        ))  # fmt: skip
    options_text = ", ".join(f"{k}={v}" for k, v in setting.design.options) or "its 1 MB + 1.125 MB buffers"
    reference = (f"optima: the exact rows of the committed bench/results/{setting.committed}"
                 if setting.committed else f"optima: milp-highs ({setting.exact_time_limit_s:g} s limit)")  # fmt: skip
    setup = (f"{', '.join(n.name for n in setting.nets)} on {setting.design.preset} ({options_text}), batch 1; "
             f"greedy (Halide), dp (Irregular-NN), Cocco's GA {setting.ga.ga.generations} x "
             f"{setting.ga.ga.population_size} (seed {SEED}); {reference}")  # fmt: skip
    return PartitionRuns(tuple(rows), setup)


def _lower_than(metric: str, baselines: Sequence[str], scale: Scale) -> Measurement:
    """Whether the GA's ``metric`` (``ema`` or ``bandwidth``) is below each baseline's: the geometric mean
    over the models of GA / baseline is below 1, and the GA is lower on more models than it is higher."""
    runs = partition_runs(scale)
    parts: list[str] = []
    failing: list[tuple[str, float]] = []
    by_base: dict[str, list[tuple[float, PartitionRow]]] = {}
    for base in baselines:
        ratios = by_base[base] = [(getattr(r, metric)["ga"] / getattr(r, metric)[base], r) for r in runs.rows]
        geo = geomean([q for q, _ in ratios])
        higher = sum(1 for q, _ in ratios if q > 1 + 1e-9)
        lower = sum(1 for q, _ in ratios if q < 1 - 1e-9)
        if geo >= 1 - 1e-9 or lower <= higher:
            failing.append((base, geo))
        parts.append(f"GA/{base} {geo:.3f}x (geomean; lower on {lower}, higher on {higher} of {len(ratios)})")
    holds = not failing
    text = ("holds: " if holds else "does not hold: ") + "; ".join(parts)
    cause = None
    if not holds:
        causes = []
        for base, _ in failing:
            above = [(q, r) for q, r in by_base[base] if q > 1 + 1e-9]
            if above:
                worst = _above_cause(metric, base, *max(above, key=lambda item: item[0]))
                causes.append(f"higher than {base}'s on {len(above)} of {len(runs.rows)} models, most: {worst}")
            else:
                at_optimum = sum(1 for r in runs.rows if r.ema["ga"] <= r.optimum.value * (1 + 1e-9))
                causes.append(f"the GA's {metric} equals {base}'s on all {len(runs.rows)} models "
                              f"({at_optimum} of them at the optimum EMA)")  # fmt: skip
        cause = "; ".join(causes)
    setup = runs.setup
    if metric == "bandwidth":
        setup += "; bandwidth = the least DRAM bandwidth at which no subgraph waits in the cost model's latency"
    return Measurement(1.0 if holds else 0.0, text, setup, cause)


def _above_cause(metric: str, base: str, ratio: float, row: PartitionRow) -> str:
    if metric == "ema":
        opt = row.optimum
        return (f"the GA's EMA is {pct(ratio)} above {base}'s on {row.net} ({row.ema['ga'] / 1e6:.2f} vs "
                f"{row.ema[base] / 1e6:.2f} MB; {opt.word} {opt.value / 1e6:.2f} MB, GA "
                f"{pct(row.ema['ga'] / opt.value)})")  # fmt: skip
    return (
        f"the GA's bandwidth requirement is {pct(ratio)} above {base}'s on {row.net} "
        f"({row.bandwidth['ga'] / 1e9:.1f} vs {row.bandwidth[base] / 1e9:.1f} GB/s; the GA's peak: {row.peak['ga']})"
    )


def measure_vs_greedy(scale: Scale) -> Measurement:
    """Cocco's GA against greedy, EMA (geometric mean over the Fig. 11 models)."""
    return _lower_than("ema", ("greedy",), scale)


def measure_vs_dp(scale: Scale) -> Measurement:
    """Cocco's GA against DP, EMA."""
    return _lower_than("ema", ("dp",), scale)


def measure_bandwidth(scale: Scale) -> Measurement:
    """Cocco's GA against greedy and DP, bandwidth requirement."""
    return _lower_than("bandwidth", ("greedy", "dp"), scale)


def measure_stability(scale: Scale) -> Measurement:
    """Whether the GA's worst excess EMA over the optimum (over the models) is below greedy's and DP's."""
    runs = partition_runs(scale)
    worst = {}
    for method in FIG11_METHODS:
        excess, row = max(((r.ema[method] / r.optimum.value, r) for r in runs.rows), key=lambda item: item[0])
        worst[method] = (excess, row)
    text_of = {m: f"{pct(q)} ({r.net})" for m, (q, r) in worst.items()}
    ga = worst["ga"][0]
    holds = all(ga < worst[b][0] - 1e-9 for b in ("greedy", "dp"))
    text = (
        ("holds" if holds else "does not hold")
        + ": worst EMA over the optimum "
        + ", ".join(f"{m} {t}" for m, t in text_of.items())
    )
    cause = None
    if not holds:
        q, row = worst["ga"]
        beaten = [b for b in ("greedy", "dp") if worst[b][0] <= ga + 1e-9]
        cause = (f"the GA's worst excess, {pct(q)} on {row.net} ({row.ema['ga'] / 1e6:.2f} vs "
                 f"{row.optimum.value / 1e6:.2f} MB, {row.optimum.word}), is not below "
                 + " and ".join(f"{b}'s {text_of[b]}" for b in beaten))  # fmt: skip
    proven = sum(1 for r in runs.rows if r.optimum.proven)
    return Measurement(1.0 if holds else 0.0, text, f"{runs.setup}; {proven} of {len(runs.rows)} optima proven",
                       cause)  # fmt: skip


# ------------------------------------------------------------------ claims
_ABSTRACT = "abstract"

CLAIMS: tuple[Claim, ...] = (
    Claim(
        key="cocco-ga-vs-greedy-ema",
        paper=PAPER,
        statement="Cocco's GA partition has lower external memory access than the greedy partition (Halide's)",
        figure=PaperFigure(1.0, "lower EMA than greedy", f"{_ABSTRACT}; Fig. 11"),
        kind=ClaimKind.FACT,
        measure=measure_vs_greedy,
    ),
    Claim(
        key="cocco-ga-vs-dp-ema",
        paper=PAPER,
        statement="Cocco's GA partition has lower external memory access than the DP partition (Irregular-NN's)",
        figure=PaperFigure(1.0, "lower EMA than DP", f"{_ABSTRACT}; Fig. 11"),
        kind=ClaimKind.FACT,
        measure=measure_vs_dp,
    ),
    Claim(
        key="cocco-ga-bandwidth",
        paper=PAPER,
        statement="Cocco's GA partition needs less DRAM bandwidth than the greedy and the DP partitions",
        figure=PaperFigure(1.0, "lower bandwidth requirement than greedy and DP", f"{_ABSTRACT}; Fig. 11"),
        kind=ClaimKind.FACT,
        measure=measure_bandwidth,
    ),
    Claim(
        key="cocco-ga-stability",
        paper=PAPER,
        statement="Cocco's GA optimizes the partition more stably than greedy and DP (a smaller worst excess "
        "over the optimum across models)",
        figure=PaperFigure(1.0, "more stable optimization than greedy and DP", f"{_ABSTRACT}; Fig. 11"),
        kind=ClaimKind.FACT,
        measure=measure_stability,
    ),
    Claim(
        key="cocco-coexplore-max-saving",
        paper=PAPER,
        statement="Co-exploring capacity and partition costs up to 50.33 % less than the other methods",
        figure=MAX_FIGURE,
        kind=ClaimKind.RATIO,
        measure=measure_coexplore_max,
    ),
    Claim(
        key="cocco-coexplore-min-saving",
        paper=PAPER,
        statement="Co-exploring capacity and partition costs at least 1.89 % less than every other method",
        figure=MIN_FIGURE,
        kind=ClaimKind.RATIO,
        measure=measure_coexplore_min,
    ),
)
"""Cocco's headline claims, in the order of its abstract."""
