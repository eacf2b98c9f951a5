"""ONNX import: :func:`load_onnx` reads a model as a :class:`~accelsched.models.workload.Workload`.

The model is read without its external data and its weight values are dropped
(:func:`~accelsched.models.onnx_strip.strip_weights`: only the shapes and element
types of the initializers are kept, so that no step copies the weight bytes), every
tensor shape is inferred with ``onnx.shape_inference`` (:mod:`accelsched.models.onnx_graph`)
and the nodes are visited in graph order. The rules:

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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import onnx

from accelsched.errors import InputError
from accelsched.models.layer import Layer, OpKind, effective_padding
from accelsched.models.onnx_format import FORMAT_PROP, FORMAT_VERSION, token_grid, window_extent
from accelsched.models.onnx_graph import Act, GraphReader, Pads, node_attrs, op_label, read_model
from accelsched.models.onnx_strip import strip_weights
from accelsched.models.workload import Workload

__all__ = ["load_onnx"]

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


def _auto_pad_begin(mode: str, size: int, extent: int, stride: int) -> int:
    """Leading padding of ONNX ``auto_pad`` modes ``SAME_UPPER``/``SAME_LOWER``/``VALID``.

    (The trailing padding follows from the output size, see :func:`effective_padding`.)
    """
    if mode == "VALID":
        return 0
    out = -(-size // stride)
    total = max(0, (out - 1) * stride + extent - size)
    return total // 2 if mode == "SAME_UPPER" else total - total // 2


def window_dims(
    act_pads: Pads,
    x_shape: tuple[int, ...],
    y_shape: tuple[int, ...],
    *,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int],
    auto_pad: str = "NOTSET",
) -> dict[str, Any]:
    """Loop sizes, strides, dilations and effective padding of a 1-D or 2-D sliding window.

    Parameters
    ----------
    act_pads
        Padding of ``Pad`` nodes before the window, ``(top, left, bottom, right)``.
    x_shape, y_shape
        Input and output shapes, ``N x C x [H x] W``.
    kernel, strides, dilations, pads, auto_pad
        The node's window attributes (ONNX meaning).

    Raises
    ------
    ValueError
        A window of another dimensionality than 1-D or 2-D.
    """
    spatial = len(x_shape) - 2
    if spatial not in (1, 2) or len(kernel) != spatial:
        raise ValueError(f"only 1-D and 2-D windows are supported, got {spatial}-D input {x_shape}")
    if spatial == 1:
        x_shape, y_shape = (*x_shape[:2], 1, x_shape[2]), (*y_shape[:2], 1, y_shape[2])
        kernel, strides, dilations = (1, *kernel), (1, *strides), (1, *dilations)
        pads = (0, pads[0], 0, pads[1]) if pads else ()
    ext_y = window_extent(kernel[0], dilations[0])
    ext_x = window_extent(kernel[1], dilations[1])
    if auto_pad in ("SAME_UPPER", "SAME_LOWER", "VALID"):
        begin = [_auto_pad_begin(auto_pad, x_shape[2 + a], ext, strides[a]) for a, ext in enumerate((ext_y, ext_x))]
    else:
        begin = [int(pads[0]), int(pads[1])] if pads else [0, 0]
    p_top, p_left, p_bottom, p_right = act_pads
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


class _Importer(GraphReader):
    """Converts one ONNX graph into layers; see the module docstring for the rules."""

    def __init__(
        self, model: onnx.ModelProto, where: str, *, bits: int | None, psum_bits: int | None, batch: int | None
    ) -> None:
        super().__init__(model, where, batch=batch)
        self.bits = bits
        self.psum_bits = psum_bits
        self.reserved = {n.name for n in self.graph.node if n.name}
        self.used: set[str] = set()
        self.identities: dict[tuple[str, ...], str] = {}
        self.layers: list[Layer] = []

    def reject_unsupported(self) -> None:
        """Raise one error listing every operator (outside the skipped nodes) without a handler."""
        unsupported: dict[str, list[str]] = {}
        for index, node in enumerate(self.graph.node):
            if index not in self.skip and _handler(node) is None:
                unsupported.setdefault(op_label(node), []).append(repr(self.labels[index]))
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
        out = Act((name,), layer.B, layer.out_channels, layer.OY, layer.OX, origin=name)
        for tensor in node.output:
            if tensor:
                self.acts[tensor] = out

    def single(self, index: int, act: Act, tensor: str) -> str:
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

    def no_pads(self, index: int, act: Act) -> None:
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
        act: Act,
        x_shape: tuple[int, ...],
        y_shape: tuple[int, ...],
        *,
        kernel: Sequence[int],
        strides: Sequence[int],
        dilations: Sequence[int],
        pads: Sequence[int],
        auto_pad: str = "NOTSET",
    ) -> dict[str, Any]:
        """:func:`window_dims` of node ``index`` reading ``act``."""
        try:
            return window_dims(
                act.pads, x_shape, y_shape, kernel=kernel, strides=strides, dilations=dilations, pads=pads,
                auto_pad=auto_pad,
            )  # fmt: skip
        except ValueError as exc:
            raise self.error(index, str(exc)) from None

    def window_of(
        self, index: int, act: Act, x_shape: tuple[int, ...], y_shape: tuple[int, ...], kernel: Sequence[int]
    ) -> dict[str, Any]:
        """:meth:`window` with the node's ``strides``/``dilations``/``pads``/``auto_pad`` attributes."""
        attrs = node_attrs(self.graph.node[index])
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
        group = int(node_attrs(node).get("group", 1))
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
        dims = self.window_of(index, act, x_shape, y_shape, node_attrs(node)["kernel_shape"])
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
        attrs = node_attrs(node)
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

    def add_global_pool(self, index: int, act: Act, x_shape: tuple[int, ...]) -> None:
        if len(x_shape) < 3:
            raise self.error(index, f"global pooling needs a spatial input, got shape {x_shape}")
        y_shape = (*x_shape[:2], *([1] * (len(x_shape) - 2)))
        kernel = x_shape[2:]
        ones = [1] * len(kernel)
        dims = self.window(index, act, x_shape, y_shape, kernel=kernel, strides=ones, dilations=ones, pads=())
        self.add_pool(index, act, x_shape, dims)

    def add_pool(self, index: int, act: Act, x_shape: tuple[int, ...], dims: dict[str, Any]) -> None:
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
        trans_a = node.op_type == "Gemm" and bool(node_attrs(node).get("transA", 0))
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
        oy, ox = token_grid(tokens, act.height, act.width)
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
            attrs = node_attrs(node)
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
        oy, ox = token_grid(rows, act_a.height, act_a.width)
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
        operands: dict[tuple[str, ...], tuple[str, Act]] = {}
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
        axis = int(node_attrs(node).get("axis", 1))
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
        out = Act(tuple(producers), ref.batch, sum(a.channels for a in acts), ref.height, ref.width, self.labels[index])
        self.acts[node.output[0]] = out

    def pad(self, index: int) -> None:
        """Pad -> pending padding of the next convolution or pooling."""
        node = self.graph.node[index]
        act = self.act(index, node.input[0])
        x_shape = self.shape(index, node.input[0])
        rank = len(x_shape)
        attrs = node_attrs(node)
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
    model = read_model(path)
    strip_weights(model)  # the weight bytes are never read: shape inference must not copy them
    version = {p.key: p.value for p in model.metadata_props}.get(FORMAT_PROP, FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise InputError(
            f"written by accelsched format {version!r}, this version reads format {FORMAT_VERSION!r}",
            where,
            "upgrade accelsched",
        )
    importer = _Importer(model, where, bits=bits, psum_bits=psum_bits, batch=batch)
    importer.fold()
    importer.reject_unsupported()
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
