"""CN graphs: row parts, receptive-field dependencies, R-tree against the pairwise baseline."""

from __future__ import annotations

import pytest

from accelsched.hardware.cost.cn_graph import (
    Granularity,
    build_cn_graph,
    dependencies_naive,
    dependencies_rtree,
    rows_read,
)
from accelsched.models.builder import NetBuilder
from accelsched.models.random_dag import random_workload
from accelsched.models.registry import load_workload


def _chain(stride: int = 1):  # type: ignore[no-untyped-def]
    b = NetBuilder("chain", 4, 8, 8)
    x = b.conv(b.input, 8, 3, pad=1, name="a")
    x = b.conv(x, 8, 3, stride=stride, pad=1, name="b")
    return b.build()


def test_layer_granularity_is_one_cn_per_layer_with_the_workload_edges() -> None:
    w = load_workload("resnet18")
    g = build_cn_graph(w, Granularity.LAYER)
    assert [cn.layer for cn in g.cns] == list(w.names)
    assert {(g.cns[p].layer, g.cns[q].layer) for p, q in g.edges} == set(w.edges)
    assert all(cn.shape is w[cn.layer] for cn in g.cns)


def test_rows_and_receptive_field_by_hand() -> None:
    w = _chain()
    g = build_cn_graph(w, Granularity.FUSED, rows_per_cn=3)
    assert [cn.rows for cn in g.cns] == [(0, 3), (3, 6), (6, 8)] * 2
    assert [cn.name for cn in g.cns[:3]] == ["a:0", "a:1", "a:2"]
    # 3x3, pad 1: output rows [3, 6) of b read rows [2, 7) of a -> all three CNs of a
    assert rows_read(w["a"], w["b"], (3, 6)) == (2, 7)
    assert set(g.predecessors[g.names["b:0"]]) == {g.names["a:0"], g.names["a:1"]}
    assert set(g.predecessors[g.names["b:1"]]) == {g.names["a:0"], g.names["a:1"], g.names["a:2"]}
    assert set(g.predecessors[g.names["b:2"]]) == {g.names["a:1"], g.names["a:2"]}
    assert g.cns[0].shape.OY == 3 and g.cns[2].shape.OY == 2


def test_strided_consumer_reads_twice_the_rows() -> None:
    w = _chain(stride=2)
    assert w["b"].OY == 4
    g = build_cn_graph(w, Granularity.FUSED, rows_per_cn=1)
    # row 1 of b (stride 2, pad 1) reads rows 1..3 of a
    assert rows_read(w["a"], w["b"], (1, 2)) == (1, 4)
    assert sorted(g.cns[p].part for p in g.predecessors[g.names["b:1"]]) == [1, 2, 3]


def test_input_rows_are_loaded_once_in_row_order() -> None:
    w = _chain()
    g = build_cn_graph(w, Granularity.FUSED, rows_per_cn=3)
    a = g.by_layer["a"]
    # a reads input rows [0, 4), [2, 7), [5, 8): new rows [0, 4), [4, 7), [7, 8)
    assert [g.input_rows[k] for k in a] == [(0, 4), (4, 7), (7, 8)]
    assert [g.input_bytes(k) for k in a] == [4 * 4 * 8, 3 * 4 * 8, 1 * 4 * 8]
    assert g.input_reads[a[1]] == (a[0], a[1])  # rows [2, 7)
    assert g.input_reads[a[2]] == (a[1], a[2])  # rows [5, 8)
    assert g.input_readers[a[1]] == (a[1], a[2]) and g.input_readers[a[2]] == (a[2],)
    assert all(g.input_rows[k] is None for k in g.by_layer["b"])


def test_a_layer_alone_in_its_stack_is_not_cut() -> None:
    w = _chain()
    g = build_cn_graph(w, Granularity.FUSED, rows_per_cn=2, stacks=[["a"], ["b"]])
    assert len(g.cns) == 2 and [cn.stack for cn in g.cns] == [0, 1]


@pytest.mark.parametrize("seed", range(12))
def test_rtree_and_pairwise_search_agree(seed: int) -> None:
    w = random_workload(8, seed, height=16, width=16)
    g = build_cn_graph(w, Granularity.FUSED, rows_per_cn=1 + seed % 3)
    assert dependencies_rtree(w, g.cns) == dependencies_naive(w, g.cns) == list(g.edges)
    # every dependency follows a workload edge and every CN of a consumer has a producer CN per input
    for q, cn in enumerate(g.cns):
        producers = {g.cns[p].layer for p in g.predecessors[q]}
        assert producers == set(w[cn.layer].inputs)


def test_bad_rows_and_index() -> None:
    w = _chain()
    with pytest.raises(ValueError, match="rows_per_cn must be an integer >= 1"):
        build_cn_graph(w, Granularity.FUSED, rows_per_cn=0)
    with pytest.raises(ValueError, match="index must be rtree or naive"):
        build_cn_graph(w, Granularity.FUSED, index="kd")
    with pytest.raises(ValueError, match="granularity must be one of layer, fused"):
        Granularity.parse("tile")
