"""The partition problem: instance validation, options, the checker's rules, the objective."""

from __future__ import annotations

import json

import pytest

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.hardware import load_accelerator
from accelsched.models.registry import load_workload
from accelsched.problems.partition import (
    COCCO_ACT_KB,
    COCCO_SHARED_KB,
    COCCO_WEIGHT_KB,
    BufferDesign,
    Metric,
    PartitionInstance,
    PartitionSolution,
    check,
    evaluate,
    make_instance,
    objective,
)
from tests.problems.partition_oracle import brute_force, set_partitions, small_instance

KIB = 1024


@pytest.fixture(scope="module")
def inst() -> PartitionInstance:
    return small_instance(7, 3, act_kb=(64,), weight_kb=(16,))


def singletons(instance: PartitionInstance) -> PartitionSolution:
    act, weight = instance.capacity_pairs()[-1]
    return PartitionSolution.from_indices(instance, [(i,) for i in range(instance.n_layers)], act, weight)


def test_set_partitions_are_counted_by_bell_numbers() -> None:
    assert [sum(1 for _ in set_partitions(n)) for n in range(1, 8)] == [1, 2, 5, 15, 52, 203, 877]


def test_layer_by_layer_is_valid(inst: PartitionInstance) -> None:
    solution = singletons(inst)
    check(inst, solution)
    report = evaluate(inst, solution)
    assert objective(inst, solution, report) == report.dram_bytes


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: s[:-1], "is in no subgraph"),
        (lambda s: (*s, s[0]), "is in subgraphs"),
        (lambda s: ((), *s), "subgraph 0 is empty"),
        (lambda s: (("nope",), *s), "unknown layer 'nope'"),
        (lambda s: tuple(reversed(s)), "goes from subgraph"),
    ],
)
def test_check_names_the_rule(inst: PartitionInstance, mutate: object, message: str) -> None:
    solution = singletons(inst)
    bad = PartitionSolution(mutate(solution.subgraphs), solution.act_capacity_bytes, solution.weight_capacity_bytes)  # type: ignore[operator]
    with pytest.raises(InfeasibleSolution, match=message):
        check(inst, bad)


def test_check_rejects_a_disconnected_subgraph() -> None:
    instance = small_instance(7, 3, act_kb=(1024,), weight_kb=(1024,))
    preds = instance.cost_model.preds
    names = [layer.name for layer in instance.cost_model.layers]
    # two layers with no edge between them, and no common neighbour inside the pair
    a, b = next(
        (i, j) for i in range(len(names)) for j in range(i + 1, len(names)) if i not in preds[j] and j not in preds[i]
    )
    rest = [(names[k],) for k in range(len(names)) if k not in (a, b)]
    order = sorted([*rest, (names[a], names[b])], key=lambda s: min(names.index(n) for n in s))
    solution = PartitionSolution(tuple(order), 1024 * KIB, 1024 * KIB)
    with pytest.raises(InfeasibleSolution, match=r"not connected|goes from"):
        check(instance, solution)


def test_check_rejects_capacities_that_are_not_candidates_or_too_small(inst: PartitionInstance) -> None:
    solution = singletons(inst)
    with pytest.raises(InfeasibleSolution, match="not a candidate"):
        check(inst, PartitionSolution(solution.subgraphs, 12345, solution.weight_capacity_bytes))
    with pytest.raises(InfeasibleSolution, match="weight buffer of 7 B"):
        check(inst, PartitionSolution(solution.subgraphs, solution.act_capacity_bytes, 7))
    tight = small_instance(7, 3, act_kb=(1,), weight_kb=(1,))
    whole = PartitionSolution((tuple(layer.name for layer in tight.cost_model.layers),), 1 * KIB, 1 * KIB)
    with pytest.raises(InfeasibleSolution, match="needs"):
        check(tight, whole)


def test_co_exploration_objective_adds_the_capacity() -> None:
    instance = small_instance(6, 1, act_kb=(4, 8), weight_kb=(1, 2), metric=Metric.ENERGY, alpha=0.5)
    assert instance.co_exploration
    solution = PartitionSolution.from_indices(instance, [(i,) for i in range(6)], 8 * KIB, 2 * KIB)
    check(instance, solution)
    report = evaluate(instance, solution)
    assert objective(instance, solution, report) == pytest.approx(10 * KIB + 0.5 * report.energy_pj)


def test_brute_force_optimum_beats_or_equals_layer_by_layer() -> None:
    for seed in range(5):
        instance = small_instance(6, seed)
        best, solution = brute_force(instance)
        assert solution is not None
        lbl = singletons(instance)
        assert best <= objective(instance, lbl, evaluate(instance, lbl))
        check(instance, solution)


def test_solution_round_trips_through_json(inst: PartitionInstance) -> None:
    solution = singletons(inst)
    assert PartitionSolution.from_dict(json.loads(json.dumps(solution.to_dict()))) == solution
    with pytest.raises(ValueError, match="missing field 'subgraphs'"):
        PartitionSolution.from_dict({"act_capacity_bytes": 1})
    with pytest.raises(ValueError, match="list of lists"):
        PartitionSolution.from_dict({"subgraphs": "L0", "act_capacity_bytes": 1})


# ------------------------------------------------------------------ instances
def test_make_instance_defaults_follow_the_preset() -> None:
    workload = load_workload("random:6:1")
    separate = make_instance(workload, load_accelerator("cocco-simba-separate"), {})
    assert separate.design is BufferDesign.SEPARATE and not separate.co_exploration
    assert separate.capacity_pairs() == ((1024 * KIB, 1152 * KIB),)
    shared = make_instance(workload, load_accelerator("cocco-simba-shared"), {})
    assert shared.design is BufferDesign.SHARED and shared.capacity_pairs() == ((2176 * KIB, 0),)


def test_make_instance_cocco_ranges_and_lists() -> None:
    workload = load_workload("random:6:1")
    acc = load_accelerator("cocco-simba-separate")
    cocco = make_instance(workload, acc, {"capacities": "cocco", "metric": "energy"})
    assert cocco.co_exploration and cocco.metric is Metric.ENERGY
    assert cocco.act_candidates_bytes == tuple(kb * KIB for kb in COCCO_ACT_KB)
    assert cocco.weight_candidates_bytes == tuple(kb * KIB for kb in COCCO_WEIGHT_KB)
    assert (COCCO_ACT_KB[0], COCCO_ACT_KB[-1], len(COCCO_ACT_KB)) == (128, 2048, 31)
    assert (COCCO_WEIGHT_KB[0], COCCO_WEIGHT_KB[-1]) == (144, 2304)
    assert (COCCO_SHARED_KB[0], COCCO_SHARED_KB[-1]) == (128, 3072)
    shared = make_instance(workload, acc, {"buffer": "shared", "shared_kb": "128-512:128"})
    assert shared.act_candidates_bytes == tuple(kb * KIB for kb in (128, 256, 384, 512))
    listed = make_instance(workload, acc, {"act_kb": "512,256", "weight_kb": "144"})
    assert listed.capacity_pairs() == ((256 * KIB, 144 * KIB), (512 * KIB, 144 * KIB))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"alpha": "-1"}, "alpha must be >= 0"),
        ({"alpha": "x"}, "not a number"),
        ({"act_kb": ""}, "is empty"),
        ({"act_kb": "a,b"}, "bad capacity list"),
        ({"metric": "latency"}, "metric"),
        ({"capacities": "huge"}, "unknown capacities"),
        ({"bufer": "shared"}, "unknown partition option 'bufer'"),
    ],
)
def test_make_instance_rejects_bad_options(options: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        make_instance(load_workload("random:6:1"), load_accelerator("cocco-simba-separate"), options)


def test_make_instance_rejects_a_multicore_preset() -> None:
    with pytest.raises(InputError, match="needs one"):
        make_instance(load_workload("random:6:1"), load_accelerator("set-edge-4x4"), {})


def test_instance_validation_names_the_field() -> None:
    workload = load_workload("random:6:1")
    acc = load_accelerator("cocco-simba-separate")
    with pytest.raises(ValueError, match="act_candidates_bytes is empty"):
        PartitionInstance(workload, acc, BufferDesign.SEPARATE, (), (1024,))
    with pytest.raises(ValueError, match="increasing"):
        PartitionInstance(workload, acc, BufferDesign.SEPARATE, (2048, 1024), (1024,))
    with pytest.raises(ValueError, match="must be empty with a shared buffer"):
        PartitionInstance(workload, acc, BufferDesign.SHARED, (2048,), (1024,))
    with pytest.raises(ValueError, match="alpha"):
        PartitionInstance(workload, acc, BufferDesign.SHARED, (2048,), alpha=float("nan"))


def test_a_layer_larger_than_every_capacity_is_named() -> None:
    instance = small_instance(6, 2, act_kb=(1,), weight_kb=(1,))
    tiny = PartitionInstance(
        instance.workload, instance.accelerator, BufferDesign.SEPARATE, (64,), (64,), Metric.EMA, 0.0
    )
    assert tiny.infeasibility is not None
    assert "alone needs" in tiny.infeasibility and "no partition fits" in tiny.infeasibility
    name = tiny.infeasibility.split("'")[1]
    assert name in tiny.workload
