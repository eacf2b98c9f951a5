"""The depth-first problem: cut points, validity rules, JSON form and bad input."""

from __future__ import annotations

import json

import pytest

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.hardware import load_accelerator
from accelsched.models.builder import NetBuilder
from accelsched.models.registry import load_workload
from accelsched.models.workload import Workload
from accelsched.problems.depth_first import (
    DepthFirstInstance,
    DepthFirstSolution,
    OverlapMode,
    Stack,
    Strategy,
    check,
    cut_points,
    make_instance,
    parse_tile,
)

META = "defines-meta-proto-df"


def residual() -> Workload:
    """a -> b -> c, a + c -> d -> e: no cut inside the residual block."""
    b = NetBuilder("res", 4, 16, 16)
    a = b.conv(b.input, 8, 3, pad=1, name="a")
    x = b.conv(a, 8, 3, pad=1, name="b")
    x = b.conv(x, 8, 3, pad=1, name="c")
    x = b.add(a, x, name="d")
    b.conv(x, 8, 3, pad=1, name="e")
    return b.build()


def instance() -> DepthFirstInstance:
    return DepthFirstInstance(residual(), load_accelerator(META))


def strategy() -> Strategy:
    return Strategy(4, 4, OverlapMode.FULLY_CACHED)


def test_cuts_never_split_a_branch() -> None:
    workload = residual()
    assert [workload.names[i] for i in cut_points(workload)] == ["a", "d", "e"]
    chain = load_workload("fsrcnn")
    assert cut_points(chain) == list(range(len(chain)))


def test_valid_solution_passes_and_round_trips_through_json() -> None:
    solution = DepthFirstSolution((Stack(("a",), strategy()), Stack(("b", "c", "d", "e"), strategy())))
    check(instance(), solution)
    # single layers, and stacks inside a branch whose only output is their last layer's, are valid too
    check(instance(), DepthFirstSolution(tuple(Stack((n,), strategy()) for n in residual().names)))
    check(
        instance(),
        DepthFirstSolution((Stack(("a",), strategy()), Stack(("b", "c"), strategy()), Stack(("d", "e"), strategy()))),
    )
    again = DepthFirstSolution.from_dict(json.loads(json.dumps(solution.to_dict())))
    assert again == solution


@pytest.mark.parametrize(
    ("stacks", "message"),
    [
        ([("a", "b"), ("c", "d", "e")], "output of 'a' is still needed"),
        ([("a",), ("c", "b", "d", "e")], "out of place"),
        ([("a",), ("b", "c", "d")], "cover 4 of 5"),
        ([("a",), ("b", "c", "d", "x")], "unknown layer"),
    ],
)
def test_rule_violations_are_named(stacks: list[tuple[str, ...]], message: str) -> None:
    solution = DepthFirstSolution(tuple(Stack(s, strategy()) for s in stacks))
    with pytest.raises(InfeasibleSolution, match=message):
        check(instance(), solution)


def test_tile_larger_than_the_stack_output_is_rejected() -> None:
    solution = DepthFirstSolution((Stack(residual().names, Strategy(17, 4, OverlapMode.H_CACHED)),))
    with pytest.raises(InfeasibleSolution, match="larger than the output 16x16"):
        check(instance(), solution)


def test_bad_strategies_and_tiles_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="tile_x must be a positive integer"):
        Strategy(0, 4, OverlapMode.FULLY_CACHED)
    with pytest.raises(ValueError, match="unknown overlap mode 'cached'"):
        Strategy.from_dict({"tile_x": 4, "tile_y": 4, "mode": "cached"})
    with pytest.raises(ValueError, match="field 'mode' is missing"):
        Strategy.from_dict({"tile_x": 4, "tile_y": 4})
    assert parse_tile("60x72") == (60, 72)
    for bad in ("0x4", "4", "ax4", "4x-1"):
        with pytest.raises(ValueError, match="tile"):
            parse_tile(bad)


def test_instances_reject_what_the_model_does_not_cover() -> None:
    with pytest.raises(InputError, match="single core"):
        make_instance(residual(), load_accelerator("set-edge-4x4"), {})
    with pytest.raises(InputError, match="metric must be one of"):
        make_instance(residual(), load_accelerator(META), {"metric": "area"})
    with pytest.raises(InputError, match="unknown depth-first option"):
        make_instance(residual(), load_accelerator(META), {"tile": "4x4"})
    with pytest.raises(InputError, match="matmul"):
        make_instance(load_workload("transformer_base"), load_accelerator(META), {})
    b = NetBuilder("two-outputs", 4, 8, 8)
    a = b.conv(b.input, 8, 3, pad=1, name="a")
    b.conv(a, 8, 3, pad=1, name="b")
    b.conv(a, 8, 1, name="c")
    with pytest.raises(InputError, match="2 outputs"):
        make_instance(b.build(), load_accelerator(META), {})
