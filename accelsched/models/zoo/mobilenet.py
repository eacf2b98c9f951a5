"""MobileNetV1, MobileNetV2 and EfficientNet-B0.

Built as torchvision and the papers describe them (see :mod:`accelsched.models.zoo` for
what counts as a layer and which MACs ``reference_gmac`` counts).

* ``mobilenet_v1`` uses TensorFlow's SAME padding; ``mobilenet_v2`` and
  ``efficientnet_b0`` follow torchvision (squeeze-and-excitation gates are two 1x1
  convolutions on the pooled map, applied with an element-wise broadcast product).
"""

from __future__ import annotations

from accelsched.models.builder import NetBuilder, Tensor
from accelsched.models.workload import Workload
from accelsched.models.zoo.catalog import register
from accelsched.models.zoo.classifier import classifier

__all__ = ["efficientnet_b0", "mobilenet_v1", "mobilenet_v2"]


_MOBILENET_V1: tuple[tuple[int, int], ...] = (
    (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
    (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1),
)  # fmt: skip
"""Howard et al. 2017, Table 1: (pointwise output channels, depthwise stride)."""


@register(
    "mobilenet_v1",
    "MobileNetV1 1.0, 224x224 (TensorFlow SAME padding)",
    0.569,
    "Howard et al. 2017, Table 8: 569 million mult-adds",
)
def mobilenet_v1(batch: int = 1) -> Workload:
    """MobileNetV1: a 3x3 convolution, 13 depthwise-separable blocks, pooling, classifier.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    b = NetBuilder("mobilenet_v1", 3, 224, 224, batch=batch)
    x = b.conv(b.input, 32, 3, stride=2, pad="same", name="conv0")
    for i, (channels, stride) in enumerate(_MOBILENET_V1, start=1):
        x = b.dwconv(x, 3, stride=stride, pad="same", name=f"conv{i}_dw")
        x = b.conv(x, channels, 1, name=f"conv{i}_pw")
    classifier(b, x)
    return b.build()


def _inverted_residual(b: NetBuilder, x: Tensor, expand: int, out: int, stride: int, name: str) -> Tensor:
    """MobileNetV2 inverted residual: 1x1 expand, 3x3 depthwise, linear 1x1 project, residual."""
    y = x
    if expand != 1:
        y = b.conv(y, x.channels * expand, 1, name=f"{name}_expand")
    y = b.dwconv(y, 3, stride=stride, pad=1, name=f"{name}_dw")
    y = b.conv(y, out, 1, name=f"{name}_project")
    if stride == 1 and x.channels == out:
        y = b.add(x, y, name=f"{name}_add")
    return y


_MOBILENET_V2: tuple[tuple[int, int, int, int], ...] = (
    (1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1),
)  # fmt: skip
"""Sandler et al. 2018, Table 2: expansion t, channels c, repeats n, first stride s."""


@register("mobilenet_v2", "MobileNetV2 1.0 (torchvision), 224x224", 0.300, "Sandler et al. 2018, Table 4: 300M MAdds")
def mobilenet_v2(batch: int = 1) -> Workload:
    """MobileNetV2: 17 inverted-residual blocks between a 3x3 stem and a 1x1 head, classifier.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    b = NetBuilder("mobilenet_v2", 3, 224, 224, batch=batch)
    x = b.conv(b.input, 32, 3, stride=2, pad=1, name="conv_stem")
    block = 0
    for expand, channels, repeats, first_stride in _MOBILENET_V2:
        for i in range(repeats):
            x = _inverted_residual(b, x, expand, channels, first_stride if i == 0 else 1, f"block{block}")
            block += 1
    x = b.conv(x, 1280, 1, name="conv_head")
    classifier(b, x)
    return b.build()


def _squeeze_excite(b: NetBuilder, x: Tensor, squeeze: int, name: str) -> Tensor:
    """Squeeze-and-excitation: pool, 1x1 reduce, 1x1 expand (the gate), channel-wise product."""
    s = b.global_pool(x, name=f"{name}_se_pool")
    s = b.conv(s, squeeze, 1, name=f"{name}_se_reduce")
    gate = b.conv(s, x.channels, 1, name=f"{name}_se_expand")
    return b.broadcast_mul(x, gate, name=f"{name}_se_scale")


def _mbconv(b: NetBuilder, x: Tensor, expand: int, kernel: int, stride: int, out: int, name: str) -> Tensor:
    """EfficientNet MBConv: expand, depthwise, squeeze-and-excitation (input / 4), project, residual."""
    y = x
    if expand != 1:
        y = b.conv(y, x.channels * expand, 1, name=f"{name}_expand")
    y = b.dwconv(y, kernel, stride=stride, pad=(kernel - 1) // 2, name=f"{name}_dw")
    y = _squeeze_excite(b, y, max(1, x.channels // 4), name)
    y = b.conv(y, out, 1, name=f"{name}_project")
    if stride == 1 and x.channels == out:
        y = b.add(x, y, name=f"{name}_add")
    return y


_EFFICIENTNET_B0: tuple[tuple[int, int, int, int, int], ...] = (
    (1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
    (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1),
)  # fmt: skip
"""Tan & Le 2019, Table 1: expansion, kernel, first stride, channels, repeats."""


@register(
    "efficientnet_b0",
    "EfficientNet-B0 (torchvision, with squeeze-and-excitation), 224x224",
    0.39,
    "Tan & Le 2019, Table 2: 0.39B FLOPS (multiply-adds); torchvision: 0.39 GFLOPS",
)
def efficientnet_b0(batch: int = 1) -> Workload:
    """EfficientNet-B0: 16 MBConv blocks between a 3x3 stem and a 1x1 head, classifier.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    b = NetBuilder("efficientnet_b0", 3, 224, 224, batch=batch)
    x = b.conv(b.input, 32, 3, stride=2, pad=1, name="conv_stem")
    block = 0
    for expand, kernel, first_stride, channels, repeats in _EFFICIENTNET_B0:
        for i in range(repeats):
            stride = first_stride if i == 0 else 1
            x = _mbconv(b, x, expand, kernel, stride, channels, f"block{block}")
            block += 1
    x = b.conv(x, 1280, 1, name="conv_head")
    classifier(b, x)
    return b.build()
