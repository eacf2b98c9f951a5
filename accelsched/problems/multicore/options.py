"""Multicore instances from CLI-style options, and Stream-style automatic layer stacks."""

from __future__ import annotations

from collections.abc import Mapping

from accelsched.errors import InputError
from accelsched.hardware.cost.cn_graph import Granularity
from accelsched.hardware.spec import Accelerator, Core
from accelsched.models.layer import OpKind
from accelsched.models.workload import Workload
from accelsched.problems.depth_first.instance import cut_points
from accelsched.problems.multicore.instance import MulticoreInstance, Priority

__all__ = ["OPTIONS", "auto_stacks", "make_instance"]

OPTIONS = ("granularity", "rows", "stacks", "priority", "objective", "allowed")
"""``--option`` keys of :func:`make_instance`."""


def auto_stacks(workload: Workload, accelerator: Accelerator) -> tuple[tuple[str, ...], ...]:
    """Stream-style layer stacks: fuse while the resident weights fit the cores' weight memories.

    Stacks are cut only where one tensor crosses (``cut_points`` of the depth-first problem: never inside a
    residual block or a branch). The segments between two cuts are appended to the current stack while the
    stack's *resident* weights fit the summed weight memories of the cores (Stream's occupation-based layer
    stacks, ``get_layer_stacks_occupation_based``, which cuts a stack when the constant operands of its layers
    exceed the cores' capacities). A layer whose weights exceed the weight memory of the smallest core able to
    run it is fused too, and holds no weights across CNs: it is one CN (see
    :attr:`~accelsched.problems.multicore.MulticoreInstance.whole_layers`) that streams its weights once, so it
    counts 0 towards the stack's resident weights.
    """

    def capacity(core: Core) -> int:
        return core.top_level("W").total_capacity_bytes if "W" in core.hierarchy else 0

    def resident(name: str) -> int:
        layer = workload[name]
        smallest = min((capacity(c) for c in accelerator.cores_for(layer.kind)), default=0)
        return layer.weight_bytes if layer.weight_bytes <= smallest else 0

    total = sum(capacity(c) for c in accelerator.cores)
    names = workload.names
    stacks: list[list[str]] = []
    weights, begin = 0, 0
    for cut in cut_points(workload):
        segment = list(names[begin : cut + 1])
        begin = cut + 1
        size = sum(resident(n) for n in segment)
        if stacks and weights + size <= total:
            stacks[-1] += segment
            weights += size
        else:
            stacks.append(segment)
            weights = size
    return tuple(tuple(s) for s in stacks)


def _split(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def _parse_allowed(text: str) -> tuple[tuple[OpKind, tuple[int, ...]], ...]:
    """``conv:0+1;pool:4`` -> ((CONV, (0, 1)), (POOL, (4,)))."""
    out = []
    for item in text.split(";"):
        kind, _, cores = item.partition(":")
        try:
            op = OpKind(kind.strip())
            ids = tuple(int(c) for c in cores.split("+") if c.strip())
        except ValueError:
            raise ValueError(f"allowed: expected KIND:ID+ID;... (e.g. conv:0+1;pool:4), got {item!r}") from None
        out.append((op, ids))
    return tuple(out)


def make_instance(workload: Workload, accelerator: Accelerator, options: Mapping[str, str]) -> MulticoreInstance:
    """Instance from CLI-style options; ``InputError`` on bad ones.

    Options: ``granularity=layer|fused``, ``rows=N`` (rows per CN), ``stacks=a,b|c,d``
    (layer names, stacks separated by ``|``) or ``stacks=auto`` (:func:`auto_stacks`;
    without the option, one stack), ``priority=latency|memory``,
    ``objective=latency|energy|edp|memory``, ``allowed=conv:0+1;pool:4``.
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise InputError(f"unknown multicore option {unknown[0]!r}", "--option", f"options: {', '.join(OPTIONS)}")
    try:
        rows = options.get("rows", "1")
        if not rows.isdigit():
            raise ValueError(f"rows must be a positive integer, got {rows!r}")
        stacks = None
        if options.get("stacks") == "auto":
            stacks = auto_stacks(workload, accelerator)
        elif "stacks" in options:
            stacks = tuple(tuple(_split(s)) for s in options["stacks"].split("|"))
        return MulticoreInstance(
            workload,
            accelerator,
            Granularity.parse(options.get("granularity", "layer")),
            int(rows),
            stacks,
            _parse_allowed(options["allowed"]) if "allowed" in options else (),
            Priority.parse(options.get("priority", "latency")),
            options.get("objective", "latency"),
        )
    except ValueError as exc:
        raise InputError(str(exc), "--option / --hardware / --workload", "see accelsched solve --help") from None
