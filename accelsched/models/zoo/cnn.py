"""Classic image-classification and detection CNNs with their published layer shapes.

Every network is built at its standard input resolution (224x224 unless noted)
and ends with its ImageNet classifier. Batch normalization, ReLU / ReLU6 / SiLU,
sigmoid, LRN, dropout and softmax cost no MACs and are not layers. The published
MAC counts that ``reference_gmac`` records count convolutions and fully connected
layers only (as torchvision's and the papers' figures do); the workloads' ``macs``
also count pooling windows and element-wise operations, a fraction of a percent.

Choices worth knowing:

* ``resnet18/50/152`` follow torchvision (ResNet v1.5: the stride of a bottleneck
  sits on its 3x3 convolution).
* ``googlenet`` is the original Inception v1 (Szegedy et al. 2015, Table 1), with
  5x5 convolutions and Caffe's ceil-mode 3x3 / stride 2 max pools; torchvision's
  variant replaces the 5x5 by 3x3 convolutions and so reports 1.50 GMAC.
* ``inception_v3`` follows torchvision at 299x299, without the auxiliary head.
* ``inception_resnet_v1`` is the FaceNet variant (davidsandberg/facenet, model
  20180408-102900): 160x160 input, 5 Inception-ResNet-A, 10 -B and 6 -C blocks
  (the last one without activation), a 512-d embedding instead of a classifier.
  The residual input of the first B and C blocks is the concatenated output of a
  reduction; an element-wise operand must be one layer's output, so a 1x1 pooling
  window (one op per element) copies the concatenation (``Mixed_6a_concat``,
  ``Mixed_7a_concat``).
* ``mobilenet_v1`` uses TensorFlow's SAME padding; ``mobilenet_v2`` and
  ``efficientnet_b0`` follow torchvision (squeeze-and-excitation gates are two 1x1
  convolutions on the pooled map, applied with an element-wise broadcast product).
* ``squeezenet`` is SqueezeNet v1.1 (the version in the ONNX test data and the one
  torchvision lists at 0.35 GFLOPS); a fire module's expand branches are
  concatenated.
* ``tiny_yolo`` is Tiny YOLOv2 for Pascal VOC at 416x416 (darknet
  ``tiny-yolo-voc.cfg``, the ONNX model zoo's ``tinyyolov2``): the Tiny-YOLO of the
  Stream evaluation.
"""

from __future__ import annotations

from accelsched.models.builder import NetBuilder, Tensor
from accelsched.models.workload import Workload
from accelsched.models.zoo import register

__all__ = [
    "efficientnet_b0",
    "googlenet",
    "inception_resnet_v1",
    "inception_v3",
    "mobilenet_v1",
    "mobilenet_v2",
    "resnet18",
    "resnet50",
    "resnet152",
    "squeezenet",
    "tiny_yolo",
    "vgg16",
    "vgg19",
]

_CLASSES = 1000
"""ImageNet classes."""


def _classifier(b: NetBuilder, x: Tensor, classes: int = _CLASSES) -> Tensor:
    """Global average pooling followed by the fully connected classifier."""
    return b.fc(b.global_pool(x, name="avgpool"), classes, name="fc")


# ----------------------------------------------------------------------- ResNet
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


def _resnet(name: str, blocks: tuple[int, int, int, int], bottleneck: bool, batch: int) -> Workload:
    """A torchvision ResNet with ``blocks`` residual blocks per stage."""
    b = NetBuilder(name, 3, 224, 224, batch=batch)
    x = b.conv(b.input, 64, 7, stride=2, pad=3, name="conv1")
    x = b.pool(x, 3, stride=2, pad=1, name="maxpool")
    block = _bottleneck if bottleneck else _basic_block
    for stage, (count, planes) in enumerate(zip(blocks, (64, 128, 256, 512), strict=True), start=1):
        for i in range(count):
            stride = 2 if stage > 1 and i == 0 else 1
            x = block(b, x, planes, stride, f"layer{stage}_{i}")
    _classifier(b, x)
    return b.build()


@register("resnet18", "ResNet-18 (torchvision), 224x224", 1.81, "torchvision model table: 1.81 GFLOPS (MACs, conv+fc)")
def resnet18(batch: int = 1) -> Workload:
    """ResNet-18: 20 convolutions (3 projection shortcuts) and the classifier.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    return _resnet("resnet18", (2, 2, 2, 2), bottleneck=False, batch=batch)


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


# -------------------------------------------------------------------------- VGG
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
    b.fc(x, _CLASSES, name="fc8")
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


# -------------------------------------------------------------------- GoogLeNet
def _inception_v1(
    b: NetBuilder, x: Tensor, name: str, c1: int, c3r: int, c3: int, c5r: int, c5: int, pool_proj: int
) -> Tensor:
    """Inception v1 module: 1x1 | 1x1-3x3 | 1x1-5x5 | 3x3 max pool-1x1, concatenated."""
    b1 = b.conv(x, c1, 1, name=f"{name}_1x1")
    b2 = b.conv(b.conv(x, c3r, 1, name=f"{name}_3x3_reduce"), c3, 3, pad=1, name=f"{name}_3x3")
    b3 = b.conv(b.conv(x, c5r, 1, name=f"{name}_5x5_reduce"), c5, 5, pad=2, name=f"{name}_5x5")
    p = b.pool(x, 3, stride=1, pad=1, ceil_mode=True, name=f"{name}_pool")
    b4 = b.conv(p, pool_proj, 1, name=f"{name}_pool_proj")
    return b.concat(b1, b2, b3, b4)


_GOOGLENET_MODULES: tuple[tuple[str, int, int, int, int, int, int], ...] = (
    ("inception_3a", 64, 96, 128, 16, 32, 32),
    ("inception_3b", 128, 128, 192, 32, 96, 64),
    ("inception_4a", 192, 96, 208, 16, 48, 64),
    ("inception_4b", 160, 112, 224, 24, 64, 64),
    ("inception_4c", 128, 128, 256, 24, 64, 64),
    ("inception_4d", 112, 144, 288, 32, 64, 64),
    ("inception_4e", 256, 160, 320, 32, 128, 128),
    ("inception_5a", 256, 160, 320, 32, 128, 128),
    ("inception_5b", 384, 192, 384, 48, 128, 128),
)
"""Szegedy et al. 2015, Table 1: #1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5, pool proj."""


@register(
    "googlenet",
    "GoogLeNet / Inception v1 (original 5x5 branches, ceil-mode pools), 224x224",
    1.586,
    "Szegedy et al., CVPR 2015, Table 1: sum of the per-layer ops column (the text rounds it to 1.5 G)",
)
def googlenet(batch: int = 1) -> Workload:
    """GoogLeNet (Inception v1) without the auxiliary classifiers: 57 convolutions and the classifier.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    b = NetBuilder("googlenet", 3, 224, 224, batch=batch)
    x = b.conv(b.input, 64, 7, stride=2, pad=3, name="conv1")
    x = b.pool(x, 3, stride=2, ceil_mode=True, name="pool1")
    x = b.conv(x, 64, 1, name="conv2_reduce")
    x = b.conv(x, 192, 3, pad=1, name="conv2")
    x = b.pool(x, 3, stride=2, ceil_mode=True, name="pool2")
    pools_before = {"inception_4a": "pool3", "inception_5a": "pool4"}
    for module in _GOOGLENET_MODULES:
        if module[0] in pools_before:
            x = b.pool(x, 3, stride=2, ceil_mode=True, name=pools_before[module[0]])
        x = _inception_v1(b, x, *module)
    _classifier(b, x)
    return b.build()


# ----------------------------------------------------------------- Inception v3
def _inception_a(b: NetBuilder, x: Tensor, pool_features: int, name: str) -> Tensor:
    """Inception-v3 35x35 module (torchvision ``InceptionA``)."""
    b1 = b.conv(x, 64, 1, name=f"{name}_branch1x1")
    b5 = b.conv(x, 48, 1, name=f"{name}_branch5x5_1")
    b5 = b.conv(b5, 64, 5, pad=2, name=f"{name}_branch5x5_2")
    d = b.conv(x, 64, 1, name=f"{name}_branch3x3dbl_1")
    d = b.conv(d, 96, 3, pad=1, name=f"{name}_branch3x3dbl_2")
    d = b.conv(d, 96, 3, pad=1, name=f"{name}_branch3x3dbl_3")
    p = b.pool(x, 3, stride=1, pad=1, name=f"{name}_avgpool")
    p = b.conv(p, pool_features, 1, name=f"{name}_branch_pool")
    return b.concat(b1, b5, d, p)


def _inception_b(b: NetBuilder, x: Tensor, name: str) -> Tensor:
    """Inception-v3 grid reduction 35 -> 17 (torchvision ``InceptionB``)."""
    b3 = b.conv(x, 384, 3, stride=2, name=f"{name}_branch3x3")
    d = b.conv(x, 64, 1, name=f"{name}_branch3x3dbl_1")
    d = b.conv(d, 96, 3, pad=1, name=f"{name}_branch3x3dbl_2")
    d = b.conv(d, 96, 3, stride=2, name=f"{name}_branch3x3dbl_3")
    p = b.pool(x, 3, stride=2, name=f"{name}_maxpool")
    return b.concat(b3, d, p)


def _inception_c(b: NetBuilder, x: Tensor, c7: int, name: str) -> Tensor:
    """Inception-v3 17x17 module with factorized 7x7 convolutions (torchvision ``InceptionC``)."""
    b1 = b.conv(x, 192, 1, name=f"{name}_branch1x1")
    s = b.conv(x, c7, 1, name=f"{name}_branch7x7_1")
    s = b.conv(s, c7, (1, 7), pad=(0, 3), name=f"{name}_branch7x7_2")
    s = b.conv(s, 192, (7, 1), pad=(3, 0), name=f"{name}_branch7x7_3")
    d = b.conv(x, c7, 1, name=f"{name}_branch7x7dbl_1")
    d = b.conv(d, c7, (7, 1), pad=(3, 0), name=f"{name}_branch7x7dbl_2")
    d = b.conv(d, c7, (1, 7), pad=(0, 3), name=f"{name}_branch7x7dbl_3")
    d = b.conv(d, c7, (7, 1), pad=(3, 0), name=f"{name}_branch7x7dbl_4")
    d = b.conv(d, 192, (1, 7), pad=(0, 3), name=f"{name}_branch7x7dbl_5")
    p = b.pool(x, 3, stride=1, pad=1, name=f"{name}_avgpool")
    p = b.conv(p, 192, 1, name=f"{name}_branch_pool")
    return b.concat(b1, s, d, p)


def _inception_d(b: NetBuilder, x: Tensor, name: str) -> Tensor:
    """Inception-v3 grid reduction 17 -> 8 (torchvision ``InceptionD``)."""
    b3 = b.conv(x, 192, 1, name=f"{name}_branch3x3_1")
    b3 = b.conv(b3, 320, 3, stride=2, name=f"{name}_branch3x3_2")
    s = b.conv(x, 192, 1, name=f"{name}_branch7x7x3_1")
    s = b.conv(s, 192, (1, 7), pad=(0, 3), name=f"{name}_branch7x7x3_2")
    s = b.conv(s, 192, (7, 1), pad=(3, 0), name=f"{name}_branch7x7x3_3")
    s = b.conv(s, 192, 3, stride=2, name=f"{name}_branch7x7x3_4")
    p = b.pool(x, 3, stride=2, name=f"{name}_maxpool")
    return b.concat(b3, s, p)


def _inception_e(b: NetBuilder, x: Tensor, name: str) -> Tensor:
    """Inception-v3 8x8 module with split 1x3 / 3x1 branches (torchvision ``InceptionE``)."""
    b1 = b.conv(x, 320, 1, name=f"{name}_branch1x1")
    t = b.conv(x, 384, 1, name=f"{name}_branch3x3_1")
    ta = b.conv(t, 384, (1, 3), pad=(0, 1), name=f"{name}_branch3x3_2a")
    tb = b.conv(t, 384, (3, 1), pad=(1, 0), name=f"{name}_branch3x3_2b")
    d = b.conv(x, 448, 1, name=f"{name}_branch3x3dbl_1")
    d = b.conv(d, 384, 3, pad=1, name=f"{name}_branch3x3dbl_2")
    da = b.conv(d, 384, (1, 3), pad=(0, 1), name=f"{name}_branch3x3dbl_3a")
    db = b.conv(d, 384, (3, 1), pad=(1, 0), name=f"{name}_branch3x3dbl_3b")
    p = b.pool(x, 3, stride=1, pad=1, name=f"{name}_avgpool")
    p = b.conv(p, 192, 1, name=f"{name}_branch_pool")
    return b.concat(b1, ta, tb, da, db, p)


@register(
    "inception_v3",
    "Inception-v3 (torchvision, no auxiliary head), 299x299",
    5.71,
    "torchvision model table: 5.71 GFLOPS (MACs, conv+fc)",
)
def inception_v3(batch: int = 1) -> Workload:
    """Inception-v3: 94 convolutions in a stem and 11 mixed modules, and the classifier.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    b = NetBuilder("inception_v3", 3, 299, 299, batch=batch)
    x = b.conv(b.input, 32, 3, stride=2, name="Conv2d_1a_3x3")
    x = b.conv(x, 32, 3, name="Conv2d_2a_3x3")
    x = b.conv(x, 64, 3, pad=1, name="Conv2d_2b_3x3")
    x = b.pool(x, 3, stride=2, name="maxpool1")
    x = b.conv(x, 80, 1, name="Conv2d_3b_1x1")
    x = b.conv(x, 192, 3, name="Conv2d_4a_3x3")
    x = b.pool(x, 3, stride=2, name="maxpool2")
    x = _inception_a(b, x, 32, "Mixed_5b")
    x = _inception_a(b, x, 64, "Mixed_5c")
    x = _inception_a(b, x, 64, "Mixed_5d")
    x = _inception_b(b, x, "Mixed_6a")
    for name, c7 in (("Mixed_6b", 128), ("Mixed_6c", 160), ("Mixed_6d", 160), ("Mixed_6e", 192)):
        x = _inception_c(b, x, c7, name)
    x = _inception_d(b, x, "Mixed_7a")
    x = _inception_e(b, x, "Mixed_7b")
    x = _inception_e(b, x, "Mixed_7c")
    _classifier(b, x)
    return b.build()


# ---------------------------------------------------------- Inception-ResNet-v1
def _materialize(b: NetBuilder, x: Tensor, name: str) -> Tensor:
    """``x`` as one layer's output: a concatenation is copied by a 1x1 pooling window.

    An element-wise operand must be a single layer's output, while the residual
    input of the first block after a reduction is a concatenation of branches. The
    copy (one op per element) stands for writing the concatenated tensor.
    """
    if len(x.producers) == 1:
        return x
    return b.pool(x, 1, stride=1, name=name)


def _block35(b: NetBuilder, x: Tensor, name: str) -> Tensor:
    """Inception-ResNet-A (35x35 grid in the paper): three towers, a linear 1x1 up-projection, residual add."""
    t0 = b.conv(x, 32, 1, name=f"{name}_Branch_0_Conv2d_1x1")
    t1 = b.conv(x, 32, 1, name=f"{name}_Branch_1_Conv2d_0a_1x1")
    t1 = b.conv(t1, 32, 3, pad="same", name=f"{name}_Branch_1_Conv2d_0b_3x3")
    t2 = b.conv(x, 32, 1, name=f"{name}_Branch_2_Conv2d_0a_1x1")
    t2 = b.conv(t2, 32, 3, pad="same", name=f"{name}_Branch_2_Conv2d_0b_3x3")
    t2 = b.conv(t2, 32, 3, pad="same", name=f"{name}_Branch_2_Conv2d_0c_3x3")
    up = b.conv(b.concat(t0, t1, t2), x.channels, 1, name=f"{name}_Conv2d_1x1")
    return b.add(x, up, name=f"{name}_add")


def _block17(b: NetBuilder, x: Tensor, name: str) -> Tensor:
    """Inception-ResNet-B (17x17 grid in the paper): 1x1 tower and 1x7-7x1 tower, up-projection, residual."""
    t0 = b.conv(x, 128, 1, name=f"{name}_Branch_0_Conv2d_1x1")
    t1 = b.conv(x, 128, 1, name=f"{name}_Branch_1_Conv2d_0a_1x1")
    t1 = b.conv(t1, 128, (1, 7), pad="same", name=f"{name}_Branch_1_Conv2d_0b_1x7")
    t1 = b.conv(t1, 128, (7, 1), pad="same", name=f"{name}_Branch_1_Conv2d_0c_7x1")
    up = b.conv(b.concat(t0, t1), x.channels, 1, name=f"{name}_Conv2d_1x1")
    return b.add(x, up, name=f"{name}_add")


def _block8(b: NetBuilder, x: Tensor, name: str) -> Tensor:
    """Inception-ResNet-C (8x8 grid in the paper): 1x1 tower and 1x3-3x1 tower, up-projection, residual."""
    t0 = b.conv(x, 192, 1, name=f"{name}_Branch_0_Conv2d_1x1")
    t1 = b.conv(x, 192, 1, name=f"{name}_Branch_1_Conv2d_0a_1x1")
    t1 = b.conv(t1, 192, (1, 3), pad="same", name=f"{name}_Branch_1_Conv2d_0b_1x3")
    t1 = b.conv(t1, 192, (3, 1), pad="same", name=f"{name}_Branch_1_Conv2d_0c_3x1")
    up = b.conv(b.concat(t0, t1), x.channels, 1, name=f"{name}_Conv2d_1x1")
    return b.add(x, up, name=f"{name}_add")


def _reduction_a(b: NetBuilder, x: Tensor, k: int, l: int, m: int, n: int) -> Tensor:  # noqa: E741 - paper's names
    """Inception-ResNet Reduction-A with the paper's filter counts ``k, l, m, n``."""
    t0 = b.conv(x, n, 3, stride=2, name="Mixed_6a_Branch_0_Conv2d_1a_3x3")
    t1 = b.conv(x, k, 1, name="Mixed_6a_Branch_1_Conv2d_0a_1x1")
    t1 = b.conv(t1, l, 3, pad="same", name="Mixed_6a_Branch_1_Conv2d_0b_3x3")
    t1 = b.conv(t1, m, 3, stride=2, name="Mixed_6a_Branch_1_Conv2d_1a_3x3")
    p = b.pool(x, 3, stride=2, name="Mixed_6a_Branch_2_MaxPool_1a_3x3")
    return b.concat(t0, t1, p)


def _reduction_b(b: NetBuilder, x: Tensor) -> Tensor:
    """Inception-ResNet-v1 Reduction-B: three strided conv towers and a max pool."""
    t0 = b.conv(x, 256, 1, name="Mixed_7a_Branch_0_Conv2d_0a_1x1")
    t0 = b.conv(t0, 384, 3, stride=2, name="Mixed_7a_Branch_0_Conv2d_1a_3x3")
    t1 = b.conv(x, 256, 1, name="Mixed_7a_Branch_1_Conv2d_0a_1x1")
    t1 = b.conv(t1, 256, 3, stride=2, name="Mixed_7a_Branch_1_Conv2d_1a_3x3")
    t2 = b.conv(x, 256, 1, name="Mixed_7a_Branch_2_Conv2d_0a_1x1")
    t2 = b.conv(t2, 256, 3, pad="same", name="Mixed_7a_Branch_2_Conv2d_0b_3x3")
    t2 = b.conv(t2, 256, 3, stride=2, name="Mixed_7a_Branch_2_Conv2d_1a_3x3")
    p = b.pool(x, 3, stride=2, name="Mixed_7a_Branch_3_MaxPool_1a_3x3")
    return b.concat(t0, t1, t2, p)


@register(
    "inception_resnet_v1",
    "Inception-ResNet-v1, FaceNet variant (5/10/6 A/B/C blocks, 512-d embedding), 160x160",
    1.423,
    "OpenVINO Open Model Zoo, facenet-20180408-102900: 2.846 GFLOPs = 1.423 GMAC at 160x160",
)
def inception_resnet_v1(batch: int = 1) -> Workload:
    """Inception-ResNet-v1 as in FaceNet (davidsandberg/facenet ``inception_resnet_v1.py``).

    The stem, blocks and reductions are those of Szegedy et al. 2017 (Figures 10-14);
    the network ends with average pooling and a 512-d bottleneck instead of the
    1000-class classifier, at FaceNet's 160x160 input.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    b = NetBuilder("inception_resnet_v1", 3, 160, 160, batch=batch)
    x = b.conv(b.input, 32, 3, stride=2, name="Conv2d_1a_3x3")
    x = b.conv(x, 32, 3, name="Conv2d_2a_3x3")
    x = b.conv(x, 64, 3, pad="same", name="Conv2d_2b_3x3")
    x = b.pool(x, 3, stride=2, name="MaxPool_3a_3x3")
    x = b.conv(x, 80, 1, name="Conv2d_3b_1x1")
    x = b.conv(x, 192, 3, name="Conv2d_4a_3x3")
    x = b.conv(x, 256, 3, stride=2, name="Conv2d_4b_3x3")
    for i in range(5):
        x = _block35(b, x, f"Repeat_block35_{i + 1}")
    x = _materialize(b, _reduction_a(b, x, 192, 192, 256, 384), "Mixed_6a_concat")
    for i in range(10):
        x = _block17(b, x, f"Repeat_1_block17_{i + 1}")
    x = _materialize(b, _reduction_b(b, x), "Mixed_7a_concat")
    for i in range(5):
        x = _block8(b, x, f"Repeat_2_block8_{i + 1}")
    x = _block8(b, x, "Block8")
    _classifier(b, x, 512)
    return b.build()


# ------------------------------------------------------------------- MobileNets
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
    _classifier(b, x)
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
    _classifier(b, x)
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
    _classifier(b, x)
    return b.build()


# ------------------------------------------------------------------- SqueezeNet
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
    x = b.conv(x, _CLASSES, 1, name="conv10")
    b.global_pool(x, name="avgpool")
    return b.build()


# -------------------------------------------------------------------- Tiny YOLO
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
