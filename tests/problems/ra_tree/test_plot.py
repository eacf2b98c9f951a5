"""The S-T graph of an RA tree: one box per run of a leaf, inside the schedule."""

from __future__ import annotations

import pytest

from accelsched.problems.ra_tree import (
    evaluate_tree,
    parse_tree,
    timeline,
)
from tests.problems.ra_tree.instances import TEXT, diamond, edge_instance


def test_timeline_has_one_box_per_run_inside_the_schedule() -> None:
    workload = diamond(8)
    instance = edge_instance(workload)
    tree = parse_tree(TEXT)  # a alone, then b, c, d pipelined over 4 sub-batches
    cost = evaluate_tree(instance, tree)
    boxes = timeline(cost, tree)
    assert len(boxes) == sum(run.runs for run in cost.leaves.values()) == 1 + 3 * 4
    assert all(b.start_cycles >= 0 and b.start_cycles + b.duration_cycles <= cost.report.latency_cycles + 1e-6
               for b in boxes)  # fmt: skip
    slot = max(cost.leaves[x].latency_cycles for x in "bcd")
    segment_start = cost.segments[0].latency_cycles
    d_starts = sorted(b.start_cycles for b in boxes if b.layer == "d")
    assert d_starts == pytest.approx([segment_start + (k + 1) * slot for k in range(4)])  # stage 1 of the pipeline
    tiles = {b.layer: (b.first_tile, b.n_tiles) for b in boxes}
    assert tiles["a"] == (0, 16) and sum(tiles[x][1] for x in "bcd") == 16
