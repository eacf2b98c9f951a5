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
"""

from __future__ import annotations

from collections.abc import Sequence

from accelsched.models.builder import NetBuilder
from accelsched.models.workload import Workload
from accelsched.models.zoo.catalog import register

__all__ = ["dmcnn_vd", "fsrcnn", "mccnn", "padding_free_chain"]

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
