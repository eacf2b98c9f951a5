"""Layer: validation, derived quantities, serialization."""

from __future__ import annotations

import pytest

from accelsched.models.layer import Layer, OpKind, conv_output_size, effective_padding


def test_derived_quantities_of_a_strided_conv() -> None:
    layer = Layer("c", OpKind.CONV, K=64, C=3, OY=112, OX=112, FY=7, FX=7, stride_y=2, stride_x=2, padding=(3, 3, 2, 2))
    assert layer.macs == 64 * 3 * 112 * 112 * 49
    assert (layer.IY, layer.IX) == (224, 224)
    assert layer.weight_bytes == 64 * 3 * 49
    assert layer.input_bytes == 3 * 224 * 224
    assert layer.output_bytes == 64 * 112 * 112


def test_grouped_and_depthwise() -> None:
    dw = Layer("dw", OpKind.CONV, K=1, C=1, G=32, OY=8, OX=8, FY=3, FX=3, padding=(1, 1, 1, 1))
    assert (dw.in_channels, dw.out_channels) == (32, 32)
    assert dw.macs == 32 * 64 * 9
    assert dw.weight_bytes == 32 * 9


def test_weightless_kinds_and_eltwise_operands() -> None:
    pool = Layer("p", OpKind.POOL, K=1, C=1, G=16, OY=4, OX=4, FY=2, FX=2, stride_y=2, stride_x=2)
    assert pool.weight_bytes == 0 and pool.w_operand_bytes == 0
    add = Layer("a", OpKind.ELTWISE, K=1, C=1, G=16, OY=4, OX=4, inputs=("x", "y", "z"))
    assert add.n_operands == 3
    assert add.macs == 16 * 16 * 2
    assert add.input_bytes == 3 * 16 * 16


def test_matmul_w_operand_is_an_activation() -> None:
    mm = Layer("m", OpKind.MATMUL, K=128, C=64, G=12, OY=1, OX=128, B=2, inputs=("q", "k"))
    assert mm.weight_bytes == 0
    assert mm.w_operand_bytes == 2 * 12 * 128 * 64
    assert mm.activation_input_bytes == mm.input_bytes + mm.w_operand_bytes


def test_precisions_round_bytes_up() -> None:
    layer = Layer("c", OpKind.FC, K=3, C=1, OY=1, OX=1, weight_bits=4, output_bits=4)
    assert layer.weight_bytes == 2
    assert layer.output_bytes == 2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"K": 0}, "field K must be a positive integer, got 0"),
        ({"OY": 2.5}, "field OY must be a positive integer"),
        ({"kind": "lstm"}, "field kind must be one of"),
        ({"padding": (1, 1, 1)}, "field padding must be 4"),
        ({"padding": (3, 0, 0, 0)}, "must be smaller than the filter extent"),
        ({"name": ""}, "non-empty string"),
        ({"inputs": ("a", "a")}, "names a producer twice"),
        ({"inputs": ("L",)}, "cannot be its own input"),
    ],
)
def test_validation_names_field_and_value(changes: dict[str, object], message: str) -> None:
    base: dict[str, object] = {"name": "L", "kind": OpKind.CONV, "K": 2, "C": 2, "OY": 4, "OX": 4, "FY": 3, "FX": 3}
    base.update(changes)
    with pytest.raises(ValueError, match=message):
        Layer(**base)  # type: ignore[arg-type]


def test_kind_rules() -> None:
    with pytest.raises(ValueError, match="depthwise: K and C must be 1"):
        Layer("p", OpKind.POOL, K=2, C=1, OY=2, OX=2)
    with pytest.raises(ValueError, match="1x1 window"):
        Layer("f", OpKind.FC, K=2, C=2, OY=1, OX=1, FY=3)
    with pytest.raises(ValueError, match="exactly two producers"):
        Layer("m", OpKind.MATMUL, K=2, C=2, OY=1, OX=4, inputs=("a",))


def test_round_trip_and_unknown_fields() -> None:
    layer = Layer("c", OpKind.CONV, K=8, C=4, OY=5, OX=6, FY=3, FX=1, padding=(1, 0, 1, 0), inputs=("a", "b"))
    assert Layer.from_dict(layer.to_dict()) == layer
    data = layer.to_dict() | {"colour": "red"}
    with pytest.raises(ValueError, match="unknown field"):
        Layer.from_dict(data)


def test_shape_key_ignores_name_and_inputs() -> None:
    a = Layer("a", OpKind.CONV, K=8, C=4, OY=5, OX=6, inputs=("x",))
    assert a.shape_key() == a.replace(name="b", inputs=()).shape_key()
    assert a.shape_key() != a.replace(K=9).shape_key()


@pytest.mark.parametrize(
    ("size", "kernel", "stride", "pad"), [(224, 7, 2, 3), (224, 3, 2, 1), (7, 3, 1, 1), (56, 1, 2, 0)]
)
def test_effective_padding_makes_input_rows_exact(size: int, kernel: int, stride: int, pad: int) -> None:
    out = conv_output_size(size, kernel, stride, pad, pad)
    bottom = effective_padding(size, out, kernel, stride, pad)
    layer = Layer("c", OpKind.CONV, K=1, C=1, OY=out, OX=out, FY=kernel, FX=kernel, stride_y=stride,
                  stride_x=stride, padding=(pad, pad, bottom, bottom))  # fmt: skip
    assert size - stride < layer.IY <= size
