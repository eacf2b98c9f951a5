"""ZigZag's input documents written from accelsched's objects."""

from __future__ import annotations

import math
import re

import pytest

from accelsched.hardware import load_accelerator
from accelsched.hardware.stream_export import MEMORY_OPERANDS
from accelsched.hardware.zigzag_export import spatial_unrolling, zigzag_accelerator, zigzag_mapping, zigzag_workload
from accelsched.models.layer import Layer, OpKind

CONV = Layer("conv", OpKind.CONV, K=32, C=16, OY=14, OX=14, FY=3, FX=3, stride_y=2, stride_x=2, padding=(1, 1, 1, 1))
DW = Layer("dw", OpKind.CONV, K=1, C=1, G=24, OY=8, OX=8, FY=3, FX=3, padding=(1, 1, 1, 1))
GROUPED = Layer("grouped", OpKind.CONV, K=8, C=4, G=2, OY=6, OX=6)


def test_dram_is_the_outermost_level_of_every_operand() -> None:
    """The off-chip memory is appended last, holds I1, I2 and O and serves every array dimension."""
    doc = zigzag_accelerator(load_accelerator("defines-meta-proto"))
    name, dram = list(doc["memories"].items())[-1]
    assert name == "dram"
    assert sorted(dram["operands"]) == ["I1", "I2", "O"]
    assert dram["served_dimensions"] == doc["operational_array"]["dimensions"]


def test_depthwise_group_loop_takes_the_k_dimension() -> None:
    """A depthwise layer unrolls G on the array dimension meant for K, as accelsched's cost does."""
    core = load_accelerator("defines-meta-proto").cores[0]
    assert spatial_unrolling(DW, core)[0] == ("G", 32)
    assert zigzag_mapping(DW, core)[0]["spatial_mapping"]["D1"] == ["G, 32"]
    assert spatial_unrolling(CONV, core)[0] == ("K", 32)


@pytest.mark.parametrize("layer", [CONV, DW, GROUPED], ids=lambda layer: layer.name)
def test_workload_loops_and_inputs(layer: Layer) -> None:
    """The equation uses the loops present, the loops multiply to the MACs, the input sizes are unpadded."""
    (doc,) = zigzag_workload(layer)
    assert math.prod(doc["loop_sizes"]) == layer.macs
    for dim in doc["loop_dims"]:
        assert f"[{dim.lower()}]" in doc["equation"]
    assert doc["pr_loop_sizes"] == [layer.IX, layer.IY]
    assert f"ix={layer.stride_x}*ox" in doc["dimension_relations"][0]


def test_pooling_is_refused() -> None:
    """Layers without stored weights have other semantics in ZigZag and are refused, naming the layer."""
    pool = Layer("pool1", OpKind.POOL, K=1, C=1, G=8, OY=4, OX=4, FY=2, FX=2, stride_y=2, stride_x=2)
    with pytest.raises(ValueError, match="pool1"):
        zigzag_workload(pool)


def test_zigzag_parses_the_documents() -> None:
    """ZigZag's own validators accept the documents and count the layer's MACs."""
    pytest.importorskip("zigzag", reason="ZigZag not installed: pip install 'accelsched[zigzag]'")
    from zigzag.parser.accelerator_validator import AcceleratorValidator
    from zigzag.parser.workload_factory import WorkloadFactory
    from zigzag.parser.workload_validator import WorkloadValidator

    assert AcceleratorValidator(zigzag_accelerator(load_accelerator("defines-tpu"))).validate()
    for layer in (CONV, DW):
        validator = WorkloadValidator(zigzag_workload(layer))
        assert validator.validate()
        mapping_doc = zigzag_mapping(layer, load_accelerator("defines-tpu").cores[0])
        from zigzag.parser.mapping_factory import MappingFactory  # noqa: F401  (the mapping parser exists)

        (node,) = WorkloadFactory(validator.normalized_data, mapping_doc).create().node_list
        assert node.total_mac_count == layer.macs


# ------------------------------------------------------------------ more layers, every preset
FC = Layer("fc", OpKind.FC, K=64, C=48, OY=1, OX=3, B=2)
DILATED = Layer("dilated", OpKind.CONV, K=16, C=8, OY=9, OX=7, FY=3, FX=3, dilation_y=2, dilation_x=3,
                padding=(2, 3, 2, 3))  # fmt: skip
G_ON_C = Layer("g_on_c", OpKind.CONV, K=8, C=1, G=4, OY=5, OX=5, FY=3, FX=3, padding=(1, 1, 1, 1))
LAYERS = [CONV, DW, GROUPED, FC, DILATED, G_ON_C]
PRESETS = ["defines-meta-proto", "defines-tpu", "defines-edge-tpu"]
ZIGZAG = "ZigZag not installed: pip install 'accelsched[zigzag]'"


def _indices(equation: str) -> dict[str, list[str]]:
    """Operand -> its index names, from an equation ``O[a][b]+=W[..]*I[..]``."""
    match = re.fullmatch(r"O((?:\[\w+\])+)\+=W((?:\[\w+\])+)\*I((?:\[\w+\])+)", equation)
    assert match, equation
    return {op: re.findall(r"\[(\w+)\]", part) for op, part in zip("OWI", match.groups(), strict=True)}


@pytest.mark.parametrize("preset", PRESETS)
def test_accelerator_document_is_the_core_plus_dram(preset: str) -> None:
    """The on-chip memories are the core's, in its order; the array is its unrolling; DRAM is the off-chip memory."""
    acc = load_accelerator(preset)
    core = acc.cores[0]
    doc = zigzag_accelerator(acc)
    assert "type" not in doc and "operator_types" not in doc
    assert list(doc["memories"]) == [m.name for m in core.memories] + ["dram"]
    assert doc["operational_array"]["sizes"] == [factor for _, factor in core.spatial]
    assert doc["operational_array"]["dimensions"] == [f"D{i + 1}" for i in range(len(core.spatial))]
    (port,) = doc["memories"]["dram"]["ports"]
    assert port["type"] == "read_write"
    assert port["bandwidth_max"] == acc.offchip.bandwidth_bytes_per_cycle * 8
    for op in ("I1", "I2", "O"):
        assert any(entry.startswith(f"{op}, ") for entry in port["allocation"])
    # the per-access energies are for a port-wide word: per-byte energy times the bytes per access
    dram = doc["memories"]["dram"]
    assert dram["r_cost"] == pytest.approx(acc.offchip.read_energy_pj_per_byte * acc.offchip.bandwidth_bytes_per_cycle)
    assert dram["w_cost"] == pytest.approx(acc.offchip.write_energy_pj_per_byte * acc.offchip.bandwidth_bytes_per_cycle)


def test_accelerator_document_is_fresh_each_time() -> None:
    """Two documents of one preset are equal but share nothing: changing one leaves the other alone."""
    acc = load_accelerator("defines-meta-proto")
    a, b = zigzag_accelerator(acc), zigzag_accelerator(acc)
    assert a == b
    a["memories"]["dram"]["served_dimensions"].append("D9")
    a["memories"].pop("rf_1B")
    assert b == zigzag_accelerator(acc)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("layer", LAYERS, ids=lambda layer: layer.name)
def test_mapping_is_the_unrolling_layer_cost_uses(preset: str, layer: Layer) -> None:
    """Array dimension i unrolls the loop accelsched's layer cost unrolls on it, by the core's factor."""
    from accelsched.hardware.cost.layer_cost import layer_cost

    acc = load_accelerator(preset)
    core = acc.cores[0]
    (doc,) = zigzag_mapping(layer, core)
    assert doc["name"] == "default"
    assert doc["memory_operand_links"] == {"O": "O", "W": "I2", "I": "I1"}
    unrolling = spatial_unrolling(layer, core)
    assert doc["spatial_mapping"] == {f"D{i + 1}": [f"{loop}, {factor}"] for i, (loop, factor) in enumerate(unrolling)}
    assert [factor for _, factor in unrolling] == [factor for _, factor in core.spatial]
    per_loop: dict[str, int] = {}
    for loop, factor in unrolling:
        per_loop[loop] = per_loop.get(loop, 1) * factor
    assert per_loop == dict(layer_cost(layer, core, acc.offchip).spatial_mapping)


def test_group_loop_takes_one_array_dimension_only() -> None:
    """Depthwise: G replaces K on D1 and C stays on D2 (ZigZag drops it, the dimension idles); grouped keeps K."""
    core = load_accelerator("defines-meta-proto").cores[0]
    assert [loop for loop, _ in spatial_unrolling(DW, core)] == ["G", "C", "OX", "OY"]
    assert zigzag_mapping(DW, core)[0]["spatial_mapping"]["D2"] == ["C, 2"]
    assert [loop for loop, _ in spatial_unrolling(GROUPED, core)] == ["K", "C", "OX", "OY"]
    # K is used, C is 1: the group loop takes the dimension meant for C
    assert [loop for loop, _ in spatial_unrolling(G_ON_C, core)] == ["K", "G", "OX", "OY"]


@pytest.mark.parametrize("layer", LAYERS, ids=lambda layer: layer.name)
def test_equation_indexes_each_operand_by_its_loops(layer: Layer) -> None:
    """Every operand is indexed by exactly the loops present that it depends on, in ZigZag's order."""
    (doc,) = zigzag_workload(layer)
    dims = doc["loop_dims"]
    idx = _indices(doc["equation"])
    present = [d.lower() for d in dims]

    def kept(*names: str) -> list[str]:
        return [n for n in names if n in present]

    assert idx["O"] == [*kept("b", "g", "k"), "oy", "ox"]
    assert idx["W"] == [*kept("g", "k", "c"), "fy", "fx"]
    assert idx["I"] == [*kept("b", "g", "c"), "iy", "ix"]
    assert set(idx["O"] + idx["W"] + idx["I"]) - {"iy", "ix"} == set(present)
    assert doc["loop_sizes"] == [layer.loops[d] for d in dims]
    # only loops of size 1 are ever left out, so the loops still multiply to the MACs
    assert all(layer.loops[d] == 1 for d in ("B", "G", "K", "C", "OY", "OX", "FY", "FX") if d not in dims)
    assert math.prod(doc["loop_sizes"]) == layer.macs
    assert doc["pr_loop_dims"] == ["IX", "IY"] and doc["pr_loop_sizes"] == [layer.IX, layer.IY]


def test_which_loops_are_left_out() -> None:
    """Ungrouped layers have no G; depthwise ones have no K and C; grouped ones keep G, K and C."""

    def dims(layer: Layer) -> list[str]:
        return list(zigzag_workload(layer)[0]["loop_dims"])

    assert dims(CONV) == ["B", "K", "C", "OY", "OX", "FY", "FX"]
    assert dims(DW) == ["B", "G", "OY", "OX", "FY", "FX"]
    assert dims(GROUPED) == ["B", "G", "K", "C", "OY", "OX", "FY", "FX"]
    assert _indices(zigzag_workload(DW)[0]["equation"])["W"] == ["g", "fy", "fx"]


@pytest.mark.parametrize("layer", LAYERS, ids=lambda layer: layer.name)
def test_relations_and_precisions(layer: Layer) -> None:
    """Input coordinates follow the layer's strides and dilations; precisions are the layer's, O in partial sums."""
    (doc,) = zigzag_workload(layer)
    assert doc["dimension_relations"] == [
        f"ix={layer.stride_x}*ox+{layer.dilation_x}*fx",
        f"iy={layer.stride_y}*oy+{layer.dilation_y}*fy",
    ]
    assert doc["operand_precision"] == {"W": layer.weight_bits, "I": layer.input_bits, "O": layer.psum_bits,
                                        "O_final": layer.output_bits}  # fmt: skip
    assert doc["id"] == 0 and doc["name"] == layer.name and doc["operator_type"] == "Conv"


@pytest.mark.parametrize(
    "layer",
    [
        Layer("maxpool", OpKind.POOL, K=1, C=1, G=8, OY=4, OX=4, FY=2, FX=2, stride_y=2, stride_x=2),
        Layer("residual_add", OpKind.ELTWISE, K=1, C=1, G=8, OY=4, OX=4, inputs=("a", "b")),
        Layer("scores", OpKind.MATMUL, K=4, C=8, OY=1, OX=6, inputs=("q", "k")),
    ],
    ids=lambda layer: layer.kind.value,
)
def test_layers_without_stored_weights_are_refused(layer: Layer) -> None:
    """Pooling, element-wise and activation-activation products have no ZigZag document; the error names the layer."""
    with pytest.raises(ValueError, match=rf"layer '{layer.name}'.*{layer.kind.value}"):
        zigzag_workload(layer)


# ------------------------------------------------------------------ ZigZag's own parsers
@pytest.mark.parametrize("preset", PRESETS)
def test_zigzag_builds_the_hierarchy_of_the_core(preset: str) -> None:
    """ZigZag's factory makes, per operand, the core's hierarchy with DRAM on top, and the core's MAC count."""
    pytest.importorskip("zigzag", reason=ZIGZAG)
    from zigzag.parser.accelerator_factory import AcceleratorFactory
    from zigzag.parser.accelerator_validator import AcceleratorValidator

    acc = load_accelerator(preset)
    core = acc.cores[0]
    validator = AcceleratorValidator(zigzag_accelerator(acc))
    assert validator.validate()
    built = AcceleratorFactory(validator.normalized_data).create()
    levels = {str(op): [m.name for m in mems] for op, mems in built.mem_hierarchy_dict.items()}
    assert levels == {MEMORY_OPERANDS[op]: [*core.hierarchy[op], "dram"] for op in ("I", "W", "O")}
    assert built.operational_array.total_unit_count == core.n_macs


@pytest.mark.parametrize("layer", LAYERS, ids=lambda layer: layer.name)
def test_zigzag_parses_the_layer_as_written(layer: Layer) -> None:
    """ZigZag's validators accept workload and mapping; its layer has the MACs, operand sizes and unrolling."""
    pytest.importorskip("zigzag", reason=ZIGZAG)
    from zigzag.parser.mapping_validator import MappingValidator
    from zigzag.parser.workload_factory import WorkloadFactory
    from zigzag.parser.workload_validator import WorkloadValidator

    core = load_accelerator("defines-meta-proto").cores[0]
    workload = WorkloadValidator(zigzag_workload(layer))
    mapping = MappingValidator(zigzag_mapping(layer, core))
    assert workload.validate() and mapping.validate()
    (node,) = WorkloadFactory(workload.normalized_data, mapping.normalized_data).create().node_list
    assert node.total_mac_count == layer.macs
    sizes = {str(op): n for op, n in node.operand_size_elem.items()}
    assert sizes == {"I": layer.input_elements, "W": layer.w_elements, "O": layer.output_elements}
    assert node.pr_layer_dim_sizes is not None
    assert {str(d): n for d, n in node.pr_layer_dim_sizes.items()} == {"IX": layer.IX, "IY": layer.IY}
    unrolled = {str(oa): {str(d): f for d, f in loops.items()} for oa, loops in node.spatial_mapping.items()}
    # the parsed mapping is the core's, entries for loops the layer lacks (C of a depthwise layer) included
    assert unrolled == {f"D{i + 1}": {loop: f} for i, (loop, f) in enumerate(spatial_unrolling(layer, core))}
