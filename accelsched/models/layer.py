"""One DNN layer as a loop nest: the unit every cost model and scheduler works on.

Every operator is expressed with the seven-loop convolution nest used by
ZigZag, DeFiNES, Cocco and SET::

    for b in B, g in G, k in K, c in C, oy in OY, ox in OX, fy in FY, fx in FX:
        O[b, g, k, oy, ox] += I[b, g, c, oy*SY + fy*DY - pad_top, ox*SX + fx*DX - pad_left]
                              * W[g, k, c, fy, fx]

``K`` and ``C`` count channels *per group*, so the layer has ``G*K`` output and
``G*C`` input channels. The other operators are special cases:

* fully connected / Gemm: a 1x1 convolution (``FY = FX = 1``); a token sequence
  of length ``S`` sits in ``OX`` (``OY = 1``);
* matmul between two activations (attention scores and context): a 1x1 convolution
  whose ``W`` operand is produced by another layer (``inputs[1]``);
* pooling: a weightless depthwise layer (``K = C = 1``, ``G`` = channels);
* element-wise add / mul / sum: a weightless depthwise 1x1 layer with one input
  operand per producer.
"""

from __future__ import annotations

import enum
import math
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from typing import Any

__all__ = ["LOOP_DIMS", "Layer", "OpKind"]

LOOP_DIMS: tuple[str, ...] = ("B", "G", "K", "C", "OY", "OX", "FY", "FX")
"""Names of the loop dimensions of a layer, in the order used throughout."""


class OpKind(enum.Enum):
    """Operator family of a layer."""

    CONV = "conv"
    """Convolution, grouped or depthwise included (weights are parameters)."""
    FC = "fc"
    """Fully connected / Gemm / MatMul with a constant matrix: a 1x1 convolution."""
    MATMUL = "matmul"
    """Product of two activations; ``inputs[0]`` feeds I, ``inputs[1]`` feeds W."""
    POOL = "pool"
    """Max or average pooling: weightless depthwise."""
    ELTWISE = "eltwise"
    """Element-wise add / mul / sum of one or more equally shaped activations."""

    @property
    def has_parameters(self) -> bool:
        """Whether the W operand is a stored parameter tensor (read from DRAM)."""
        return self in (OpKind.CONV, OpKind.FC)

    @property
    def has_w_operand(self) -> bool:
        """Whether the layer has a W operand at all (parameter or activation)."""
        return self in (OpKind.CONV, OpKind.FC, OpKind.MATMUL)


def _check_positive_int(layer: str, name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"layer {layer!r}: field {name} must be a positive integer, got {value!r}")


def _bytes(elements: int, bits: int) -> int:
    """Bytes needed to store ``elements`` values of ``bits`` bits (rounded up)."""
    return (elements * bits + 7) // 8


@dataclass(frozen=True)
class Layer:
    """A layer of a DNN workload, immutable and validated at construction.

    Parameters
    ----------
    name
        Unique name within its workload.
    kind
        Operator family, see :class:`OpKind`.
    K, C, G, OY, OX, FY, FX, B
        Loop sizes (see the module docstring). ``K``/``C`` are per group.
    stride_y, stride_x, dilation_y, dilation_x
        Convolution strides and dilations.
    padding
        Zero padding ``(top, left, bottom, right)`` in input pixels, the ONNX order.
    input_bits, weight_bits, output_bits, psum_bits
        Precisions. ``output_bits`` is the stored final output; ``psum_bits`` the
        precision of partial sums while accumulation is incomplete.
    inputs
        Names of the producer layers in operand order; empty means the layer reads
        the network input. Several producers of a convolution or pooling layer are
        concatenated along channels; an element-wise layer has one operand per
        producer; a matmul has exactly two (I then W).
    """

    name: str
    kind: OpKind
    K: int
    C: int
    OY: int
    OX: int
    FY: int = 1
    FX: int = 1
    G: int = 1
    B: int = 1
    stride_y: int = 1
    stride_x: int = 1
    dilation_y: int = 1
    dilation_x: int = 1
    padding: tuple[int, int, int, int] = (0, 0, 0, 0)
    input_bits: int = 8
    weight_bits: int = 8
    output_bits: int = 8
    psum_bits: int = 16
    inputs: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"layer name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.kind, OpKind):
            try:
                object.__setattr__(self, "kind", OpKind(self.kind))
            except ValueError:
                kinds = ", ".join(k.value for k in OpKind)
                raise ValueError(f"layer {self.name!r}: field kind must be one of {kinds}, got {self.kind!r}") from None
        object.__setattr__(self, "padding", tuple(self.padding))
        object.__setattr__(self, "inputs", tuple(self.inputs))
        for dim in LOOP_DIMS:
            _check_positive_int(self.name, dim, getattr(self, dim))
        for name in ("stride_y", "stride_x", "dilation_y", "dilation_x"):
            _check_positive_int(self.name, name, getattr(self, name))
        for name in ("input_bits", "output_bits", "psum_bits"):
            _check_positive_int(self.name, name, getattr(self, name))
        if self.kind.has_w_operand:
            _check_positive_int(self.name, "weight_bits", self.weight_bits)
        self._check_padding()
        self._check_kind_rules()
        if any(not isinstance(p, str) or not p for p in self.inputs):
            raise ValueError(f"layer {self.name!r}: field inputs must hold layer names, got {self.inputs!r}")
        if len(set(self.inputs)) != len(self.inputs):
            raise ValueError(f"layer {self.name!r}: field inputs names a producer twice: {self.inputs!r}")
        if self.name in self.inputs:
            raise ValueError(f"layer {self.name!r}: a layer cannot be its own input")

    def _check_padding(self) -> None:
        if len(self.padding) != 4 or any(isinstance(p, bool) or not isinstance(p, int) or p < 0 for p in self.padding):
            raise ValueError(
                f"layer {self.name!r}: field padding must be 4 non-negative integers "
                f"(top, left, bottom, right), got {self.padding!r}"
            )
        top, left, bottom, right = self.padding
        ext_y = (self.FY - 1) * self.dilation_y + 1
        ext_x = (self.FX - 1) * self.dilation_x + 1
        if top >= ext_y or bottom >= ext_y or left >= ext_x or right >= ext_x:
            raise ValueError(
                f"layer {self.name!r}: padding {self.padding!r} must be smaller than the "
                f"filter extent ({ext_y}x{ext_x}) on each side"
            )
        if self.IY < 1 or self.IX < 1:
            raise ValueError(f"layer {self.name!r}: padding {self.padding!r} leaves no input pixel")

    def _check_kind_rules(self) -> None:
        kind, name = self.kind, self.name
        if kind in (OpKind.POOL, OpKind.ELTWISE) and (self.K != 1 or self.C != 1):
            raise ValueError(
                f"layer {name!r}: a {kind.value} layer is depthwise: K and C must be 1 and "
                f"the channels go in G, got K={self.K}, C={self.C}"
            )
        if kind in (OpKind.FC, OpKind.MATMUL, OpKind.ELTWISE) and (self.FY, self.FX) != (1, 1):
            raise ValueError(f"layer {name!r}: a {kind.value} layer has a 1x1 window, got FY={self.FY}, FX={self.FX}")
        if kind is OpKind.ELTWISE and (self.stride_y, self.stride_x) != (1, 1):
            raise ValueError(f"layer {name!r}: an eltwise layer has stride 1")
        if kind is OpKind.MATMUL and len(self.inputs) != 2:
            raise ValueError(
                f"layer {name!r}: a matmul layer has exactly two producers (I then W), got inputs={self.inputs!r}"
            )

    # ------------------------------------------------------------------ shape
    @property
    def IY(self) -> int:
        """Input rows read by the layer (after removing padding)."""
        top, _, bottom, _ = self.padding
        return (self.OY - 1) * self.stride_y + (self.FY - 1) * self.dilation_y + 1 - top - bottom

    @property
    def IX(self) -> int:
        """Input columns read by the layer (after removing padding)."""
        _, left, _, right = self.padding
        return (self.OX - 1) * self.stride_x + (self.FX - 1) * self.dilation_x + 1 - left - right

    @property
    def in_channels(self) -> int:
        """Input channels of the I operand, all groups."""
        return self.G * self.C

    @property
    def out_channels(self) -> int:
        """Output channels, all groups."""
        return self.G * self.K

    @property
    def n_operands(self) -> int:
        """Activation operands read as I (more than one only for element-wise)."""
        return max(1, len(self.inputs)) if self.kind is OpKind.ELTWISE else 1

    @property
    def loops(self) -> dict[str, int]:
        """Loop sizes by dimension name."""
        return {d: getattr(self, d) for d in LOOP_DIMS}

    # ------------------------------------------------------------- quantities
    @cached_property
    def macs(self) -> int:
        """Multiply-accumulates (pooling: window ops; element-wise: one op per output per extra operand)."""
        if self.kind is OpKind.ELTWISE:
            return self.B * self.G * self.OY * self.OX * max(1, self.n_operands - 1)
        return self.B * self.G * self.K * self.C * self.OY * self.OX * self.FY * self.FX

    @cached_property
    def w_elements(self) -> int:
        """Elements of the W operand (parameters, or a produced activation for matmul)."""
        if not self.kind.has_w_operand:
            return 0
        per_sample = self.G * self.K * self.C * self.FY * self.FX
        return per_sample * self.B if self.kind is OpKind.MATMUL else per_sample

    @cached_property
    def weight_bytes(self) -> int:
        """Bytes of stored parameters (0 for matmul, pooling and element-wise)."""
        return _bytes(self.w_elements, self.weight_bits) if self.kind.has_parameters else 0

    @cached_property
    def w_operand_bytes(self) -> int:
        """Bytes of the W operand, parameter or activation."""
        return _bytes(self.w_elements, self.weight_bits)

    @cached_property
    def input_elements(self) -> int:
        """Elements of one I operand (unpadded input feature map)."""
        return self.B * self.G * self.C * self.IY * self.IX

    @cached_property
    def input_bytes(self) -> int:
        """Bytes of activations read as I: every operand of an element-wise layer."""
        return _bytes(self.input_elements, self.input_bits) * self.n_operands

    @cached_property
    def activation_input_bytes(self) -> int:
        """Bytes of every activation the layer reads (I, plus W for matmul)."""
        extra = self.w_operand_bytes if self.kind is OpKind.MATMUL else 0
        return self.input_bytes + extra

    @cached_property
    def output_elements(self) -> int:
        """Elements of the output feature map."""
        return self.B * self.G * self.K * self.OY * self.OX

    @cached_property
    def output_bytes(self) -> int:
        """Bytes of the final output feature map."""
        return _bytes(self.output_elements, self.output_bits)

    @property
    def arithmetic_intensity(self) -> float:
        """MACs per byte of compulsory traffic (inputs + weights + outputs)."""
        total = self.activation_input_bytes + self.weight_bytes + self.output_bytes
        return self.macs / total

    def shape_key(self) -> tuple[Any, ...]:
        """Everything the cost of the layer depends on, without its name or producers.

        Two layers with the same key cost the same on any core; cost caches use it.
        """
        return (
            self.kind,
            self.B, self.G, self.K, self.C, self.OY, self.OX, self.FY, self.FX,
            self.stride_y, self.stride_x, self.dilation_y, self.dilation_x, self.padding,
            self.input_bits, self.weight_bits, self.output_bits, self.psum_bits,
            self.n_operands,
        )  # fmt: skip

    # ---------------------------------------------------------- serialization
    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (JSON-compatible); inverse of :meth:`from_dict`."""
        data = asdict(self)
        data["kind"] = self.kind.value
        data["padding"] = list(self.padding)
        data["inputs"] = list(self.inputs)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Layer:
        """Build a layer from :meth:`to_dict` output, rejecting unknown keys."""
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(
                f"layer {data.get('name', '?')!r}: unknown field(s) {', '.join(unknown)}; "
                f"known fields are {', '.join(sorted(known))}"
            )
        values = dict(data)
        if "padding" in values:
            values["padding"] = tuple(values["padding"])
        if "inputs" in values:
            values["inputs"] = tuple(values["inputs"])
        try:
            return cls(**values)
        except TypeError as exc:  # a missing required field
            raise ValueError(f"layer {data.get('name', '?')!r}: {exc}") from None

    def replace(self, **changes: Any) -> Layer:
        """Return a copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def __str__(self) -> str:
        win = f" {self.FY}x{self.FX}/s{self.stride_y}" if self.FY * self.FX > 1 or self.stride_y > 1 else ""
        grp = f" G={self.G}" if self.G > 1 else ""
        return (
            f"{self.name} [{self.kind.value}{win}{grp}] {self.in_channels}x{self.IY}x{self.IX} -> "
            f"{self.out_channels}x{self.OY}x{self.OX} ({self.macs / 1e6:.2f} MMAC)"
        )


def ceil_div(a: int, b: int) -> int:
    """Integer ceiling of ``a / b`` for positive ``b``."""
    return -(-a // b)


def effective_padding(size_in: int, size_out: int, extent: int, stride: int, pad_begin: int) -> int:
    """Trailing padding actually read by a window of ``extent`` sliding with ``stride``.

    Declared end padding that no output pixel reaches is dropped, and the implicit
    end padding of ceil-mode pooling is added, so that ``Layer.IY``/``IX`` equal the
    rows/columns really read from the producer.
    """
    return max(0, (size_out - 1) * stride + extent - pad_begin - size_in)


def conv_output_size(size_in: int, kernel: int, stride: int, pad_begin: int, pad_end: int, dilation: int = 1) -> int:
    """Output extent of a convolution (floor mode), as in ONNX and PyTorch."""
    return math.floor((size_in + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride) + 1
