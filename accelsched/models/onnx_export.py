"""ONNX export: :func:`to_onnx` writes a workload as a shape-only ONNX model.

:func:`to_onnx` writes a shape-only model: weights are ``ConstantOfShape`` nodes
(a few bytes each), every layer's output is an ``N x C x H x W`` tensor named
after the layer, CONV -> ``Conv``, POOL -> ``MaxPool``, ELTWISE -> ``Sum``, FC ->
``Flatten`` + ``Gemm`` (one token) or ``Reshape``/``Transpose`` + ``MatMul`` (a token
map), MATMUL -> ``Reshape``/``Transpose`` + ``MatMul``, several producers ->
``Concat``. Source layers read graph inputs (one per distinct input shape). What
ONNX cannot say goes into the layer node's ``doc_string`` as
``{"accelsched": {...}}``: the four precisions always; ``padding`` when the
declared padding is not the effective one; ``kind: "fc"`` for an FC with groups
or strides (written as a 1x1 ``Conv``); ``dilation`` of 1x1-window layers; the
``grid`` (``OY, OX``) of a MATMUL whose rows are not laid out like its I
producer's map. :func:`~accelsched.models.onnx_import.load_onnx` reads these back, so the round trip gives an
equal workload; a foreign file has none of them and the defaults apply.

Stream flavor
-------------
``to_onnx(workload, path, flavor="stream")`` writes the variant that KU Leuven's
Stream (``stream-dse`` 2.1.1, Python >= 3.12) parses: its ONNX front end has no
``ConstantOfShape``, ``Sum`` or ``Concat`` parser and takes a tensor's precision from
its element type. So weights are zero-filled initializers (the file holds the weight
bytes), element-wise layers are chains of binary
``Add``, every tensor has the integer type of its layer's precision (8 bits ->
``int8``, 16 -> ``int16``, 32 -> ``int32``), and a layer that reads several
producers (a ``Concat``) is refused with an :class:`InputError` naming it. ONNX
defines ``Conv`` and ``MaxPool`` on floats only, so this variant passes
``onnx.checker.check_model`` but not its ``full_check`` type inference (Stream
infers shapes without it); :func:`~accelsched.models.onnx_import.load_onnx` still reads it back to an equal
workload. Run it in Stream (separate Python 3.12 environment with ``pip install
stream-dse==2.1.1 six``) with the preset written by
:func:`accelsched.hardware.stream_export.export_stream`::

    from stream.api import evaluate_mapping
    evaluate_mapping("hw/stream-mc-homtpu.yaml", "fsrcnn.onnx", "out/")

``python -m accelsched.bench.stream_crosscheck`` does both and compares the figures.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from accelsched.errors import InputError
from accelsched.models.layer import Layer, OpKind, effective_padding
from accelsched.models.onnx_format import FORMAT_PROP, FORMAT_VERSION, META_KEY, token_grid, window_extent
from accelsched.models.workload import Workload

__all__ = ["EXPORT_FLAVORS", "EXPORT_OPSET", "to_onnx"]

EXPORT_OPSET = 17
"""Opset of the models written by :func:`to_onnx`."""

_EXPORT_IR_VERSION = 8

EXPORT_FLAVORS = ("onnx", "stream")
"""``onnx``: standard ONNX without weight data; ``stream``: what Stream 2.1.1 parses (module docstring)."""

_STREAM_TYPES = {8: (TensorProto.INT8, np.int8), 16: (TensorProto.INT16, np.int16), 32: (TensorProto.INT32, np.int32)}
"""Element type of a tensor of the given bits in the Stream flavor."""


class _Exporter:
    """Writes one workload as a shape-only ONNX graph; see the module docstring."""

    def __init__(self, workload: Workload, flavor: str = "onnx") -> None:
        if flavor not in EXPORT_FLAVORS:
            raise InputError(f"unknown ONNX flavor {flavor!r}", "to_onnx(flavor=...)", f"use one of {EXPORT_FLAVORS}")
        self.workload = workload
        self.stream = flavor == "stream"
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.input_by_shape: dict[tuple[int, ...], str] = {}
        self.tensor_names: set[str] = set(workload.names)
        self.node_names: set[str] = set(workload.names)

    # ------------------------------------------------------------- naming
    @staticmethod
    def _fresh(used: set[str], base: str) -> str:
        name, n = base, 1
        while name in used:
            n += 1
            name = f"{base}_{n}"
        used.add(name)
        return name

    def tensor(self, base: str) -> str:
        return self._fresh(self.tensor_names, base)

    def node(
        self, op: str, inputs: Sequence[str], output: str, *, name: str, doc: str | None = None, **attrs: Any
    ) -> str:
        """Append a node; ``name`` is kept for layer nodes, made unique for helpers."""
        node_name = name if doc is not None else self._fresh(self.node_names, name)
        self.nodes.append(helper.make_node(op, list(inputs), [output], name=node_name, doc_string=doc, **attrs))
        return output

    def ints(self, base: str, values: Sequence[int]) -> str:
        name = self.tensor(base)
        self.initializers.append(numpy_helper.from_array(np.asarray(values, dtype=np.int64), name))
        return name

    def element(self, bits: int, where: str) -> int:
        """The element type of a tensor of ``bits`` (float in the standard flavor)."""
        if not self.stream:
            return TensorProto.FLOAT
        if bits not in _STREAM_TYPES:
            raise InputError(f"{where} has {bits}-bit elements, which the Stream flavor cannot type",
                             f"workload {self.workload.name!r}", "use 8, 16 or 32 bits")  # fmt: skip
        return _STREAM_TYPES[bits][0]

    def weight(self, layer: Layer, shape: Sequence[int]) -> str:
        """A zero weight tensor of ``shape``: ``ConstantOfShape`` of a tiny initializer (Stream: an initializer)."""
        if self.stream:
            self.element(layer.weight_bits, f"layer {layer.name!r}")
            name = self.tensor(f"{layer.name}/W")
            zeros = np.zeros(list(shape), dtype=_STREAM_TYPES[layer.weight_bits][1])
            self.initializers.append(numpy_helper.from_array(zeros, name))
            return name
        dims = self.ints(f"{layer.name}/W_shape", shape)
        out = self.tensor(f"{layer.name}/W")
        value = helper.make_tensor("value", TensorProto.FLOAT, [1], [0.0])
        return self.node("ConstantOfShape", [dims], out, name=f"{layer.name}/W", value=value)

    def reshape(self, layer: Layer, x: str, shape: Sequence[int], out: str | None = None) -> str:
        target = self.ints(f"{layer.name}/shape", shape)
        return self.node(
            "Reshape", [x, target], out or self.tensor(f"{layer.name}/reshape"), name=f"{layer.name}/reshape"
        )

    def transpose(self, layer: Layer, x: str, perm: Sequence[int]) -> str:
        out = self.tensor(f"{layer.name}/transpose")
        return self.node("Transpose", [x], out, name=f"{layer.name}/transpose", perm=list(perm))

    # ----------------------------------------------------------- operands
    def layer_input(self, layer: Layer) -> str:
        """The I operand as an ``N x C x H x W`` tensor: producers concatenated, or a graph input."""
        if not layer.inputs:
            return self.graph_input((layer.B, layer.in_channels, layer.IY, layer.IX), layer.input_bits)
        producers = [self.workload[p] for p in layer.inputs]
        if self.stream and len(producers) > 1:
            raise InputError(
                f"layer {layer.name!r} concatenates {len(producers)} producers, and Stream 2.1.1 has no ONNX Concat "
                "parser",
                f"workload {self.workload.name!r}",
                "export this workload with flavor='onnx', or run in Stream a workload without concatenations",
            )
        if len({(p.OY, p.OX) for p in producers}) > 1:
            sizes = ", ".join(f"{p.name}: {p.OY}x{p.OX}" for p in producers)
            raise InputError(
                f"layer {layer.name!r} concatenates maps of different sizes ({sizes}), which ONNX Concat cannot",
                f"workload {self.workload.name!r}",
                "make the producers' output sizes equal",
            )
        if len(producers) == 1:
            return producers[0].name
        out = self.tensor(f"{layer.name}/concat")
        return self.node("Concat", layer.inputs, out, name=f"{layer.name}/concat", axis=1)

    def graph_input(self, shape: tuple[int, ...], bits: int) -> str:
        """A graph input of ``shape``, shared by every source layer reading that shape."""
        if shape not in self.input_by_shape:
            name = self.tensor("input")
            element = self.element(bits, "the network input")
            self.inputs.append(helper.make_tensor_value_info(name, element, list(shape)))
            self.input_by_shape[shape] = name
        return self.input_by_shape[shape]

    def input_size(self, layer: Layer) -> tuple[int, int]:
        """Rows and columns of the map the layer reads."""
        if not layer.inputs:
            return layer.IY, layer.IX
        first = self.workload[layer.inputs[0]]
        return first.OY, first.OX

    # ------------------------------------------------------------- metadata
    @staticmethod
    def doc(layer: Layer, **extra: Any) -> str:
        data: dict[str, Any] = {
            "input_bits": layer.input_bits,
            "weight_bits": layer.weight_bits,
            "output_bits": layer.output_bits,
            "psum_bits": layer.psum_bits,
        }
        data.update({k: v for k, v in extra.items() if v is not None})
        return json.dumps({META_KEY: data}, sort_keys=True)

    def declared_padding(self, layer: Layer) -> list[int] | None:
        """The padding when it is not the effective one :func:`load_onnx` computes."""
        height, width = self.input_size(layer)
        top, left, bottom, right = layer.padding
        ext_y = window_extent(layer.FY, layer.dilation_y)
        ext_x = window_extent(layer.FX, layer.dilation_x)
        effective = (
            effective_padding(height, layer.OY, ext_y, layer.stride_y, top),
            effective_padding(width, layer.OX, ext_x, layer.stride_x, left),
        )
        return list(layer.padding) if effective != (bottom, right) else None

    @staticmethod
    def dilation(layer: Layer) -> list[int] | None:
        return None if (layer.dilation_y, layer.dilation_x) == (1, 1) else [layer.dilation_y, layer.dilation_x]

    @staticmethod
    def window_attrs(layer: Layer) -> dict[str, Any]:
        return {
            "kernel_shape": [layer.FY, layer.FX],
            "strides": [layer.stride_y, layer.stride_x],
            "dilations": [layer.dilation_y, layer.dilation_x],
            "pads": list(layer.padding),
        }

    # ------------------------------------------------------------ layers
    def conv(self, layer: Layer, *, kind: str | None = None) -> None:
        x = self.layer_input(layer)
        w = self.weight(layer, [layer.out_channels, layer.C, layer.FY, layer.FX])
        doc = self.doc(layer, padding=self.declared_padding(layer), kind=kind)
        self.node("Conv", [x, w], layer.name, name=layer.name, doc=doc, group=layer.G, **self.window_attrs(layer))

    def pool(self, layer: Layer) -> None:
        x = self.layer_input(layer)
        doc = self.doc(layer, padding=self.declared_padding(layer))
        self.node("MaxPool", [x], layer.name, name=layer.name, doc=doc, **self.window_attrs(layer))

    def fc(self, layer: Layer) -> None:
        """Gemm on one token, MatMul on a token map; groups or strides: a 1x1 Conv."""
        if layer.G > 1 or (layer.stride_y, layer.stride_x, layer.dilation_y, layer.dilation_x) != (1, 1, 1, 1):
            self.conv(layer, kind=OpKind.FC.value)
            return
        x = self.layer_input(layer)
        tokens = layer.OY * layer.OX
        doc = self.doc(layer)
        if tokens == 1:
            flat = self.node("Flatten", [x], self.tensor(f"{layer.name}/flatten"), name=f"{layer.name}/flatten", axis=1)
            w = self.weight(layer, [layer.K, layer.C])
            y = self.node("Gemm", [flat, w], self.tensor(f"{layer.name}/gemm"), name=layer.name, doc=doc, transB=1)
        else:
            seq = self.transpose(layer, self.reshape(layer, x, [layer.B, layer.C, tokens]), [0, 2, 1])
            w = self.weight(layer, [layer.C, layer.K])
            prod = self.node("MatMul", [seq, w], self.tensor(f"{layer.name}/matmul"), name=layer.name, doc=doc)
            y = self.transpose(layer, prod, [0, 2, 1])
        self.reshape(layer, y, [layer.B, layer.K, layer.OY, layer.OX], out=layer.name)

    def matmul(self, layer: Layer) -> None:
        """Reshape/Transpose the I and W producers to ``[B, G, rows, C] x [B, G, C, K]``."""
        if (layer.stride_y, layer.stride_x) != (1, 1):
            raise InputError(
                f"matmul layer {layer.name!r} has strides {layer.stride_y}x{layer.stride_x}, which ONNX MatMul "
                "cannot express",
                f"workload {self.workload.name!r}",
                "use stride 1",
            )
        rows = layer.OY * layer.OX
        src_i = self.workload[layer.inputs[0]]
        x = self.reshape(layer, layer.inputs[0], [layer.B, layer.G, layer.C, rows])
        x = self.transpose(layer, x, [0, 1, 3, 2])
        w = self.reshape(layer, layer.inputs[1], [layer.B, layer.G, layer.C, layer.K])
        grid = [layer.OY, layer.OX] if token_grid(rows, src_i.OY, src_i.OX) != (layer.OY, layer.OX) else None
        doc = self.doc(layer, grid=grid, dilation=self.dilation(layer))
        prod = self.node("MatMul", [x, w], self.tensor(f"{layer.name}/matmul"), name=layer.name, doc=doc)
        y = self.transpose(layer, prod, [0, 1, 3, 2])
        self.reshape(layer, y, [layer.B, layer.out_channels, layer.OY, layer.OX], out=layer.name)

    def eltwise(self, layer: Layer) -> None:
        """Sum of the operands (a ``C x 1 x 1`` operand broadcasts)."""
        operands = list(layer.inputs) or [self.layer_input(layer)]
        sizes = [(self.workload[p].OY, self.workload[p].OX) for p in layer.inputs]
        if sizes and (layer.OY, layer.OX) not in sizes:
            raise InputError(
                f"eltwise layer {layer.name!r} has only broadcast ({layer.G}x1x1) operands but a "
                f"{layer.OY}x{layer.OX} output, which ONNX Sum cannot express",
                f"workload {self.workload.name!r}",
                "give the layer the operands' size",
            )
        doc = self.doc(layer, dilation=self.dilation(layer))
        if not self.stream or len(operands) == 1:
            self.node("Sum", operands, layer.name, name=layer.name, doc=doc)
            return
        total = operands[0]
        for k, operand in enumerate(operands[1:], start=2):  # Stream: a chain of binary Adds, the last one the layer
            last = k == len(operands)
            total = self.node("Add", [total, operand], layer.name if last else self.tensor(f"{layer.name}/add"),
                              name=layer.name if last else f"{layer.name}/add", doc=doc if last else None)  # fmt: skip

    def build(self) -> onnx.ModelProto:
        writers: dict[OpKind, Callable[[Layer], None]] = {
            OpKind.CONV: self.conv,
            OpKind.POOL: self.pool,
            OpKind.FC: self.fc,
            OpKind.MATMUL: self.matmul,
            OpKind.ELTWISE: self.eltwise,
        }
        for layer in self.workload:
            writers[layer.kind](layer)
        outputs = [
            helper.make_tensor_value_info(
                n,
                self.element(self.workload[n].output_bits, f"layer {n!r}"),
                [self.workload[n].B, self.workload[n].out_channels, self.workload[n].OY, self.workload[n].OX],
            )
            for n in self.workload.sinks
        ]
        graph = helper.make_graph(self.nodes, self.workload.name, self.inputs, outputs, initializer=self.initializers)
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", EXPORT_OPSET)],
            producer_name="accelsched",
            ir_version=_EXPORT_IR_VERSION,
        )
        helper.set_model_props(model, {FORMAT_PROP: FORMAT_VERSION})
        return model


def to_onnx(workload: Workload, path: str | Path | None = None, flavor: str = "onnx") -> onnx.ModelProto:
    """Write ``workload`` as a shape-only ONNX model.

    The model passes ``onnx.checker.check_model(model, full_check=True)`` and
    :func:`~accelsched.models.onnx_import.load_onnx` reads it back to a workload equal to ``workload``. Weights are
    ``ConstantOfShape`` nodes, so the file holds no weight data.

    Parameters
    ----------
    workload
        The workload to write.
    path
        Where to save the model; None only returns it.
    flavor
        ``onnx`` (the above) or ``stream``: the variant Stream 2.1.1 parses (weights as
        zero initializers, integer element types, ``Add`` chains, no ``Concat``; it
        passes ``check_model`` without ``full_check``), see the module docstring.

    Returns
    -------
    onnx.ModelProto
        The model.

    Raises
    ------
    InputError
        A layer ONNX cannot express: a matmul with strides, producers of different
        sizes concatenated, an element-wise layer larger than all its operands; in the
        Stream flavor also any concatenation and precisions other than 8, 16, 32 bits;
        an unknown flavor.
    """
    model = _Exporter(workload, flavor).build()
    if path is not None:
        onnx.save(model, str(path))
    return model
