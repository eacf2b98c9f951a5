"""NetBuilder: output sizes follow the ONNX / PyTorch conventions."""

from __future__ import annotations

import pytest

from accelsched.models import NetBuilder


@pytest.mark.parametrize(
    ("size", "kernel", "stride", "pad", "ceil_mode", "expected"),
    [
        (224, 7, 2, 3, False, 112),
        (112, 3, 2, 1, False, 56),
        (112, 3, 2, 0, True, 56),  # GoogLeNet's ceil-mode pools
        (56, 3, 2, 0, True, 28),
        (14, 3, 1, 1, True, 14),
        (13, 3, 2, 0, True, 6),
        (13, 3, 2, 0, False, 6),
    ],
)
def test_pool_output_size(size: int, kernel: int, stride: int, pad: int, ceil_mode: bool, expected: int) -> None:
    b = NetBuilder("n", 4, size, size)
    x = b.conv(b.input, 4, 1)
    y = b.pool(x, kernel, stride=stride, pad=pad, ceil_mode=ceil_mode)
    assert (y.height, y.width) == (expected, expected)
    b.build()  # the consumer's padding must describe exactly the rows it reads


def test_same_padding_with_stride() -> None:
    b = NetBuilder("n", 3, 225, 225)
    y = b.conv(b.input, 8, 3, stride=2, pad="same")
    assert (y.height, y.width) == (113, 113)
    b.build()


def test_concat_fc_and_names() -> None:
    b = NetBuilder("n", 3, 8, 8)
    x1 = b.conv(b.input, 4, 3, pad=1, name="left")
    x2 = b.conv(b.input, 6, 1, name="right")
    cat = NetBuilder.concat(x1, x2)
    assert cat.channels == 10 and cat.producers == ("left", "right")
    y = b.fc(cat, 10)
    w = b.build()
    assert w[y.producers[0]].FY == 8  # flatten + fc covers the whole map
    with pytest.raises(ValueError, match="used twice"):
        b.conv(b.input, 4, 1, name="left")


def test_concat_with_the_network_input_is_refused() -> None:
    b = NetBuilder("n", 3, 8, 8)
    x = b.conv(b.input, 3, 1)
    with pytest.raises(ValueError, match="network input cannot be concatenated"):
        NetBuilder.concat(b.input, x)
