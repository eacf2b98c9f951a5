"""Shared helpers of the exact partition model tests."""

from __future__ import annotations

import random
from functools import partial
from typing import Any

from accelsched.formulations.partition import cpsat as partition_cpsat
from accelsched.formulations.partition import enumeration as partition_enumerate
from accelsched.formulations.partition import milp as partition_milp
from accelsched.formulations.partition.colgen_params import ColumnGenerationParams
from accelsched.formulations.partition.cpsat import solve_cpsat_partition
from accelsched.formulations.partition.milp import solve_milp
from accelsched.formulations.partition.pricing import TrafficTerms
from accelsched.formulations.partition.proof_params import ProofParams
from accelsched.hardware import load_accelerator
from accelsched.models.builder import NetBuilder
from accelsched.models.layer import Layer, OpKind
from accelsched.models.workload import Workload
from accelsched.problems.base import MethodSpec
from accelsched.problems.partition import PROBLEM, BufferDesign, Metric, PartitionInstance, PartitionSolution
from accelsched.problems.result import Result
from accelsched.registry import run_method
from accelsched.solvers import SolveOptions

EXACT: dict[str, MethodSpec] = {
    m.name: m for m in (*partition_milp.METHODS, *partition_cpsat.METHODS, *partition_enumerate.METHODS)
}
"""Every exact method by name."""

SOLVERS = ("milp-highs", "milp-cbc", "milp-pyomo", "cpsat")
"""The exact methods that solve a model (all but ``enumerate``)."""


GENERATION_CONFIGS: list[dict[str, Any]] = [
    {},
    {"shared": True, "act_kb": (5,)},
    {"act_kb": (2, 4, 8), "weight_kb": (1, 2)},
    {"metric": Metric.ENERGY, "act_kb": (3,), "weight_kb": (2,)},
    {"shared": True, "act_kb": (3, 5, 8), "metric": Metric.ENERGY, "alpha": 0.01},
    {"act_kb": (64,), "weight_kb": (64,)},
]
"""Configurations of the column-generation tests: as in test_partition_random, plus large buffers
(many columns, most layers fuse)."""


def conv(name: str, c: int, k: int, inputs: tuple[str, ...] = ()) -> Layer:
    """A 3x3, stride-1, padded int8 convolution on 8x8."""
    return Layer(name, OpKind.CONV, K=k, C=c, OY=8, OX=8, FY=3, FX=3, padding=(1, 1, 1, 1), inputs=inputs)


def chain3(
    act_bytes: tuple[int, ...], weight_bytes: tuple[int, ...], alpha: float = 0.002, metric: Metric = Metric.EMA
) -> PartitionInstance:
    """Three chained convolutions 2 -> 4 -> 4 -> 4 channels on 8x8 with separate buffers (sizes in bytes).

    By hand (int8): weights 72, 144, 144 B; the network input 128 B; every output
    256 B. Alone, the layers move 72+128+256 = 456, 144+256+256 = 656 and 656 B;
    fusing two neighbours saves their intermediate tensor twice (written, read back):
    2 x 256 B; fusing the three saves both: 1768 - 1024 = 744 B. Resident footprints
    (activations): 128, 192, 192 alone; 256 for L0+L1, 320 for L1+L2, 384 for all
    three (L2's output 2 rows, L1's 3+1 rows, L0's 3+1 rows, the input 3+1 rows of
    16 B; a row of a 4-channel output is 32 B).
    """
    workload = Workload("chain3", (conv("L0", 2, 4), conv("L1", 4, 4, ("L0",)), conv("L2", 4, 4, ("L1",))))
    return PartitionInstance(
        workload,
        load_accelerator("cocco-simba-separate"),
        BufferDesign.SEPARATE,
        act_bytes,
        weight_bytes,
        metric,
        alpha,
    )


def crossed(act_bytes: int) -> PartitionInstance:
    """Two 3x3 convolutions ``x``, ``q`` (4 -> 8 channels on 8x8) both read by two adds ``y``, ``p``.

    By hand (int8): a convolution moves 288 B of weights, 256 B of input and 512 B of
    output; an add reads two 512 B tensors and writes 512 B. Alone: 2 x 1056 + 2 x 1536
    = 5184 B. Fusing ``{x, y}`` and ``{q, p}`` would save most (4160 B) but the two
    subgraphs need each other's input first: a cycle. With about 0.5 KB of activation
    buffer (pairs fit, triples do not) the optimum is ``{x}, {q, y}, {p}``: 1056 + (288
    + 256 + 512 + 512 + 512) + 1536 = 4672 B, or any other single conv-add pair.
    """
    b = NetBuilder("crossed", 4, 8, 8)
    x = b.conv(b.input, 8, 3, pad=1, name="x")
    q = b.conv(b.input, 8, 3, pad=1, name="q")
    b.add(x, q, name="y")
    b.add(x, q, name="p")
    return PartitionInstance(
        b.build(), load_accelerator("cocco-simba-separate"), BufferDesign.SEPARATE, (act_bytes,), (4096,)
    )


def woven(seed: int, act_bytes: int) -> PartitionInstance:
    """Two or three 3x3 convolutions (4 -> 8 channels on 8x8) of the input and adds of random pairs of
    the layers before them, 8 layers at most; separate buffers, ``act_bytes`` of activations.

    ``crossed`` generalised: the adds tie the branches together, so that with a buffer that holds
    a few layers the master's LP is often fractional (26 of the 1,000 pairs of seeds 0-199 and
    buffers 560-1,000 B), which the small random chains never are.
    """
    rng = random.Random(seed)
    b = NetBuilder(f"woven:{seed}", 4, 8, 8)
    layers = [b.conv(b.input, 8, 3, pad=1, name=f"c{k}") for k in range(rng.randint(2, 3))]
    for m in range(rng.randint(2, 8 - len(layers))):
        first, second = rng.sample(layers, 2)
        layers.append(b.add(first, second, name=f"a{m}"))
    return PartitionInstance(
        b.build(), load_accelerator("cocco-simba-separate"), BufferDesign.SEPARATE, (act_bytes,), (4096,)
    )


def singletons(instance: PartitionInstance) -> PartitionSolution:
    """Every layer alone under the largest capacities (always valid on a feasible instance)."""
    act, weight = instance.capacity_pairs()[-1]
    return PartitionSolution.from_indices(instance, [(i,) for i in range(instance.n_layers)], act, weight)


def run(
    name: str, instance: PartitionInstance, warm_start: PartitionSolution | None = None, **options: object
) -> Result[PartitionSolution]:
    """Run an exact method through the registry's checked entry point."""
    return run_method(PROBLEM, instance, EXACT[name], SolveOptions(**options), warm_start)  # type: ignore[arg-type]


def same(a: float | None, b: float) -> bool:
    """Equal within the registry's tolerance (1e-6 relative)."""
    return a is not None and abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


BUDGET = 3
"""Column budget of the column-generation tests: every instance has more columns, so the enumeration
stops early."""

FORCED = ColumnGenerationParams(close_gap=-float("inf"), listing_limit=0)
"""Column generation forced to branch: no listing before the master is optimal, and the one after gives
up before its first solve (its integer program still runs)."""


def generated(
    method: str, instance: PartitionInstance, params: ProofParams | None = None, **options: Any
) -> Result[PartitionSolution]:
    """Run an exact model through the registry's checked entry point with the small column budget and
    the proof's parameters ``params`` (when None, each method's own default: ``DEFAULT_PROOF`` for the
    MILP methods, ``WHOLE_TABLES`` for ``cpsat``)."""
    rounds = options.pop("rounds", None)
    warm = options.pop("warm_start", None)
    if method == "cpsat":
        solver = partial(solve_cpsat_partition, budget=BUDGET, rounds=rounds)
    else:
        backend = {"milp-highs": "highs", "milp-cbc": "pulp-cbc", "milp-pyomo": "pyomo-highs"}[method]
        solver = partial(solve_milp, backend=backend, method=method, budget=BUDGET, rounds=rounds)
    if params is not None:
        solver = partial(solver, params=params)
    spec = MethodSpec(method, PROBLEM.name, "exact", solver)
    return run_method(PROBLEM, instance, spec, SolveOptions(**options), warm)


def favouring(instance: PartitionInstance, members: tuple[int, ...]) -> list[float]:
    """Duals under which ``members`` is the set of least reduced cost, if the pricing model admits it."""
    weight = 10.0 * sum(abs(b) for b in TrafficTerms.of(instance).base) + 1e6
    return [weight if i in members else -weight for i in range(instance.n_layers)]
