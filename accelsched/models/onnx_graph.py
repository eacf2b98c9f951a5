"""Reading an ONNX graph for the import: constants, shapes, element types, activations.

A tensor computed only from initializers and constants (and ``Shape`` / ``Size`` of
any tensor, since shapes are static) is a constant, whatever operator computes it;
nodes whose outputs feed nothing but shape computations (or nothing on the way to a
graph output) are skipped. :class:`Act` is an activation seen as the layers that
make it. The rules that turn nodes into layers are in :mod:`accelsched.models.onnx_import`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from accelsched.errors import InputError
from accelsched.models.onnx_format import DEFAULT_BITS, ELEMENT_BITS, META_KEY, META_KEYS

__all__ = ["SHAPE_ONLY", "Act", "GraphReader", "Pads", "node_attrs", "op_label", "read_model"]

SHAPE_ONLY = frozenset({"Shape", "Size"})
"""Operators whose output depends only on the (static) shape of their input."""

Pads = tuple[int, int, int, int]
"""``(top, left, bottom, right)`` padding."""


def node_attrs(node: onnx.NodeProto) -> dict[str, Any]:
    """Node attributes as Python values (strings decoded)."""
    out: dict[str, Any] = {}
    for attr in node.attribute:
        value = helper.get_attribute_value(attr)
        out[attr.name] = value.decode() if isinstance(value, bytes) else value
    return out


def _has_subgraph(node: onnx.NodeProto) -> bool:
    return any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute)


def op_label(node: onnx.NodeProto) -> str:
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"



@dataclass(frozen=True)
class Act:
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
    pads: Pads = (0, 0, 0, 0)

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

class GraphReader:
    """One ONNX graph: its constants, static shapes, element types and activations.

    The reading half of the import (see :mod:`accelsched.models.onnx_import`): :meth:`fold`
    finds what is constant or feeds only shapes, :meth:`infer_shapes` fixes a symbolic
    batch and records every shape, and the accessors read tensors by the node that
    reads them (so that an error names that node).

    Parameters
    ----------
    model
        The parsed model (changed in place: a symbolic batch is fixed).
    where
        The file, for error messages.
    batch
        The batch a symbolic first dimension of a graph input is given (None: 1).
    """

    def __init__(self, model: onnx.ModelProto, where: str, *, batch: int | None) -> None:
        self.model = model
        self.graph = model.graph
        self.where = where
        self.batch = batch
        self.opsets = {o.domain or "": o.version for o in model.opset_import}
        self.initializers = {t.name: t for t in self.graph.initializer}
        self.producer: dict[str, onnx.NodeProto] = {}
        for node in self.graph.node:
            for out in node.output:
                if out:
                    self.producer[out] = node
        self.labels = [n.name or f"{n.op_type}_{i}" for i, n in enumerate(self.graph.node)]
        self.const: set[str] = set()
        self.skip: set[int] = set()
        self.shapes: dict[str, tuple[int | None, ...] | None] = {}
        self.types: dict[str, int] = {}
        self.values: dict[str, np.ndarray] = {}
        self.acts: dict[str, Act] = {}

    # ------------------------------------------------------------- errors
    def error(self, index: int, what: str, fix: str = "") -> InputError:
        """An :class:`InputError` naming node ``index``."""
        node = self.graph.node[index]
        return InputError(f"{node.op_type} node {self.labels[index]!r}: {what}", self.where, fix)

    # ------------------------------------------------------ pass 1: folding
    def fold(self) -> None:
        """Find the constant and the shape-only nodes (in :attr:`skip`, with the dead ones)."""
        self.const = set(self.initializers)
        for index, node in enumerate(self.graph.node):
            inputs = [i for i in node.input if i]
            if not _has_subgraph(node) and (node.op_type in SHAPE_ONLY or all(i in self.const for i in inputs)):
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

    def act(self, index: int, tensor: str) -> Act:
        """The activation ``tensor`` read by node ``index``."""
        act = self.acts.get(tensor)
        if act is not None:
            return act
        if any(v.name == tensor for v in self.graph.input):
            batch, channels, height, width = _view(self.shape(index, tensor))
            act = Act((), batch, channels, height, width, origin=tensor)
            self.acts[tensor] = act
            return act
        raise self.error(
            index,
            f"input {tensor!r} is not computed before it is used",
            "sort the graph topologically (e.g. re-export or simplify the model)",
        )

    def first_act(self, index: int) -> tuple[str, Act]:
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
        if node.op_type in SHAPE_ONLY:
            shape = np.array(self.shape(index, node.input[0]), dtype=np.int64)
            if node.op_type == "Size":
                return np.array(math.prod(int(d) for d in shape), dtype=np.int64)
            attrs = node_attrs(node)
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

    def meta(self, index: int) -> dict[str, Any]:
        """What :func:`~accelsched.models.onnx_export.to_onnx` recorded in the node's ``doc_string``
        (empty for foreign files)."""
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
        if not isinstance(meta, dict) or not set(meta) <= META_KEYS:
            raise self.error(
                index,
                f"malformed accelsched metadata in doc_string: {doc!r}",
                f"remove the doc_string or use only the keys {', '.join(sorted(META_KEYS))}",
            )
        return meta


def read_model(path: str | Path) -> onnx.ModelProto:
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
