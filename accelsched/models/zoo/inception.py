"""GoogLeNet (Inception v1), Inception v3 and Inception-ResNet-v1.

Built as torchvision and the papers describe them (see :mod:`accelsched.models.zoo` for
what counts as a layer and which MACs ``reference_gmac`` counts).

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
"""

from __future__ import annotations

from accelsched.models.builder import NetBuilder, Tensor
from accelsched.models.workload import Workload
from accelsched.models.zoo.catalog import register
from accelsched.models.zoo.classifier import classifier

__all__ = ["googlenet", "inception_resnet_v1", "inception_v3"]


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
    classifier(b, x)
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
    classifier(b, x)
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
    classifier(b, x, 512)
    return b.build()
