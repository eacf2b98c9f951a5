"""Workload: graph validation, order, shapes, serialization."""

from __future__ import annotations

import pytest

from accelsched.models import Layer, NetBuilder, OpKind, Workload


def conv(name: str, k: int, c: int, hw: int = 8, inputs: tuple[str, ...] = (), f: int = 1) -> Layer:
    pad = (f // 2,) * 4
    return Layer(name, OpKind.CONV, K=k, C=c, OY=hw, OX=hw, FY=f, FX=f, padding=pad, inputs=inputs)


def test_layers_are_put_in_topological_order_stably() -> None:
    w = Workload("w", (conv("b", 4, 4, inputs=("a",)), conv("a", 4, 3), conv("c", 4, 4, inputs=("a",))))
    assert w.names == ("a", "b", "c")
    assert w.successors["a"] == ("b", "c")
    assert w.sources == ("a",) and w.sinks == ("b", "c")
    assert not w.is_chain


def test_concat_channels_must_add_up() -> None:
    a, b = conv("a", 4, 3), conv("b", 6, 3)
    Workload("ok", (a, b, conv("c", 2, 10, inputs=("a", "b"))))
    with pytest.raises(ValueError, match=r"reads 9 input channels but its producers make 10 \(a:4 \+ b:6\)"):
        Workload("bad", (a, b, conv("c", 2, 9, inputs=("a", "b"))))


def test_spatial_mismatch_is_rejected() -> None:
    with pytest.raises(ValueError, match="reads 8 input rows but producer 'a' makes 16"):
        Workload("bad", (conv("a", 4, 3, hw=16), conv("b", 4, 4, hw=8, inputs=("a",))))


def test_unknown_producer_duplicate_name_and_cycle() -> None:
    with pytest.raises(ValueError, match="reads unknown layer"):
        Workload("w", (conv("a", 4, 4, inputs=("zz",)),))
    with pytest.raises(ValueError, match="used twice"):
        Workload("w", (conv("a", 4, 3), conv("a", 4, 3)))
    with pytest.raises(ValueError, match="cycle"):
        Workload("w", (conv("a", 4, 4, inputs=("b",)), conv("b", 4, 4, inputs=("a",))))


def test_eltwise_operands_and_broadcast() -> None:
    a, b = conv("a", 4, 3), conv("b", 4, 3)
    add = Layer("s", OpKind.ELTWISE, K=1, C=1, G=4, OY=8, OX=8, inputs=("a", "b"))
    Workload("ok", (a, b, add))
    gate = Layer("g", OpKind.FC, K=4, C=4, OY=1, OX=1, inputs=())
    scale = Layer("m", OpKind.ELTWISE, K=1, C=1, G=4, OY=8, OX=8, inputs=("a", "g"))
    Workload("se", (a, gate, scale))
    with pytest.raises(ValueError, match="operand 'b' is 6x8x8, expected 4x8x8"):
        Workload("bad", (a, conv("b", 6, 3), add.replace(inputs=("a", "b"))))


def test_matmul_operand_sizes() -> None:
    b = NetBuilder("att", 16, 1, 8)
    q = b.fc(b.input, 16, name="q")
    k = b.fc(b.input, 16, name="k")
    b.matmul(q, k, heads=2, rows=8, inner=8, cols=8)
    w = b.build()
    assert w["matmul1"].inputs == ("q", "k")
    bad = w["matmul1"].replace(C=4)
    with pytest.raises(ValueError, match="I operand has"):
        w.replace_layers(matmul1=bad)


def test_batch_must_agree_and_with_batch() -> None:
    w = Workload("w", (conv("a", 4, 3), conv("b", 4, 4, inputs=("a",))))
    with pytest.raises(ValueError, match="batch B=2 differs"):
        w.replace_layers(b=w["b"].replace(B=2))
    w2 = w.with_batch(2)
    assert w2.macs == 2 * w.macs and w2.batch == 2
    assert w2.weight_bytes == w.weight_bytes


def test_round_trip_json(tmp_path) -> None:  # type: ignore[no-untyped-def]
    w = Workload("w", (conv("a", 4, 3, f=3), conv("b", 4, 4, inputs=("a",))))
    assert Workload.from_dict(w.to_dict()) == w
    path = tmp_path / "w.json"
    w.save_json(path)
    assert Workload.load_json(path) == w
    assert hash(Workload.load_json(path)) == hash(w)


def test_networkx_view() -> None:
    w = Workload("w", (conv("a", 4, 3), conv("b", 4, 4, inputs=("a",))))
    g = w.to_networkx()
    assert list(g.edges) == [("a", "b")]
    assert g.nodes["a"]["layer"] is w["a"]
