"""Tests of the workload zoo against published figures and independent recomputations."""

from __future__ import annotations

import json
import random
from pathlib import Path

import networkx as nx
import onnx
import onnx.backend.test
import pytest
from onnx import shape_inference

from accelsched.models import zoo
from accelsched.models.layer import OpKind
from accelsched.models.workload import Workload
from accelsched.models.zoo import defines, nas, randwire, set_ref, transformer

EXPECTED_NAMES = {
    "resnet18", "resnet50", "resnet152", "vgg16", "vgg19", "googlenet", "inception_v3", "inception_resnet_v1",
    "mobilenet_v1", "mobilenet_v2", "efficientnet_b0", "squeezenet", "tiny_yolo",
    "fsrcnn", "dmcnn_vd", "mccnn", "mobilenet_v1_defines", "resnet18_defines",
    "transformer_base", "transformer_large", "gpt2",
    "randwire_a", "randwire_b", "nasnet", "pnasnet", "set-resnet50", "set-darknet19",
}  # fmt: skip

ALL_LAYERS_COUNTED = {"set-resnet50", "set-darknet19"}
"""Networks whose reference figure counts every layer (SET's listing totals); the others count conv/fc/matmul."""

COMPUTE_KINDS = (OpKind.CONV, OpKind.FC, OpKind.MATMUL)

_CACHE: dict[tuple[str, int], Workload] = {}


def build(name: str, batch: int = 1) -> Workload:
    """Build a zoo network once per test session."""
    key = (name, batch)
    if key not in _CACHE:
        _CACHE[key] = zoo.get(name, batch)
    return _CACHE[key]


def compute_macs(workload: Workload) -> int:
    """MACs of convolution, fully connected and matmul layers (what published figures count)."""
    return sum(layer.macs for layer in workload if layer.kind in COMPUTE_KINDS)


def count(workload: Workload, *kinds: OpKind) -> int:
    """Number of layers of the given kinds."""
    return sum(1 for layer in workload if layer.kind in kinds)


# --------------------------------------------------------------------- registry
def test_registry_holds_exactly_the_listed_networks() -> None:
    assert set(zoo.names()) == EXPECTED_NAMES


def test_unknown_name_raises_key_error() -> None:
    with pytest.raises(KeyError):
        zoo.get("resnet51")


@pytest.mark.parametrize("name", sorted(EXPECTED_NAMES))
def test_builds_at_batch_1_and_2(name: str) -> None:
    one, two = build(name, 1), build(name, 2)
    assert one.name == name and two.name == name
    assert one.batch == 1 and two.batch == 2
    assert all(layer.B == 2 for layer in two)
    assert one.names == two.names
    assert two.macs == 2 * one.macs
    assert compute_macs(two) == 2 * compute_macs(one)
    assert two.weight_bytes == one.weight_bytes
    assert one.sources and one.sinks


@pytest.mark.parametrize("name", sorted(EXPECTED_NAMES))
def test_dict_and_json_round_trip(name: str) -> None:
    workload = build(name)
    assert Workload.from_dict(workload.to_dict()) == workload
    assert Workload.from_dict(json.loads(json.dumps(workload.to_dict()))) == workload


@pytest.mark.parametrize("name", sorted(n for n, e in zoo.entries().items() if e.reference_gmac is not None))
def test_macs_match_published_figure(name: str) -> None:
    entry = zoo.entries()[name]
    assert entry.reference_gmac is not None and entry.source
    workload = build(name)
    macs = workload.macs if name in ALL_LAYERS_COUNTED else compute_macs(workload)
    assert macs / 1e9 == pytest.approx(entry.reference_gmac, rel=0.02)


def test_every_entry_has_description_and_source() -> None:
    for entry in zoo.entries().values():
        assert entry.description and entry.source


# ------------------------------------------------------------ structure checks
@pytest.mark.parametrize(
    ("name", "convs", "fcs"),
    [
        ("resnet18", 20, 1),
        ("resnet50", 53, 1),
        ("resnet152", 155, 1),
        ("googlenet", 57, 1),
        ("inception_v3", 94, 1),
        ("mobilenet_v1", 27, 1),
        ("mobilenet_v2", 52, 1),
        ("squeezenet", 26, 0),
        ("tiny_yolo", 9, 0),
        ("set-resnet50", 53, 1),
        ("set-darknet19", 19, 0),
    ],
)
def test_layer_counts(name: str, convs: int, fcs: int) -> None:
    workload = build(name)
    assert count(workload, OpKind.CONV) == convs
    assert count(workload, OpKind.FC) == fcs


@pytest.mark.parametrize(("name", "weights"), [("vgg16", 16), ("vgg19", 19)])
def test_vgg_weight_layers(name: str, weights: int) -> None:
    workload = build(name)
    assert count(workload, OpKind.CONV, OpKind.FC) == weights
    assert count(workload, OpKind.POOL) == 5


def test_resnet_residual_sums() -> None:
    assert count(build("resnet18"), OpKind.ELTWISE) == 8
    assert count(build("resnet50"), OpKind.ELTWISE) == 16
    assert count(build("resnet152"), OpKind.ELTWISE) == 50


@pytest.mark.parametrize(
    ("name", "params_m"),
    [
        ("resnet50", 25.557),  # torchvision, incl. BN and fc bias
        ("vgg16", 138.358),  # torchvision
        ("efficientnet_b0", 5.289),  # torchvision
        ("inception_resnet_v1", 23.469),  # Open Model Zoo facenet-20180408-102900
        ("nasnet", 5.3),  # Zoph et al. 2018, Table 2
        ("pnasnet", 5.1),  # Liu et al. 2018, Table 4
        ("randwire_a", 5.6),  # Xie et al. 2019, Table 3
        ("randwire_b", 31.9),  # Xie et al. 2019, Table 4
    ],
)
def test_parameter_counts_match_published(name: str, params_m: float) -> None:
    workload = build(name)
    assert all(layer.weight_bits == 8 for layer in workload if layer.kind.has_parameters)
    assert workload.weight_bytes / 1e6 == pytest.approx(params_m, rel=0.025)


def test_efficientnet_squeeze_excitation_uses_broadcast_gates() -> None:
    workload = build("efficientnet_b0")
    scales = [layer for layer in workload if layer.name.endswith("_se_scale")]
    assert len(scales) == 16
    for layer in scales:
        x, gate = (workload[p] for p in layer.inputs)
        assert (gate.OY, gate.OX) == (1, 1) and gate.out_channels == layer.G
        assert (x.OY, x.OX) == (layer.OY, layer.OX)


def test_googlenet_uses_ceil_mode_pools() -> None:
    workload = build("googlenet")
    assert [workload[n].OY for n in ("pool1", "pool2", "pool3", "pool4")] == [56, 28, 14, 7]


def test_tiny_yolo_output_grid() -> None:
    last = build("tiny_yolo")["conv9"]
    assert (last.out_channels, last.OY, last.OX) == (125, 13, 13)


# ------------------------------------------------------ ONNX test-model shapes
def _onnx_signatures(model: str, spatial: bool) -> list[tuple[object, ...]]:
    """Conv / Gemm shapes of an ONNX test model shipped in the onnx wheel."""
    path = Path(onnx.backend.test.__file__).parent / "data" / "light" / f"light_{model}.onnx"
    graph = shape_inference.infer_shapes(onnx.load(str(path))).graph
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in [*graph.value_info, *graph.input]}
    shapes.update({init.name: list(init.dims) for init in graph.initializer})
    signatures: list[tuple[object, ...]] = []
    for node in graph.node:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type == "Conv":
            k, c, fy, fx = shapes[node.input[1]]
            out = shapes[node.output[0]]
            sig: tuple[object, ...] = ("conv", k, c * attrs.get("group", 1), fy, fx, attrs.get("strides", [1])[0])
            signatures.append(sig + ((out[2], out[3]) if spatial else ()))
        elif node.op_type == "Gemm":
            w = shapes[node.input[1]]
            signatures.append(("fc", w[0], w[1]) if attrs.get("transB", 0) else ("fc", w[1], w[0]))
    return sorted(signatures, key=repr)


def _zoo_signatures(workload: Workload, spatial: bool) -> list[tuple[object, ...]]:
    """The same signatures for a zoo network (a layer with a 1x1 output is a Gemm)."""
    signatures: list[tuple[object, ...]] = []
    for layer in workload:
        if layer.kind not in (OpKind.CONV, OpKind.FC):
            continue
        if (layer.OY, layer.OX) == (1, 1):
            signatures.append(("fc", layer.out_channels, layer.in_channels * layer.FY * layer.FX))
            continue
        sig: tuple[object, ...] = ("conv", layer.out_channels, layer.in_channels, layer.FY, layer.FX, layer.stride_y)
        signatures.append(sig + ((layer.OY, layer.OX) if spatial else ()))
    return sorted(signatures, key=repr)


@pytest.mark.parametrize(
    ("name", "model", "spatial"),
    [
        ("squeezenet", "squeezenet", True),
        ("resnet50", "resnet50", True),
        ("vgg19", "vgg19", True),
        # the ONNX GoogLeNet lost Caffe's ceil-mode pooling (55x55 maps instead of 56x56)
        ("googlenet", "inception_v1", False),
    ],
)
def test_shapes_match_onnx_test_models(name: str, model: str, spatial: bool) -> None:
    assert _zoo_signatures(build(name), spatial) == _onnx_signatures(model, spatial)


# -------------------------------------------------------------------- DeFiNES
# (output channels, OY, OX, kernel) per layer, from DeFiNES' listing
FSRCNN_LISTING = [
    (56, 550, 970, 5), (12, 550, 970, 1), (12, 548, 968, 3), (12, 546, 966, 3),
    (12, 544, 964, 3), (12, 542, 962, 3), (56, 542, 962, 1), (16, 540, 960, 3),
]  # fmt: skip
MCCNN_LISTING = [(64, 1248, 382, 3), (64, 1246, 380, 3), (64, 1244, 378, 3), (64, 1242, 376, 3)]


@pytest.mark.parametrize(("name", "listing"), [("fsrcnn", FSRCNN_LISTING), ("mccnn", MCCNN_LISTING)])
def test_defines_shapes_follow_the_listing(name: str, listing: list[tuple[int, int, int, int]]) -> None:
    workload = build(name)
    assert [(la.out_channels, la.OY, la.OX, la.FY) for la in workload] == listing


@pytest.mark.parametrize("name", ["fsrcnn", "dmcnn_vd", "mccnn"])
def test_defines_networks_are_padding_free_chains(name: str) -> None:
    workload = build(name)
    assert workload.is_chain
    for layer in workload:
        assert layer.padding == (0, 0, 0, 0) and (layer.stride_y, layer.stride_x) == (1, 1)
        assert (layer.input_bits, layer.weight_bits, layer.psum_bits, layer.output_bits) == (8, 8, 16, 8)
        for producer in layer.inputs:
            assert (workload[producer].OY, workload[producer].OX) == (layer.IY, layer.IX)


def test_dmcnn_vd_rebuilds_columns_from_the_final_image() -> None:
    workload = build("dmcnn_vd")
    layers = list(workload)
    assert len(layers) == 20
    assert [la.OY for la in layers] == [550 - 2 * i for i in range(20)]  # the listing's rows
    assert [la.OX for la in layers[15:]] == [776, 774, 772, 770, 768]  # the listing's last five layers
    assert [la.OX for la in layers] == [806 - 2 * i for i in range(20)]
    assert (layers[0].in_channels, layers[0].IY, layers[0].IX) == (3, 552, 808)
    assert (layers[-1].out_channels, layers[-1].OY, layers[-1].OX) == (3, 512, 768)


def test_padding_free_chain_back_calculates_the_input() -> None:
    workload = defines.padding_free_chain("t", 2, 10, 12, [(4, 5), (3, 1), (1, 3)], batch=3)
    first = workload["conv0"]
    assert (first.IY, first.IX, first.B) == (16, 18, 3)
    assert (workload["conv2"].OY, workload["conv2"].OX) == (10, 12)


# --------------------------------------------------------------- transformers
def closed_form_macs(hidden: int, ffn: int, blocks: int, seq: int) -> int:
    """Projections (Q, K, V, output), FFN and the two attention products, per the standard count."""
    return blocks * (seq * (4 * hidden * hidden + 2 * hidden * ffn) + 2 * seq * seq * hidden)


@pytest.mark.parametrize(
    ("name", "hidden", "ffn", "blocks", "seq"),
    [
        ("transformer_base", 768, 3072, 12, 512),
        ("transformer_large", 1024, 4096, 24, 512),
        ("gpt2", 768, 3072, 12, 1024),
    ],
)
def test_transformer_macs_match_closed_form(name: str, hidden: int, ffn: int, blocks: int, seq: int) -> None:
    workload = build(name)
    assert compute_macs(workload) == closed_form_macs(hidden, ffn, blocks, seq)
    assert count(workload, OpKind.FC) == 6 * blocks
    assert count(workload, OpKind.MATMUL) == 2 * blocks
    assert count(workload, OpKind.ELTWISE) == 2 * blocks + 1
    assert {(layer.OY, layer.OX) for layer in workload} == {(1, seq)}


def test_bert_base_at_128_tokens_matches_tinybert_figure() -> None:
    # TinyBERT (Jiao et al. 2020), Table 1: BERT-base, 22.5 GFLOPs = 11.25 GMAC at 128 tokens
    workload = transformer.transformer_stack("bert", hidden=768, heads=12, ffn=3072, blocks=12, seq_len=128)
    assert compute_macs(workload) / 1e9 == pytest.approx(11.25, rel=0.02)


def test_attention_matmul_operands() -> None:
    workload = build("transformer_base")
    qk, av = workload["block0_qk"], workload["block0_av"]
    assert qk.inputs == ("block0_q", "block0_k") and av.inputs == ("block0_qk", "block0_v")
    assert (qk.G, qk.OX, qk.C, qk.K) == (12, 512, 64, 512)
    assert (av.G, av.OX, av.C, av.K) == (12, 512, 512, 64)
    assert qk.weight_bytes == 0 and qk.w_operand_bytes == 512 * 768
    assert workload["block0_add1"].inputs == ("embed", "block0_proj")


def test_encoder_block_rejects_indivisible_heads() -> None:
    b = transformer.TokenNetBuilder("t", 100, 8)
    with pytest.raises(ValueError, match="not divisible"):
        transformer.encoder_block(b, b.embedding_sum(), heads=3, ffn=64, name="blk")


# ------------------------------------------------------------------- RandWire
def test_randwire_is_deterministic() -> None:
    assert randwire.randwire_a(1) == randwire.randwire_a(1)
    assert randwire.randwire("x", regime="regular", channels=109, seed=5) == randwire.randwire(
        "x", regime="regular", channels=109, seed=5
    )


def test_randwire_seed_changes_the_wiring() -> None:
    base = randwire.randwire("x", regime="small", channels=78, seed=0)
    other = randwire.randwire("x", regime="small", channels=78, seed=1)
    assert base.edges != other.edges


@pytest.mark.parametrize("seed", range(8))
def test_watts_strogatz_graph_properties(seed: int) -> None:
    n, k = 32, 4
    edges = randwire.watts_strogatz(n, k, 0.75, random.Random(seed))
    graph = nx.Graph(edges)
    assert len(edges) == len(set(edges)) == n * k // 2  # rewiring keeps the edge count
    assert all(u < v for u, v in edges)
    assert graph.number_of_nodes() == n and nx.is_connected(graph)


def test_watts_strogatz_without_rewiring_is_the_ring_lattice() -> None:
    edges = randwire.watts_strogatz(10, 4, 0.0, random.Random(0))
    assert nx.is_isomorphic(nx.Graph(edges), nx.watts_strogatz_graph(10, 4, 0.0))


def test_watts_strogatz_rejects_odd_k() -> None:
    with pytest.raises(ValueError, match="even k"):
        randwire.watts_strogatz(10, 3, 0.5, random.Random(0))


def test_randwire_stage_wiring() -> None:
    workload = build("randwire_a")
    previous = "conv2"
    for stage, width, size in (("conv3", 78, 28), ("conv4", 156, 14), ("conv5", 312, 7)):
        dws = [workload[f"{stage}_n{v}_dw"] for v in range(32)]
        pws = [workload[f"{stage}_n{v}_pw"] for v in range(32)]
        assert {(la.out_channels, la.OY, la.OX) for la in pws} == {(width, size, size)}
        sources = {la.inputs for la in dws if la.stride_y == 2}
        assert len(sources) == 1  # every input node reads the previous stage's output
        assert next(iter(sources))[0].split("_")[0] == previous
        inner = [p for la in dws if la.stride_y == 1 for p in la.inputs]
        assert inner and all(p.startswith(f"{stage}_n") for p in inner)
        previous = stage
    assert count(workload, OpKind.CONV) == 2 + 3 * 32 * 2 + 1


def test_randwire_rejects_unknown_regime() -> None:
    with pytest.raises(ValueError, match="regime"):
        randwire.randwire("x", regime="huge", channels=78)


# ------------------------------------------------------------------------ NAS
@pytest.mark.parametrize(("name", "penultimate", "cells"), [("nasnet", 1056, 16), ("pnasnet", 1080, 11)])
def test_nas_cells_and_penultimate_width(name: str, penultimate: int, cells: int) -> None:
    workload = build(name)
    assert workload["fc"].in_channels == penultimate
    squeezes = [la for la in workload if la.name.endswith("_1x1") and "_comb" not in la.name and "_prev" not in la.name]
    assert len(squeezes) == cells
    assert count(workload, OpKind.ELTWISE) == 5 * cells


def test_nas_cell_specs_are_well_formed() -> None:
    for spec in (nas.NASNET_A_NORMAL, nas.NASNET_A_REDUCTION, nas.PNASNET_5):
        assert len(spec.operations) == len(spec.hidden_indices) == 10 and len(spec.used) == 7
        for slot, index in enumerate(spec.hidden_indices):
            assert index < 2 + slot // 2  # a block reads only earlier states
    assert (nas.NASNET_A_NORMAL.outputs, nas.NASNET_A_REDUCTION.outputs, nas.PNASNET_5.outputs) == (6, 4, 5)


# ------------------------------------------------------------------------ SET
@pytest.mark.parametrize(
    ("name", "filename"), [("set-resnet50", "resnet50_layers.txt"), ("set-darknet19", "darknet_layers.txt")]
)
def test_set_networks_keep_names_and_ops(name: str, filename: str) -> None:
    listing, total = set_ref.load_listing(filename)
    workload = build(name)
    assert workload.names == tuple(line.name for line in listing)
    assert total is not None
    assert sum(line.ops for line in listing) / 1e9 == pytest.approx(total, abs=1e-5)
    for line in listing:
        layer = workload[line.name]
        assert (layer.out_channels, layer.OY, layer.OX) == line.ofm
        assert layer.w_elements == line.wgt
        assert tuple(listing[p].name for p in line.prevs) == layer.inputs
        if layer.kind is OpKind.ELTWISE:
            assert 2 * layer.macs == line.ops  # SET counts one op per operand element
            assert layer.n_operands * layer.G == line.ifm[0]
        else:
            assert layer.macs == line.ops
    assert workload.macs / 1e9 == pytest.approx(total, rel=0.01)


def test_set_resnet50_strided_reduce_reads_the_listed_rows() -> None:
    workload = build("set-resnet50")
    layer = workload["conv_3_0_a"]
    assert (layer.FY, layer.stride_y, layer.IY) == (1, 2, 55)
    assert workload["pool1"].FY == 3 and build("set-darknet19")["pool1"].FY == 2


def test_set_parser_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="cannot parse"):
        set_ref.parse_listing("0 conv1 ofm=(C=1, H=1, W=1)\n")
    ok = "0 a ofm=(C=4, H=8, W=8) ifm=(C=3, H=8, W=8) wgt=12 ops=768 prevs=()\n"
    layers, total = set_ref.parse_listing(ok)
    assert total is None and layers[0].prevs == ()
    with pytest.raises(ValueError, match="out of order"):
        set_ref.parse_listing(ok + "1 b ofm=(C=4, H=8, W=8) ifm=(C=4, H=8, W=8) wgt=0 ops=256 prevs=(1,)\n")


def test_set_workload_checks_the_listed_shapes() -> None:
    wrong = "0 a ofm=(C=4, H=7, W=7) ifm=(C=3, H=8, W=8) wgt=12 ops=588 prevs=()\n"
    layers, _ = set_ref.parse_listing(wrong)
    with pytest.raises(ValueError):
        set_ref.set_workload("bad", layers)
