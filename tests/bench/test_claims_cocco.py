"""Cocco's claims at ``Scale.FAST``: each measures a finite value with a setup, a claim not reproduced
names its cause, and the measurements behind them are the checked, re-evaluated partitions."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from accelsched.bench import claims_cocco, claims_cocco_common
from accelsched.bench.claims import Claim, ClaimKind, Measurement, Scale, Verdict, judge
from accelsched.hardware import load_accelerator
from accelsched.problems.partition import PROBLEM, make_instance
from accelsched.registry import get_method, run_method


@pytest.fixture(scope="module")
def measured() -> dict[str, Measurement]:
    """Every claim measured once at FAST (the Fig. 11 and co-exploration runs are shared)."""
    return {claim.key: claim.measure(Scale.FAST) for claim in claims_cocco.CLAIMS}


def test_the_module_states_at_least_four_claims_of_cocco_with_unique_keys() -> None:
    keys = [c.key for c in claims_cocco.CLAIMS]
    assert len(keys) >= 4 and len(set(keys)) == len(keys)
    assert all(c.paper == "Cocco" and c.figure.where and c.figure.text for c in claims_cocco.CLAIMS)
    ratios = [c for c in claims_cocco.CLAIMS if c.kind is ClaimKind.RATIO]
    assert all(c.figure.value > 1 for c in ratios)
    assert all(c.figure.value == 1.0 for c in claims_cocco.CLAIMS if c.kind is ClaimKind.FACT)


@pytest.mark.parametrize("claim", claims_cocco.CLAIMS, ids=lambda c: c.key)
def test_every_claim_measures_a_finite_value_with_a_setup_and_a_cause_when_not_reproduced(
    claim: Claim, measured: dict[str, Measurement]
) -> None:
    m = measured[claim.key]
    assert math.isfinite(m.value) and m.text and m.setup
    if claim.kind is ClaimKind.FACT:
        assert m.value in (0.0, 1.0)
    if judge(claim.kind, claim.figure.value, m.value) is Verdict.NOT_REPRODUCED:
        assert m.cause and any(ch.isdigit() for ch in m.cause)


def test_fig11_rows_hold_the_evaluators_ema_and_an_optimum_no_method_beats() -> None:
    runs = claims_cocco.partition_runs(Scale.FAST)
    setting = claims_cocco.FIG11[Scale.FAST]
    assert [r.net for r in runs.rows] == [n.name for n in setting.nets]
    for row, net in zip(runs.rows, setting.nets, strict=True):
        assert all(row.ema[m] >= row.optimum.value * (1 - 1e-9) for m in claims_cocco.FIG11_METHODS)
        assert all(row.bandwidth[m] > 0 for m in claims_cocco.FIG11_METHODS)
        instance = setting.design.instance(net.load())
        greedy = run_method(PROBLEM, instance, get_method(PROBLEM.name, "greedy"))
        assert greedy.cost is not None and row.ema["greedy"] == greedy.cost.dram_bytes


def test_the_bandwidth_requirement_removes_every_dram_wait_and_no_less_does() -> None:
    net = claims_cocco.FIG11[Scale.FAST].nets[0]
    instance = claims_cocco.FIG11[Scale.FAST].design.instance(net.load())
    result = run_method(PROBLEM, instance, get_method(PROBLEM.name, "greedy"))
    assert result.solution is not None and result.cost is not None
    need = claims_cocco.no_stall_bandwidth(instance, result.solution).bytes_per_s
    cycles = sum(instance.cost_model.subgraph(s).compute_cycles for s in result.solution.indices(instance))
    first_weights = instance.cost_model.subgraph(result.solution.indices(instance)[0]).weight_dram_bytes

    def latency(bytes_per_s: float) -> float:
        """The evaluator's latency at DRAM bandwidth ``bytes_per_s``, without the first weights' load."""
        acc = load_accelerator("cocco-simba-separate")
        per_cycle = bytes_per_s / acc.clock_hz
        other = replace(acc, offchip=replace(acc.offchip, bandwidth_bytes_per_cycle=per_cycle))
        faster = make_instance(net.load(), other, dict(claims_cocco.FIG11[Scale.FAST].design.options))
        return PROBLEM.evaluate(faster, result.solution).latency_cycles - first_weights / per_cycle

    assert latency(need) == pytest.approx(cycles, rel=1e-9)
    assert latency(need * 0.9) > cycles * (1 + 1e-6)


def test_coexplore_rows_compare_cocco_with_every_other_method_above_the_optimum() -> None:
    runs = claims_cocco.coexplore_runs(Scale.FAST)
    setting = claims_cocco.COEXPLORE[Scale.FAST]
    assert len(runs.rows) == len(setting.nets) * len(setting.designs)
    for row in runs.rows:
        assert {b.method for b in row.baselines} >= {"sa", "fixed-M", "fixed-L", "grid+GA", "random+GA"}
        assert row.optimum.value <= min(row.cocco, *(b.objective for b in row.baselines)) * (1 + 1e-9)


def test_full_optima_come_from_the_committed_exact_rows_for_every_full_row() -> None:
    fig11 = claims_cocco.FIG11[Scale.FULL]
    assert fig11.committed is not None
    optima = claims_cocco_common._committed_optima(fig11.committed, fig11.design.name)
    assert {n.name for n in fig11.nets} <= set(optima)
    assert optima["resnet50"] == (31127720.0, True)  # bench/results/partition_fig11.md: 31.13 MB, OPTIMAL
    coexplore = claims_cocco.COEXPLORE[Scale.FULL]
    assert coexplore.committed is not None
    for design in coexplore.designs:
        rows = claims_cocco_common._committed_optima(coexplore.committed, design.name)
        assert all(rows[n.name][1] and math.isfinite(rows[n.name][0]) for n in coexplore.nets)
