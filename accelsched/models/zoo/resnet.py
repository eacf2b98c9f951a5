"""ResNet-18, -50 and -152 (torchvision).

Built as torchvision and the papers describe them (see :mod:`accelsched.models.zoo` for
what counts as a layer and which MACs ``reference_gmac`` counts).

* ``resnet18/50/152`` follow torchvision (ResNet v1.5: the stride of a bottleneck
  sits on its 3x3 convolution).
"""

from __future__ import annotations

from accelsched.models.builder import NetBuilder, Tensor
from accelsched.models.workload import Workload
from accelsched.models.zoo.catalog import register
from accelsched.models.zoo.classifier import classifier

__all__ = ["resnet18", "resnet50", "resnet152"]


def _basic_block(b: NetBuilder, x: Tensor, planes: int, stride: int, name: str) -> Tensor:
    """ResNet basic block: two 3x3 convolutions and a (projected) shortcut."""
    y = b.conv(x, planes, 3, stride=stride, pad=1, name=f"{name}_conv1")
    y = b.conv(y, planes, 3, pad=1, name=f"{name}_conv2")
    shortcut = x
    if stride != 1 or x.channels != planes:
        shortcut = b.conv(x, planes, 1, stride=stride, name=f"{name}_downsample")
    return b.add(y, shortcut, name=f"{name}_add")


def _bottleneck(b: NetBuilder, x: Tensor, planes: int, stride: int, name: str) -> Tensor:
    """ResNet v1.5 bottleneck: 1x1 reduce, 3x3 (strided), 1x1 expand by 4, shortcut."""
    out = planes * 4
    y = b.conv(x, planes, 1, name=f"{name}_conv1")
    y = b.conv(y, planes, 3, stride=stride, pad=1, name=f"{name}_conv2")
    y = b.conv(y, out, 1, name=f"{name}_conv3")
    shortcut = x
    if stride != 1 or x.channels != out:
        shortcut = b.conv(x, out, 1, stride=stride, name=f"{name}_downsample")
    return b.add(y, shortcut, name=f"{name}_add")


def _resnet(
    name: str, blocks: tuple[int, int, int, int], bottleneck: bool, batch: int, size: int = 224
) -> Workload:
    """A torchvision ResNet with ``blocks`` residual blocks per stage, on a ``size x size`` input."""
    b = NetBuilder(name, 3, size, size, batch=batch)
    x = b.conv(b.input, 64, 7, stride=2, pad=3, name="conv1")
    x = b.pool(x, 3, stride=2, pad=1, name="maxpool")
    block = _bottleneck if bottleneck else _basic_block
    for stage, (count, planes) in enumerate(zip(blocks, (64, 128, 256, 512), strict=True), start=1):
        for i in range(count):
            stride = 2 if stage > 1 and i == 0 else 1
            x = block(b, x, planes, stride, f"layer{stage}_{i}")
    classifier(b, x)
    return b.build()


@register("resnet18", "ResNet-18 (torchvision), 224x224", 1.81, "torchvision model table: 1.81 GFLOPS (MACs, conv+fc)")
def resnet18(batch: int = 1, size: int = 224) -> Workload:
    """ResNet-18: 20 convolutions (3 projection shortcuts) and the classifier.

    Parameters
    ----------
    batch
        Batch size.
    size
        Input height and width (224 for the registered ``resnet18``).

    Returns
    -------
    Workload
        The network.
    """
    return _resnet("resnet18", (2, 2, 2, 2), bottleneck=False, batch=batch, size=size)


@register(
    "resnet50", "ResNet-50 v1.5 (torchvision), 224x224", 4.09, "torchvision model table: 4.09 GFLOPS (MACs, conv+fc)"
)
def resnet50(batch: int = 1) -> Workload:
    """ResNet-50 v1.5: 53 convolutions and the classifier.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    return _resnet("resnet50", (3, 4, 6, 3), bottleneck=True, batch=batch)


@register(
    "resnet152",
    "ResNet-152 v1.5 (torchvision), 224x224",
    11.51,
    "torchvision model table: 11.51 GFLOPS (MACs, conv+fc)",
)
def resnet152(batch: int = 1) -> Workload:
    """ResNet-152 v1.5: 155 convolutions and the classifier.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    return _resnet("resnet152", (3, 8, 36, 3), bottleneck=True, batch=batch)
