"""ONNX import (:func:`load_onnx`) and export (:func:`to_onnx`) of workloads.

Import
------
The model is read without its external data (weights are never needed), every
tensor shape is inferred with ``onnx.shape_inference`` and the nodes are visited
in graph order. The rules:

* **Folding.** A tensor computed only from initializers and constants (and
  ``Shape`` / ``Size`` of any tensor, since shapes are static) is a constant,
  whatever operator computes it. Nodes whose outputs feed nothing but shape
  computations (or nothing at all on the way to a graph output) are ignored too.
  None of these becomes a layer or is checked for support.
* **Layers.** ``Conv`` (also ``ConvInteger``, ``QLinearConv``) -> CONV;
  ``Gemm`` / ``MatMul`` (also ``MatMulInteger``, ``QLinearMatMul``) with a constant
  second operand -> FC, with the tokens of a ``[B, S, D]`` input in ``OX`` (or in
  ``OY x OX`` when they are the spatial positions of the producing map); a Gemm
  reading a flattened ``C x H x W`` map (``H*W > 1``) is a CONV whose window covers
  the map, as in :meth:`NetBuilder.fc`; a product of two activations -> MATMUL
  (``[.., heads, rows, inner] x [.., heads, inner, cols]`` gives ``G = heads``,
  rows in ``OX``, ``C = inner``, ``K = cols``); pooling, global pooling and
  ``ReduceMean``/``ReduceMax`` over the spatial axes -> POOL; ``Add``, ``Sub``,
  ``Mul``, ``Div``, ``Sum``, ``Mean``, ``Max``, ``Min``, ``Pow`` of two or more
  different activations -> ELTWISE. An element-wise op with a single activation
  operand (bias, scale, or a function of one tensor such as ``x * sigmoid(x)``)
  passes through.
* **Concat** along channels makes no layer: its consumers read every producer.
  Where a consumer needs a single layer's output (an ELTWISE or MATMUL operand) or
  a concatenation includes the network input, an identity layer (a 1x1 POOL) named
  after the Concat node (or the graph input) materializes the tensor.
* **Pass-through** ops (activations, normalizations, reshapes, transposes, casts,
  quantize / dequantize, ...) make their output an alias of their input's
  producers. ``Pad`` is folded into the padding of the next convolution or pooling.
* **Padding** is the effective one (see :func:`~accelsched.models.layer.effective_padding`):
  declared trailing padding no window reaches is dropped, implicit ceil-mode
  padding is added.
* **Names** are the node names, made unique (``name_2``, ...); an unnamed node is
  called ``<op_type>_<index of the node in the graph>``.
* **Precision.** ``bits=None`` (the default) takes every precision from the element
  type of the tensor (``float32`` -> 32, ``float16``/``bfloat16`` -> 16, ``int8`` /
  ``uint8`` / 8-bit floats -> 8, ... see :data:`ELEMENT_BITS`; an unknown type -> 8),
  looking through ``DequantizeLinear`` so that a QDQ-quantized model gives 8 bits.
  Pooling and element-wise layers get ``weight_bits = input_bits``. ``psum_bits``
  defaults to ``max(16, input_bits, weight_bits)``. Precisions recorded by
  :func:`to_onnx` override the element types; explicit ``bits`` / ``psum_bits``
  arguments override everything.
* **Batch.** A symbolic first dimension of a graph input is set to ``batch``
  (default 1) before shape inference; a model with a fixed batch is imported as
  is and then given ``batch`` with :meth:`Workload.with_batch`.

Export
------
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
producer's map. :func:`load_onnx` reads these back, so the round trip gives an
equal workload; a foreign file has none of them and the defaults apply.

Stream flavor
-------------
``to_onnx(workload, path, flavor="stream")`` writes the variant that KU Leuven's
Stream (``stream-dse`` 2.1.1, Python >= 3.12) parses: its ONNX front end has no
``ConstantOfShape``, ``Sum`` or ``Concat`` parser and takes a tensor's precision from
its element type. So weights are zero-filled initializers (the file holds the weight
bytes: 11 MB for ResNet-18 at 8 bits), element-wise layers are chains of binary
``Add``, every tensor has the integer type of its layer's precision (8 bits ->
``int8``, 16 -> ``int16``, 32 -> ``int32``), and a layer that reads several
producers (a ``Concat``) is refused with an :class:`InputError` naming it. ONNX
defines ``Conv`` and ``MaxPool`` on floats only, so this variant passes
``onnx.checker.check_model`` but not its ``full_check`` type inference (Stream
infers shapes without it); :func:`load_onnx` still reads it back to an equal
workload. Run it in Stream (separate Python 3.12 environment with ``pip install
stream-dse==2.1.1 six``) with the preset written by
:func:`accelsched.hardware.stream_export.export_stream`::

    from stream.api import evaluate_mapping
    evaluate_mapping("hw/stream-mc-homtpu.yaml", "fsrcnn.onnx", "out/")

``python -m accelsched.bench.stream_crosscheck`` does both and compares the figures.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from accelsched.errors import InputError
from accelsched.models.layer import Layer, OpKind, effective_padding
from accelsched.models.workload import Workload

__all__ = ["DEFAULT_BITS", "ELEMENT_BITS", "EXPORT_FLAVORS", "EXPORT_OPSET", "load_onnx", "to_onnx"]

META_KEY = "accelsched"
"""Key of the JSON object in a node's ``doc_string`` holding what ONNX cannot express."""

FORMAT_PROP = "accelsched.format"
"""Model ``metadata_props`` key marking a file written by :func:`to_onnx`."""

FORMAT_VERSION = "1"

EXPORT_OPSET = 17
"""Opset of the models written by :func:`to_onnx`."""

_EXPORT_IR_VERSION = 8

EXPORT_FLAVORS = ("onnx", "stream")
"""``onnx``: standard ONNX without weight data; ``stream``: what Stream 2.1.1 parses (module docstring)."""

_STREAM_TYPES = {8: (TensorProto.INT8, np.int8), 16: (TensorProto.INT16, np.int16), 32: (TensorProto.INT32, np.int32)}
"""Element type of a tensor of the given bits in the Stream flavor."""

DEFAULT_BITS = 8
"""Precision of a tensor whose element type is unknown."""

ELEMENT_BITS: dict[int, int] = {
    getattr(TensorProto, name): bits
    for name, bits in (
        ("FLOAT", 32), ("DOUBLE", 64), ("FLOAT16", 16), ("BFLOAT16", 16),
        ("INT8", 8), ("UINT8", 8), ("INT16", 16), ("UINT16", 16), ("INT32", 32), ("UINT32", 32),
        ("INT64", 64), ("UINT64", 64), ("BOOL", 8), ("INT4", 4), ("UINT4", 4), ("INT2", 2), ("UINT2", 2),
        ("FLOAT8E4M3FN", 8), ("FLOAT8E4M3FNUZ", 8), ("FLOAT8E5M2", 8), ("FLOAT8E5M2FNUZ", 8),
        ("FLOAT8E8M0", 8), ("FLOAT4E2M1", 4),
    )
    if hasattr(TensorProto, name)
}  # fmt: skip
"""Bits per element of the ONNX tensor element types."""

_SHAPE_ONLY = frozenset({"Shape", "Size"})
"""Operators whose output depends only on the (static) shape of their input."""

_PASS_THROUGH = frozenset(
    {
        "Relu", "LeakyRelu", "PRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Elu", "Selu",
        "Celu", "Gelu", "Erf", "Mish", "Softplus", "Softsign", "ThresholdedRelu", "Swish", "Exp", "Log",
        "Sqrt", "Reciprocal", "Neg", "Abs", "Sign", "Floor", "Ceil", "Round",
        "Softmax", "LogSoftmax", "Hardmax", "LRN", "Dropout", "Identity", "BatchNormalization",
        "InstanceNormalization", "LayerNormalization", "GroupNormalization", "MeanVarianceNormalization",
        "LpNormalization", "RMSNormalization", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze",
        "Cast", "CastLike", "QuantizeLinear", "DequantizeLinear",
    }
)  # fmt: skip
"""Operators whose output is an alias of their first activation input."""

_CONV_OPERANDS = {"Conv": (0, 1), "ConvInteger": (0, 1), "QLinearConv": (0, 3)}
_DENSE_OPERANDS = {"Gemm": (0, 1), "MatMul": (0, 1), "MatMulInteger": (0, 1), "QLinearMatMul": (0, 3)}
_META_KEYS = frozenset({"input_bits", "weight_bits", "output_bits", "psum_bits", "padding", "kind", "dilation", "grid"})

_Pads = tuple[int, int, int, int]


# ============================================================== shared helpers
def _token_grid(tokens: int, height: int, width: int) -> tuple[int, int]:
    """``(OY, OX)`` of ``tokens`` positions read from a ``height x width`` map.

    The tokens keep the producer's layout when they are its spatial positions
    (e.g. the patches of a vision transformer); otherwise they form one row.
    """
    return (height, width) if height * width == tokens else (1, tokens)


def _window_extent(size: int, dilation: int) -> int:
    return (size - 1) * dilation + 1


def _auto_pad_begin(mode: str, size: int, extent: int, stride: int) -> int:
    """Leading padding of ONNX ``auto_pad`` modes ``SAME_UPPER``/``SAME_LOWER``/``VALID``.

    (The trailing padding follows from the output size, see :func:`effective_padding`.)
    """
    if mode == "VALID":
        return 0
    out = -(-size // stride)
    total = max(0, (out - 1) * stride + extent - size)
    return total // 2 if mode == "SAME_UPPER" else total - total // 2


def _attrs(node: onnx.NodeProto) -> dict[str, Any]:
    """Node attributes as Python values (strings decoded)."""
    out: dict[str, Any] = {}
    for attr in node.attribute:
        value = helper.get_attribute_value(attr)
        out[attr.name] = value.decode() if isinstance(value, bytes) else value
    return out


def _has_subgraph(node: onnx.NodeProto) -> bool:
    return any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute)


def _op_label(node: onnx.NodeProto) -> str:
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"


# ===================================================================== import
@dataclass(frozen=True)
class _Act:
    """An activation tensor of the ONNX graph, seen as the layers that make it.

    ``producers`` are the layers whose outputs, concatenated along channels, form
    the tensor (empty: a network input); ``batch``, ``channels``, ``height`` and
    ``width`` are their layout (what a consumer's shape is checked against),
    whatever reshapes and transposes sit in between. ``pads`` is padding added by
    ``Pad`` nodes, still to be folded into a consumer. ``origin`` names the node or
    graph input that made the tensor.
    """

    producers: tuple[str, ...]
    batch: int
    channels: int
    height: int
    width: int
    origin: str
    pads: _Pads = (0, 0, 0, 0)

    @property
    def numel(self) -> int:
        top, left, bottom, right = self.pads
        return self.batch * self.channels * (self.height + top + bottom) * (self.width + left + right)

    @property
    def key(self) -> tuple[str, ...]:
        """Identity of the data: the producers, or the graph input."""
        return self.producers or (f"<input {self.origin}>",)


def _view(shape: Sequence[int]) -> tuple[int, int, int, int]:
    """``(batch, channels, height, width)`` of a network input of the given shape.

    ``N x C x H x W`` maps, ``N x D`` vectors and ``N x S x D`` token sequences (the
    tokens go in the width) are recognized; other ranks are folded into these.
    """
    dims = list(shape)
    if len(dims) == 0:
        return 1, 1, 1, 1
    if len(dims) == 1:
        return 1, dims[0], 1, 1
    if len(dims) == 2:
        return dims[0], dims[1], 1, 1
    if len(dims) == 3:
        return dims[0], dims[2], 1, dims[1]
    return dims[0], dims[1], math.prod(dims[2:-1]), dims[-1]


class _Importer:
    """Converts one ONNX graph; see the module docstring for the rules."""

    def __init__(
        self, model: onnx.ModelProto, where: str, *, bits: int | None, psum_bits: int | None, batch: int | None
    ) -> None:
        self.model = model
        self.graph = model.graph
        self.where = where
        self.bits = bits
        self.psum_bits = psum_bits
        self.batch = batch
        self.opsets = {o.domain or "": o.version for o in model.opset_import}
        self.initializers = {t.name: t for t in self.graph.initializer}
        self.producer: dict[str, onnx.NodeProto] = {}
        for node in self.graph.node:
            for out in node.output:
                if out:
                    self.producer[out] = node
        self.labels = [n.name or f"{n.op_type}_{i}" for i, n in enumerate(self.graph.node)]
        self.reserved = {n.name for n in self.graph.node if n.name}
        self.used: set[str] = set()
        self.const: set[str] = set()
        self.skip: set[int] = set()
        self.shapes: dict[str, tuple[int | None, ...] | None] = {}
        self.types: dict[str, int] = {}
        self.values: dict[str, np.ndarray] = {}
        self.acts: dict[str, _Act] = {}
        self.identities: dict[tuple[str, ...], str] = {}
        self.layers: list[Layer] = []

    # ------------------------------------------------------------- errors
    def error(self, index: int, what: str, fix: str = "") -> InputError:
        node = self.graph.node[index]
        return InputError(f"{node.op_type} node {self.labels[index]!r}: {what}", self.where, fix)

    # ------------------------------------------------------ pass 1: folding
    def fold(self) -> None:
        """Find the constant and the shape-only nodes; reject unsupported operators at once."""
        self.const = set(self.initializers)
        for index, node in enumerate(self.graph.node):
            inputs = [i for i in node.input if i]
            if not _has_subgraph(node) and (node.op_type in _SHAPE_ONLY or all(i in self.const for i in inputs)):
                self.const.update(o for o in node.output if o)
                self.skip.add(index)
        live = {o.name for o in self.graph.output}
        for index in reversed(range(len(self.graph.node))):
            node = self.graph.node[index]
            if index in self.skip:
                continue
            if not any(o in live for o in node.output):
                self.skip.add(index)
                continue
            live.update(i for i in node.input if i)
        unsupported: dict[str, list[str]] = {}
        for index, node in enumerate(self.graph.node):
            if index not in self.skip and _handler(node) is None:
                unsupported.setdefault(_op_label(node), []).append(repr(self.labels[index]))
        if unsupported:
            parts = [
                f"{op} ({'node' if len(names) == 1 else 'nodes'} {', '.join(names)})"
                for op, names in unsupported.items()
            ]
            raise InputError(
                "unsupported ONNX operators: " + ", ".join(parts),
                self.where,
                "replace or remove these nodes (e.g. simplify the model with onnxsim); accelsched imports "
                "convolutions, Gemm/MatMul, pooling, element-wise arithmetic, Concat and shape-preserving ops",
            )

    # ------------------------------------------------ pass 2: shape inference
    def infer_shapes(self) -> None:
        """Fix a symbolic batch, infer every shape and record shapes and element types."""
        for value in self.graph.input:
            if value.name in self.initializers or not value.type.HasField("tensor_type"):
                continue
            dims = value.type.tensor_type.shape.dim
            if len(dims) and not dims[0].HasField("dim_value"):
                dims[0].dim_value = self.batch or 1
        del self.graph.value_info[:]
        try:
            inferred = onnx.shape_inference.infer_shapes(self.model, strict_mode=True, data_prop=True)
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(
                f"ONNX shape inference failed: {first}", self.where, "check the model with onnx.checker.check_model"
            ) from None
        self.model = inferred
        self.graph = inferred.graph
        for value in [*self.graph.input, *self.graph.value_info, *self.graph.output]:
            if not value.type.HasField("tensor_type"):
                continue
            ttype = value.type.tensor_type
            self.types[value.name] = ttype.elem_type
            if ttype.HasField("shape"):
                dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in ttype.shape.dim)
                self.shapes[value.name] = dims
        for init in self.graph.initializer:
            self.shapes[init.name] = tuple(init.dims)
            self.types[init.name] = init.data_type

    # ------------------------------------------------------- tensor access
    def shape(self, index: int, tensor: str) -> tuple[int, ...]:
        """Static shape of ``tensor``, read by node ``index``."""
        dims = self.shapes.get(tensor)
        if dims is None or any(d is None for d in dims):
            raise self.error(
                index,
                f"the shape of tensor {tensor!r} is unknown or symbolic ({dims})",
                "export the model with static shapes (only the batch dimension may be symbolic)",
            )
        return tuple(int(d) for d in dims if d is not None)

    def is_const(self, tensor: str) -> bool:
        return tensor in self.const

    def act(self, index: int, tensor: str) -> _Act:
        """The activation ``tensor`` read by node ``index``."""
        act = self.acts.get(tensor)
        if act is not None:
            return act
        if any(v.name == tensor for v in self.graph.input):
            batch, channels, height, width = _view(self.shape(index, tensor))
            act = _Act((), batch, channels, height, width, origin=tensor)
            self.acts[tensor] = act
            return act
        raise self.error(
            index,
            f"input {tensor!r} is not computed before it is used",
            "sort the graph topologically (e.g. re-export or simplify the model)",
        )

    def first_act(self, index: int) -> tuple[str, _Act]:
        node = self.graph.node[index]
        for tensor in node.input:
            if tensor and not self.is_const(tensor):
                return tensor, self.act(index, tensor)
        raise self.error(index, "has no activation input")

    def value(self, index: int, tensor: str) -> np.ndarray:
        """Value of the constant ``tensor`` (evaluated node by node when computed)."""
        if tensor in self.values:
            return self.values[tensor]
        if tensor in self.initializers:
            try:
                result = numpy_helper.to_array(self.initializers[tensor])
            except (ValueError, OSError) as exc:
                raise self.error(index, f"cannot read constant {tensor!r}: {exc}") from None
        else:
            result = self._evaluate(index, tensor)
        self.values[tensor] = result
        return result

    def _evaluate(self, index: int, tensor: str) -> np.ndarray:
        node = self.producer.get(tensor)
        if node is None or tensor not in self.const:
            raise self.error(index, f"tensor {tensor!r} must be a constant")
        if node.op_type in _SHAPE_ONLY:
            shape = np.array(self.shape(index, node.input[0]), dtype=np.int64)
            if node.op_type == "Size":
                return np.array(math.prod(int(d) for d in shape), dtype=np.int64)
            attrs = _attrs(node)
            return shape[attrs.get("start", 0) : attrs.get("end", len(shape))]
        feeds = {i: self.value(index, i) for i in node.input if i}
        try:
            outputs = ReferenceEvaluator(node, opsets=self.opsets).run(None, feeds)
        except Exception as exc:  # the reference runtime raises anything on bad input
            raise self.error(index, f"cannot evaluate constant {tensor!r} ({type(exc).__name__}: {exc})") from None
        for name, out in zip(node.output, outputs, strict=False):
            if name:
                self.values[name] = np.asarray(out)
        return self.values[tensor]

    def bits_of(self, tensor: str) -> int:
        """Bits per element of ``tensor``, looking through ``DequantizeLinear``."""
        node = self.producer.get(tensor)
        if node is not None and node.op_type == "DequantizeLinear":
            tensor = node.input[0]
        return ELEMENT_BITS.get(self.types.get(tensor, 0), DEFAULT_BITS)

    # ----------------------------------------------------------- layers
    def unique(self, base: str, *, own: bool) -> str:
        """A layer name from ``base``; ``own`` when ``base`` is the node's own name."""
        if base not in self.used and (own or base not in self.reserved):
            name = base
        else:
            n = 2
            while f"{base}_{n}" in self.used or f"{base}_{n}" in self.reserved:
                n += 1
            name = f"{base}_{n}"
        self.used.add(name)
        return name

    def meta(self, index: int) -> dict[str, Any]:
        """What :func:`to_onnx` recorded in the node's ``doc_string`` (empty for foreign files)."""
        doc = self.graph.node[index].doc_string
        if not doc.lstrip().startswith("{"):
            return {}
        try:
            data = json.loads(doc)
        except ValueError:
            return {}
        if not isinstance(data, dict) or META_KEY not in data:
            return {}
        meta = data[META_KEY]
        if not isinstance(meta, dict) or not set(meta) <= _META_KEYS:
            raise self.error(
                index,
                f"malformed accelsched metadata in doc_string: {doc!r}",
                f"remove the doc_string or use only the keys {', '.join(sorted(_META_KEYS))}",
            )
        return meta

    def precision(self, index: int, kind: OpKind, x: str, w: str | None, meta: dict[str, Any]) -> dict[str, int]:
        """The four precisions: argument, then recorded metadata, then element types."""
        node = self.graph.node[index]
        ib = self.bits_of(x)
        wb = self.bits_of(w) if w is not None else ib
        ob = self.bits_of(node.output[0])
        bits = {
            "input_bits": meta.get("input_bits", ib),
            "weight_bits": meta.get("weight_bits", wb),
            "output_bits": meta.get("output_bits", ob),
        }
        if self.bits is not None:
            bits = dict.fromkeys(bits, self.bits)
        w_bits = bits["weight_bits"] if kind.has_w_operand else bits["input_bits"]
        psum = meta.get("psum_bits", max(16, bits["input_bits"], w_bits))
        bits["psum_bits"] = self.psum_bits if self.psum_bits is not None else psum
        return bits

    def add_layer(
        self,
        index: int,
        kind: OpKind,
        inputs: tuple[str, ...],
        dims: dict[str, Any],
        *,
        x: str,
        w: str | None = None,
    ) -> None:
        """Create the layer of node ``index`` and make its outputs aliases of it."""
        node = self.graph.node[index]
        meta = self.meta(index)
        fields: dict[str, Any] = {**dims, **self.precision(index, kind, x, w, meta)}
        name = self.unique(self.labels[index], own=bool(node.name))
        try:
            for key, names in (("grid", ("OY", "OX")), ("dilation", ("dilation_y", "dilation_x"))):
                if key in meta:
                    fields.update(zip(names, meta[key], strict=True))
            if "padding" in meta:
                fields["padding"] = tuple(meta["padding"])
            layer = Layer(name=name, kind=kind, inputs=inputs, **fields)
        except (ValueError, TypeError) as exc:
            raise self.error(index, f"cannot be represented as a layer: {exc}") from None
        self.layers.append(layer)
        out = _Act((name,), layer.B, layer.out_channels, layer.OY, layer.OX, origin=name)
        for tensor in node.output:
            if tensor:
                self.acts[tensor] = out

    def single(self, index: int, act: _Act, tensor: str) -> str:
        """The one layer whose output is ``act``; a concatenation or the network input
        is first materialized by an identity layer (a 1x1 POOL)."""
        self.no_pads(index, act)
        if len(act.producers) == 1:
            return act.producers[0]
        if act.key not in self.identities:
            bits = self.bits if self.bits is not None else self.bits_of(tensor)
            name = self.unique(act.origin, own=True)
            try:
                layer = Layer(
                    name=name, kind=OpKind.POOL, K=1, C=1, G=act.channels, OY=act.height, OX=act.width,
                    B=act.batch, input_bits=bits, weight_bits=bits, output_bits=bits,
                    psum_bits=self.psum_bits if self.psum_bits is not None else max(16, bits),
                    inputs=act.producers,
                )  # fmt: skip
            except ValueError as exc:
                raise self.error(index, f"cannot materialize operand {tensor!r}: {exc}") from None
            self.layers.append(layer)
            self.identities[act.key] = name
        return self.identities[act.key]

    def no_pads(self, index: int, act: _Act) -> None:
        if any(act.pads):
            raise self.error(
                index,
                "reads the output of a Pad node; padding is only folded into a convolution or pooling",
                "remove the Pad node or move it before a convolution",
            )

    # -------------------------------------------------------- conversion
    def convert(self) -> list[Layer]:
        """Visit every node that is neither constant nor shape-only."""
        for index, node in enumerate(self.graph.node):
            if index in self.skip:
                continue
            _HANDLERS[node.op_type](self, index)  # fold() rejected every node without a handler
        if not self.layers:
            raise InputError(
                "the model has no layer accelsched can schedule (convolution, Gemm/MatMul, pooling, element-wise)",
                self.where,
                "check that the file is the network you meant",
            )
        return self.layers

    def window(
        self,
        index: int,
        act: _Act,
        x_shape: tuple[int, ...],
        y_shape: tuple[int, ...],
        *,
        kernel: Sequence[int],
        strides: Sequence[int],
        dilations: Sequence[int],
        pads: Sequence[int],
        auto_pad: str = "NOTSET",
    ) -> dict[str, Any]:
        """Loop sizes, strides, dilations and effective padding of a 1-D or 2-D sliding window."""
        spatial = len(x_shape) - 2
        if spatial not in (1, 2) or len(kernel) != spatial:
            raise self.error(index, f"only 1-D and 2-D windows are supported, got {spatial}-D input {x_shape}")
        if spatial == 1:
            x_shape, y_shape = (*x_shape[:2], 1, x_shape[2]), (*y_shape[:2], 1, y_shape[2])
            kernel, strides, dilations = (1, *kernel), (1, *strides), (1, *dilations)
            pads = (0, pads[0], 0, pads[1]) if pads else ()
        ext_y = _window_extent(kernel[0], dilations[0])
        ext_x = _window_extent(kernel[1], dilations[1])
        if auto_pad in ("SAME_UPPER", "SAME_LOWER", "VALID"):
            begin = [_auto_pad_begin(auto_pad, x_shape[2 + a], ext, strides[a]) for a, ext in enumerate((ext_y, ext_x))]
        else:
            begin = [int(pads[0]), int(pads[1])] if pads else [0, 0]
        p_top, p_left, p_bottom, p_right = act.pads
        height = x_shape[2] - p_top - p_bottom
        width = x_shape[3] - p_left - p_right
        top, left = begin[0] + p_top, begin[1] + p_left
        oy, ox = y_shape[2], y_shape[3]
        return {
            "OY": oy, "OX": ox, "FY": kernel[0], "FX": kernel[1],
            "stride_y": strides[0], "stride_x": strides[1],
            "dilation_y": dilations[0], "dilation_x": dilations[1],
            "padding": (
                top, left,
                effective_padding(height, oy, ext_y, strides[0], top),
                effective_padding(width, ox, ext_x, strides[1], left),
            ),
        }  # fmt: skip

    def window_of(
        self, index: int, act: _Act, x_shape: tuple[int, ...], y_shape: tuple[int, ...], kernel: Sequence[int]
    ) -> dict[str, Any]:
        """:meth:`window` with the node's ``strides``/``dilations``/``pads``/``auto_pad`` attributes."""
        attrs = _attrs(self.graph.node[index])
        ones = [1] * len(kernel)
        return self.window(
            index,
            act,
            x_shape,
            y_shape,
            kernel=kernel,
            strides=attrs.get("strides", ones),
            dilations=attrs.get("dilations", ones),
            pads=attrs.get("pads", ()),
            auto_pad=attrs.get("auto_pad", "NOTSET"),
        )

    # ------------------------------------------------------------ handlers
    def conv(self, index: int) -> None:
        """Conv / ConvInteger / QLinearConv -> CONV (an FC when the export says so)."""
        node = self.graph.node[index]
        xi, wi = _CONV_OPERANDS[node.op_type]
        x, w = node.input[xi], node.input[wi]
        act = self.act(index, x)
        if not self.is_const(w):
            raise self.error(index, "its weights are computed from activations; only constant weights are supported")
        x_shape, w_shape = self.shape(index, x), self.shape(index, w)
        y_shape = self.shape(index, node.output[0])
        group = int(_attrs(node).get("group", 1))
        dims = self.window_of(index, act, x_shape, y_shape, w_shape[2:])
        dims.update(B=y_shape[0], G=group, K=y_shape[1] // group, C=x_shape[1] // group)
        kind = OpKind.FC if self.meta(index).get("kind") == OpKind.FC.value else OpKind.CONV
        self.add_layer(index, kind, act.producers, dims, x=x, w=w)

    def pool(self, index: int) -> None:
        """MaxPool / AveragePool / LpPool -> POOL."""
        node = self.graph.node[index]
        act = self.act(index, node.input[0])
        x_shape = self.shape(index, node.input[0])
        y_shape = self.shape(index, node.output[0])
        dims = self.window_of(index, act, x_shape, y_shape, _attrs(node)["kernel_shape"])
        self.add_pool(index, act, x_shape, dims)

    def global_pool(self, index: int) -> None:
        """GlobalAveragePool / GlobalMaxPool / GlobalLpPool -> POOL over the whole map."""
        node = self.graph.node[index]
        act = self.act(index, node.input[0])
        x_shape = self.shape(index, node.input[0])
        self.add_global_pool(index, act, x_shape)

    def reduce(self, index: int) -> None:
        """ReduceMean / ReduceMax over the spatial axes of an ``N x C x H x W`` map -> global POOL."""
        node = self.graph.node[index]
        act = self.act(index, node.input[0])
        x_shape = self.shape(index, node.input[0])
        attrs = _attrs(node)
        if "axes" in attrs:
            axes = list(attrs["axes"])
        elif len(node.input) > 1 and node.input[1]:
            axes = [int(a) for a in self.value(index, node.input[1]).ravel()]
        else:
            axes = list(range(len(x_shape)))
        if len(x_shape) != 4 or sorted(a % 4 for a in axes) != [2, 3]:
            raise self.error(
                index,
                f"reduces axes {axes} of a {len(x_shape)}-D tensor; only the spatial axes (2, 3) of an "
                "N x C x H x W map are supported (as global pooling)",
            )
        self.add_global_pool(index, act, x_shape)

    def add_global_pool(self, index: int, act: _Act, x_shape: tuple[int, ...]) -> None:
        if len(x_shape) < 3:
            raise self.error(index, f"global pooling needs a spatial input, got shape {x_shape}")
        y_shape = (*x_shape[:2], *([1] * (len(x_shape) - 2)))
        kernel = x_shape[2:]
        ones = [1] * len(kernel)
        dims = self.window(index, act, x_shape, y_shape, kernel=kernel, strides=ones, dilations=ones, pads=())
        self.add_pool(index, act, x_shape, dims)

    def add_pool(self, index: int, act: _Act, x_shape: tuple[int, ...], dims: dict[str, Any]) -> None:
        dims.update(B=x_shape[0], G=x_shape[1], K=1, C=1)
        self.add_layer(index, OpKind.POOL, act.producers, dims, x=self.graph.node[index].input[0])

    def dense(self, index: int) -> None:
        """Gemm / MatMul: FC (constant second operand) or MATMUL (two activations)."""
        node = self.graph.node[index]
        ai, bi = _DENSE_OPERANDS[node.op_type]
        a, b = node.input[ai], node.input[bi]
        if self.is_const(a):
            raise self.error(
                index,
                "its first operand is a constant (W x X); only X x W is supported",
                "transpose the product so that the activation comes first",
            )
        if self.is_const(b):
            self.fully_connected(index, a, b)
        else:
            self.matmul(index, a, b)

    def fully_connected(self, index: int, a: str, w: str) -> None:
        """FC on tokens; a CONV covering the map when the input is a flattened map."""
        node = self.graph.node[index]
        act = self.act(index, a)
        self.no_pads(index, act)
        a_shape, w_shape = self.shape(index, a), self.shape(index, w)
        y_shape = self.shape(index, node.output[0])
        trans_a = node.op_type == "Gemm" and bool(_attrs(node).get("transA", 0))
        if len(a_shape) < 1 or len(y_shape) < 1:
            raise self.error(index, f"needs a vector or matrix input, got shape {a_shape}")
        features = a_shape[0] if trans_a else a_shape[-1]
        rows = a_shape[1] if trans_a else math.prod(a_shape[:-1])
        groups = math.prod(w_shape[:-2]) if node.op_type != "Gemm" else 1
        if rows % (act.batch * groups):
            raise self.error(index, f"input {a_shape} does not split into batch {act.batch} x {groups} group(s)")
        tokens = rows // (act.batch * groups)
        dims: dict[str, Any] = {"B": act.batch, "G": groups, "K": y_shape[-1]}
        area = act.height * act.width
        if tokens == 1 and area > 1 and groups == 1 and features == act.channels * area:
            dims.update(C=act.channels, OY=1, OX=1, FY=act.height, FX=act.width)
            self.add_layer(index, OpKind.CONV, act.producers, dims, x=a, w=w)
            return
        oy, ox = _token_grid(tokens, act.height, act.width)
        dims.update(C=features, OY=oy, OX=ox)
        self.add_layer(index, OpKind.FC, act.producers, dims, x=a, w=w)

    def matmul(self, index: int, a: str, b: str) -> None:
        """Product of two activations -> MATMUL (``inputs[0]`` feeds I, ``inputs[1]`` W)."""
        node = self.graph.node[index]
        act_a, act_b = self.act(index, a), self.act(index, b)
        a_shape, b_shape = self.shape(index, a), self.shape(index, b)
        y_shape = self.shape(index, node.output[0])
        if len(a_shape) < 2 or len(b_shape) < 2:
            raise self.error(index, f"1-D operands {a_shape} x {b_shape} are not supported")
        if node.op_type == "Gemm":
            lead: tuple[int, ...] = ()
            attrs = _attrs(node)
            rows, inner = (a_shape[1], a_shape[0]) if attrs.get("transA", 0) else (a_shape[0], a_shape[1])
        else:
            if a_shape[:-2] != b_shape[:-2]:
                raise self.error(
                    index,
                    f"broadcast batched product {a_shape} x {b_shape} is not supported",
                    "give both operands the same leading (batch, head) dimensions",
                )
            lead, rows, inner = a_shape[:-2], a_shape[-2], a_shape[-1]
        total = math.prod(lead)
        if total % act_a.batch:
            raise self.error(index, f"leading dimensions {lead} do not split into batch {act_a.batch} x heads")
        oy, ox = _token_grid(rows, act_a.height, act_a.width)
        dims = {"B": act_a.batch, "G": total // act_a.batch, "C": inner, "K": y_shape[-1], "OY": oy, "OX": ox}
        inputs = (self.single(index, act_a, a), self.single(index, act_b, b))
        if inputs[0] == inputs[1]:
            raise self.error(
                index, f"both operands are the output of layer {inputs[0]!r}, which a layer cannot read twice"
            )
        self.add_layer(index, OpKind.MATMUL, inputs, dims, x=a, w=b)

    def eltwise(self, index: int) -> None:
        """Element-wise op of several different activations -> ELTWISE; of one -> pass-through."""
        node = self.graph.node[index]
        tensors = [t for t in node.input if t and not self.is_const(t)]
        operands: dict[tuple[str, ...], tuple[str, _Act]] = {}
        for tensor in tensors:
            act = self.act(index, tensor)
            operands.setdefault(act.key, (tensor, act))
        if len(operands) == 1 and not self.meta(index):
            self.pass_through(index)
            return
        numel = math.prod(self.shape(index, node.output[0]))
        full = [act for _, act in operands.values() if act.numel == numel]
        if not full:
            raise self.error(index, "no operand has the shape of the output (both operands are broadcast)")
        ref = full[0]
        if len(operands) == 1 and len(ref.producers) <= 1:
            self.no_pads(index, ref)
            inputs = ref.producers
        else:
            inputs = tuple(self.single(index, act, tensor) for tensor, act in operands.values())
        dims = {"B": ref.batch, "G": ref.channels, "K": 1, "C": 1, "OY": ref.height, "OX": ref.width}
        self.add_layer(index, OpKind.ELTWISE, inputs, dims, x=tensors[0])

    def concat(self, index: int) -> None:
        """Concat along channels -> no layer; the consumers read every producer."""
        node = self.graph.node[index]
        tensors = [t for t in node.input if t]
        if any(self.is_const(t) for t in tensors):
            raise self.error(index, "concatenates an activation with a constant tensor, which has no producer layer")
        acts = [self.act(index, t) for t in tensors]
        axis = int(_attrs(node).get("axis", 1))
        producers: list[str] = []
        for tensor, act in zip(tensors, acts, strict=True):
            shape = self.shape(index, tensor)
            if (
                axis % len(shape) not in (1, len(shape) - 1)
                or shape[axis] != act.channels
                or math.prod(shape) != act.numel
            ):
                raise self.error(
                    index,
                    f"concatenates along axis {axis} of {shape}, which is not the channel axis",
                    "only channel concatenation is supported",
                )
            self.no_pads(index, act)
            producers.extend(act.producers or (self.single(index, act, tensor),))
        ref = acts[0]
        out = _Act(
            tuple(producers), ref.batch, sum(a.channels for a in acts), ref.height, ref.width, self.labels[index]
        )
        self.acts[node.output[0]] = out

    def pad(self, index: int) -> None:
        """Pad -> pending padding of the next convolution or pooling."""
        node = self.graph.node[index]
        act = self.act(index, node.input[0])
        x_shape = self.shape(index, node.input[0])
        rank = len(x_shape)
        attrs = _attrs(node)
        declared = attrs.get("pads", attrs.get("paddings"))
        if declared is not None:
            values = [int(v) for v in declared]
        else:
            values = [int(v) for v in self.value(index, node.input[1]).ravel()]
        axes = list(range(rank))
        if len(node.input) > 3 and node.input[3]:
            axes = [int(a) % rank for a in self.value(index, node.input[3]).ravel()]
        per_axis = dict.fromkeys(range(rank), (0, 0))
        for i, axis in enumerate(axes):
            per_axis[axis] = (values[i], values[i + len(axes)])
        if any(b < 0 or e < 0 for b, e in per_axis.values()) or rank not in (3, 4):
            raise self.error(index, f"pads {values} of a {rank}-D tensor: only non-negative spatial padding is folded")
        if per_axis[0] != (0, 0) or per_axis[1] != (0, 0):
            raise self.error(index, f"pads {values} pad the batch or channel axis; only spatial padding is supported")
        (top, bottom), (left, right) = (per_axis[2], per_axis[3]) if rank == 4 else ((0, 0), per_axis[2])
        extra = (top, left, bottom, right)
        pads = tuple(p + q for p, q in zip(act.pads, extra, strict=True))
        self.acts[node.output[0]] = replace(act, pads=(pads[0], pads[1], pads[2], pads[3]))

    def pass_through(self, index: int) -> None:
        """Shape-preserving op: every output is an alias of the first activation input."""
        node = self.graph.node[index]
        _, act = self.first_act(index)
        out = node.output[0]
        if math.prod(self.shape(index, out)) != act.numel:
            raise self.error(
                index,
                f"changes the number of elements ({act.numel} -> {math.prod(self.shape(index, out))}); "
                "only shape-preserving operators can be passed through",
            )
        for tensor in node.output:
            if tensor:
                self.acts[tensor] = act


_Handler = Callable[[_Importer, int], None]

_HANDLERS: dict[str, _Handler] = {
    **dict.fromkeys(_CONV_OPERANDS, _Importer.conv),
    **dict.fromkeys(_DENSE_OPERANDS, _Importer.dense),
    **dict.fromkeys(("MaxPool", "AveragePool", "LpPool"), _Importer.pool),
    **dict.fromkeys(("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"), _Importer.global_pool),
    **dict.fromkeys(("ReduceMean", "ReduceMax"), _Importer.reduce),
    **dict.fromkeys(("Add", "Sub", "Mul", "Div", "Sum", "Mean", "Max", "Min", "Pow"), _Importer.eltwise),
    **dict.fromkeys(_PASS_THROUGH, _Importer.pass_through),
    "Concat": _Importer.concat,
    "Pad": _Importer.pad,
}
"""Handler of every supported op type (default ONNX domain)."""


def _handler(node: onnx.NodeProto) -> _Handler | None:
    if node.domain not in ("", "ai.onnx"):
        return None
    return _HANDLERS.get(node.op_type)


def _read_model(path: str | Path) -> onnx.ModelProto:
    """Parse an ONNX file (without external data); any failure is an :class:`InputError`."""
    where = str(path)
    if not Path(path).is_file():
        raise InputError("ONNX file not found", where, "check the path")
    try:
        model = onnx.load(where, load_external_data=False)
    except Exception as exc:  # protobuf / json / text parsers raise unrelated types on garbage
        raise InputError(
            f"cannot read the file as an ONNX model ({type(exc).__name__}: {exc})",
            where,
            "give a model saved with onnx.save or exported by a framework",
        ) from None
    if not model.HasField("graph") or not model.graph.node:
        raise InputError("not an ONNX model: the file holds no graph", where, "give a .onnx model file")
    return model


def _check_bits(name: str, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InputError(f"{name} must be a positive integer or None, got {value!r}", name)


def load_onnx(
    path: str | Path,
    *,
    name: str | None = None,
    batch: int | None = None,
    bits: int | None = None,
    psum_bits: int | None = None,
) -> Workload:
    """Read an ONNX model as a :class:`Workload`.

    Parameters
    ----------
    path
        The ``.onnx`` file.
    name
        Workload name; default: the graph name, else the file name without suffix.
    batch
        Batch size; default: the model's (a symbolic batch becomes 1).
    bits
        Precision of every activation and weight; default: from the tensor element
        types (see the module docstring).
    psum_bits
        Precision of partial sums; default ``max(16, input_bits, weight_bits)``.

    Returns
    -------
    Workload
        One layer per convolution, dense product, pooling and element-wise op.

    Raises
    ------
    InputError
        The file is missing or not an ONNX model, holds unsupported operators (all
        listed in one error), or a node cannot be represented as a layer.
    """
    where = str(path)
    _check_bits("bits", bits)
    _check_bits("psum_bits", psum_bits)
    _check_bits("batch", batch)
    model = _read_model(path)
    version = {p.key: p.value for p in model.metadata_props}.get(FORMAT_PROP, FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise InputError(
            f"written by accelsched format {version!r}, this version reads format {FORMAT_VERSION!r}",
            where,
            "upgrade accelsched",
        )
    importer = _Importer(model, where, bits=bits, psum_bits=psum_bits, batch=batch)
    importer.fold()
    importer.infer_shapes()
    layers = importer.convert()
    try:
        workload = Workload(name or model.graph.name or Path(path).stem, tuple(layers))
    except ValueError as exc:
        raise InputError(
            f"the graph cannot be represented as a workload: {exc}",
            where,
            "simplify the model (onnxsim) or report the layout as a bug",
        ) from None
    if batch is not None and workload.batch != batch:
        workload = workload.with_batch(batch)
    return workload


# ===================================================================== export
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
        ext_y = _window_extent(layer.FY, layer.dilation_y)
        ext_x = _window_extent(layer.FX, layer.dilation_x)
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
        grid = [layer.OY, layer.OX] if _token_grid(rows, src_i.OY, src_i.OX) != (layer.OY, layer.OX) else None
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
    :func:`load_onnx` reads it back to a workload equal to ``workload``. Weights are
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
