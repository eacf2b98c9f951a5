"""A small graph builder that tracks tensor shapes, used by the zoo and the importers.

Example
-------
>>> b = NetBuilder("tiny", channels=3, height=32, width=32)
>>> x = b.conv(b.input, 16, 3, pad="same")
>>> x = b.pool(x, 2, stride=2)
>>> y = b.fc(b.global_pool(x), 10)
>>> b.build().summary()
'tiny: 4 layers, 0.001 GMAC, 0.00 MB weights'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from accelsched.models.layer import Layer, OpKind, conv_output_size, effective_padding
from accelsched.models.workload import Workload

__all__ = ["NetBuilder", "Tensor"]

Pad = int | tuple[int, int] | tuple[int, int, int, int] | Literal["same", "valid"]


@dataclass(frozen=True)
class Tensor:
    """A feature map in a network under construction.

    ``producers`` are the layers whose outputs, concatenated along channels, form
    the tensor; an empty tuple is the network input.
    """

    producers: tuple[str, ...]
    channels: int
    height: int
    width: int


class NetBuilder:
    """Builds a :class:`Workload` layer by layer, computing output sizes.

    Parameters
    ----------
    name
        Network name.
    channels, height, width
        Shape of the network input (one sample).
    batch
        Batch size given to every layer.
    bits
        Precision of activations and weights.
    psum_bits
        Precision of partial sums.
    """

    def __init__(
        self,
        name: str,
        channels: int,
        height: int,
        width: int,
        *,
        batch: int = 1,
        bits: int = 8,
        psum_bits: int = 16,
    ) -> None:
        self.name = name
        self.batch = batch
        self.bits = bits
        self.psum_bits = psum_bits
        self.input = Tensor((), channels, height, width)
        self._layers: list[Layer] = []
        self._names: set[str] = set()
        self._counts: dict[str, int] = {}

    # ----------------------------------------------------------------- helpers
    def _fresh(self, prefix: str) -> str:
        """An unused name ``prefix<n>`` (not yet reserved)."""
        n = self._counts.get(prefix, 0) + 1
        while f"{prefix}{n}" in self._names:
            n += 1
        self._counts[prefix] = n
        return f"{prefix}{n}"

    def _name(self, name: str | None, prefix: str) -> str:
        """Reserve ``name``, or a fresh ``prefix<n>`` when it is None."""
        if name is None:
            name = self._fresh(prefix)
        if name in self._names:
            raise ValueError(f"network {self.name!r}: layer name {name!r} is used twice")
        self._names.add(name)
        return name

    def _add(self, layer: Layer, channels: int) -> Tensor:
        self._layers.append(layer)
        return Tensor((layer.name,), channels, layer.OY, layer.OX)

    def _make(
        self, name: str | None, prefix: str, kind: OpKind, inputs: tuple[str, ...], channels: int, **dims: Any
    ) -> Tensor:
        """Add a layer of ``kind`` with the builder's batch and precisions; its output has ``channels``."""
        layer = Layer(
            name=self._name(name, prefix),
            kind=kind,
            B=self.batch,
            input_bits=self.bits,
            weight_bits=self.bits,
            output_bits=self.bits,
            psum_bits=self.psum_bits,
            inputs=inputs,
            **dims,
        )
        return self._add(layer, channels)

    @staticmethod
    def _pads(pad: Pad, fy: int, fx: int, dy: int = 1, dx: int = 1) -> tuple[int, int, int, int]:
        if pad == "valid":
            return (0, 0, 0, 0)
        if pad == "same":
            ey, ex = (fy - 1) * dy, (fx - 1) * dx
            return (ey // 2, ex // 2, ey - ey // 2, ex - ex // 2)
        if isinstance(pad, int):
            return (pad, pad, pad, pad)
        if len(pad) == 2:
            return (pad[0], pad[1], pad[0], pad[1])
        if len(pad) == 4:
            return (pad[0], pad[1], pad[2], pad[3])
        raise ValueError(f"bad padding {pad!r}")

    def _window(
        self,
        x: Tensor,
        fy: int,
        fx: int,
        sy: int,
        sx: int,
        pad: Pad,
        dy: int = 1,
        dx: int = 1,
        ceil_mode: bool = False,
    ) -> tuple[int, int, tuple[int, int, int, int]]:
        """Output size and effective padding of a sliding window over ``x``."""
        top, left, bottom, right = self._pads(pad, fy, fx, dy, dx)
        if pad == "same" and (sy > 1 or sx > 1):
            oy, ox = math.ceil(x.height / sy), math.ceil(x.width / sx)
            need_y = max(0, (oy - 1) * sy + (fy - 1) * dy + 1 - x.height)
            need_x = max(0, (ox - 1) * sx + (fx - 1) * dx + 1 - x.width)
            top, left = need_y // 2, need_x // 2
            bottom, right = need_y - top, need_x - left
        else:
            oy = conv_output_size(x.height, fy, sy, top, bottom, dy)
            ox = conv_output_size(x.width, fx, sx, left, right, dx)
            if ceil_mode:
                oy_c = math.ceil((x.height + top + bottom - dy * (fy - 1) - 1) / sy) + 1
                ox_c = math.ceil((x.width + left + right - dx * (fx - 1) - 1) / sx) + 1
                # ONNX/PyTorch: the last window must start inside the input or left padding
                oy = oy_c - 1 if (oy_c - 1) * sy >= x.height + top else oy_c
                ox = ox_c - 1 if (ox_c - 1) * sx >= x.width + left else ox_c
        if oy < 1 or ox < 1:
            raise ValueError(f"network {self.name!r}: window {fy}x{fx} does not fit a {x.height}x{x.width} input")
        bottom = effective_padding(x.height, oy, (fy - 1) * dy + 1, sy, top)
        right = effective_padding(x.width, ox, (fx - 1) * dx + 1, sx, left)
        return oy, ox, (top, left, bottom, right)

    # ------------------------------------------------------------------ layers
    def conv(
        self,
        x: Tensor,
        out_channels: int,
        kernel: int | tuple[int, int],
        *,
        stride: int | tuple[int, int] = 1,
        pad: Pad = 0,
        groups: int = 1,
        dilation: int | tuple[int, int] = 1,
        name: str | None = None,
    ) -> Tensor:
        """Convolution (grouped when ``groups > 1``, depthwise when ``groups == channels``)."""
        fy, fx = (kernel, kernel) if isinstance(kernel, int) else kernel
        sy, sx = (stride, stride) if isinstance(stride, int) else stride
        dy, dx = (dilation, dilation) if isinstance(dilation, int) else dilation
        if x.channels % groups or out_channels % groups:
            raise ValueError(
                f"network {self.name!r}: {groups} groups do not divide {x.channels} -> {out_channels} channels"
            )
        oy, ox, pads = self._window(x, fy, fx, sy, sx, pad, dy, dx)
        return self._make(
            name,
            "conv",
            OpKind.CONV,
            x.producers,
            out_channels,
            K=out_channels // groups,
            C=x.channels // groups,
            G=groups,
            OY=oy,
            OX=ox,
            FY=fy,
            FX=fx,
            stride_y=sy,
            stride_x=sx,
            dilation_y=dy,
            dilation_x=dx,
            padding=pads,
        )

    def dwconv(self, x: Tensor, kernel: int, *, stride: int = 1, pad: Pad = "same", name: str | None = None) -> Tensor:
        """Depthwise convolution (one filter per channel)."""
        return self.conv(x, x.channels, kernel, stride=stride, pad=pad, groups=x.channels, name=name)

    def separable(
        self, x: Tensor, out_channels: int, kernel: int, *, stride: int = 1, name: str | None = None
    ) -> Tensor:
        """Depthwise-separable convolution: depthwise then pointwise."""
        base = name or self._fresh("sep")
        y = self.dwconv(x, kernel, stride=stride, name=f"{base}_dw")
        return self.conv(y, out_channels, 1, name=f"{base}_pw")

    def pool(
        self,
        x: Tensor,
        kernel: int | tuple[int, int],
        *,
        stride: int | tuple[int, int] | None = None,
        pad: Pad = 0,
        ceil_mode: bool = False,
        name: str | None = None,
    ) -> Tensor:
        """Max or average pooling (the cost model does not distinguish them)."""
        fy, fx = (kernel, kernel) if isinstance(kernel, int) else kernel
        if stride is None:
            stride = (fy, fx)
        sy, sx = (stride, stride) if isinstance(stride, int) else stride
        oy, ox, pads = self._window(x, fy, fx, sy, sx, pad, ceil_mode=ceil_mode)
        return self._make(
            name,
            "pool",
            OpKind.POOL,
            x.producers,
            x.channels,
            K=1,
            C=1,
            G=x.channels,
            OY=oy,
            OX=ox,
            FY=fy,
            FX=fx,
            stride_y=sy,
            stride_x=sx,
            padding=pads,
        )

    def global_pool(self, x: Tensor, *, name: str | None = None) -> Tensor:
        """Global average pooling to 1x1."""
        return self.pool(x, (x.height, x.width), stride=1, name=name or self._fresh("gap"))

    def fc(self, x: Tensor, out_features: int, *, name: str | None = None) -> Tensor:
        """Fully connected layer on a 1x1 map, or per token on a 1xS token map.

        A ``C x H x W`` input with ``H*W > 1`` that is not a token map (``H == 1``)
        is flattened first (as ``Flatten`` + ``Gemm`` do): the layer is then a
        convolution whose window covers the whole map.
        """
        if x.height == 1:
            return self._make(
                name,
                "fc",
                OpKind.FC,
                x.producers,
                out_features,
                K=out_features,
                C=x.channels,
                OY=1,
                OX=x.width,
            )
        return self.conv(x, out_features, (x.height, x.width), name=name or self._fresh("fc"))

    def add(self, *xs: Tensor, name: str | None = None) -> Tensor:
        """Element-wise sum of equally shaped tensors (each a single layer's output)."""
        return self._eltwise(xs, name, "add")

    def mul(self, *xs: Tensor, name: str | None = None) -> Tensor:
        """Element-wise product (e.g. squeeze-and-excitation scaling)."""
        return self._eltwise(xs, name, "mul")

    def _eltwise(self, xs: tuple[Tensor, ...], name: str | None, prefix: str) -> Tensor:
        ref = xs[0]
        producers: list[str] = []
        for x in xs:
            if len(x.producers) != 1:
                raise ValueError(
                    f"network {self.name!r}: an element-wise operand must be one layer's output, "
                    f"got a concatenation of {x.producers!r}"
                )
            producers.append(x.producers[0])
        layer = Layer(
            name=self._name(name, prefix),
            kind=OpKind.ELTWISE,
            K=1,
            C=1,
            G=ref.channels,
            OY=ref.height,
            OX=ref.width,
            B=self.batch,
            input_bits=self.bits,
            weight_bits=self.bits,
            output_bits=self.bits,
            psum_bits=self.psum_bits,
            inputs=tuple(producers),
        )
        return self._add(layer, ref.channels)

    def broadcast_mul(self, x: Tensor, gate: Tensor, *, name: str | None = None) -> Tensor:
        """Channel-wise scaling of ``x`` by a ``C x 1 x 1`` gate (squeeze-and-excitation).

        Modelled as an element-wise layer with the gate as a broadcast second
        operand. The layer's ``input_bytes`` counts both operands at full size, an
        upper bound on the traffic of the (tiny) gate; the MACs are exact.
        """
        if len(x.producers) != 1 or len(gate.producers) != 1:
            raise ValueError(f"network {self.name!r}: broadcast_mul needs single-layer operands")
        return self._make(
            name,
            "scale",
            OpKind.ELTWISE,
            (x.producers[0], gate.producers[0]),
            x.channels,
            K=1,
            C=1,
            G=x.channels,
            OY=x.height,
            OX=x.width,
        )

    def matmul(
        self, a: Tensor, b: Tensor, *, heads: int, rows: int, inner: int, cols: int, name: str | None = None
    ) -> Tensor:
        """Batched product of two activations, ``heads`` independent ``rows x inner @ inner x cols``.

        ``a`` supplies the I operand (``heads*inner`` channels over ``rows`` tokens),
        ``b`` the W operand (``heads*cols*inner`` elements). The output has
        ``heads*cols`` channels over ``rows`` tokens.
        """
        for t in (a, b):
            if len(t.producers) != 1:
                raise ValueError(f"network {self.name!r}: a matmul operand must be one layer's output")
        return self._make(
            name,
            "matmul",
            OpKind.MATMUL,
            (a.producers[0], b.producers[0]),
            heads * cols,
            K=cols,
            C=inner,
            G=heads,
            OY=1,
            OX=rows,
        )

    @staticmethod
    def concat(*xs: Tensor) -> Tensor:
        """Channel concatenation: no layer, the consumers read every producer."""
        ref = xs[0]
        for x in xs:
            if (x.height, x.width) != (ref.height, ref.width):
                raise ValueError(f"concat of {x.height}x{x.width} and {ref.height}x{ref.width} maps")
            if not x.producers:
                raise ValueError("the network input cannot be concatenated with a layer's output")
        producers = tuple(p for x in xs for p in x.producers)
        return Tensor(producers, sum(x.channels for x in xs), ref.height, ref.width)

    def build(self) -> Workload:
        """The finished, validated workload."""
        return Workload(self.name, tuple(self._layers))
