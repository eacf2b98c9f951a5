"""Tiny YOLOv2 for Pascal VOC.

Built as torchvision and the papers describe them (see :mod:`accelsched.models.zoo` for
what counts as a layer and which MACs ``reference_gmac`` counts).

* ``tiny_yolo`` is Tiny YOLOv2 for Pascal VOC at 416x416 (darknet
  ``tiny-yolo-voc.cfg``, the ONNX model zoo's ``tinyyolov2``): the Tiny-YOLO of the
  Stream evaluation.
"""

from __future__ import annotations

from accelsched.models.builder import NetBuilder
from accelsched.models.workload import Workload
from accelsched.models.zoo.catalog import register

__all__ = ["tiny_yolo"]


@register(
    "tiny_yolo",
    "Tiny YOLOv2 (Pascal VOC, 125 output channels), 416x416",
    3.49,
    "darknet tiny-yolo-voc.cfg at 416x416: 6.97 BFLOPs = 3.49 GMAC (conv)",
)
def tiny_yolo(batch: int = 1) -> Workload:
    """Tiny YOLOv2 (VOC): nine 3x3 / 1x1 convolutions and six 2x2 max pools.

    The sixth max pool has stride 1 and darknet's one-pixel trailing padding,
    so the 13x13 map keeps its size.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    b = NetBuilder("tiny_yolo", 3, 416, 416, batch=batch)
    x = b.input
    for i, channels in enumerate((16, 32, 64, 128, 256, 512), start=1):
        x = b.conv(x, channels, 3, pad=1, name=f"conv{i}")
        if i < 6:
            x = b.pool(x, 2, stride=2, name=f"pool{i}")
        else:
            x = b.pool(x, 2, stride=1, pad=(0, 0, 1, 1), name=f"pool{i}")
    x = b.conv(x, 1024, 3, pad=1, name="conv7")
    x = b.conv(x, 1024, 3, pad=1, name="conv8")
    b.conv(x, 125, 1, name="conv9")
    return b.build()
