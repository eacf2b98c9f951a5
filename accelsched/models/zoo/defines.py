"""The pixel-processing networks of DeFiNES (HPCA'23), padding-free.

DeFiNES describes its workloads without padding: every layer's output is larger
than the next layer's, so that the last layer produces the target image size
without any padding, and the network input is the border-extended image. The
shapes below are derived from DeFiNES' workload listing by back-calculating from
the final output (each KxK stride-1 layer reads ``K - 1`` more rows and columns
than it writes). Channel counts, kernel sizes and final output sizes are those of
the listing; precisions too: 8-bit weights and inputs, 16-bit partial sums, 8-bit
final outputs.

Deviations from the listing, which is not self-consistent:

* ``dmcnn_vd``: the listing's column counts of layers 0-14 (796 down to 768) do
  not chain into layer 15 (776). The rows (550 down to 512) are consistent, and the
  columns are rebuilt the same way from the final 768, so layers 0-14 are 10
  columns wider than listed (806 down to 778); the MACs are 1 % above the listing.
  The listed input (3x512x768) is the final image size; the padding-free input is
  3x552x808.
* ``mccnn``: the layers chain, but the listed input (1x1242x376) is the output
  size; the padding-free input is 1x1250x384.
* ``fsrcnn`` is consistent as listed (input 1x554x974). Its last layer, a
  deconvolution in the original FSRCNN, is the listing's 3x3 convolution with 16
  output channels (the sub-pixel outputs of the 3x up-scaling as channels).

DeFiNES' two classification networks are much larger than their 224x224 zoo
versions (largest feature map 3.8 MiB and 5.9 MiB against 0.8 MiB):

* ``mobilenet_v1_defines`` is the listing's MobileNetV1 layer for layer: the
  padding-free chain of Howard et al.'s Table 1 ending at 1024x7x7 (a 3x3 stride-2
  convolution to 32x253x253, 13 depthwise-separable blocks, 7x7 average pooling,
  the 1000-way classifier), whose padding-free input is 3x507x507 (the listing
  names the nominal 224x224);
* ``resnet18_defines`` is torchvision's ResNet-18 (:func:`accelsched.models.zoo.resnet.resnet18`)
  on a 622x622 input, whose first convolution writes 64x311x311 (5.9 MiB), the
  listing's largest map. The listing's own ResNet-18 is padding-free with
  residual additions of differently sized maps (a crop) and no projection
  shortcuts, which the workload model does not express; here the later maps are
  larger (20x20 instead of 7x7 at the end) and the three projections are kept,
  so its MACs are 1.5x the listing's 9.35 G.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import cast

from accelsched.models.builder import NetBuilder
from accelsched.models.workload import Workload
from accelsched.models.zoo.catalog import register
from accelsched.models.zoo.classifier import classifier
from accelsched.models.zoo.resnet import resnet18

__all__ = ["dmcnn_vd", "fsrcnn", "mccnn", "mobilenet_v1_defines", "padding_free_chain", "resnet18_defines"]

_LISTING = "DeFiNES workload listing (reference/defines/wl.txt): sum of K*C*OY*OX*FY*FX over its layers"


def padding_free_chain(
    name: str,
    in_channels: int,
    out_height: int,
    out_width: int,
    layers: Sequence[tuple[int, int]],
    batch: int = 1,
) -> Workload:
    """A chain of stride-1, unpadded convolutions ending at ``out_height x out_width``.

    The input size is back-calculated from the final output: layer ``i`` with a
    ``k x k`` kernel writes ``k - 1`` fewer rows and columns than it reads.

    Parameters
    ----------
    name
        Network name.
    in_channels
        Channels of the network input.
    out_height, out_width
        Output size of the last layer.
    layers
        ``(out_channels, kernel)`` per layer, first to last.
    batch
        Batch size.

    Returns
    -------
    Workload
        The chain, with layers named ``conv0``, ``conv1``, ... as in the listing.
    """
    grow = sum(kernel - 1 for _, kernel in layers)
    b = NetBuilder(name, in_channels, out_height + grow, out_width + grow, batch=batch, bits=8, psum_bits=16)
    x = b.input
    for i, (channels, kernel) in enumerate(layers):
        x = b.conv(x, channels, kernel, pad="valid", name=f"conv{i}")
    return b.build()


@register(
    "fsrcnn",
    "FSRCNN as in DeFiNES: 8 padding-free convolutions to 16x540x960 (last = deconvolution as 3x3 conv)",
    8.363,
    _LISTING,
)
def fsrcnn(batch: int = 1) -> Workload:
    """FSRCNN (Dong et al. 2016) in DeFiNES' padding-free form.

    Feature extraction 5x5 (56), shrinking 1x1 (12), four 3x3 mapping layers (12),
    expanding 1x1 (56), and the deconvolution modelled as a 3x3 convolution with
    16 outputs, producing 540x960 maps from a 1x554x974 input.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    layers = [(56, 5), (12, 1), (12, 3), (12, 3), (12, 3), (12, 3), (56, 1), (16, 3)]
    return padding_free_chain("fsrcnn", 1, 540, 960, layers, batch)


@register(
    "dmcnn_vd",
    "DMCNN-VD as in DeFiNES: 20 padding-free 3x3 convolutions (64 channels) to 3x512x768",
    276.04,
    _LISTING + " (the listing's column counts are inconsistent; see the module docstring)",
)
def dmcnn_vd(batch: int = 1) -> Workload:
    """DMCNN-VD demosaicking network (Syu et al. 2018) in DeFiNES' padding-free form.

    Twenty 3x3 convolutions: 3 -> 64, eighteen 64 -> 64, 64 -> 3, producing a
    512x768 image from a 3x552x808 input.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    layers = [(64, 3)] * 19 + [(3, 3)]
    return padding_free_chain("dmcnn_vd", 3, 512, 768, layers, batch)


@register(
    "mccnn",
    "MC-CNN (fast) as in DeFiNES: 4 padding-free 3x3 convolutions (64 channels) to 64x1242x376",
    52.28,
    _LISTING,
)
def mccnn(batch: int = 1) -> Workload:
    """MC-CNN fast stereo-matching feature network (Zbontar & LeCun 2016) in DeFiNES' form.

    Four 3x3 convolutions with 64 outputs, producing 1242x376 maps from a
    1x1250x384 input.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    return padding_free_chain("mccnn", 1, 1242, 376, [(64, 3)] * 4, batch)


_MOBILENET_V1_BLOCKS: tuple[tuple[int, int], ...] = (
    (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
    (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1),
)  # fmt: skip
"""(pointwise output channels, depthwise stride) of the 13 blocks, as the listing's layers 1-26 give them."""

RESNET18_DEFINES_INPUT = 622
"""Input side of ``resnet18_defines``: its first convolution (7x7, stride 2, pad 3) then writes 64x311x311."""


@register(
    "mobilenet_v1_defines",
    "MobileNetV1 as in DeFiNES: padding-free, 3x3/2 convolution to 32x253x253, 13 separable blocks to 1024x7x7",
    1.891,
    _LISTING + ": 1.891 G over the convolutions and the classifier",
)
def mobilenet_v1_defines(batch: int = 1) -> Workload:
    """MobileNetV1 (Howard et al. 2017) with DeFiNES' layer shapes (module docstring).

    Every convolution is unpadded; the input side is back-calculated from the final
    7x7 map (``(n - 1) * stride + kernel`` per layer): 3x507x507.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network, layers named as the zoo's ``mobilenet_v1``.
    """
    side = 7
    for _, stride in reversed(_MOBILENET_V1_BLOCKS):
        side = (side - 1) * stride + 3
    side = (side - 1) * 2 + 3
    b = NetBuilder("mobilenet_v1_defines", 3, side, side, batch=batch, bits=8, psum_bits=16)
    x = b.conv(b.input, 32, 3, stride=2, pad="valid", name="conv0")
    for i, (channels, stride) in enumerate(_MOBILENET_V1_BLOCKS, start=1):
        x = b.dwconv(x, 3, stride=stride, pad="valid", name=f"conv{i}_dw")
        x = b.conv(x, channels, 1, name=f"conv{i}_pw")
    classifier(b, x)
    return b.build()


@register(
    "resnet18_defines",
    "ResNet-18 (torchvision) on 622x622, DeFiNES' largest feature map (64x311x311)",
    14.23,
    "torchvision ResNet-18's layers at 622x622: sum of K*C*OY*OX*FY*FX over the convolutions and the classifier",
)
def resnet18_defines(batch: int = 1) -> Workload:
    """ResNet-18 at the input size of DeFiNES' listing (module docstring).

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        torchvision's ResNet-18 on a 3x622x622 input, named ``resnet18_defines``.
    """
    # ``register`` types a builder as ``build(batch)``; resnet18 also takes the input size
    build = cast(Callable[..., Workload], resnet18)
    return dataclasses.replace(build(batch, size=RESNET18_DEFINES_INPUT), name="resnet18_defines")
