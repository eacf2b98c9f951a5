"""Property tests of the cost model over random layers, random cores, presets and random DAGs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from accelsched.hardware import load_accelerator, preset_names
from accelsched.hardware.cost import layer_cost
from accelsched.hardware.cost.layer_by_layer import evaluate_layer_by_layer
from accelsched.hardware.spec import Core, MemoryLevel
from accelsched.models.layer import Layer, OpKind
from accelsched.models.random_dag import random_workload
from tests.hardware.cost.helpers import offchip

DIMS = ("K", "C", "OX", "OY", "FX", "FY", "G")


@st.composite
def cores(draw: st.DrawFn) -> Core:
    """A random core: 1-3 unrolled loops, 1-3 levels, every operand with a chain of levels (outer level shared)."""
    dims = draw(st.lists(st.sampled_from(DIMS), min_size=1, max_size=3, unique=True))
    spatial = tuple((d, draw(st.sampled_from([2, 4, 8, 16]))) for d in dims)
    top = MemoryLevel("gb", draw(st.integers(1 << 10, 1 << 20)), 1.0, 1.5, draw(st.sampled_from([16, 64, 256])), 64)
    levels = [top]
    hierarchy: dict[str, tuple[str, ...]] = {}
    for op in ("I", "W", "O"):
        if draw(st.booleans()):
            name = f"rf_{op}"
            levels.append(MemoryLevel(name, draw(st.integers(1, 256)), 0.05, 0.05, 8, 8, draw(st.integers(1, 64))))
            hierarchy[op] = (name, "gb")
        else:
            hierarchy[op] = ("gb",)
    return Core(0, "random", spatial, tuple(levels), hierarchy, 0.1)


layers = st.builds(
    lambda kind, k, c, g, oy, ox, f, s: Layer(
        "L",
        kind,
        K=1 if kind is OpKind.POOL else k,
        C=1 if kind is OpKind.POOL else c,
        G=g,
        OY=oy,
        OX=ox,
        FY=f,
        FX=f,
        stride_y=s,
        stride_x=s,
        padding=(f // 2,) * 4,
    ),
    kind=st.sampled_from([OpKind.CONV, OpKind.POOL]),
    k=st.integers(1, 64),
    c=st.integers(1, 64),
    g=st.sampled_from([1, 1, 4, 32]),
    oy=st.integers(1, 20),
    ox=st.integers(1, 20),
    f=st.sampled_from([1, 3]),
    s=st.sampled_from([1, 2]),
)


@given(layer=layers, core=cores())
def test_report_is_consistent_on_random_cores(layer: Layer, core: Core) -> None:
    cost = layer_cost(layer, core, offchip())
    assert 0 < cost.spatial_utilization <= 1
    assert cost.latency_cycles >= cost.compute_cycles
    assert cost.energy_pj >= layer.macs * core.mac_energy_pj
    # compulsory traffic: every input pixel a window touches and every weight read once, every output
    # written once (a stride larger than the window skips pixels, which need not be read)
    touched = layer.G * layer.C * min(layer.IY, layer.OY * layer.FY) * min(layer.IX, layer.OX * layer.FX)
    if cost.fits:
        assert cost.dram_read_bytes["I"] >= touched - 1e-6
        assert cost.dram_bytes >= touched + layer.weight_bytes + layer.output_bytes - 1e-6


@given(layer=layers, core=cores(), factor=st.integers(2, 32))
def test_larger_top_buffer_never_increases_dram_traffic(layer: Layer, core: Core, factor: int) -> None:
    top = core.memory("gb")
    bigger = replace(
        core,
        memories=tuple(replace(m, capacity_bytes=m.capacity_bytes * factor) if m is top else m for m in core.memories),
    )
    assert layer_cost(layer, bigger, offchip()).dram_bytes <= layer_cost(layer, core, offchip()).dram_bytes + 1e-6


@given(layer=layers, core=cores(), dim=st.sampled_from(["K", "C", "OY", "OX", "G"]), extra=st.integers(1, 8))
def test_more_macs_never_take_fewer_cycles(layer: Layer, core: Core, dim: str, extra: int) -> None:
    if layer.kind is OpKind.POOL and dim in ("K", "C"):
        dim = "G"
    bigger = layer.replace(**{dim: getattr(layer, dim) + extra})
    a, b = layer_cost(layer, core, offchip()), layer_cost(bigger, core, offchip())
    assert b.compute_cycles >= a.compute_cycles
    assert b.energy_breakdown_pj["mac"] > a.energy_breakdown_pj["mac"]


@pytest.mark.parametrize("preset", preset_names())
def test_every_preset_costs_a_random_dag(preset: str) -> None:
    acc = load_accelerator(preset)
    w = random_workload(6, 11)
    report = evaluate_layer_by_layer(w, acc)
    assert report.macs == w.macs
    assert 0 < report.utilization <= 1
    assert report.latency_cycles >= w.macs / acc.n_macs
    assert report.energy_pj == pytest.approx(sum(report.energy_breakdown_pj.values()))


@given(n=st.integers(1, 12), seed=st.integers(0, 10_000), preset=st.sampled_from(["set-edge-4x4", "stream-mc-hetero"]))
def test_layer_by_layer_on_random_dags(n: int, seed: int, preset: str) -> None:
    acc = load_accelerator(preset)
    w = random_workload(n, seed)
    report = evaluate_layer_by_layer(w, acc)
    one_core = [c.id for c in acc.cores if c.supports(OpKind.CONV)][:1] + [
        c.id for c in acc.cores if c.supports(OpKind.POOL) and not c.supports(OpKind.CONV)
    ][:1]
    assert report.latency_cycles <= evaluate_layer_by_layer(w, acc, one_core).latency_cycles + 1e-6
    assert report.dram_bytes >= sum(layer.weight_bytes for layer in w)
