"""Stream's headline claims (Symons et al., arXiv 2212.10612), measured on accelsched's multicore problem.

Sources
-------
Two versions of the paper print different headline figures, and both are cited by version:

* arXiv v1 (20 Dec 2022, "Towards Heterogeneous Multi-core Accelerators Exploiting Fine-grained Scheduling of
  Layer-Fused Deep Neural Networks"), abstract: layer fusion reduces the energy-delay product (EDP) "from 2.4x
  for single-core architectures to up to 30x for heterogeneous multi-core architectures compared to the
  traditional scheduling at layer granularity";
* arXiv v2 (arxiv.org/html/2212.10612v2, "Stream: Design Space Exploration of Layer-fused DNNs on
  Heterogeneous Dataflow Accelerators", IEEE TC), abstract: layer fusion on heterogeneous dataflow
  accelerators "yields up to 2.2x lower energy-delay product".

The "4.7x" and "10-19x" of the project's earlier tables are not printed in either abstract, and the body of
the paper was not available here: they are left out.

Protocol
--------
For a workload and an architecture (the ``stream-*`` presets), *LBL* is the instance at layer granularity
and *fused* the instance at fused granularity (one output row per CN) with the automatic layer stacks
(:func:`accelsched.problems.multicore.auto_stacks`), both with the EDP objective, the latency priority and
Stream's manual allocation (method ``manual``: ping-pong on identical cores, best spatial fit otherwise);
every schedule is checked and re-evaluated by :func:`accelsched.registry.run_method`. The gain of a
workload is LBL EDP / fused EDP. ``Scale.FULL`` runs Stream's five workloads (ResNet-18, MobileNetV2,
SqueezeNet, Tiny-YOLO, FSRCNN); ``Scale.FAST`` a five-layer network on a 3 x 32 x 32 input.

Measured cause
--------------
The cause is measured on the gain the claim reports (the best workload for an "up to" figure, the one
furthest from the paper's figure for a mean). The *weight floor* of a workload: every schedule reads each
weight from DRAM at least once, so fused latency >= W / (DRAM bandwidth) and fused energy >= W x (DRAM read
energy per byte), which bounds LBL EDP / fused EDP by LBL EDP / (that latency x that energy). A gain below
the paper's is explained by that bound when the bound itself is below the paper's figure; otherwise the
cause gives both schedules' DRAM traffic and the share of the fused latency in its slowest layer's CNs. A
gain above the paper's gives the DRAM traffic fusion saves.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from accelsched.bench.claims import Claim, ClaimKind, Measurement, PaperFigure, Scale
from accelsched.hardware import load_accelerator
from accelsched.models.builder import NetBuilder
from accelsched.models.registry import load_workload
from accelsched.models.workload import Workload
from accelsched.problems.multicore import PROBLEM, MulticoreSolution, cn_cost, make_instance
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions

__all__ = ["CLAIMS"]

PAPER = "Stream"
WORKLOADS = ("resnet18", "mobilenet_v2", "squeezenet", "tiny_yolo", "fsrcnn")
"""Stream's five workloads (``Scale.FULL``)."""
SINGLE_CORE = ("stream-sc-tpu", "stream-sc-eye", "stream-sc-env")
HETERO = "stream-mc-hetero"
V1 = "arXiv 2212.10612v1 (20 Dec 2022), abstract"
V2 = "arXiv 2212.10612v2 (arxiv.org/html/2212.10612v2), abstract"


@dataclass(frozen=True)
class Gain:
    """LBL and fused EDP of one workload on one architecture, with the figures of the measured cause.

    Attributes
    ----------
    workload, preset
        What ran where.
    lbl_edp, fused_edp
        EDP (pJ x cycles) of the two schedules.
    bound
        LBL EDP over the weight-floor EDP (see the module docstring): no schedule's gain exceeds it.
    weight_mb
        The workload's weights in MB.
    top_layer, top_share
        The layer whose CNs take the longest in the fused schedule, and their summed duration over the
        fused latency.
    lbl_dram_mb, fused_dram_mb
        DRAM traffic of the two schedules in MB.
    """

    workload: str
    preset: str
    lbl_edp: float
    fused_edp: float
    bound: float
    weight_mb: float
    top_layer: str
    top_share: float
    lbl_dram_mb: float
    fused_dram_mb: float

    @property
    def ratio(self) -> float:
        """LBL EDP / fused EDP."""
        return self.lbl_edp / self.fused_edp


def _fast_workload() -> Workload:
    b = NetBuilder("stream-fast", 3, 32, 32)
    x = b.conv(b.input, 16, 3, pad=1, name="c1")
    x = b.conv(x, 32, 3, stride=2, pad=1, name="c2")
    x = b.conv(x, 32, 3, pad=1, name="c3")
    x = b.conv(x, 64, 3, stride=2, pad=1, name="c4")
    b.conv(x, 64, 1, name="c5")
    return b.build()


def _workload(name: str) -> Workload:
    return _fast_workload() if name == "stream-fast" else load_workload(name)


def _workloads(scale: Scale) -> tuple[str, ...]:
    return WORKLOADS if scale is Scale.FULL else ("stream-fast",)


@functools.cache
def _gain(workload: str, preset: str) -> Gain:
    """Run LBL and fused with the manual allocation (module docstring, *Protocol*)."""
    wl, acc = _workload(workload), load_accelerator(preset)
    method = get_method("multicore", "manual")
    reports = {}
    fused = None
    for granularity in ("layer", "fused"):
        options = {"granularity": granularity, "objective": "edp"}
        if granularity == "fused":
            options["stacks"] = "auto"
        instance = make_instance(wl, acc, options)
        result = run_method(PROBLEM, instance, method, SolveOptions(seed=0))
        if result.cost is None or not isinstance(result.solution, MulticoreSolution):
            raise RuntimeError(f"{workload} on {preset} ({granularity}): no schedule ({result.status.name})")
        reports[granularity] = result.cost
        if granularity == "fused":
            fused = (instance, result.solution)
    assert fused is not None
    instance, solution = fused
    busy: dict[str, int] = {}
    for k, cn in enumerate(instance.graph.cns):
        busy[cn.layer] = busy.get(cn.layer, 0) + cn_cost(instance, k, solution.allocation[cn.layer]).duration_cycles
    top = max(busy, key=lambda n: busy[n])
    weights = sum(layer.weight_bytes for layer in wl)
    floor_cycles = weights / acc.offchip.bandwidth_bytes_per_cycle
    floor_pj = weights * acc.offchip.read_energy_pj_per_byte
    lbl, fus = reports["layer"], reports["fused"]
    bound = lbl.edp / (floor_cycles * floor_pj) if weights else math.inf
    return Gain(workload, preset, lbl.edp, fus.edp, bound, weights / 1e6, top, busy[top] / fus.latency_cycles,
                lbl.dram_bytes / 1e6, fus.dram_bytes / 1e6)  # fmt: skip


def _geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _cause(g: Gain, paper: float) -> str:
    """Why the gain ``g`` differs from the paper's ``paper``, measured on that gain's own schedules.

    Above the paper's figure: the DRAM traffic the fused schedule saves. Below it: the weight floor when it
    is below the paper's figure (no schedule could reach it), else the layer that dominates the fused
    latency and the DRAM traffic of both schedules.
    """
    dram = f"DRAM {g.lbl_dram_mb:.1f} MB (LBL) vs {g.fused_dram_mb:.1f} MB (fused)"
    if g.ratio > paper:
        return f"{g.workload} on {g.preset} gains {g.ratio:.2f}x: {dram}"
    if g.bound < paper:
        return (f"weight floor: {g.workload} reads {g.weight_mb:.2f} MB of weights over the DRAM port in any "
                f"schedule, so on {g.preset} LBL/fused EDP <= {g.bound:.1f}x < {paper:g}x (measured {g.ratio:.2f}x)")
    bound = f"{g.bound:.1f}x" if g.bound < 1000 else "> 1000x"
    return (f"{g.workload} on {g.preset}: not bound by the weight floor ({bound}); {dram}; fused latency "
            f"{g.top_share:.0%} in the CNs of {g.top_layer}")  # fmt: skip


def _floor(g: Gain) -> str:
    """The weight floor of the workload with the smallest gain, as a clause of a cause."""
    return (f"least gain {g.workload} {g.ratio:.2f}x: reading its {g.weight_mb:.2f} MB of weights over the DRAM "
            f"port bounds LBL/fused EDP at {g.bound:.1f}x for any schedule")  # fmt: skip


def _per_workload(gains: Sequence[Gain]) -> str:
    return ", ".join(f"{g.workload} {g.ratio:.2f}x" for g in gains)


def _setup(presets: Sequence[str], scale: Scale) -> str:
    return (f"{', '.join(_workloads(scale))} on {', '.join(presets)}: LBL (layer granularity) vs fused (1 row/CN, "
            "auto stacks), manual allocation, latency priority")  # fmt: skip


def _measure_upto(scale: Scale) -> Measurement:
    gains = [_gain(w, HETERO) for w in _workloads(scale)]
    best = max(gains, key=lambda g: g.ratio)
    return Measurement(best.ratio, f"{best.ratio:.2f}x ({best.workload}; {_per_workload(gains)})",
                       _setup([HETERO], scale), _cause(best, 2.2))  # fmt: skip


def _measure_single(scale: Scale) -> Measurement:
    gains = [_gain(w, p) for p in SINGLE_CORE for w in _workloads(scale)]
    value = _geomean([g.ratio for g in gains])
    per_arch = ", ".join(f"{p} {_geomean([g.ratio for g in gains if g.preset == p]):.2f}x" for p in SINGLE_CORE)
    # the gain furthest from the paper's figure, on the side the geometric mean is
    far = max(gains, key=lambda g: g.ratio) if value > 2.4 else min(gains, key=lambda g: g.ratio)
    return Measurement(value, f"{value:.2f}x geomean ({per_arch})", _setup(SINGLE_CORE, scale), _cause(far, 2.4))


def _measure_hetero(scale: Scale) -> Measurement:
    gains = [_gain(w, HETERO) for w in _workloads(scale)]
    best = max(gains, key=lambda g: g.ratio)
    mean = _geomean([g.ratio for g in gains])
    return Measurement(best.ratio, f"up to {best.ratio:.2f}x ({best.workload}; geomean {mean:.2f}x: "
                       f"{_per_workload(gains)})", _setup([HETERO], scale),
                       f"{_cause(best, 30.0)}; {_floor(min(gains, key=lambda g: g.ratio))}")  # fmt: skip


def _measure_ordering(scale: Scale) -> Measurement:
    hetero = _geomean([_gain(w, HETERO).ratio for w in _workloads(scale)])
    single = {p: _geomean([_gain(w, p).ratio for w in _workloads(scale)]) for p in SINGLE_CORE}
    best = max(single, key=lambda p: single[p])
    holds = hetero > single[best]
    verdict = "holds" if holds else "fails"
    text = f"{verdict}: heterogeneous {hetero:.2f}x vs best single-core {best} {single[best]:.2f}x"
    cause = None
    if not holds:
        worst = min((_gain(w, HETERO) for w in _workloads(scale)), key=lambda g: g.ratio)
        cause = _cause(worst, single[best])
    return Measurement(1.0 if holds else 0.0, text, _setup([HETERO, *SINGLE_CORE], scale), cause)


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "stream-fused-vs-lbl-edp",
        PAPER,
        "Layer fusion on a heterogeneous dataflow accelerator gives up to 2.2x lower EDP than layer-by-layer "
        "scheduling (best workload on the heterogeneous quad-core)",
        PaperFigure(2.2, "up to 2.2x lower EDP", V2),
        ClaimKind.RATIO,
        _measure_upto,
    ),
    Claim(
        "stream-single-core-gain",
        PAPER,
        "On single-core architectures, layer fusion lowers EDP 2.4x against scheduling at layer granularity "
        "(geometric mean over workloads and the three single-core architectures)",
        PaperFigure(2.4, "2.4x for single-core architectures", V1),
        ClaimKind.RATIO,
        _measure_single,
    ),
    Claim(
        "stream-hetero-gain",
        PAPER,
        "On the heterogeneous multi-core architecture, layer fusion lowers EDP up to 30x against scheduling at "
        "layer granularity (the best of the five workloads)",
        PaperFigure(30.0, "up to 30x for heterogeneous multi-core architectures", V1),
        ClaimKind.RATIO,
        _measure_hetero,
    ),
    Claim(
        "stream-hetero-gains-most",
        PAPER,
        "The EDP gain of layer fusion grows from single-core to heterogeneous multi-core architectures: the "
        "heterogeneous quad-core gains more than any single-core architecture",
        PaperFigure(1.0, "from 2.4x (single-core) to up to 30x (heterogeneous multi-core)", V1),
        ClaimKind.FACT,
        _measure_ordering,
    ),
)
