"""ZigZag's input documents written from accelsched's objects."""

from __future__ import annotations

import math

import pytest

from accelsched.hardware import load_accelerator
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
