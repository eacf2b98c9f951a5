"""One core of an accelerator and one layer, as the three inputs of ZigZag 3.9.1.

ZigZag (KU Leuven's ``zigzag-dse``, the analytical model Stream and DeFiNES build
on) evaluates a layer on a core from an *accelerator*, a *mapping* and a
*workload* document. The functions here write them from accelsched's objects, so
that both tools see the same hardware by construction (nothing is copied by hand):

* :func:`zigzag_accelerator` -- the core as in :func:`~accelsched.hardware.stream_export.core_document`
  (the same translation of sizes, ports, per-access energies and served
  dimensions, see that module), with the off-chip memory appended as its
  outermost level: one ``dram`` memory of every operand serving every array
  dimension behind a single read-write port of the off-chip bandwidth, as in
  ZigZag's single-core examples (``zigzag/inputs/hardware/*.yaml``).
* :func:`zigzag_mapping` -- the core's spatial unrolling as ZigZag's
  ``spatial_mapping`` (``D1..Dn`` in ``Core.spatial`` order) with ZigZag's default
  memory-operand links (``I -> I1``, ``W -> I2``, ``O -> O``). For a layer whose
  ``K`` (or ``C``) is 1 and whose group loop ``G`` is larger (depthwise), the
  array dimension meant for ``K`` (``C``) unrolls ``G``, as
  :func:`~accelsched.hardware.cost.layer_cost.layer_cost` does. An array dimension
  whose loop the layer does not have (``C`` of a depthwise layer) keeps its entry,
  which ZigZag drops with a warning: the dimension then idles, as it does here.
* :func:`zigzag_workload` -- the layer as one ZigZag layer: the equation
  ``O[b][g][k][oy][ox] += W[g][k][c][fy][fx] * I[b][g][c][iy][ix]`` with the loops
  of size 1 left out (``g`` for an ungrouped layer, ``k`` and ``c`` for a
  depthwise one), ``iy = sy*oy + dy*fy`` and ``ix = sx*ox + dx*fx``, the input's rows and columns
  as ``pr_loop_sizes`` of ``IX`` / ``IY`` (accelsched's ``Layer.IX`` / ``Layer.IY``,
  padding removed; without them ZigZag counts the padded extent, 58x58 for a 56x56
  input), and the precisions (``O`` = partial sums, ``O_final`` = the stored output).

Only convolution and fully connected layers (the layers with stored weights) are
written; ZigZag's pooling and element-wise operators have other semantics.
"""

from __future__ import annotations

from typing import Any

from accelsched.hardware.spec import Accelerator, Core
from accelsched.hardware.stream_export import MEMORY_OPERANDS, core_document, offchip_document
from accelsched.models.layer import Layer, OpKind

__all__ = ["ZIGZAG_KINDS", "spatial_unrolling", "zigzag_accelerator", "zigzag_mapping", "zigzag_workload"]

ZIGZAG_KINDS: frozenset[OpKind] = frozenset({OpKind.CONV, OpKind.FC})
"""Operator kinds the ZigZag documents describe."""


def zigzag_accelerator(accelerator: Accelerator, core_id: int = 0) -> dict[str, Any]:
    """ZigZag's accelerator document of core ``core_id``, the off-chip memory its outermost level."""
    core = accelerator.core(core_id)
    doc = core_document(core, f"{accelerator.name}-core{core_id}", dataflows=False)
    doc.pop("type", None)
    doc.pop("operator_types", None)
    dram = dict(offchip_document(accelerator, "offchip")["memories"]["dram"])
    dram["served_dimensions"] = list(doc["operational_array"]["dimensions"])
    doc["memories"]["dram"] = dram
    return doc


def spatial_unrolling(layer: Layer, core: Core) -> list[tuple[str, int]]:
    """The loop each array dimension of ``core`` unrolls for ``layer``, and by how much.

    The group loop ``G`` takes the dimension meant for ``K`` or ``C`` when that loop is
    1 and ``G`` is larger (the first such dimension), as in accelsched's layer cost.
    """
    loops = layer.loops
    out: list[tuple[str, int]] = []
    taken_g = False
    for dim, factor in core.spatial:
        target = dim
        if dim in ("K", "C") and loops[dim] == 1 and loops["G"] > 1 and not taken_g:
            target, taken_g = "G", True
        out.append((target, factor))
    return out


def _loop_dims(layer: Layer) -> list[str]:
    dims = ["B", "G", "K", "C", "OY", "OX", "FY", "FX"]
    if layer.G == 1:
        dims.remove("G")
    elif layer.K == 1 and layer.C == 1:
        dims.remove("K")
        dims.remove("C")
    return dims


def zigzag_mapping(layer: Layer, core: Core) -> list[dict[str, Any]]:
    """ZigZag's mapping document: the core's spatial unrolling for ``layer`` and the operand links."""
    spatial = {f"D{i + 1}": [f"{loop}, {factor}"] for i, (loop, factor) in enumerate(spatial_unrolling(layer, core))}
    links = {op: MEMORY_OPERANDS[op] for op in ("O", "W", "I")}
    return [{"name": "default", "spatial_mapping": spatial, "memory_operand_links": links}]


def zigzag_workload(layer: Layer) -> list[dict[str, Any]]:
    """ZigZag's workload document holding ``layer`` alone (layer id 0).

    Raises
    ------
    ValueError
        If the layer is not a convolution or fully connected layer.
    """
    if layer.kind not in ZIGZAG_KINDS:
        kinds = ", ".join(sorted(k.value for k in ZIGZAG_KINDS))
        raise ValueError(f"layer {layer.name!r}: ZigZag documents describe {kinds} layers only, got {layer.kind.value}")
    dims = _loop_dims(layer)
    lower = {d: d.lower() for d in dims}
    out_idx = [lower[d] for d in ("B", "G", "K") if d in dims] + ["oy", "ox"]
    w_idx = [lower[d] for d in ("G", "K", "C") if d in dims] + ["fy", "fx"]
    i_idx = [lower[d] for d in ("B", "G", "C") if d in dims] + ["iy", "ix"]

    def index(names: list[str]) -> str:
        return "".join(f"[{n}]" for n in names)

    return [
        {
            "id": 0,
            "name": layer.name,
            "operator_type": "Conv",
            "equation": f"O{index(out_idx)}+=W{index(w_idx)}*I{index(i_idx)}",
            "dimension_relations": [
                f"ix={layer.stride_x}*ox+{layer.dilation_x}*fx",
                f"iy={layer.stride_y}*oy+{layer.dilation_y}*fy",
            ],
            "loop_dims": dims,
            "loop_sizes": [layer.loops[d] for d in dims],
            "operand_precision": {
                "W": layer.weight_bits,
                "I": layer.input_bits,
                "O": layer.psum_bits,
                "O_final": layer.output_bits,
            },
            "operand_source": {"W": 0, "I": 0},
            "pr_loop_dims": ["IX", "IY"],
            "pr_loop_sizes": [layer.IX, layer.IY],
        }
    ]
