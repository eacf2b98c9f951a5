"""Weightless ONNX models: every large tensor reduced to its shape and element type.

Scheduling needs a network's graph and shapes, never its weight values. A model
exported from a framework carries them all (528 MB for VGG-16); :func:`strip_weights`
drops the bytes of every tensor that holds more than ``keep_elements`` values and
keeps its ``dims`` and ``data_type``, so that the model still has every shape and
every precision the import reads. Small tensors (``Reshape`` targets, ``Slice``
bounds, scalars such as an attention scale) keep their values, since shape
computations may read them.

The import (:func:`~accelsched.models.onnx_import.load_onnx`) strips a model in memory
before it looks at it; :func:`strip_file` writes a stripped copy, tens of kilobytes for
a whole network, which is what the test fixtures of ``tests/data/onnx`` are.
"""

from __future__ import annotations

import math
from pathlib import Path

import onnx
from onnx import TensorProto

__all__ = ["KEEP_ELEMENTS", "strip_file", "strip_weights"]

KEEP_ELEMENTS = 64
"""Tensors with at most this many elements keep their values."""

_DATA_FIELDS = (
    "raw_data", "float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data",
)  # fmt: skip


def _strip_tensor(tensor: TensorProto, keep_elements: int) -> bool:
    """Drop the values of ``tensor`` when it is large; whether it was stripped."""
    if math.prod(tensor.dims) <= keep_elements:
        return False
    for field in _DATA_FIELDS:
        tensor.ClearField(field)
    if tensor.data_location == TensorProto.EXTERNAL:
        tensor.ClearField("external_data")
        tensor.data_location = TensorProto.DEFAULT
    return True


def _graphs(graph: onnx.GraphProto) -> list[onnx.GraphProto]:
    """``graph`` and every subgraph of its nodes (``If`` / ``Loop`` bodies)."""
    out = [graph]
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                out.extend(_graphs(attr.g))
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for sub in attr.graphs:
                    out.extend(_graphs(sub))
    return out


def strip_weights(model: onnx.ModelProto, *, keep_elements: int = KEEP_ELEMENTS) -> int:
    """Drop, in place, the values of every initializer and ``Constant`` of more than ``keep_elements`` elements.

    Parameters
    ----------
    model
        The model, changed in place. Its shapes, element types, nodes and small
        constants are unchanged; external-data references of the stripped
        tensors are removed, so no weight file is ever opened.
    keep_elements
        Tensors of at most this many elements keep their values.

    Returns
    -------
    int
        The number of tensors stripped.
    """
    stripped = 0
    for graph in _graphs(model.graph):
        for init in graph.initializer:
            stripped += _strip_tensor(init, keep_elements)
        for node in graph.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                for attr in node.attribute:
                    if attr.name == "value" and attr.type == onnx.AttributeProto.TENSOR:
                        stripped += _strip_tensor(attr.t, keep_elements)
    return stripped


def strip_file(src: str | Path, dst: str | Path, *, keep_elements: int = KEEP_ELEMENTS) -> int:
    """Write a copy of the ONNX model ``src`` without its weight values to ``dst``.

    External data of ``src`` is never read. See :func:`strip_weights`; the copy
    also leaves out what the import never reads: the nodes' ``metadata_props`` and
    foreign ``doc_string`` (an exporter's stack traces) and the graph's inferred
    ``value_info``.

    Returns
    -------
    int
        The number of tensors stripped.
    """
    model = onnx.load(str(src), load_external_data=False)
    stripped = strip_weights(model, keep_elements=keep_elements)
    for graph in _graphs(model.graph):
        del graph.value_info[:]  # inferred again on import
        for node in graph.node:
            node.ClearField("metadata_props")  # exporters' stack traces and module paths
            if not node.doc_string.lstrip().startswith("{"):  # keep accelsched's own metadata
                node.ClearField("doc_string")
    onnx.save(model, str(dst))
    return stripped
