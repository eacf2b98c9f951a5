"""VGG-16 and VGG-19 (Simonyan and Zisserman 2015, configurations D and E).

Built as torchvision and the papers describe them (see :mod:`accelsched.models.zoo` for
what counts as a layer and which MACs ``reference_gmac`` counts).
"""

from __future__ import annotations

from accelsched.models.builder import NetBuilder
from accelsched.models.workload import Workload
from accelsched.models.zoo.catalog import register
from accelsched.models.zoo.classifier import IMAGENET_CLASSES

__all__ = ["vgg16", "vgg19"]


_VGG16 = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")
_VGG19 = (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M")


def _vgg(name: str, cfg: tuple[int | str, ...], batch: int) -> Workload:
    """A VGG network: 3x3 convolutions and 2x2 max pools per ``cfg``, then three fc layers."""
    b = NetBuilder(name, 3, 224, 224, batch=batch)
    x = b.input
    block, index = 1, 1
    for item in cfg:
        if item == "M":
            x = b.pool(x, 2, stride=2, name=f"pool{block}")
            block, index = block + 1, 1
        else:
            x = b.conv(x, int(item), 3, pad=1, name=f"conv{block}_{index}")
            index += 1
    x = b.fc(x, 4096, name="fc6")
    x = b.fc(x, 4096, name="fc7")
    b.fc(x, IMAGENET_CLASSES, name="fc8")
    return b.build()


@register("vgg16", "VGG-16 (configuration D), 224x224", 15.47, "torchvision model table: 15.47 GFLOPS (MACs, conv+fc)")
def vgg16(batch: int = 1) -> Workload:
    """VGG-16: 13 convolutions, 5 max pools, 3 fully connected layers.

    ``fc6`` reads the 512x7x7 map, so it is a 7x7 convolution over the whole map.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    return _vgg("vgg16", _VGG16, batch)


@register("vgg19", "VGG-19 (configuration E), 224x224", 19.63, "torchvision model table: 19.63 GFLOPS (MACs, conv+fc)")
def vgg19(batch: int = 1) -> Workload:
    """VGG-19: 16 convolutions, 5 max pools, 3 fully connected layers.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    return _vgg("vgg19", _VGG19, batch)
