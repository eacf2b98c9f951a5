"""The benchmark suites: fixed lists of instances x methods x seeds per problem.

Each problem contributes one :class:`ProblemSuites` entry to :data:`PROBLEM_SUITES`
with three suites:

``tiny``
    seconds; used by the tests and the benchmarking notebook.
``small``
    minutes; exact methods on instances where they prove optimality, next to the
    heuristics with several seeds, so that every heuristic gap is measured against a
    proven optimum (the committed sweep under ``bench/results/bench_small/``).
``paper``
    the papers' own workloads and platforms with long time limits; exact methods
    often stop at the limit there, and gaps are then taken to the best proven bound
    or, without one, to the best solution found (see ``BENCHMARKING.md``).

Adding a problem's suites is adding one :class:`ProblemSuites` entry here; the
runner, the report and the CLI read nothing else.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from accelsched.errors import InputError

__all__ = [
    "PROBLEM_SUITES",
    "SUITE_NAMES",
    "InstanceSpec",
    "MethodPlan",
    "ProblemSuites",
    "Suite",
    "select",
]

SUITE_NAMES = ("tiny", "small", "paper")
"""The suites every problem defines, from the smallest."""


def _name(owner: str, field: str, value: Any) -> str:
    if not isinstance(value, str) or not value or value != value.strip():
        raise ValueError(f"{owner}: field {field} must be a non-empty string without surrounding spaces, got {value!r}")
    return value


@dataclass(frozen=True)
class MethodPlan:
    """A method of a suite and whether it runs once per seed.

    Parameters
    ----------
    name
        Registered method name (``accelsched list methods``).
    seeded
        True when the method's result depends on the seed (SA, GA): it runs once per
        seed ``0 .. seeds-1``. False for deterministic methods and for exact models,
        whose optimum does not depend on the solver's seed: they run once, seed 0.
    """

    name: str
    seeded: bool = False

    def __post_init__(self) -> None:
        _name("MethodPlan", "name", self.name)
        if not isinstance(self.seeded, bool):
            raise ValueError(f"MethodPlan: field seeded must be True or False, got {self.seeded!r}")


@dataclass(frozen=True)
class InstanceSpec:
    """One instance of a problem: a workload on a hardware preset with problem options.

    Parameters
    ----------
    workload
        Zoo name, ``random:N:SEED``, or a workload file (``accelsched list workloads``).
    hardware
        Preset name or a ``.toml`` file.
    batch
        Batch size, >= 1.
    options
        The problem's ``--option KEY=VALUE`` pairs; a mapping is accepted and stored
        as a tuple of pairs in the given order.
    methods
        Names of the suite's methods to run on this instance, or None for all of them
        (e.g. to leave out a backend that cannot prove optimality here in the time limit).
    name
        Instance id in results and reports; derived from the other fields when empty.

    Raises
    ------
    ValueError
        A field has a bad value; the message names it.
    """

    workload: str
    hardware: str
    batch: int = 1
    options: tuple[tuple[str, str], ...] = ()
    methods: tuple[str, ...] | None = None
    name: str = ""

    def __post_init__(self) -> None:
        _name("InstanceSpec", "workload", self.workload)
        _name("InstanceSpec", "hardware", self.hardware)
        if isinstance(self.batch, bool) or not isinstance(self.batch, numbers.Integral) or self.batch < 1:
            raise ValueError(f"InstanceSpec: field batch must be an integer >= 1, got {self.batch!r}")
        object.__setattr__(self, "batch", int(self.batch))
        pairs = tuple(self.options.items()) if isinstance(self.options, Mapping) else tuple(self.options)
        for pair in pairs:
            if (
                not isinstance(pair, tuple)
                or len(pair) != 2
                or not all(isinstance(part, str) for part in pair)
                or not pair[0]
                or "=" in pair[0]
            ):
                raise ValueError(f"InstanceSpec: field options must hold (key, value) string pairs, got {pair!r}")
        keys = [key for key, _ in pairs]
        if len(set(keys)) != len(keys):
            raise ValueError(f"InstanceSpec: field options repeats a key: {keys!r}")
        object.__setattr__(self, "options", pairs)
        if self.methods is not None:
            methods = tuple(self.methods)
            if not methods:
                raise ValueError("InstanceSpec: field methods must be None or non-empty")
            for method in methods:
                _name("InstanceSpec", "methods", method)
            object.__setattr__(self, "methods", methods)
        if not isinstance(self.name, str) or self.name != self.name.strip():
            raise ValueError(f"InstanceSpec: field name must be a string without surrounding spaces, got {self.name!r}")

    @property
    def id(self) -> str:
        """Stable identifier: ``name``, or ``workload@hardware[/bN][/key=value,...]``."""
        if self.name:
            return self.name
        text = f"{self.workload}@{self.hardware}"
        if self.batch != 1:
            text += f"/b{self.batch}"
        if self.options:
            text += "/" + ",".join(f"{k}={v}" for k, v in self.options)
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form (the ``instance`` field of a results line)."""
        return {
            "id": self.id,
            "workload": self.workload,
            "hardware": self.hardware,
            "batch": self.batch,
            "options": dict(self.options),
        }


@dataclass(frozen=True)
class Suite:
    """Instances x methods x seeds of one problem, with one time limit per method run.

    Parameters
    ----------
    instances
        The instances, each with a distinct id.
    methods
        The methods, each with a distinct name.
    time_limit_s
        Time limit of every method run (``SolveOptions.time_limit_s``), seconds.
    seeds
        Number of seeds of the seeded methods (seeds ``0 .. seeds-1``), >= 1.

    Raises
    ------
    ValueError
        A field has a bad value, an id or a name repeats, or an instance names a
        method the suite does not have.
    """

    instances: tuple[InstanceSpec, ...]
    methods: tuple[MethodPlan, ...]
    time_limit_s: float
    seeds: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "instances", tuple(self.instances))
        object.__setattr__(self, "methods", tuple(self.methods))
        if not self.instances or not all(isinstance(i, InstanceSpec) for i in self.instances):
            raise ValueError(
                f"Suite: field instances must be a non-empty sequence of InstanceSpec, got {self.instances!r}"
            )
        if not self.methods or not all(isinstance(m, MethodPlan) for m in self.methods):
            raise ValueError(f"Suite: field methods must be a non-empty sequence of MethodPlan, got {self.methods!r}")
        ids = [i.id for i in self.instances]
        if len(set(ids)) != len(ids):
            raise ValueError(f"Suite: field instances repeats an id: {sorted(i for i in ids if ids.count(i) > 1)[0]!r}")
        names = [m.name for m in self.methods]
        if len(set(names)) != len(names):
            raise ValueError(f"Suite: field methods repeats a name: {names!r}")
        for instance in self.instances:
            extra = sorted(set(instance.methods or ()) - set(names))
            if extra:
                raise ValueError(f"Suite: instance {instance.id!r} names method {extra[0]!r}, not one of {names}")
        limit = self.time_limit_s
        if isinstance(limit, bool) or not isinstance(limit, numbers.Real) or not (0 < limit < math.inf):
            raise ValueError(f"Suite: field time_limit_s must be a positive finite number, got {limit!r}")
        object.__setattr__(self, "time_limit_s", float(limit))
        if isinstance(self.seeds, bool) or not isinstance(self.seeds, numbers.Integral) or self.seeds < 1:
            raise ValueError(f"Suite: field seeds must be an integer >= 1, got {self.seeds!r}")
        object.__setattr__(self, "seeds", int(self.seeds))

    def methods_of(self, instance: InstanceSpec) -> tuple[MethodPlan, ...]:
        """The method plans that run on ``instance``, in the suite's order."""
        if instance.methods is None:
            return self.methods
        return tuple(m for m in self.methods if m.name in instance.methods)


@dataclass(frozen=True)
class ProblemSuites:
    """The ``tiny``, ``small`` and ``paper`` suites of one registered problem."""

    problem: str
    tiny: Suite
    small: Suite
    paper: Suite

    def __post_init__(self) -> None:
        _name("ProblemSuites", "problem", self.problem)
        for name in SUITE_NAMES:
            if not isinstance(getattr(self, name), Suite):
                raise ValueError(f"ProblemSuites {self.problem!r}: field {name} must be a Suite")

    def get(self, name: str) -> Suite:
        """The suite called ``name`` (one of :data:`SUITE_NAMES`)."""
        if name not in SUITE_NAMES:
            raise KeyError(name)
        suite: Suite = getattr(self, name)
        return suite


def _specs(rows: Sequence[tuple[Any, ...]], **common: Any) -> tuple[InstanceSpec, ...]:
    """``InstanceSpec(workload, hardware, batch, options, methods)`` from short tuples."""
    out = []
    for row in rows:
        fields = dict(zip(("workload", "hardware", "batch", "options", "methods"), row, strict=False))
        out.append(InstanceSpec(**{**common, **fields}))
    return tuple(out)


# ------------------------------------------------------------------ partition (Cocco)
_COEX = (("metric", "energy"), ("capacities", "cocco"))
_PARTITION_EXACT = ("enumerate", "milp-highs", "milp-cbc", "milp-pyomo", "cpsat")
_PARTITION_FAST_EXACT = ("enumerate", "milp-highs", "cpsat")
_PARTITION_HEURISTICS = ("greedy", "dp", "sa", "ga")
_PARTITION_METHODS = tuple(MethodPlan(m, seeded=m in ("sa", "ga")) for m in _PARTITION_EXACT + _PARTITION_HEURISTICS)

PARTITION = ProblemSuites(
    "partition",
    tiny=Suite(
        _specs([("squeezenet", "cocco-simba-shared", 1, _COEX)]),
        tuple(m for m in _PARTITION_METHODS if m.name not in ("milp-cbc", "milp-pyomo")),
        time_limit_s=60,
        seeds=2,
    ),
    small=Suite(
        _specs(
            [
                ("resnet50", "cocco-simba-separate"),
                # GoogLeNet without CBC and Pyomo/HiGHS: a small suite runs an exact method only where it is
                # meant to prove the optimum within the time limit (module docstring, ``small``)
                ("googlenet", "cocco-simba-separate", 1, (), _PARTITION_FAST_EXACT + _PARTITION_HEURISTICS),
                ("mobilenet_v2", "cocco-simba-separate", 1, _COEX),
                ("resnet18", "cocco-simba-shared", 1, _COEX),
                ("squeezenet", "cocco-simba-shared", 1, _COEX),
            ]
        ),
        _PARTITION_METHODS,
        time_limit_s=120,
        seeds=5,
    ),
    paper=Suite(
        # Cocco Fig. 11 (EMA, 1 MB + 1.125 MB separate buffers) and Tables 1-2 (co-exploration)
        _specs(
            [
                (w, "cocco-simba-separate")
                for w in (
                    "vgg16",
                    "resnet50",
                    "googlenet",
                    "randwire_a",
                    "resnet152",
                    "randwire_b",
                    "transformer_base",
                    "gpt2",
                    "nasnet",
                )
            ]
            + [
                (w, d, 1, _COEX)
                for d in ("cocco-simba-shared", "cocco-simba-separate")
                for w in ("resnet50", "googlenet", "randwire_a", "nasnet")
            ]
        ),
        tuple(m for m in _PARTITION_METHODS if m.name not in ("enumerate", "milp-cbc", "milp-pyomo")),
        time_limit_s=300,
        seeds=3,
    ),
)

# ----------------------------------------------------------------------- ra-tree (SET)
_RA_TREE_METHODS = tuple(
    MethodPlan(m, seeded=m.startswith("sa")) for m in ("enumerate", "dp-ls", "dp-lp", "sa", "sa-ls", "sa-lp", "tangram")
)
_RA_TREE_NO_ENUM = ("dp-ls", "dp-lp", "sa", "sa-ls", "sa-lp", "tangram")

RA_TREE = ProblemSuites(
    "ra-tree",
    tiny=Suite(
        _specs([("random:4:3", "set-edge-4x4", 2)]),
        tuple(m for m in _RA_TREE_METHODS if m.name not in ("sa-ls", "sa-lp")),
        time_limit_s=60,
        seeds=2,
    ),
    small=Suite(
        _specs(
            [
                ("random:5:2", "set-edge-4x4", 1),
                ("random:5:7", "set-edge-4x4", 2),
                ("random:5:8", "set-edge-4x4", 4),
                ("random:6:9", "set-edge-4x4", 1),
                ("random:6:3", "set-edge-4x4", 2),
                ("random:5:5", "set-cloud-12x12", 2),
                ("random:6:6", "set-cloud-12x12", 1),
                # beyond exhaustive enumeration (6 layers): gaps to the best tree found
                ("random:12:1", "set-edge-4x4", 1, (), _RA_TREE_NO_ENUM),
            ]
        ),
        _RA_TREE_METHODS,
        time_limit_s=120,
        seeds=5,
    ),
    paper=Suite(
        # SET Fig. 8: batch 1 on both platforms, batch 8 on the edge platform
        _specs(
            [
                (w, h, 1)
                for h in ("set-edge-4x4", "set-cloud-12x12")
                for w in (
                    "set-resnet50",
                    "set-darknet19",
                    "googlenet",
                    "inception_resnet_v1",
                    "pnasnet",
                    "transformer_base",
                )
            ]
            + [(w, "set-edge-4x4", 8) for w in ("set-resnet50", "googlenet", "transformer_base")]
        ),
        tuple(m for m in _RA_TREE_METHODS if m.name in ("dp-ls", "dp-lp", "sa", "tangram")),
        time_limit_s=300,
        seeds=3,
    ),
)

# ------------------------------------------------------------------ depth-first (DeFiNES)
_DEPTH_FIRST_METHODS = tuple(MethodPlan(m) for m in ("dp", "auto", "single", "fixed-df", "lbl", "sl"))

DEPTH_FIRST = ProblemSuites(
    "depth-first",
    tiny=Suite(
        _specs([("random:4:2", "defines-meta-proto-df")]),
        tuple(m for m in _DEPTH_FIRST_METHODS if m.name != "single"),
        time_limit_s=60,
        seeds=1,
    ),
    small=Suite(
        _specs(
            [
                ("random:6:1", "defines-meta-proto-df"),
                ("random:10:2", "defines-meta-proto-df"),
                ("random:8:3", "defines-edge-tpu-df"),
                ("random:8:4", "defines-tpu-df", 1, (("metric", "edp"),)),
                ("mccnn", "defines-meta-proto-df"),
                ("mccnn", "defines-ascend-df", 1, (("metric", "edp"),)),
                ("fsrcnn", "defines-meta-proto-df"),
                ("fsrcnn", "defines-edge-tpu-df", 1, (("metric", "latency"),)),
            ]
        ),
        _DEPTH_FIRST_METHODS,
        time_limit_s=300,
        seeds=1,
    ),
    paper=Suite(
        # DeFiNES case study 2: the five workloads on the Meta prototype (DF variant), energy
        _specs([(w, "defines-meta-proto-df") for w in ("fsrcnn", "dmcnn_vd", "mccnn", "mobilenet_v1", "resnet18")]),
        _DEPTH_FIRST_METHODS,
        time_limit_s=900,
        seeds=1,
    ),
)

# ------------------------------------------------------------------ multicore (Stream)
_FUSED8 = (("granularity", "fused"), ("rows", "8"))
_LAYER = (("granularity", "layer"),)
_MULTICORE_METHODS = tuple(MethodPlan(m, seeded=m == "ga") for m in ("enumerate", "cpsat", "ga", "manual"))
_MULTICORE_NO_ENUM = ("cpsat", "ga", "manual")

MULTICORE = ProblemSuites(
    "multicore",
    tiny=Suite(
        _specs(
            [
                ("random:4:1", "stream-mc-homtpu", 1, _LAYER),
                ("random:4:1", "stream-mc-hetero", 1, _FUSED8, _MULTICORE_NO_ENUM),
            ]
        ),
        _MULTICORE_METHODS,
        time_limit_s=30,
        seeds=2,
    ),
    small=Suite(
        # enumeration only at layer granularity on 4 layers (it refuses more than 256 allocations);
        # the fused random instances are sized for CP-SAT's proof within the time limit
        _specs(
            [
                ("random:4:1", "stream-mc-homtpu", 1, _LAYER),
                ("random:4:2", "stream-mc-hetero", 1, _LAYER),
                ("random:4:1", "stream-mc-hetero", 1, _FUSED8, _MULTICORE_NO_ENUM),
                ("random:5:2", "stream-mc-hetero", 1, _FUSED8, _MULTICORE_NO_ENUM),
                ("random:6:3", "stream-mc-hetero", 1, _FUSED8, _MULTICORE_NO_ENUM),
                ("random:6:5", "stream-mc-homtpu", 1, _FUSED8, _MULTICORE_NO_ENUM),
                ("random:8:4", "stream-mc-hetero", 1, _FUSED8, _MULTICORE_NO_ENUM),
            ]
        ),
        _MULTICORE_METHODS,
        time_limit_s=60,
        seeds=3,
    ),
    paper=Suite(
        # Stream's workloads on the heterogeneous and the homogeneous TPU-like quad-cores, layer-fused
        _specs(
            [
                (w, h, 1, _FUSED8)
                for h in ("stream-mc-hetero", "stream-mc-homtpu")
                for w in ("resnet18", "mobilenet_v2", "squeezenet", "tiny_yolo", "fsrcnn")
            ]
        ),
        tuple(m for m in _MULTICORE_METHODS if m.name != "enumerate"),
        time_limit_s=600,
        seeds=3,
    ),
)

# ------------------------------------------------------------------ atomic (Atomic Dataflow)
_ATOMIC_METHODS = (MethodPlan("cpsat-rounds"), MethodPlan("cpsat-jobshop"), MethodPlan("dp"))


def _engines(n: int, *extra: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    return (("engines", str(n)), *extra)


ATOMIC = ProblemSuites(
    "atomic",
    tiny=Suite(_specs([("random:4:1", "atomic-8x8-kc", 1, _engines(2))]), _ATOMIC_METHODS, time_limit_s=20, seeds=1),
    small=Suite(
        # 8-24 atoms: the round model is built whole (at most ``RoundsParams.max_atoms``); the job shop
        # gives its bound
        _specs(
            [
                ("random:4:1", "atomic-8x8-kc", 1, _engines(2)),
                ("random:5:2", "atomic-8x8-kc", 2, _engines(4)),
                ("random:6:3", "atomic-8x8-yx", 1, _engines(3)),
                ("random:6:4", "atomic-8x8-kc", 2, _engines(4, ("atoms", "exact"))),
                ("random:8:5", "atomic-8x8-kc", 1, _engines(4, ("atoms", "sa"))),
            ]
        ),
        _ATOMIC_METHODS,
        time_limit_s=30,
        seeds=1,
    ),
    paper=Suite(
        # the paper's networks on 8x8 engines, batch 1, exact atom sizes (the round model runs its rolling horizon)
        _specs([(w, "atomic-8x8-kc", 1, (("atoms", "exact"),)) for w in ("vgg19", "resnet50")]),
        _ATOMIC_METHODS,
        time_limit_s=600,
        seeds=1,
    ),
)

PROBLEM_SUITES: tuple[ProblemSuites, ...] = (PARTITION, RA_TREE, DEPTH_FIRST, MULTICORE, ATOMIC)
"""Every problem's suites; a new problem adds its :class:`ProblemSuites` here."""


def select(
    suite: str, problems: Sequence[str] | None = None, table: Sequence[ProblemSuites] = PROBLEM_SUITES
) -> dict[str, Suite]:
    """The suite ``suite`` of each problem in ``problems`` (default: every problem of ``table``).

    Raises
    ------
    InputError
        Unknown suite, a problem without suites, or a repeated problem.
    """
    if suite not in SUITE_NAMES:
        raise InputError(f"unknown suite {suite!r}", "SUITE", f"suites: {', '.join(SUITE_NAMES)}")
    by_problem = {entry.problem: entry for entry in table}
    chosen = list(problems) if problems else list(by_problem)
    if len(set(chosen)) != len(chosen):
        raise InputError(f"a problem is named twice in {','.join(chosen)}", "--problems", "name each problem once")
    unknown = [p for p in chosen if p not in by_problem]
    if unknown:
        raise InputError(
            f"no benchmark suites for problem {unknown[0]!r}",
            "--problems",
            f"problems with suites: {', '.join(by_problem)}",
        )
    return {p: by_problem[p].get(suite) for p in chosen}
