"""SqueezeNet v1.1.

Built as torchvision and the papers describe them (see :mod:`accelsched.models.zoo` for
what counts as a layer and which MACs ``reference_gmac`` counts).

* ``squeezenet`` is SqueezeNet v1.1 (the version in the ONNX test data and the one
  torchvision lists at 0.35 GFLOPS); a fire module's expand branches are
  concatenated.
"""

from __future__ import annotations

from accelsched.models.builder import NetBuilder, Tensor
from accelsched.models.workload import Workload
from accelsched.models.zoo.catalog import register
from accelsched.models.zoo.classifier import IMAGENET_CLASSES

__all__ = ["squeezenet"]


def _fire(b: NetBuilder, x: Tensor, squeeze: int, expand: int, name: str) -> Tensor:
    """Fire module: 1x1 squeeze, then concatenated 1x1 and 3x3 expand branches."""
    s = b.conv(x, squeeze, 1, name=f"{name}_squeeze1x1")
    e1 = b.conv(s, expand, 1, name=f"{name}_expand1x1")
    e3 = b.conv(s, expand, 3, pad=1, name=f"{name}_expand3x3")
    return b.concat(e1, e3)


@register(
    "squeezenet",
    "SqueezeNet v1.1, 224x224 (fire modules concatenate their expand branches)",
    0.35,
    "torchvision model table (squeezenet1_1): 0.35 GFLOPS (MACs, conv)",
)
def squeezenet(batch: int = 1) -> Workload:
    """SqueezeNet v1.1: a 3x3 stem, 8 fire modules, a 1x1 classifier convolution, pooling.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    b = NetBuilder("squeezenet", 3, 224, 224, batch=batch)
    x = b.conv(b.input, 64, 3, stride=2, name="conv1")
    x = b.pool(x, 3, stride=2, ceil_mode=True, name="pool1")
    x = _fire(b, x, 16, 64, "fire2")
    x = _fire(b, x, 16, 64, "fire3")
    x = b.pool(x, 3, stride=2, ceil_mode=True, name="pool3")
    x = _fire(b, x, 32, 128, "fire4")
    x = _fire(b, x, 32, 128, "fire5")
    x = b.pool(x, 3, stride=2, ceil_mode=True, name="pool5")
    x = _fire(b, x, 48, 192, "fire6")
    x = _fire(b, x, 48, 192, "fire7")
    x = _fire(b, x, 64, 256, "fire8")
    x = _fire(b, x, 64, 256, "fire9")
    x = b.conv(x, IMAGENET_CLASSES, 1, name="conv10")
    b.global_pool(x, name="avgpool")
    return b.build()
