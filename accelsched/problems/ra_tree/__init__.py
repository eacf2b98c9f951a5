"""Inter-layer scheduling on a tiled accelerator as a resource-allocation tree (SET, ISCA'23).

The problem's modules, by role:

* :mod:`~accelsched.problems.ra_tree.tree`: the RA tree (leaves, S- and T-Cuts), its
  text form (SET's) and JSON form, the size of its space;
* :mod:`~accelsched.problems.ra_tree.instance`: the instance (a workload on a mesh of
  tiles, an ``E^n D^m`` objective) and its CLI options;
* :mod:`~accelsched.problems.ra_tree.analysis`: normalized processing times, pipeline
  stages, S-Cut tile allocation and placement, tensor routes;
* :mod:`~accelsched.problems.ra_tree.buffers`: SET's tile buffer rules;
* :mod:`~accelsched.problems.ra_tree.traffic`: mesh link loads (unicast / multicast, DRAM ports);
* :mod:`~accelsched.problems.ra_tree.cost`: the evaluator (energy, latency, traffic,
  tile buffers) built from the shared :mod:`accelsched.hardware.cost` primitives;
* :mod:`~accelsched.problems.ra_tree.check`: the validity rules;
* :mod:`~accelsched.problems.ra_tree.plot`: the S-T graph.

This package defines :data:`PROBLEM` and exports what the methods, the benchmarks and
the tests use.
"""

from __future__ import annotations

from typing import Any

from accelsched.problems.base import ProblemSpec
from accelsched.problems.ra_tree.analysis import (
    NodeInfo,
    TreeAnalysis,
    analyze,
    balance_tiles,
    route,
    serpentine_order,
)
from accelsched.problems.ra_tree.check import buffer_overflow, check, check_structure, set_ls_tree
from accelsched.problems.ra_tree.cost import (
    LeafRun,
    RATreeCost,
    SegmentCost,
    TCutSegments,
    best_run,
    evaluate,
    evaluate_tree,
    segment_cost,
    tree_objective,
    tree_usage,
)
from accelsched.problems.ra_tree.instance import (
    OPTIONS,
    NocModel,
    RATreeInstance,
    core_buffer_bytes,
    make_instance,
    objective,
    tile_buffer_bytes,
)
from accelsched.problems.ra_tree.plot import Box, st_graph, timeline
from accelsched.problems.ra_tree.tree import (
    Cut,
    CutKind,
    Leaf,
    RANode,
    RATree,
    min_tiles,
    parse_tree,
    sequential_tree,
    tree_space_size,
)

__all__ = [
    "OPTIONS",
    "PROBLEM",
    "Box",
    "Cut",
    "CutKind",
    "Leaf",
    "LeafRun",
    "NocModel",
    "NodeInfo",
    "RANode",
    "RATree",
    "RATreeCost",
    "RATreeInstance",
    "SegmentCost",
    "TCutSegments",
    "TreeAnalysis",
    "analyze",
    "balance_tiles",
    "best_run",
    "buffer_overflow",
    "check",
    "check_structure",
    "core_buffer_bytes",
    "evaluate",
    "evaluate_tree",
    "make_instance",
    "min_tiles",
    "objective",
    "parse_tree",
    "route",
    "segment_cost",
    "sequential_tree",
    "serpentine_order",
    "set_ls_tree",
    "st_graph",
    "tile_buffer_bytes",
    "timeline",
    "tree_objective",
    "tree_space_size",
    "tree_usage",
]


def _solution_from_dict(data: Any) -> RATree:
    return RATree.from_dict(data)


PROBLEM = ProblemSpec(
    name="ra-tree",
    description="SET: inter-layer scheduling on a tiled mesh as a resource-allocation tree (objective E^n x D^m)",
    make_instance=make_instance,
    check=check,
    evaluate=evaluate,
    objective=objective,
    solution_from_dict=_solution_from_dict,
    solution_from_text=parse_tree,
)
"""The RA-tree problem as the registry and the CLI see it."""
