"""ZigZag 3.9.1 on one layer and one core, in a worker process, with its results cached on disk.

:func:`run_zigzag` writes the three ZigZag documents of
:mod:`accelsched.hardware.zigzag_export`, runs ``zigzag.api.get_hardware_performance_zigzag``
(LOMA's temporal-mapping search on the given spatial mapping) once for the
minimum-energy and once for the minimum-latency mapping, and reads the two cost
model evaluations (CMEs) into :class:`ZigZagCost`. ZigZag is imported only in the
worker (``pip install 'accelsched[zigzag]'``), which also keeps its logging, its
output folders and the controls below out of the caller's process.

Controls
--------
ZigZag 3.9.1 has errors of its own that a fair cross-check must not charge to
either tool; :class:`Controls` names each, and every result records the controls
it ran with:

``exact_tensor_dims``
    ``LayerNode.calc_tensor_dim`` (``zigzag/workload/layer_node.py:278``) turns the
    sizes of the loops related to a partially relevant dimension into ``int``
    before counting a tile's input rows or columns. A spatial unrolling that does
    not divide its loop gives fractional sizes (``OX`` 970 on 4 columns: 3.99 per
    column, ``OX`` 7 on 4: 3.5), which are truncated, so ZigZag under-counts
    inputs (FSRCNN ``conv1`` on the Meta prototype reads 16.9 MB of its 29.9 MB
    input from DRAM). The control keeps the fractional sizes (float noise such as
    56.99999999999999 snapped to 57): ``calc_pr_dimension_size`` is linear in
    them, so the count is that of the mean tile, which sums exactly over the
    ragged tiles (accelsched's convention). Layers whose unrolling divides their
    loops are unchanged (checked on 14 runs).
``dram_floor``
    ZigZag's ``latency_total2`` (ideal cycles + stalls + on- and off-loading) can
    be smaller than the layer's own off-chip traffic over the DRAM port's
    bandwidth, for two bookkeeping reasons: it is computed on an integer copy of
    the spatial mapping (``cost_model.py:349-364``: ``K`` 31.25 per column becomes
    31, a smaller layer), and ``calc_onloading_combined`` loads I and W over the one
    DRAM port in parallel (the ``max`` at ``cost_model.py:1007-1015``). TPU-like
    ResNet-18 ``layer3_0_downsample``: 10,417 cycles for 13,504 cycles of DRAM
    traffic. The control reports ``max(latency_total2, DRAM bits / port bits per
    cycle)``; ZigZag's own figure is kept as ``raw_latency_cycles``.
``lpf_limit``
    LOMA merges the smallest prime factors of the loops until at most this many
    remain (``opt/loma/engine.py:293-347``), so a loop like 548 = 2 * 2 * 137 cannot
    be tiled finely. Each step up costs about 7x the run time. On six ResNet-18 and
    MobileNetV2 layers 7 and 8 moved the minimum energy by at most 0.72 % and the
    minimum latency by at most 0.42 % (not monotonically: the merged factors
    differ), so the default is kept; on large maps it matters: FSRCNN's 540 x 960
    layers on the Edge-TPU-like core need 7 to tile a map loop at all (``conv7``
    energy 1.27x lower at 7), which the cross-check raises for them.

Not an error, a convention kept as ZigZag ships it: the API's
``access_same_data_considered_as_no_access=True`` reads an operand from its
innermost level once per stationary run, where accelsched reads it every cycle
(see ``same_data_no_access``).

One LOMA search gives both optima: the minimum-energy mapping (ties to the lower
latency) and the minimum-latency one (ties to the lower energy), the reductions
of ZigZag's ``MinimalEnergyStage`` and ``MinimalLatencyStage``, over ZigZag's
pipeline without its save and visualisation stages.

The cache is one JSON file per run under ``cache_dir``, named by the SHA-256 of
the documents, the optimisation target, the controls and ZigZag's version: a
changed preset or layer misses, an unchanged one is read back in microseconds.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from accelsched.hardware.spec import Accelerator
from accelsched.hardware.zigzag_export import zigzag_accelerator, zigzag_mapping, zigzag_workload
from accelsched.models.layer import Layer

__all__ = [
    "DEFAULT_CACHE",
    "Controls",
    "ZigZagCost",
    "ZigZagJob",
    "ZigZagPair",
    "cached",
    "require_zigzag",
    "run_job",
    "run_zigzag",
    "zigzag_available",
]

Target = Literal["energy", "latency"]

DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "accelsched" / "zigzag"
"""Where results are cached unless another folder is given."""


def zigzag_available() -> str | None:
    """ZigZag's version when ``zigzag-dse`` is importable, else None."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        import zigzag  # noqa: F401
    except ImportError:
        return None
    try:
        return version("zigzag-dse")
    except PackageNotFoundError:  # pragma: no cover - a source checkout of ZigZag
        return "unknown"


def require_zigzag() -> str:
    """ZigZag's version.

    Raises
    ------
    RuntimeError
        If ZigZag is not installed.
    """
    version = zigzag_available()
    if version is None:
        raise RuntimeError("ZigZag is not installed; install it with `pip install 'accelsched[zigzag]'`")
    return version


@dataclass(frozen=True)
class Controls:
    """How ZigZag's own errors are controlled (see the module docstring)."""

    exact_tensor_dims: bool = True
    dram_floor: bool = True
    lpf_limit: int = 6
    same_data_no_access: bool = True

    def describe(self) -> list[str]:
        """One line per control, as the table prints them."""
        lines = [f"LOMA `lpf_limit` {self.lpf_limit} (ZigZag's default 6; 7-8 moved six small-map layers' optima "
                 "< 0.8 %)"]  # fmt: skip
        if self.exact_tensor_dims:
            lines.append(
                "`LayerNode.calc_tensor_dim` patched: fractional tile sizes kept, not truncated by `int()` "
                "(it under-counts inputs when an unrolling does not divide its loop)"
            )
        if self.dram_floor:
            lines.append(
                "ZigZag latency floored at its own DRAM bits / DRAM port bits per cycle (`latency_total2` "
                "runs on an integer spatial mapping and loads I and W in parallel over the one DRAM port)"
            )
        lines.append(f"`access_same_data_considered_as_no_access` = {self.same_data_no_access} (ZigZag's API value)")
        return lines


@dataclass(frozen=True)
class ZigZagCost:
    """What one ZigZag evaluation (one CME) says of a layer on a core.

    ``latency_cycles`` is ``latency_total2`` (with the DRAM floor when the control
    is on), ``raw_latency_cycles`` ZigZag's own figure; ``steady_latency_cycles``
    is ``latency_total0``, the ideal cycles plus stalls without the on- and
    off-loading ZigZag runs serially before the first and after the last MAC
    (floored alike): the quantity accelsched's overlapped roofline models; ``ideal_cycles`` the
    compute cycles at the spatial utilization; ``dram_bytes`` the bytes each
    operand moves to or from the DRAM level; ``energy_breakdown_pj`` MAC and
    memory energy per level; ``temporal_mapping`` LOMA's loops per level.
    """

    target: Target
    energy_pj: float
    latency_cycles: float
    raw_latency_cycles: float
    steady_latency_cycles: float
    ideal_cycles: float
    spatial_utilization: float
    dram_bytes: Mapping[str, float]
    energy_breakdown_pj: Mapping[str, float]
    temporal_mapping: str
    seconds: float
    controls: Mapping[str, Any] = field(default_factory=dict)
    version: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ZigZagCost:
        """The inverse of :func:`dataclasses.asdict`."""
        return cls(**dict(data))


@dataclass(frozen=True)
class ZigZagPair:
    """ZigZag's minimum-energy and minimum-latency mappings of one layer on one core (one search)."""

    energy: ZigZagCost
    latency: ZigZagCost

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary."""
        return {"energy": asdict(self.energy), "latency": asdict(self.latency)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ZigZagPair:
        """The inverse of :meth:`to_dict`."""
        return cls(ZigZagCost.from_dict(data["energy"]), ZigZagCost.from_dict(data["latency"]))


@dataclass(frozen=True)
class ZigZagJob:
    """One search: the three documents and the controls (picklable, for a worker process)."""

    accelerator: Mapping[str, Any]
    mapping: list[dict[str, Any]]
    workload: list[dict[str, Any]]
    controls: Controls

    @classmethod
    def of(cls, layer: Layer, accelerator: Accelerator, controls: Controls, core_id: int = 0) -> ZigZagJob:
        """The job of ``layer`` on core ``core_id`` of ``accelerator``."""
        core = accelerator.core(core_id)
        return cls(zigzag_accelerator(accelerator, core_id), zigzag_mapping(layer, core), zigzag_workload(layer),
                   controls)  # fmt: skip

    def key(self, version: str) -> str:
        """SHA-256 of everything the result depends on: not the layer's name, so equal shapes share a result."""
        workload = [{k: v for k, v in entry.items() if k != "name"} for entry in self.workload]
        text = json.dumps([self.accelerator, self.mapping, workload, asdict(self.controls), version],
                          sort_keys=True)  # fmt: skip
        return hashlib.sha256(text.encode()).hexdigest()


def run_zigzag(
    layer: Layer, accelerator: Accelerator, controls: Controls = Controls(), cache_dir: Path | None = DEFAULT_CACHE
) -> ZigZagPair:
    """ZigZag's best mappings of ``layer`` on core 0, from the cache when it holds them."""
    return run_job(ZigZagJob.of(layer, accelerator, controls), cache_dir)


def cached(job: ZigZagJob, cache_dir: Path | None) -> ZigZagPair | None:
    """The cached result of ``job``, or None."""
    version = zigzag_available()
    if cache_dir is None or version is None:
        return None
    path = cache_dir / f"{job.key(version)}.json"
    try:
        return ZigZagPair.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def run_job(job: ZigZagJob, cache_dir: Path | None = DEFAULT_CACHE) -> ZigZagPair:
    """Run (or read from the cache) one job in this process; the result is cached atomically.

    Raises
    ------
    RuntimeError
        If ZigZag is not installed.
    """
    version = require_zigzag()
    hit = cached(job, cache_dir)
    if hit is not None:
        return hit
    result = _evaluate(job, version)
    if cache_dir is not None:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            json.dump(result.to_dict(), handle)
        os.replace(tmp, cache_dir / f"{job.key(version)}.json")
    return result


# ----------------------------------------------------------------- in ZigZag
def _snap(value: float, eps: float = 1e-6) -> float:
    """``value`` rounded to the nearest integer when within float noise of it."""
    nearest = round(value)
    return nearest if abs(value - nearest) <= eps * max(1.0, abs(value)) else value


@contextmanager
def _controlled(controls: Controls) -> Iterator[None]:
    """ZigZag patched as ``controls`` say, and its logging silenced, for the ``with`` block only.

    Everything is restored on exit, so a caller that imports ZigZag itself sees it unchanged.
    """
    import logging

    from zigzag.workload.layer_node import LayerNode

    shipped = LayerNode.calc_tensor_dim
    silenced = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    if controls.exact_tensor_dims:
        LayerNode.calc_tensor_dim = _exact_calc_tensor_dim  # type: ignore[method-assign]
    try:
        yield
    finally:
        LayerNode.calc_tensor_dim = shipped  # type: ignore[method-assign]
        logging.disable(silenced)


def _exact_calc_tensor_dim(self: Any, dim: Any, layer_dim_sizes: Any) -> Any:
    """``LayerNode.calc_tensor_dim`` keeping fractional related-loop sizes (the ``exact_tensor_dims`` control)."""
    if dim in layer_dim_sizes:
        return layer_dim_sizes[dim]
    if dim in self.pr_loop:
        related = tuple(_snap(layer_dim_sizes[r]) for r in self.pr_loop[dim])
        scaling = tuple(t[1] for t in self.pr_scaling_factors[dim])
        size = self.calc_pr_dimension_size(sa=scaling[0], a=related[0], sb=scaling[1], b=related[1])
        return min(self.pr_layer_dim_sizes[dim], size)
    if dim in self.layer_dim_sizes:
        return 1
    raise ValueError(f"dimension {dim} is not a loop of layer {self.name}")


def _dram_bits(cme: Any) -> tuple[dict[str, float], float]:
    """Bits each layer operand moves to or from the DRAM level, and the DRAM port's bits per cycle.

    From ``cme.mapping`` (the fractional mapping, not ``mapping_int``): the data
    elements the outermost level sends down (``RD_OUT_TO_LOW``) and receives from
    below (``WR_IN_BY_LOW``, outputs and partial sums) times their precision.
    """
    from zigzag.hardware.architecture.memory_port import DataDirection
    from zigzag.mapping.data_movement import DataMoveAttr

    dram = cme.mem_level_list[-1]
    port_bits = float(max(port.bw_max for port in dram.ports))
    moved: dict[str, float] = {}
    for layer_op in cme.layer.layer_operands:
        unit = cme.mapping.unit_mem_data_movement[layer_op][-1]
        count = unit.get_attribute(DataMoveAttr.DATA_ELEM_MOVE_COUNT)
        precision = unit.get_attribute(DataMoveAttr.DATA_PRECISION)
        bits = 0.0
        for direction in (DataDirection.RD_OUT_TO_LOW, DataDirection.WR_IN_BY_LOW):
            bits += float(count.get(direction)) * float(precision.get(direction))
        moved[str(layer_op)] = bits
    return moved, port_bits


def _search(job: ZigZagJob, paths: Mapping[str, str], dump: str) -> tuple[Any, Any]:
    """One LOMA search through ZigZag's stages; the minimum-energy and minimum-latency CMEs."""
    from zigzag.mapping.temporal_mapping import TemporalMappingType
    from zigzag.stages.evaluation.cost_model_evaluation import CostModelStage
    from zigzag.stages.main import MainStage
    from zigzag.stages.mapping.spatial_mapping_generation import SpatialMappingGeneratorStage
    from zigzag.stages.mapping.temporal_mapping_generator_stage import TemporalMappingGeneratorStage
    from zigzag.stages.parser.accelerator_parser import AcceleratorParserStage
    from zigzag.stages.parser.workload_parser import WorkloadParserStage
    from zigzag.stages.stage import Stage
    from zigzag.stages.workload_iterator import WorkloadStage

    def by_energy(cme: Any) -> tuple[float, float]:
        return (cme.energy_total, _latency(cme, job.controls))

    def by_latency(cme: Any) -> tuple[float, float]:
        return (_latency(cme, job.controls), cme.energy_total)

    class BothOptimaStage(Stage):
        """Yields the minimum-energy and the minimum-latency CME of what the stages below yield."""

        def run(self) -> Any:
            below = self.list_of_callables[0](self.list_of_callables[1:], **self.kwargs)
            cmes = [cme for cme, _ in below.run()]
            yield min(cmes, key=by_energy), None
            yield min(cmes, key=by_latency), None

    stages: list[Any] = [WorkloadParserStage, AcceleratorParserStage, WorkloadStage, BothOptimaStage,
              SpatialMappingGeneratorStage, BothOptimaStage, TemporalMappingGeneratorStage, CostModelStage]  # fmt: skip
    main = MainStage(
        stages, accelerator=paths["accelerator"], workload=paths["workload"], mapping=paths["mapping"],
        dump_folder=dump, loma_lpf_limit=job.controls.lpf_limit, loma_show_progress_bar=False,
        nb_mappings_generated=3, enable_mix_spatial_mapping_generation=False,
        access_same_data_considered_as_no_access=job.controls.same_data_no_access,
        temporal_mapping_type=TemporalMappingType("uneven"),
    )  # fmt: skip
    cmes = [cme for cme, _ in main.run()]
    return min(cmes, key=by_energy), min(cmes, key=by_latency)


def _evaluate(job: ZigZagJob, version: str) -> ZigZagPair:
    """Run ZigZag on ``job`` (imports ZigZag, patched for the search only; best in a worker process)."""
    import time

    import yaml

    start = time.perf_counter()
    with _controlled(job.controls), tempfile.TemporaryDirectory(prefix="accelsched-zigzag-") as tmp:
        paths = {}
        for name, doc in (("accelerator", job.accelerator), ("mapping", job.mapping), ("workload", job.workload)):
            paths[name] = os.path.join(tmp, f"{name}.yaml")
            with open(paths[name], "w") as handle:
                yaml.safe_dump(doc, handle, sort_keys=False)
        best_energy, best_latency = _search(job, paths, os.path.join(tmp, "out"))
    seconds = time.perf_counter() - start
    return ZigZagPair(_read_cme(best_energy, "energy", job, version, seconds),
                      _read_cme(best_latency, "latency", job, version, seconds))  # fmt: skip


def _latency(cme: Any, controls: Controls, steady: bool = False) -> float:
    """The CME's latency under ``controls``: ``latency_total2``, floored at DRAM bits / port bits if asked.

    Both optima are chosen on this value, so a mapping whose raw latency is deflated
    below its own DRAM time cannot win the minimum-latency search. With ``steady``,
    ``latency_total0`` (no serial on- and off-loading) is floored instead.
    """
    raw = float(cme.latency_total0 if steady else cme.latency_total2)
    if not controls.dram_floor:
        return raw
    dram_bits, port_bits = _dram_bits(cme)
    return max(raw, sum(dram_bits.values()) / port_bits)


def _read_cme(cme: Any, target: Target, job: ZigZagJob, version: str, seconds: float) -> ZigZagCost:
    dram_bits, _ = _dram_bits(cme)
    raw = float(cme.latency_total2)
    latency = _latency(cme, job.controls)
    breakdown = {"mac": float(cme.mac_energy)}
    links = cme.layer.memory_operand_links
    for layer_op, levels in cme.mem_energy_breakdown.items():
        names = [level.name for level in cme.mem_hierarchy_dict[links.layer_to_mem_op(layer_op)]]
        for name, energy in zip(names, levels, strict=True):
            key = f"mem:{name}"
            breakdown[key] = breakdown.get(key, 0.0) + float(energy)
    return ZigZagCost(
        target=target,
        energy_pj=float(cme.energy_total),
        latency_cycles=latency,
        raw_latency_cycles=raw,
        steady_latency_cycles=_latency(cme, job.controls, steady=True),
        ideal_cycles=float(cme.ideal_temporal_cycle),
        spatial_utilization=float(cme.mac_spatial_utilization),
        dram_bytes={op: bits / 8 for op, bits in dram_bits.items()},
        energy_breakdown_pj=breakdown,
        temporal_mapping=str(cme.temporal_mapping),
        seconds=seconds,
        controls=asdict(job.controls),
        version=version,
    )
