"""ResNet-50 and Darknet-19 exactly as the SET (ISCA'23) artifact lists them.

The listings (``data/resnet50_layers.txt``, ``data/darknet_layers.txt``) give one
layer per line::

    3 conv_2_0_b ofm=(C=64, H=56, W=56) ifm=(C=64, H=56, W=56) wgt=36864 ops=115605504 prevs=(2,)

and a summary line with the total. Layer names are kept exactly (SET's RA trees
refer to them). The operator of each line is inferred:

* ``wgt > 0``: a convolution with a ``k x k`` kernel, ``k^2 = wgt / (ofm.C * ifm.C)``;
  a 1x1 "convolution" on a 1x1 map is a fully connected layer;
* ``wgt == 0`` and a name ending in ``_res``: the element-wise sum of its two
  producers (SET's ``ifm`` C is the sum of both operands' channels);
* ``wgt == 0`` otherwise: a pooling layer whose window ``k^2 = ops / ofm
  elements`` (3x3 for ResNet's ``pool1``, 2x2 for Darknet's pools, 7x7 for the
  global pools).

Strides come from the ratio of the producer's rows to the output rows, and the
padding is the smallest symmetric padding that gives the listed output size
(SET lists ``H = 55`` for the input of a strided 1x1 convolution reading a 56-row
map: the rows it touches).

MAC counting: convolution, fc and pooling layers reproduce the listing's ``ops``
exactly. SET counts two ops per output element of a ``_res`` sum (one per
operand); :attr:`Layer.macs` counts one add per output element, so the ResNet-50
total is 5.5 M (0.14 %) below the listing's 3.87092 G; Darknet-19 has no sums and
matches exactly.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from importlib import resources

from accelsched.models.builder import NetBuilder, Tensor
from accelsched.models.workload import Workload
from accelsched.models.zoo.catalog import register

__all__ = ["SetLayer", "load_listing", "parse_listing", "set_darknet19", "set_resnet50", "set_workload"]

_LINE = re.compile(
    r"^(?P<index>\d+)\s+(?P<name>\S+)\s+"
    r"ofm=\(C=(?P<oc>\d+), H=(?P<oh>\d+), W=(?P<ow>\d+)\)\s+"
    r"ifm=\(C=(?P<ic>\d+), H=(?P<ih>\d+), W=(?P<iw>\d+)\)\s+"
    r"wgt=(?P<wgt>\d+)\s+ops=(?P<ops>\d+)\s+prevs=\((?P<prevs>[\d,\s]*)\)\s*$"
)
_SUMMARY = re.compile(r"MACs\(G\)=(?P<gmac>[\d.]+)")


@dataclass(frozen=True)
class SetLayer:
    """One line of a SET layer listing.

    Attributes
    ----------
    index
        Position in the listing.
    name
        SET's layer name.
    ofm, ifm
        ``(C, H, W)`` of the output and input feature maps.
    wgt
        Weight elements.
    ops
        Operations (MACs) SET counts for the layer.
    prevs
        Indices of the producers; empty for the network input.
    """

    index: int
    name: str
    ofm: tuple[int, int, int]
    ifm: tuple[int, int, int]
    wgt: int
    ops: int
    prevs: tuple[int, ...]


def parse_listing(text: str) -> tuple[list[SetLayer], float | None]:
    """Parse a SET layer listing.

    Parameters
    ----------
    text
        The listing: one layer per line, then a summary line.

    Returns
    -------
    layers, total_gmac
        The layers in listing order, and the summary's total in GMAC (None when
        the listing has no summary line).

    Raises
    ------
    ValueError
        On a line that is neither a layer nor the summary, or a producer index
        that does not precede its consumer.
    """
    layers: list[SetLayer] = []
    total: float | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        match = _LINE.match(line)
        if match is None:
            summary = _SUMMARY.search(line)
            if summary is None:
                raise ValueError(f"SET listing line {number}: cannot parse {line!r}")
            total = float(summary["gmac"])
            continue
        prevs = tuple(int(p) for p in match["prevs"].replace(" ", "").split(",") if p)
        layer = SetLayer(
            index=int(match["index"]),
            name=match["name"],
            ofm=(int(match["oc"]), int(match["oh"]), int(match["ow"])),
            ifm=(int(match["ic"]), int(match["ih"]), int(match["iw"])),
            wgt=int(match["wgt"]),
            ops=int(match["ops"]),
            prevs=prevs,
        )
        if layer.index != len(layers) or any(p >= layer.index for p in prevs):
            raise ValueError(f"SET listing line {number}: layer {layer.name!r} is out of order or reads a later layer")
        layers.append(layer)
    return layers, total


def load_listing(filename: str) -> tuple[list[SetLayer], float | None]:
    """Parse a listing shipped in ``accelsched/models/zoo/data``.

    Parameters
    ----------
    filename
        File name inside the data folder, e.g. ``"resnet50_layers.txt"``.

    Returns
    -------
    layers, total_gmac
        As :func:`parse_listing`.
    """
    text = resources.files("accelsched.models.zoo").joinpath("data", filename).read_text()
    return parse_listing(text)


def _padding(size_in: int, size_out: int, kernel: int, stride: int) -> int:
    """Smallest symmetric padding for which a ``kernel``/``stride`` window gives ``size_out``."""
    pad = max(0, math.ceil(((size_out - 1) * stride + kernel - size_in) / 2))
    if (size_in + 2 * pad - kernel) // stride + 1 != size_out:
        raise ValueError(f"no padding maps {size_in} to {size_out} with kernel {kernel}, stride {stride}")
    return pad


def _window(layer: SetLayer, size_in: int) -> tuple[int, int, int]:
    """Kernel, stride and padding of a convolution or pooling line read from a ``size_in`` map."""
    out_c, out_h, _ = layer.ofm
    if layer.wgt:
        kernel = math.isqrt(layer.wgt // (out_c * layer.ifm[0]))
    else:
        kernel = math.isqrt(layer.ops // (out_c * out_h * layer.ofm[2]))
    if kernel == size_in and out_h == 1:
        return kernel, 1, 0
    stride = max(1, round(size_in / out_h))
    return kernel, stride, _padding(size_in, out_h, kernel, stride)


def set_workload(name: str, layers: list[SetLayer], batch: int = 1) -> Workload:
    """Build a workload from parsed SET listing lines, keeping SET's layer names.

    Parameters
    ----------
    name
        Network name.
    layers
        Parsed lines (see :func:`parse_listing`).
    batch
        Batch size.

    Returns
    -------
    Workload
        The network; every layer has the name of its line.

    Raises
    ------
    ValueError
        If a line's shapes are inconsistent with its kernel, its producers or its
        weight count.
    """
    first = layers[0]
    b = NetBuilder(name, first.ifm[0], first.ifm[1], first.ifm[2], batch=batch)
    made: list[Tensor] = []
    for layer in layers:
        operands = [made[p] for p in layer.prevs] if layer.prevs else [b.input]
        x = operands[0] if len(operands) == 1 else b.concat(*operands)
        out_c, out_h, out_w = layer.ofm
        if layer.wgt == 0 and layer.name.endswith("_res"):
            y = b.add(*operands, name=layer.name)
        elif layer.wgt == 0:
            kernel, stride, pad = _window(layer, x.height)
            y = b.pool(x, kernel, stride=stride, pad=pad, name=layer.name)
        elif (x.height, x.width, out_h, out_w) == (1, 1, 1, 1):
            y = b.fc(x, out_c, name=layer.name)
        else:
            kernel, stride, pad = _window(layer, x.height)
            if kernel * kernel * out_c * layer.ifm[0] != layer.wgt:
                raise ValueError(f"SET layer {layer.name!r}: wgt={layer.wgt} is not a square kernel")
            y = b.conv(x, out_c, kernel, stride=stride, pad=pad, name=layer.name)
        if (y.channels, y.height, y.width) != layer.ofm:
            raise ValueError(
                f"SET layer {layer.name!r}: built {y.channels}x{y.height}x{y.width}, listing says "
                f"{out_c}x{out_h}x{out_w}"
            )
        made.append(y)
    return b.build()


@register(
    "set-resnet50",
    "ResNet-50 (v1, stride on the 1x1 reduce) as listed by the SET artifact, 224x224, SET layer names",
    3.87092,
    "SET (ISCA'23) artifact listing summary: 3.87092 GMAC, all layers (sums counted as 2 ops per output)",
)
def set_resnet50(batch: int = 1) -> Workload:
    """ResNet-50 from SET's listing: 53 convolutions, 16 residual sums, 2 pools, fc.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network, with SET's layer names (``conv1``, ``conv_2_0_a``, ``conv_2_br``,
        ``conv_2_0_res``, ..., ``fc``).
    """
    layers, _ = load_listing("resnet50_layers.txt")
    return set_workload("set-resnet50", layers, batch)


@register(
    "set-darknet19",
    "Darknet-19 as listed by the SET artifact, 224x224, SET layer names",
    2.79415,
    "SET (ISCA'23) artifact listing summary: 2.79415 GMAC, all layers",
)
def set_darknet19(batch: int = 1) -> Workload:
    """Darknet-19 from SET's listing: 19 convolutions, 5 max pools, global average pool.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network, with SET's layer names (``conv1`` ... ``conv19``, ``pool1`` ...
        ``pool5``, ``pool_avg``).
    """
    layers, _ = load_listing("darknet_layers.txt")
    return set_workload("set-darknet19", layers, batch)
