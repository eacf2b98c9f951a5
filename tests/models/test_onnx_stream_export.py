"""Stream's five workloads exported to ONNX: valid models that read back to the same layers."""

from __future__ import annotations

import math
from pathlib import Path

import onnx
import pytest

from accelsched.errors import InputError
from accelsched.models.builder import NetBuilder
from accelsched.models.onnx_export import EXPORT_OPSET, to_onnx
from accelsched.models.onnx_import import load_onnx
from accelsched.models.registry import load_workload
from accelsched.models.workload import Workload

STREAM_WORKLOADS = ("resnet18", "mobilenet_v2", "squeezenet", "tiny_yolo", "fsrcnn")
"""The workloads of Stream's architecture exploration."""


@pytest.fixture(scope="module", params=STREAM_WORKLOADS)
def exported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Workload, Path]:
    workload = load_workload(request.param)
    path = tmp_path_factory.mktemp("onnx") / f"{request.param}.onnx"
    to_onnx(workload, path)
    return workload, path


def test_the_model_passes_the_checker_and_strict_shape_inference(exported: tuple[Workload, Path]) -> None:
    workload, path = exported
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert {op.domain: op.version for op in model.opset_import}[""] == EXPORT_OPSET
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    shapes = {
        v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
        for v in [*inferred.graph.value_info, *inferred.graph.output]
    }
    for layer in workload:  # every layer's output is an N x C x H x W tensor named after it
        assert shapes[layer.name] == [layer.B, layer.out_channels, layer.OY, layer.OX], layer.name
    assert {o.name for o in model.graph.output} == set(workload.sinks)


def test_the_model_reads_back_to_the_same_layers(exported: tuple[Workload, Path]) -> None:
    workload, path = exported
    back = load_onnx(path)
    assert back.names == workload.names
    assert back.edges == workload.edges
    for layer in workload:
        other = back[layer.name]
        assert other.kind is layer.kind, layer.name
        assert other.loops == layer.loops, layer.name
        assert (other.stride_y, other.stride_x, other.padding) == (layer.stride_y, layer.stride_x, layer.padding)
        assert other.macs == layer.macs, layer.name
        assert (other.weight_bytes, other.output_bytes) == (layer.weight_bytes, layer.output_bytes), layer.name
    assert back.macs == workload.macs
    assert back == workload


@pytest.mark.parametrize("name", [w for w in STREAM_WORKLOADS if w != "squeezenet"])
def test_the_stream_flavor_is_what_stream_parses_and_reads_back(name: str, tmp_path: Path) -> None:
    """Weights as typed initializers, binary Adds, no ConstantOfShape / Sum / Concat, integer element types."""
    workload = load_workload(name)
    path = tmp_path / f"{name}.onnx"
    model = to_onnx(workload, path, flavor="stream")
    onnx.checker.check_model(model)
    ops = {node.op_type for node in model.graph.node}
    assert not ops & {"ConstantOfShape", "Sum", "Concat"}
    weights = {t.name: t for t in model.graph.initializer if t.data_type != onnx.TensorProto.INT64}
    layers_with_weights = [layer for layer in workload if layer.kind.has_parameters and layer.weight_bytes > 0]
    assert len(weights) == len(layers_with_weights)
    assert {t.data_type for t in weights.values()} == {onnx.TensorProto.INT8}  # the zoo is 8-bit
    assert sum(math.prod(t.dims) for t in weights.values()) == sum(layer.weight_bytes for layer in layers_with_weights)
    assert {v.type.tensor_type.elem_type for v in [*model.graph.input, *model.graph.output]} == {onnx.TensorProto.INT8}
    assert load_onnx(path) == workload


def test_the_stream_flavor_chains_adds_and_refuses_concatenations() -> None:
    b = NetBuilder("three", 8, 4, 4)
    x = b.conv(b.input, 8, 1, name="a")
    y = b.conv(x, 8, 1, name="b")
    z = b.conv(x, 8, 1, name="c")
    b.add(x, y, z, name="sum")
    model = to_onnx(b.build(), flavor="stream")
    adds = [node for node in model.graph.node if node.op_type == "Add"]
    assert [a.output[0] for a in adds][-1] == "sum" and len(adds) == 2
    assert adds[1].input[0] == adds[0].output[0]
    with pytest.raises(InputError, match=r"concatenates 2 producers, and Stream 2\.1\.1 has no ONNX Concat parser"):
        to_onnx(load_workload("squeezenet"), flavor="stream")
    with pytest.raises(InputError, match="unknown ONNX flavor 'tvm'"):
        to_onnx(load_workload("fsrcnn"), flavor="tvm")
