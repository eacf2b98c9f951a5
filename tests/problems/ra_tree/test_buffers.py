"""SET's tile buffer rules, by hand on two tiles."""

from __future__ import annotations

import pytest

from accelsched.problems.ra_tree.buffers import TChain, leaf_usage, s_cut_usage

A = leaf_usage((0, 1), (100.0, 100.0), (10.0, 10.0))
B = leaf_usage((0, 1), (50.0, 30.0), (20.0, 40.0))


def test_a_leaf_holds_its_input_and_weights() -> None:
    assert (A.ifm, A.buf, A.wgt, A.need) == ({0: 100, 1: 100}, {0: 100, 1: 100}, {0: 10, 1: 10}, {0: 110, 1: 110})


def test_a_one_sub_batch_segment_streams_weights_two_layers_at_a_time() -> None:
    chain = TChain(1, segment=True)
    chain.add(A)
    chain.add(B)
    usage = chain.usage()
    # B's input arrives while A holds its data, with both layers' weights: 50 + 100 + 10 + 20 on tile 0
    assert usage.need == {0: 180, 1: 180}
    assert usage.wgt == {}


def test_more_sub_batches_keep_every_weight_and_the_next_input() -> None:
    chain = TChain(2, segment=True)
    chain.add(A)
    chain.add(B)
    usage = chain.usage()
    # buf = max(B.ifm + A.buf, A.ifm + B.buf) = (150, 130); + all weights (30, 50)
    assert usage.buf == {0: 150, 1: 130}
    assert usage.need == {0: 180, 1: 180}
    inner = TChain(2, segment=False)
    inner.add(A)
    # the next sub-batch's input with A's data and weights (100 + 100 + 10); the cut's input: 2 x 100
    assert inner.usage().need == {0: 210, 1: 210}
    assert inner.usage().ifm == {0: 200, 1: 200}
    with pytest.raises(ValueError, match="no child"):
        TChain(1, segment=True).usage()


def test_s_cut_children_double_buffer_their_inputs_with_sub_batches() -> None:
    c = leaf_usage((2,), (70.0,), (5.0,))
    one = s_cut_usage([A, c], 1, segment=True)
    assert one.need == {0: 110, 1: 110, 2: 75}
    two = s_cut_usage([A, c], 2, segment=True)
    assert two.need == {0: 210, 1: 210, 2: 145}
