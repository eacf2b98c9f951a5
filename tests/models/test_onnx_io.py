"""Tests of ONNX import (load_onnx) and export (to_onnx)."""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from accelsched.errors import InputError
from accelsched.models import Layer, NetBuilder, OpKind, Workload
from accelsched.models.onnx_export import to_onnx
from accelsched.models.onnx_import import load_onnx

LIGHT = Path(onnx.__file__).parent / "backend/test/data/light"
LIGHT_MODELS = [
    "bvlc_alexnet",
    "zfnet512",
    "vgg19",
    "inception_v1",
    "inception_v2",
    "resnet50",
    "shufflenet",
    "squeezenet",
    "densenet121",
]
WEIGHTED = (OpKind.CONV, OpKind.FC)


def _kinds(workload: Workload) -> dict[str, int]:
    counts = collections.Counter(layer.kind.value for layer in workload)
    return {kind.value: counts.get(kind.value, 0) for kind in OpKind}


def _weighted_macs(workload: Workload) -> int:
    return sum(layer.macs for layer in workload if layer.kind in WEIGHTED)


# ============================================================ ONNX-side counting
class _Graph:
    """The light model read with ``onnx`` only: shapes, producers, constants."""

    def __init__(self, model: onnx.ModelProto) -> None:
        model = onnx.shape_inference.infer_shapes(model)
        self.nodes = list(model.graph.node)
        self.producer = {out: node for node in self.nodes for out in node.output}
        self.shape = {
            v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in [*model.graph.input, *model.graph.value_info, *model.graph.output]
        }
        for init in model.graph.initializer:
            self.shape[init.name] = list(init.dims)
        self.const = {init.name for init in model.graph.initializer}
        for node in self.nodes:
            if all(i in self.const for i in node.input):
                self.const.update(node.output)

    def source(self, tensor: str, through: Sequence[str]) -> onnx.NodeProto | None:
        """The node producing ``tensor``, skipping ops in ``through``."""
        node = self.producer.get(tensor)
        while node is not None and node.op_type in through:
            node = self.producer.get(node.input[0])
        return node

    def flattened_map(self, gemm: onnx.NodeProto) -> bool:
        """Whether a Gemm reads a C x H x W map (H*W > 1) flattened by Reshape/Flatten."""
        node = self.producer.get(gemm.input[0])
        if node is None or node.op_type not in ("Reshape", "Flatten"):
            return False
        shape = self.shape[node.input[0]]
        return len(shape) == 4 and shape[2] * shape[3] > 1

    def macs(self) -> int:
        """Conv + Gemm multiply-accumulates from the inferred shapes."""
        total = 0
        for node in self.nodes:
            out = math.prod(self.shape[node.output[0]])
            if node.op_type == "Conv":
                total += out * math.prod(self.shape[node.input[1]][1:])
            elif node.op_type == "Gemm":
                total += out * self.shape[node.input[0]][1]
        return total

    def counts(self) -> dict[str, int]:
        """Layers per kind, by the import rules, counted on the ONNX graph."""
        ops = collections.Counter(node.op_type for node in self.nodes)
        gemm_conv = sum(1 for n in self.nodes if n.op_type == "Gemm" and self.flattened_map(n))
        binary = [
            n
            for n in self.nodes
            if n.op_type in ("Sum", "Add", "Mul") and sum(i not in self.const for i in n.input) >= 2
        ]
        passing = ("Relu", "BatchNormalization", "Dropout")
        concat_operands = {
            src.output[0]
            for n in binary
            for i in n.input
            if (src := self.source(i, passing)) is not None and src.op_type == "Concat"
        }
        pools = ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool")
        return {
            "conv": ops["Conv"] + gemm_conv,
            "fc": ops["Gemm"] - gemm_conv,
            "matmul": 0,
            "pool": sum(ops[p] for p in pools) + len(concat_operands),
            "eltwise": len(binary),
        }


# Published architectures (papers): weighted layers split as conv / fc, pooling
# layers, residual additions. Adjustments to the import's conventions:
# ``fc_on_map`` published FC layers reading a multi-pixel map, imported as CONV
# (NetBuilder.fc); ``fc_as_conv`` classifiers stored as a 1x1 Conv in the file;
# ``identity`` concatenations read by an addition (ShuffleNet stride-2 unit outputs),
# materialized by a 1x1 POOL because an ELTWISE operand is one layer's output.
PUBLISHED = {
    # AlexNet: 5 conv + 3 fc, 3 max pools
    "bvlc_alexnet": {"conv": 5, "fc": 3, "pool": 3, "eltwise": 0, "fc_on_map": 1},
    # ZFNet: 5 conv + 3 fc, 3 max pools
    "zfnet512": {"conv": 5, "fc": 3, "pool": 3, "eltwise": 0, "fc_on_map": 1},
    # VGG-19: 16 conv + 3 fc, 5 max pools
    "vgg19": {"conv": 16, "fc": 3, "pool": 5, "eltwise": 0, "fc_on_map": 1},
    # GoogLeNet: 3 stem conv + 9 inception x 6 conv, 1 fc; 4 max + 9 branch max + 1 avg pool
    "inception_v1": {"conv": 57, "fc": 1, "pool": 14, "eltwise": 0},
    # BN-Inception: 3 stem + 8 modules x 7 + 2 reduction x 5 conv, 1 fc;
    # 2 stem + 8 branch + 2 reduction max/avg pools + 1 global
    "inception_v2": {"conv": 69, "fc": 1, "pool": 13, "eltwise": 0},
    # ResNet-50: 1 + 16 x 3 + 4 projection conv, 1 fc, max + avg pool, 16 additions
    "resnet50": {"conv": 53, "fc": 1, "pool": 2, "eltwise": 16},
    # ShuffleNet v1: 1 + 16 units x 3 conv, 1 fc; max + 3 shortcut avg + global; 13 additions
    "shufflenet": {"conv": 49, "fc": 1, "pool": 5, "eltwise": 13, "identity": 3},
    # SqueezeNet: conv1 + 8 fire x 3 + conv10, 3 max + 1 global average
    "squeezenet": {"conv": 26, "fc": 0, "pool": 4, "eltwise": 0},
    # DenseNet-121: 1 + 58 x 2 + 3 transition conv, 1 fc; max + 3 avg + global
    "densenet121": {"conv": 120, "fc": 1, "pool": 5, "eltwise": 0, "fc_as_conv": 1},
}


def _expected_counts(name: str) -> dict[str, int]:
    arch = PUBLISHED[name]
    moved = arch.get("fc_on_map", 0) + arch.get("fc_as_conv", 0)
    return {
        "conv": arch["conv"] + moved,
        "fc": arch["fc"] - moved,
        "matmul": 0,
        "pool": arch["pool"] + arch.get("identity", 0),
        "eltwise": arch["eltwise"],
    }


@pytest.fixture(scope="module")
def light() -> dict[str, Workload]:
    return {name: load_onnx(LIGHT / f"light_{name}.onnx") for name in LIGHT_MODELS}


@pytest.mark.parametrize("name", LIGHT_MODELS)
def test_light_model_layer_counts(name: str, light: dict[str, Workload]) -> None:
    workload = light[name]
    graph = _Graph(onnx.load(LIGHT / f"light_{name}.onnx"))
    assert _kinds(workload) == graph.counts()
    assert _kinds(workload) == _expected_counts(name)


@pytest.mark.parametrize("name", LIGHT_MODELS)
def test_light_model_macs_match_the_onnx_graph(name: str, light: dict[str, Workload]) -> None:
    graph = _Graph(onnx.load(LIGHT / f"light_{name}.onnx"))
    assert _weighted_macs(light[name]) == graph.macs()


@pytest.mark.parametrize(
    ("name", "gmac", "rel"),
    [
        ("vgg19", 19.6, 0.01),
        ("resnet50", 4.1, 0.01),
        ("inception_v2", 2.0, 0.02),
        ("densenet121", 2.87, 0.02),
    ],
)
def test_light_model_macs_match_published(name: str, gmac: float, rel: float, light: dict[str, Workload]) -> None:
    assert _weighted_macs(light[name]) / 1e9 == pytest.approx(gmac, rel=rel)


def test_alexnet_macs_match_published_at_227(tmp_path: Path) -> None:
    """The published 0.72 GMAC is for 227x227 inputs; the file declares 224x224 (0.65 GMAC)."""
    model = onnx.load(LIGHT / "light_bvlc_alexnet.onnx")
    dims = model.graph.input[0].type.tensor_type.shape.dim
    dims[2].dim_value = dims[3].dim_value = 227
    del model.graph.value_info[:]
    onnx.save(model, tmp_path / "alexnet227.onnx")
    assert _weighted_macs(load_onnx(tmp_path / "alexnet227.onnx")) / 1e9 == pytest.approx(0.724, rel=0.01)


def test_googlenet_macs_match_the_paper_table_at_the_file_map_sizes(light: dict[str, Workload]) -> None:
    """GoogLeNet's 1.59 GMAC (paper, Table 1) is for 56/28/14/7 maps (Caffe ceil-mode
    pooling); the file pools in floor mode (55/27/13/6). Scaling each stage of the
    paper's table by the map areas gives the file's count."""
    side = [112]
    for _ in range(4):  # 3x3/2 max pools without padding, floor mode
        side.append((side[-1] - 3) // 2 + 1)
    paper = [  # (MOPs in the paper's Table 1, paper map side, file map side)
        (118, 112, side[0]),
        (360, 56, side[1]),
        (128 + 304, 28, side[2]),
        (73 + 88 + 100 + 119 + 170, 14, side[3]),
        (54 + 71, 7, side[4]),
        (1, 1, 1),
    ]
    expected = sum(ops * (f / p) ** 2 for ops, p, f in paper) * 1e6
    assert side == [112, 55, 27, 13, 6]
    assert _weighted_macs(light["inception_v1"]) == pytest.approx(expected, rel=0.005)


def _squeezenet(version: str, *, ceil_mode: bool) -> Workload:
    """SqueezeNet from the paper / v1.1 release notes (fire module squeeze, expand sizes)."""
    b = NetBuilder(f"squeezenet{version}", 3, 224, 224)
    if version == "1.0":
        x, pools = b.conv(b.input, 96, 7, stride=2), (4, 8)
    else:
        x, pools = b.conv(b.input, 64, 3, stride=2), (3, 5)
    x = b.pool(x, 3, stride=2, ceil_mode=ceil_mode)
    fires = [(16, 64), (16, 64), (32, 128), (32, 128), (48, 192), (48, 192), (64, 256), (64, 256)]
    for index, (squeeze, expand) in enumerate(fires, start=2):
        s = b.conv(x, squeeze, 1)
        x = b.concat(b.conv(s, expand, 1), b.conv(s, expand, 3, pad=1))
        if index in pools:
            x = b.pool(x, 3, stride=2, ceil_mode=ceil_mode)
    b.global_pool(b.conv(x, 1000, 1))
    return b.build()


def test_squeezenet_file_is_version_1_1(light: dict[str, Workload]) -> None:
    """The file is SqueezeNet 1.1 (3x3x64 conv1, 0.35 GMAC), not 1.0 (7x7x96, 0.82-0.86)."""
    imported = light["squeezenet"]
    v11 = _squeezenet("1.1", ceil_mode=False)
    assert [lay.shape_key()[1:9] for lay in imported if lay.kind in WEIGHTED] == [
        lay.shape_key()[1:9] for lay in v11 if lay.kind in WEIGHTED
    ]
    assert _weighted_macs(imported) == _weighted_macs(v11)
    assert 0.81e9 <= _weighted_macs(_squeezenet("1.0", ceil_mode=True)) <= 0.87e9


def _zfnet(widths: Sequence[int], fcs: Sequence[int], *, pad1: int, ceil_mode: bool, last_pool: int) -> Workload:
    b = NetBuilder("zfnet", 3, 224, 224)
    x = b.pool(b.conv(b.input, 96, 7, stride=2, pad=pad1), 3, stride=2, ceil_mode=ceil_mode)
    x = b.pool(b.conv(x, 256, 5, stride=2), 3, stride=2, ceil_mode=ceil_mode)
    for width in widths:
        x = b.conv(x, width, 3, pad=1)
    x = b.pool(x, last_pool, stride=2, ceil_mode=ceil_mode)
    for width in fcs:
        x = b.fc(x, width)
    return b.build()


def test_zfnet512_file_is_the_wide_variant(light: dict[str, Workload]) -> None:
    """The paper's ZFNet (384/384/256 maps, 110/55/26/13/6 sizes) has 1.17 GMAC; the file
    is the 512-map variant (512/512/512, fc 4096/1024, 2x2 last pool), 1.48 GMAC."""
    paper = _zfnet((384, 384, 256), (4096, 4096, 1000), pad1=1, ceil_mode=True, last_pool=3)
    assert 1.1e9 <= _weighted_macs(paper) <= 1.2e9
    variant = _zfnet((512, 512, 512), (4096, 1024, 1000), pad1=0, ceil_mode=False, last_pool=2)
    assert _weighted_macs(light["zfnet512"]) == _weighted_macs(variant)


def _shufflenet_macs(
    groups: int, widths: Sequence[int], bottleneck: Callable[[int, int, int], int], *, group_first: bool
) -> int:
    """Conv + fc MACs of ShuffleNet v1 at 224x224 from the unit structure of the paper."""
    total = 24 * 3 * 9 * 112 * 112  # conv1 3x3/2, then a 3x3/2 max pool to 56x56
    side, cin = 56, 24
    for stage, (out, repeats) in enumerate(zip(widths, (4, 8, 4), strict=True)):
        for unit in range(repeats):
            stride = 2 if unit == 0 else 1
            mid = bottleneck(cin, out, stride)
            first_groups = groups if (group_first or stage or unit) else 1
            branch = out - cin if stride == 2 else out
            side_out = side // stride
            total += cin * mid // first_groups * side * side
            total += mid * 9 * side_out * side_out
            total += mid * branch // groups * side_out * side_out
            side, cin = side_out, out
    return total + cin * 1000


def test_shufflenet_file_is_a_caffe2_variant(light: dict[str, Workload]) -> None:
    """The paper's ShuffleNet 1x (g=3: 240/480/960 maps, bottleneck = width / 4) has
    ~140 MMAC; the file has g=4, 136/272/544 maps and a bottleneck as wide as the
    branch output, 125 MMAC."""
    paper = _shufflenet_macs(3, (240, 480, 960), lambda cin, out, stride: out // 4, group_first=False)
    assert paper / 1e6 == pytest.approx(140, rel=0.02)
    variant = _shufflenet_macs(
        4, (136, 272, 544), lambda cin, out, stride: out - cin if stride == 2 else out, group_first=True
    )
    assert _weighted_macs(light["shufflenet"]) == variant


@pytest.mark.parametrize("name", LIGHT_MODELS)
def test_light_model_round_trip(name: str, light: dict[str, Workload], tmp_path: Path) -> None:
    _round_trip(light[name], tmp_path)


def test_light_model_precision_comes_from_float32(light: dict[str, Workload]) -> None:
    layer = light["resnet50"].layers[0]
    assert (layer.input_bits, layer.weight_bits, layer.output_bits, layer.psum_bits) == (32, 32, 32, 32)


# ================================================================= round trip
def _round_trip(workload: Workload, tmp_path: Path) -> onnx.ModelProto:
    path = tmp_path / f"{workload.name}.onnx"
    model = to_onnx(workload, path)
    onnx.checker.check_model(model, full_check=True)
    back = load_onnx(path)
    assert back.names == workload.names
    for got, want in zip(back, workload, strict=True):
        assert got == want, f"{got}\n!=\n{want}"
    assert back == workload
    return model


def _cnn(batch: int) -> Workload:
    b = NetBuilder("cnn", 3, 33, 31, batch=batch)
    x = b.conv(b.input, 16, 3, stride=2, pad="same", name="stem")
    x = b.conv(x, 32, 3, pad=(0, 1, 2, 1), groups=4, name="grouped")
    x = b.dwconv(x, 3, stride=2, name="depthwise")
    x = b.conv(x, 32, 3, dilation=2, pad="same", name="dilated")
    y = b.conv(x, 16, (1, 3), stride=2, pad=(0, 1), name="rect")
    z = b.pool(x, 2, stride=2, ceil_mode=True, name="ceil_pool")
    cat = b.concat(y, z)
    x = b.conv(cat, 32, 1, name="on_concat")
    x = b.add(x, b.conv(x, 32, 3, pad=1, name="res_branch"), name="residual")
    gate = b.fc(b.fc(b.global_pool(x, name="squeeze"), 8, name="se_fc1"), 32, name="se_fc2")
    x = b.broadcast_mul(x, gate, name="excite")
    x = b.pool(x, 2, stride=2, name="pool")
    x = b.fc(x, 20, name="fc_on_map")
    b.fc(x, 10, name="classifier")
    return b.build()


def _transformer(batch: int) -> Workload:
    d, heads, seq = 32, 4, 12
    b = NetBuilder("tiny_transformer", d, 1, seq, batch=batch, bits=16, psum_bits=32)
    x = b.fc(b.input, d, name="embed")
    q, k, v = (b.fc(x, d, name=n) for n in ("q", "k", "v"))
    scores = b.matmul(q, k, heads=heads, rows=seq, inner=d // heads, cols=seq, name="scores")
    context = b.matmul(scores, v, heads=heads, rows=seq, inner=seq, cols=d // heads, name="context")
    x = b.add(x, b.fc(context, d, name="proj"), name="residual")
    b.fc(b.fc(x, 4 * d, name="ffn1"), d, name="ffn2")
    return b.build()


@pytest.mark.parametrize("batch", [1, 2])
def test_round_trip_cnn(batch: int, tmp_path: Path) -> None:
    _round_trip(_cnn(batch), tmp_path)


@pytest.mark.parametrize("batch", [1, 2])
def test_round_trip_transformer(batch: int, tmp_path: Path) -> None:
    model = _round_trip(_transformer(batch), tmp_path)
    assert {n.op_type for n in model.graph.node if n.name in ("scores", "q")} == {"MatMul"}


def test_round_trip_covers_every_kind() -> None:
    kinds = {layer.kind for layer in _cnn(1)} | {layer.kind for layer in _transformer(1)}
    assert kinds == set(OpKind)


def _layer(name: str, kind: OpKind, **fields: object) -> Layer:
    defaults: dict[str, object] = {"K": 1, "C": 1, "OY": 1, "OX": 1}
    defaults.update(fields)
    return Layer(name=name, kind=kind, **defaults)  # type: ignore[arg-type]


def test_round_trip_layers_onnx_cannot_express(tmp_path: Path) -> None:
    """Declared (non-effective) padding, grouped / strided FC, eltwise dilation, a matmul
    whose rows are not laid out like its producer, odd precisions, sources of every kind."""
    layers = (
        _layer("stem", OpKind.CONV, K=8, C=3, OY=56, OX=56, FY=3, FX=3, padding=(1, 1, 1, 1)),
        # SET-style: 1x1/2 reads 55 of 56 rows; 3x3/2 pad 1 declares an unread bottom row
        _layer("down", OpKind.CONV, K=16, C=8, OY=28, OX=28, stride_y=2, stride_x=2, inputs=("stem",)),
        _layer("down3", OpKind.CONV, K=16, C=8, OY=28, OX=28, FY=3, FX=3, stride_y=2, stride_x=2,
               padding=(1, 1, 1, 1), inputs=("stem",)),
        _layer("pool", OpKind.POOL, G=16, OY=14, OX=14, FY=3, FX=3, stride_y=2, stride_x=2,
               padding=(1, 1, 1, 1), weight_bits=0, inputs=("down",)),
        _layer("gfc", OpKind.FC, K=4, C=8, G=2, OY=28, OX=28, inputs=("down3",)),
        _layer("sfc", OpKind.FC, K=4, C=8, OY=14, OX=14, stride_y=2, stride_x=2, dilation_y=3, inputs=("gfc",)),
        _layer("dil_add", OpKind.ELTWISE, G=4, OY=14, OX=14, dilation_x=2, inputs=("sfc",),
               input_bits=4, output_bits=6, psum_bits=24),
        _layer("mm", OpKind.MATMUL, G=2, C=2, K=196, OY=2, OX=98, inputs=("dil_add", "sfc")),
        _layer("src_add", OpKind.ELTWISE, G=5, OY=3, OX=3),
        _layer("src_fc", OpKind.FC, K=6, C=5, OY=1, OX=9),
        _layer("src_pool", OpKind.POOL, G=5, OY=2, OX=2, FY=2, FX=2, stride_y=2, stride_x=2, padding=(0, 0, 1, 1)),
    )  # fmt: skip
    _round_trip(Workload("odd", layers), tmp_path)


def test_round_trip_sources_share_graph_inputs(tmp_path: Path) -> None:
    layers = (
        _layer("a", OpKind.CONV, K=4, C=3, OY=8, OX=8),
        _layer("b", OpKind.CONV, K=4, C=3, OY=8, OX=8),
        _layer("c", OpKind.ELTWISE, G=4, OY=8, OX=8, inputs=("a", "b")),
    )
    model = _round_trip(Workload("shared", layers), tmp_path)
    assert [i.name for i in model.graph.input] == ["input"]


def test_export_keeps_the_file_small(tmp_path: Path) -> None:
    to_onnx(_transformer(1), tmp_path / "t.onnx")
    assert (tmp_path / "t.onnx").stat().st_size < 20_000


def test_export_marks_the_format() -> None:
    model = to_onnx(_cnn(1))
    assert {p.key: p.value for p in model.metadata_props} == {"accelsched.format": "1"}
    assert model.graph.name == "cnn"


def test_export_rejects_a_strided_matmul() -> None:
    layers = (
        _layer("a", OpKind.FC, K=4, C=4, OY=1, OX=9),
        _layer("b", OpKind.FC, K=4, C=4, OY=1, OX=9),
        _layer("mm", OpKind.MATMUL, K=9, C=4, OY=1, OX=5, stride_x=2, inputs=("a", "b")),
    )
    with pytest.raises(InputError, match="matmul layer 'mm' has strides 1x2"):
        to_onnx(Workload("strided", layers))


def _zoo_names() -> tuple[list[str], ImportError | None]:
    from accelsched.models import zoo

    try:
        return zoo.names(), None
    except ImportError as exc:  # the zoo modules are written in parallel
        return ["<zoo modules missing>"], exc


ZOO_NAMES, ZOO_ERROR = _zoo_names()


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("name", ZOO_NAMES)
def test_round_trip_zoo(name: str, batch: int, tmp_path: Path) -> None:
    if ZOO_ERROR is not None:
        raise ZOO_ERROR
    from accelsched.models import zoo

    _round_trip(zoo.get(name, batch=batch), tmp_path)


# ===================================================================== import
def _save(
    tmp_path: Path,
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[str],
    initializers: Sequence[tuple[str, np.ndarray]] = (),
    *,
    opset: int = 17,
    name: str = "g",
) -> Path:
    inits = [numpy_helper.from_array(value, key) for key, value in initializers]
    graph = helper.make_graph(
        nodes, name, inputs, [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs], inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    return path


def _input(name: str, shape: Sequence[int | str], elem: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, list(shape))


def _w(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return np.zeros(shape, dtype=dtype)


def _same(a: Layer, b: Layer) -> bool:
    """Equal shapes, producers and kind, ignoring the name and precisions."""
    return a.shape_key()[:14] == b.shape_key()[:14] and a.inputs == b.inputs


@pytest.mark.parametrize("opset", [10, 17])
def test_pad_is_folded_into_the_next_convolution(opset: int, tmp_path: Path) -> None:
    pads = [0, 0, 1, 1, 0, 0, 0, 1]  # H begin 1, W begin 1, H end 0, W end 1
    if opset < 11:  # pads are an attribute before opset 11, an input after
        pad = helper.make_node("Pad", ["a"], ["p"], name="pad", pads=pads)
        inits = [("w0", _w(8, 3, 1, 1)), ("w1", _w(4, 8, 5, 5))]
    else:
        pad = helper.make_node("Pad", ["a", "pads"], ["p"], name="pad")
        inits = [("w0", _w(8, 3, 1, 1)), ("w1", _w(4, 8, 5, 5)), ("pads", np.array(pads, dtype=np.int64))]
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["a"], name="c0", kernel_shape=[1, 1]),
        pad,
        helper.make_node("Relu", ["p"], ["r"]),
        helper.make_node("Conv", ["r", "w1"], ["y"], name="c1", kernel_shape=[5, 5], pads=[1, 1, 1, 1]),
    ]
    path = _save(tmp_path, nodes, [_input("x", [1, 3, 16, 16])], ["y"], inits, opset=opset)
    got = load_onnx(path)["c1"]
    b = NetBuilder("ref", 3, 16, 16)
    want = b.conv(b.conv(b.input, 8, 1, name="c0"), 4, 5, pad=(2, 2, 1, 2), name="c1")
    assert _same(got, b.build()["c1"]) and want.height == got.OY


@pytest.mark.parametrize(("mode", "padding"), [("SAME_UPPER", (0, 0, 1, 1)), ("SAME_LOWER", (1, 1, 0, 0))])
def test_auto_pad(mode: str, padding: tuple[int, ...], tmp_path: Path) -> None:
    path = _save(
        tmp_path,
        [helper.make_node("Conv", ["x", "w"], ["y"], name="c", kernel_shape=[3, 3], strides=[2, 2], auto_pad=mode)],
        [_input("x", [1, 3, 8, 8])],
        ["y"],
        [("w", _w(4, 3, 3, 3))],
    )
    layer = load_onnx(path)["c"]
    assert (layer.OY, layer.OX, layer.padding) == (4, 4, padding)


def test_ceil_mode_pooling_gets_the_implicit_padding(tmp_path: Path) -> None:
    path = _save(
        tmp_path,
        [helper.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)],
        [_input("x", [1, 4, 112, 112])],
        ["y"],
    )
    layer = load_onnx(path)["p"]
    b = NetBuilder("ref", 4, 112, 112)
    b.pool(b.input, 3, stride=2, ceil_mode=True, name="p")
    assert _same(layer, b.build()["p"]) and (layer.OY, layer.padding) == (56, (0, 0, 1, 1))


@pytest.mark.parametrize("op", ["GlobalMaxPool", "ReduceMean"])
def test_global_pooling(op: str, tmp_path: Path) -> None:
    attrs: dict[str, Any] = {"axes": [2, 3], "keepdims": 0} if op == "ReduceMean" else {}
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["a"], name="c", kernel_shape=[1, 1]),
        helper.make_node(op, ["a"], ["g"], name="gp", **attrs),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "w1"], ["y"], name="fc", transB=1),
    ]
    inits = [("w", _w(8, 3, 1, 1)), ("w1", _w(10, 8))]
    w = load_onnx(_save(tmp_path, nodes, [_input("x", [1, 3, 7, 5])], ["y"], inits))
    assert (w["gp"].kind, w["gp"].G, w["gp"].FY, w["gp"].FX, w["gp"].OY, w["gp"].OX) == (OpKind.POOL, 8, 7, 5, 1, 1)
    assert (w["fc"].kind, w["fc"].C, w["fc"].inputs) == (OpKind.FC, 8, ("gp",))


def test_conv1d_and_dilation(tmp_path: Path) -> None:
    path = _save(
        tmp_path,
        [helper.make_node("Conv", ["x", "w"], ["y"], name="c", kernel_shape=[3], dilations=[2], pads=[2, 2])],
        [_input("x", [2, 8, 50])],
        ["y"],
        [("w", _w(16, 8, 3))],
    )
    layer = load_onnx(path)["c"]
    assert (layer.B, layer.K, layer.C, layer.OY, layer.OX, layer.FY, layer.FX) == (2, 16, 8, 1, 50, 1, 3)
    assert (layer.dilation_x, layer.padding) == (2, (0, 2, 0, 2))


def _attention(tmp_path: Path) -> Path:
    """Self-attention on [2, 12, 32] written the way exporters do (MatMul, Reshape, Transpose)."""
    nodes = [
        helper.make_node("MatMul", ["x", "we"], ["e"], name="embed"),
        helper.make_node("Add", ["e", "be"], ["eb"], name="bias"),
        *(helper.make_node("MatMul", ["eb", f"w{n}"], [n], name=f"proj_{n}") for n in "qkv"),
        *(helper.make_node("Reshape", [n, "heads"], [f"{n}4"]) for n in "qkv"),
        helper.make_node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qt", "kt"], ["s"], name="scores"),
        helper.make_node("Div", ["s", "scale"], ["sd"]),
        helper.make_node("Softmax", ["sd"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "vt"], ["c"], name="context"),
        helper.make_node("Transpose", ["c"], ["ct"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ct", "flat"], ["cf"]),
        helper.make_node("MatMul", ["cf", "wo"], ["o"], name="out"),
        helper.make_node("Add", ["eb", "o"], ["y"], name="residual"),
        helper.make_node("LayerNormalization", ["y", "gamma"], ["z"], axis=-1),
    ]
    inits = [
        ("we", _w(32, 32)), ("be", _w(32)), ("wq", _w(32, 32)), ("wk", _w(32, 32)), ("wv", _w(32, 32)),
        ("wo", _w(32, 32)), ("gamma", _w(32)), ("scale", np.array(8.0, dtype=np.float32)),
        ("heads", np.array([2, 12, 4, 8], dtype=np.int64)), ("flat", np.array([2, 12, 32], dtype=np.int64)),
    ]  # fmt: skip
    return _save(tmp_path, nodes, [_input("x", [2, 12, 32])], ["z"], inits, name="attention")


def test_attention_block(tmp_path: Path) -> None:
    w = load_onnx(_attention(tmp_path))
    assert w.names == ("embed", "proj_q", "proj_k", "proj_v", "scores", "context", "out", "residual")
    assert (w["proj_q"].kind, w["proj_q"].B, w["proj_q"].OY, w["proj_q"].OX, w["proj_q"].C) == (OpKind.FC, 2, 1, 12, 32)
    scores, context = w["scores"], w["context"]
    assert (scores.kind, scores.G, scores.OX, scores.C, scores.K, scores.inputs) == (
        OpKind.MATMUL, 4, 12, 8, 12, ("proj_q", "proj_k"),
    )  # fmt: skip
    assert (context.G, context.OX, context.C, context.K, context.inputs) == (4, 12, 12, 8, ("scores", "proj_v"))
    assert (w["residual"].kind, w["residual"].inputs) == (OpKind.ELTWISE, ("embed", "out"))
    assert w["out"].inputs == ("context",)


def test_vision_transformer_tokens_keep_the_patch_grid(tmp_path: Path) -> None:
    """Patch embedding (conv 4x4/4) then flatten + transpose: the FC reads the 7x7 patch map."""
    nodes = [
        helper.make_node("Conv", ["x", "wp"], ["p"], name="patch", kernel_shape=[4, 4], strides=[4, 4]),
        helper.make_node("Reshape", ["p", "seq"], ["f"]),
        helper.make_node("Transpose", ["f"], ["t"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["t", "w"], ["y"], name="mlp"),
        helper.make_node("Add", ["t", "y"], ["z"], name="residual"),
    ]
    inits = [("wp", _w(16, 3, 4, 4)), ("seq", np.array([1, 16, 49], dtype=np.int64)), ("w", _w(16, 16))]
    w = load_onnx(_save(tmp_path, nodes, [_input("x", [1, 3, 28, 28])], ["z"], inits))
    assert (w["mlp"].kind, w["mlp"].OY, w["mlp"].OX) == (OpKind.FC, 7, 7)
    assert w["residual"].inputs == ("patch", "mlp")


def test_gemm_after_flatten_of_a_map_is_a_convolution(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["a"], name="c", kernel_shape=[3, 3]),
        helper.make_node("Flatten", ["a"], ["f"]),
        helper.make_node("Gemm", ["f", "w1", "b1"], ["y"], name="fc", transB=1),
    ]
    inits = [("w0", _w(8, 3, 3, 3)), ("w1", _w(10, 8 * 4 * 4)), ("b1", _w(10))]
    fc = load_onnx(_save(tmp_path, nodes, [_input("x", [1, 3, 6, 6])], ["y"], inits))["fc"]
    assert (fc.kind, fc.FY, fc.FX, fc.C, fc.K, fc.OY, fc.OX) == (OpKind.CONV, 4, 4, 8, 10, 1, 1)


def test_squeeze_excitation_and_swish(tmp_path: Path) -> None:
    """x * sigmoid(x) is an activation (no layer); x * gate(C x 1 x 1) is a broadcast ELTWISE."""
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["a"], name="c", kernel_shape=[1, 1]),
        helper.make_node("Sigmoid", ["a"], ["sa"]),
        helper.make_node("Mul", ["a", "sa"], ["swish"], name="swish"),
        helper.make_node("GlobalAveragePool", ["swish"], ["g"], name="squeeze"),
        helper.make_node("Conv", ["g", "w1"], ["h"], name="reduce", kernel_shape=[1, 1]),
        helper.make_node("HardSigmoid", ["h"], ["gate"]),
        helper.make_node("Mul", ["swish", "gate"], ["y"], name="excite"),
    ]
    inits = [("w0", _w(8, 3, 1, 1)), ("w1", _w(8, 8, 1, 1))]
    w = load_onnx(_save(tmp_path, nodes, [_input("x", [1, 3, 5, 5])], ["y"], inits))
    assert w.names == ("c", "squeeze", "reduce", "excite")
    assert (w["excite"].kind, w["excite"].inputs, w["excite"].G) == (OpKind.ELTWISE, ("c", "reduce"), 8)


def test_concatenation_read_by_an_addition_is_materialized(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["a"], name="a", kernel_shape=[1, 1]),
        helper.make_node("Conv", ["x", "w0"], ["b"], name="b", kernel_shape=[1, 1]),
        helper.make_node("Concat", ["a", "b"], ["cat"], name="cat", axis=1),
        helper.make_node("Conv", ["cat", "w1"], ["c"], name="c", kernel_shape=[1, 1]),
        helper.make_node("Sum", ["cat", "c"], ["y"], name="add"),
    ]
    inits = [("w0", _w(4, 3, 1, 1)), ("w1", _w(8, 8, 1, 1))]
    w = load_onnx(_save(tmp_path, nodes, [_input("x", [1, 3, 5, 5])], ["y"], inits))
    assert w["c"].inputs == ("a", "b")
    assert (w["cat"].kind, w["cat"].G, w["cat"].FY, w["cat"].inputs) == (OpKind.POOL, 8, 1, ("a", "b"))
    assert w["add"].inputs == ("cat", "c")


def test_constants_and_shape_computations_are_folded(tmp_path: Path) -> None:
    """Shape -> Gather -> Concat -> Reshape is folded; an unsupported op on constants
    (Resize of an initializer) and a Slice feeding only Shape are ignored."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["a"], name="c", kernel_shape=[1, 1]),
        helper.make_node("Slice", ["a", "zero", "one", "two"], ["sl"]),
        helper.make_node("Shape", ["sl"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
        helper.make_node("Concat", ["n", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["a", "target"], ["flat"]),
        helper.make_node("Resize", ["bias4", "", "scales"], ["bias_big"], name="const_resize"),
        helper.make_node("Reshape", ["bias_big", "minus1"], ["bias"]),
        helper.make_node("Add", ["flat", "bias"], ["y"], name="bias_add"),
    ]
    inits = [
        ("w", _w(4, 3, 1, 1)), ("zero", np.array([0], dtype=np.int64)), ("one", np.array([1], dtype=np.int64)),
        ("two", np.array([2], dtype=np.int64)), ("minus1", np.array([-1], dtype=np.int64)),
        ("bias4", _w(4, 1, 2, 2)), ("scales", np.array([1, 1, 2, 2], dtype=np.float32)),
    ]  # fmt: skip
    w = load_onnx(_save(tmp_path, nodes, [_input("x", [1, 3, 4, 4])], ["y"], inits))
    assert w.names == ("c",)


def test_symbolic_batch_and_batch_argument(tmp_path: Path) -> None:
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="c", kernel_shape=[3, 3])]
    inits = [("w", _w(4, 3, 3, 3))]
    symbolic = _save(tmp_path, nodes, [_input("x", ["N", 3, 8, 8])], ["y"], inits, name="sym")
    fixed = _save(tmp_path, nodes, [_input("x", [1, 3, 8, 8])], ["y"], inits, name="fixed")
    assert load_onnx(symbolic)["c"].B == 1
    assert load_onnx(symbolic, batch=3)["c"].B == 3
    assert load_onnx(fixed, batch=2)["c"].B == 2


def test_precision_from_element_types_and_arguments(tmp_path: Path) -> None:
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="c", kernel_shape=[1, 1])]
    path = _save(
        tmp_path,
        nodes,
        [_input("x", [1, 3, 4, 4], TensorProto.FLOAT16)],
        ["y"],
        [("w", _w(4, 3, 1, 1, dtype=np.float16))],
    )
    layer = load_onnx(path)["c"]
    assert (layer.input_bits, layer.weight_bits, layer.output_bits, layer.psum_bits) == (16, 16, 16, 16)
    layer = load_onnx(path, bits=8)["c"]
    assert (layer.input_bits, layer.weight_bits, layer.output_bits, layer.psum_bits) == (8, 8, 8, 16)
    assert load_onnx(path, bits=8, psum_bits=32)["c"].psum_bits == 32


def test_precision_of_a_quantized_model(tmp_path: Path) -> None:
    """QDQ: the convolution reads dequantized int8 tensors, so it is an 8-bit layer."""
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "s", "zp"], ["xd"]),
        helper.make_node("DequantizeLinear", ["wq", "s", "zp"], ["wd"]),
        helper.make_node("Conv", ["xd", "wd"], ["y"], name="c", kernel_shape=[1, 1]),
    ]
    inits: list[tuple[str, np.ndarray]] = [
        ("s", np.array(0.1, dtype=np.float32)),
        ("zp", np.array(0, dtype=np.int8)),
        ("wq", _w(4, 3, 1, 1, dtype=np.int8)),
    ]
    layer = load_onnx(_save(tmp_path, nodes, [_input("x", [1, 3, 4, 4])], ["y"], inits))["c"]
    assert (layer.input_bits, layer.weight_bits, layer.output_bits, layer.psum_bits) == (8, 8, 32, 16)


def test_layer_names_are_unique_and_never_empty(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["a"], kernel_shape=[1, 1]),
        helper.make_node("Conv", ["a", "w"], ["b"], name="dup", kernel_shape=[1, 1]),
        helper.make_node("Conv", ["b", "w"], ["c"], name="dup", kernel_shape=[1, 1]),
        helper.make_node("Conv", ["c", "w"], ["y"], name="Conv_0", kernel_shape=[1, 1]),
    ]
    w = load_onnx(_save(tmp_path, nodes, [_input("x", [1, 4, 4, 4])], ["y"], [("w", _w(4, 4, 1, 1))]))
    assert w.names == ("Conv_0_2", "dup", "dup_2", "Conv_0")


def test_workload_name(tmp_path: Path) -> None:
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2])]
    path = _save(tmp_path, nodes, [_input("x", [1, 4, 4, 4])], ["y"], name="graphname")
    assert load_onnx(path).name == "graphname"
    assert load_onnx(path, name="mine").name == "mine"


# ===================================================================== errors
def test_unsupported_operators_are_listed_in_one_error(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Resize", ["x", "", "scales"], ["u1"], name="up1"),
        helper.make_node("Conv", ["u1", "w"], ["c"], name="conv", kernel_shape=[1, 1]),
        helper.make_node("Resize", ["c", "", "scales"], ["u2"], name="up2"),
        helper.make_node("Reshape", ["u2", "seq"], ["s"]),
        helper.make_node("LSTM", ["s", "lw", "lr"], ["h1"], name="lstm_1", hidden_size=4),
        helper.make_node("Squeeze", ["h1", "one"], ["h1s"]),
        helper.make_node("LSTM", ["h1s", "lw2", "lr"], ["h2"], name="lstm_2", hidden_size=4),
        helper.make_node("TopK", ["h2", "k"], ["v", "i"]),
    ]
    inits = [
        ("scales", np.array([1, 1, 2, 2], dtype=np.float32)), ("w", _w(4, 3, 1, 1)),
        ("seq", np.array([16, 1, 16], dtype=np.int64)), ("lw", _w(1, 16, 16)), ("lw2", _w(1, 16, 4)),
        ("lr", _w(1, 16, 4)), ("one", np.array([1], dtype=np.int64)), ("k", np.array([1], dtype=np.int64)),
    ]  # fmt: skip
    path = _save(tmp_path, nodes, [_input("x", [1, 3, 2, 2])], ["v"], inits)
    with pytest.raises(InputError) as info:
        load_onnx(path)
    err = info.value
    assert err.what == (
        "unsupported ONNX operators: Resize (nodes 'up1', 'up2'), LSTM (nodes 'lstm_1', 'lstm_2'), TopK (node 'TopK_7')"
    )
    assert err.where == str(path)
    assert err.fix


def test_custom_domain_operator_is_unsupported(tmp_path: Path) -> None:
    nodes = [helper.make_node("FusedConv", ["x", "w"], ["y"], name="fc1", domain="com.microsoft")]
    graph = helper.make_graph(nodes, "g", [_input("x", [1, 3, 4, 4])], [_input("y", [1, 4, 4, 4])])
    graph.initializer.append(numpy_helper.from_array(_w(4, 3, 1, 1), "w"))
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    onnx.save(model, tmp_path / "ms.onnx")
    with pytest.raises(InputError, match=r"unsupported ONNX operators: com\.microsoft\.FusedConv \(node 'fc1'\)"):
        load_onnx(tmp_path / "ms.onnx")


@pytest.mark.parametrize("content", [b"definitely not a protobuf \x00\xff\x13\x07", b""])
def test_garbage_file(content: bytes, tmp_path: Path) -> None:
    path = tmp_path / "garbage.onnx"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        load_onnx(path)
    assert info.value.where == str(path)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="ONNX file not found"):
        load_onnx(tmp_path / "nope.onnx")


@pytest.mark.parametrize(
    ("nodes", "inits", "message"),
    [
        (
            [helper.make_node("Concat", ["x", "x"], ["y"], name="cat", axis=2)],
            [],
            "Concat node 'cat': concatenates along axis 2",
        ),
        (
            [helper.make_node("ReduceMean", ["x"], ["y"], name="mean", axes=[1])],
            [],
            r"ReduceMean node 'mean': reduces axes \[1\]",
        ),
        (
            [helper.make_node("MatMul", ["m", "x"], ["y"], name="mm")],
            [("m", _w(5, 4))],
            "MatMul node 'mm': its first operand is a constant",
        ),
        (
            [
                helper.make_node("Pad", ["x", "pads"], ["p"], name="pad"),
                helper.make_node("Conv", ["p", "w"], ["y"], kernel_shape=[1, 1]),
            ],
            [("pads", np.array([0, 1, 0, 0, 0, 1, 0, 0], dtype=np.int64)), ("w", _w(2, 5, 1, 1))],
            "Pad node 'pad': pads .* pad the batch or channel axis",
        ),
    ],
)
def test_unrepresentable_nodes(
    nodes: list[onnx.NodeProto], inits: list[tuple[str, np.ndarray]], message: str, tmp_path: Path
) -> None:
    path = _save(tmp_path, nodes, [_input("x", [1, 3, 4, 4])], ["y"], inits)
    with pytest.raises(InputError, match=message) as info:
        load_onnx(path)
    assert info.value.where == str(path)


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="bits must be a positive integer"):
        load_onnx(LIGHT / "light_vgg19.onnx", bits=0)
