"""Tests of weightless ONNX models (accelsched.models.onnx_strip) and of importing them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from accelsched.bench.onnx_import import inflate
from accelsched.models.onnx_import import load_onnx
from accelsched.models.onnx_strip import KEEP_ELEMENTS, strip_file, strip_weights

FIXTURES = Path(__file__).parents[1] / "data" / "onnx"


def _model() -> onnx.ModelProto:
    """A convolution whose output is reshaped by a small constant target shape."""
    weight = numpy_helper.from_array(np.ones((16, 8, 3, 3), dtype=np.float32), "w")
    target = numpy_helper.from_array(np.array([1, -1], dtype=np.int64), "target")
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [100], np.full(100, 2.0, dtype=np.float32))
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["a"], name="c", kernel_shape=[3, 3]),
        helper.make_node("Constant", [], ["big"], value=scale),
        helper.make_node("Reshape", ["a", "target"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [weight, target],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_strip_drops_large_values_and_keeps_shapes_types_and_small_constants() -> None:
    model = _model()
    assert strip_weights(model) == 2  # the weight and the 100-element Constant
    inits = {t.name: t for t in model.graph.initializer}
    assert (tuple(inits["w"].dims), inits["w"].data_type, inits["w"].raw_data) == (
        (16, 8, 3, 3),
        TensorProto.FLOAT,
        b"",
    )
    assert numpy_helper.to_array(inits["target"]).tolist() == [1, -1]
    constant = model.graph.node[1].attribute[0].t
    assert (tuple(constant.dims), len(constant.float_data) + len(constant.raw_data)) == ((100,), 0)
    assert math.prod(inits["target"].dims) <= KEEP_ELEMENTS


@pytest.mark.parametrize("name", ["squeezenet1_1.ts", "resnet18.dynamo"])
def test_a_full_size_export_imports_as_its_stripped_fixture(name: str, tmp_path: Path) -> None:
    """A fixture re-inflated to the export's full size, stripped again, gives the same file and workload."""
    fixture = FIXTURES / f"{name}.onnx"
    full, stripped = tmp_path / "full.onnx", tmp_path / "stripped.onnx"
    assert inflate(fixture, full) > 100 * fixture.stat().st_size
    assert strip_file(full, stripped) > 0
    assert stripped.read_bytes() == fixture.read_bytes()
    assert load_onnx(full).layers == load_onnx(fixture).layers


def test_external_weights_are_never_opened(tmp_path: Path) -> None:
    """The weight file of a model saved with external data (tensors over 1 KB) may be missing."""
    model = _model()
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location="w.bin")  # fmt: skip
    expected = load_onnx(path).layers
    (tmp_path / "w.bin").unlink()
    assert load_onnx(path).layers == expected
    stripped = tmp_path / "s.onnx"
    strip_file(path, stripped)
    assert load_onnx(stripped).layers == expected
