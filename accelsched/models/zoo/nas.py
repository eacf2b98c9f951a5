"""NASNet-A Mobile and PNASNet-5 Mobile, built from their published cells.

Both follow the TF-slim reference implementation (``nasnet.py``, ``pnasnet.py``,
``nasnet_utils.py``) at 224x224 without the auxiliary head:

* an ImageNet stem: a 3x3 / stride 2 VALID convolution with 32 filters, then two
  stride-2 stem cells (reduction cells for NASNet, the PNASNet cell for PNASNet)
  at 1/4 and 1/2 of the cell filters;
* every cell starts by squeezing its two inputs to ``F`` channels: the previous
  cell's output by a 1x1 convolution, the one before it by a 1x1 convolution, or
  by a "factorized reduction" when its resolution is twice as large;
* a cell has five blocks, each adding two operations applied to earlier hidden
  states; an operation is a separable convolution applied twice (ReLU-SepConv-BN
  x 2, the first one strided in a reduction), a 3x3 average or max pool (SAME
  padding, followed by a 1x1 convolution when its input does not have ``F``
  channels), or the identity (a strided 1x1 convolution in a reduction);
* the cell output concatenates the hidden states no block consumes;
* ReLU, global average pooling and the 1000-way classifier end the network.

NASNet-A Mobile ("4@1056") has 3 x 4 normal cells with F = 44, 88, 176 and two
reduction cells; PNASNet-5 Mobile has 9 cells with F = 54, 108, 216, the 4th and 7th
strided. Published multiply-adds: 564 M and 588 M (Zoph et al. 2018, Table 2; Liu
et al. 2018, Table 4).

Approximations: the factorized reduction (two 1x1 convolutions, each with half
the filters, on the input subsampled by 2 with a one-pixel offset between them,
then concatenated) is one 1x1 / stride 2 convolution with ``F`` filters: the same
MACs and weights, the same output, but it reads one pixel of each 2x2 block
instead of two. Drop-path and batch normalization are training-time or free.
"""

from __future__ import annotations

from dataclasses import dataclass

from accelsched.models.builder import NetBuilder, Tensor
from accelsched.models.workload import Workload
from accelsched.models.zoo.catalog import register
from accelsched.models.zoo.classifier import classifier

__all__ = ["NASNET_A_NORMAL", "NASNET_A_REDUCTION", "PNASNET_5", "CellSpec", "cell", "nasnet", "pnasnet"]


@dataclass(frozen=True)
class CellSpec:
    """A NAS cell in TF-slim's encoding.

    Attributes
    ----------
    operations
        Ten operation names, left then right operand of each of the five blocks:
        ``separable_KxK_2``, ``avg_pool_3x3``, ``max_pool_3x3`` or ``none``.
    hidden_indices
        Ten hidden-state indices, the operands of the operations; 0 is the squeezed
        previous cell output, 1 the squeezed cell before it, ``2 + i`` block ``i``.
    used
        Seven flags: the hidden states left out of the cell's output concatenation.
    """

    operations: tuple[str, ...]
    hidden_indices: tuple[int, ...]
    used: tuple[int, ...]

    @property
    def outputs(self) -> int:
        """Hidden states concatenated into the cell output."""
        return self.used.count(0)


NASNET_A_NORMAL = CellSpec(
    operations=(
        "separable_5x5_2", "separable_3x3_2", "separable_5x5_2", "separable_3x3_2", "avg_pool_3x3",
        "none", "avg_pool_3x3", "avg_pool_3x3", "separable_3x3_2", "none",
    ),
    hidden_indices=(0, 1, 1, 1, 0, 1, 1, 1, 0, 0),
    used=(1, 0, 0, 0, 0, 0, 0),
)  # fmt: skip
"""NASNet-A normal cell (Zoph et al. 2018, Figure 4 left)."""

NASNET_A_REDUCTION = CellSpec(
    operations=(
        "separable_5x5_2", "separable_7x7_2", "max_pool_3x3", "separable_7x7_2", "avg_pool_3x3",
        "separable_5x5_2", "none", "avg_pool_3x3", "separable_3x3_2", "max_pool_3x3",
    ),
    hidden_indices=(0, 1, 0, 1, 0, 1, 3, 2, 2, 0),
    used=(1, 1, 1, 0, 0, 0, 0),
)  # fmt: skip
"""NASNet-A reduction cell (Zoph et al. 2018, Figure 4 right)."""

PNASNET_5 = CellSpec(
    operations=(
        "separable_5x5_2", "max_pool_3x3", "separable_7x7_2", "max_pool_3x3", "separable_5x5_2",
        "separable_3x3_2", "separable_3x3_2", "max_pool_3x3", "separable_3x3_2", "none",
    ),
    hidden_indices=(1, 1, 0, 0, 0, 0, 4, 0, 1, 0),
    used=(1, 1, 0, 0, 0, 0, 0),
)  # fmt: skip
"""PNASNet-5 cell (Liu et al. 2018, Figure 1), used with stride 1 and stride 2."""


def _separable_stack(b: NetBuilder, x: Tensor, kernel: int, filters: int, stride: int, name: str) -> Tensor:
    """Two ReLU-SepConv-BN layers (depthwise KxK + pointwise 1x1), the first one strided."""
    for i in (1, 2):
        x = b.dwconv(x, kernel, stride=stride if i == 1 else 1, pad="same", name=f"{name}_sep{i}_dw")
        x = b.conv(x, filters, 1, name=f"{name}_sep{i}_pw")
    return x


def _operation(b: NetBuilder, x: Tensor, operation: str, filters: int, stride: int, name: str) -> Tensor:
    """Apply one cell operation to a hidden state (TF-slim ``_apply_conv_operation``)."""
    if operation.startswith("separable_"):
        kernel = int(operation.split("_")[1].split("x")[0])
        return _separable_stack(b, x, kernel, filters, stride, name)
    if operation == "none":
        if stride > 1 or x.channels != filters:
            return b.conv(x, filters, 1, stride=stride, name=f"{name}_1x1")
        return x
    if operation in ("avg_pool_3x3", "max_pool_3x3"):
        y = b.pool(x, 3, stride=stride, pad="same", name=f"{name}_{operation[:3]}pool")
        if y.channels != filters:
            y = b.conv(y, filters, 1, name=f"{name}_1x1")
        return y
    raise ValueError(f"unknown NAS cell operation {operation!r}")


def _squeeze_prev(b: NetBuilder, prev: Tensor | None, cur: Tensor, filters: int, name: str) -> Tensor:
    """Match the older cell input to the current one (TF-slim ``_reduce_prev_layer``)."""
    if prev is None:
        return cur
    if prev.height != cur.height:
        return b.conv(prev, filters, 1, stride=2, name=f"{name}_prev_reduce")
    if prev.channels != filters:
        return b.conv(prev, filters, 1, name=f"{name}_prev_1x1")
    return prev


def cell(
    b: NetBuilder, spec: CellSpec, cur: Tensor, prev: Tensor | None, filters: int, stride: int, name: str
) -> Tensor:
    """Build one NAS cell.

    Parameters
    ----------
    b
        The builder.
    spec
        The cell's operations and wiring.
    cur
        Output of the previous cell (or of the stem convolution).
    prev
        Output of the cell before that, or None (first stem cell: the current input
        is used unsqueezed in its place, as in TF-slim).
    filters
        ``F``, channels of every hidden state.
    stride
        2 in a reduction: operations on the two cell inputs are strided.
    name
        Prefix of the layer names.

    Returns
    -------
    Tensor
        The concatenation of the unused hidden states, ``spec.outputs * F`` channels.
    """
    h1 = _squeeze_prev(b, prev, cur, filters, name)
    h0 = b.conv(cur, filters, 1, name=f"{name}_1x1")
    states = [h0, h1]
    for block in range(5):
        parts = []
        for side, slot in (("left", 2 * block), ("right", 2 * block + 1)):
            index = spec.hidden_indices[slot]
            op_stride = stride if index < 2 else 1
            label = f"{name}_comb{block}_{side}"
            parts.append(_operation(b, states[index], spec.operations[slot], filters, op_stride, label))
        states.append(b.add(*parts, name=f"{name}_comb{block}_add"))
    return b.concat(*(s for s, used in zip(states, spec.used, strict=True) if not used))


def _stem(b: NetBuilder, stem_cell: CellSpec, filters: int) -> tuple[Tensor, Tensor]:
    """ImageNet stem: conv0 and two stride-2 stem cells at F/4 and F/2; returns the last two outputs."""
    conv0 = b.conv(b.input, 32, 3, stride=2, name="conv0")
    stem0 = cell(b, stem_cell, conv0, None, int(filters * 0.25), 2, "cell_stem_0")
    stem1 = cell(b, stem_cell, stem0, conv0, int(filters * 0.5), 2, "cell_stem_1")
    return stem0, stem1


def _head(b: NetBuilder, x: Tensor) -> None:
    """ReLU, global average pooling, 1000-way classifier."""
    classifier(b, x)


@register(
    "nasnet",
    "NASNet-A Mobile (4@1056), 224x224, no auxiliary head",
    0.564,
    "Zoph et al., CVPR 2018, Table 2: 564M mult-adds",
)
def nasnet(batch: int = 1) -> Workload:
    """NASNet-A Mobile: stem, 3 stacks of 4 normal cells separated by 2 reduction cells.

    Layers of cell ``c`` are named ``c_1x1`` (input squeeze), ``c_prev_1x1`` /
    ``c_prev_reduce``, ``c_comb{i}_{left|right}_...`` and ``c_comb{i}_add``, with
    ``c`` one of ``cell_stem_0/1``, ``cell_0`` ... ``cell_11``, ``reduction_cell_0/1``.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    filters = 44
    b = NetBuilder("nasnet", 3, 224, 224, batch=batch)
    prev, cur = _stem(b, NASNET_A_REDUCTION, filters)
    scaling = 1
    for i in range(12):
        if i in (4, 8):
            scaling *= 2
            red = cell(b, NASNET_A_REDUCTION, cur, prev, filters * scaling, 2, f"reduction_cell_{i // 4 - 1}")
            prev, cur = cur, red
        prev, cur = cur, cell(b, NASNET_A_NORMAL, cur, prev, filters * scaling, 1, f"cell_{i}")
    _head(b, cur)
    return b.build()


@register(
    "pnasnet",
    "PNASNet-5 Mobile (N=3, F=54), 224x224, no auxiliary head",
    0.588,
    "Liu et al., ECCV 2018, Table 4: 588M mult-adds",
)
def pnasnet(batch: int = 1) -> Workload:
    """PNASNet-5 Mobile: stem and 9 PNASNet cells, the 4th and 7th with stride 2.

    Layers are named as in :func:`nasnet`, with cells ``cell_stem_0/1`` and
    ``cell_0`` ... ``cell_8``.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    filters = 54
    b = NetBuilder("pnasnet", 3, 224, 224, batch=batch)
    prev, cur = _stem(b, PNASNET_5, filters)
    scaling = 1
    for i in range(9):
        stride = 2 if i in (3, 6) else 1
        scaling *= stride
        prev, cur = cur, cell(b, PNASNET_5, cur, prev, filters * scaling, stride, f"cell_{i}")
    _head(b, cur)
    return b.build()
