"""Multicore timelines and benchmarks at tiny sizes: valid traces, PNGs written, benchmark JSON consistent."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from accelsched.bench.multicore import (
    chrome_trace,
    gantt_png,
    load_bench_workload,
    main,
    manual_schedule,
    resnet18_at,
    schedule_instance,
)
from accelsched.hardware.cost.cn_graph import Granularity, build_cn_graph
from accelsched.models.registry import load_workload
from accelsched.problems.multicore import MulticoreEvaluation, MulticoreInstance

TINY = "random:8:3"
HARDWARE = "stream-mc-homtpu"


@pytest.fixture(scope="module")
def scheduled() -> tuple[MulticoreInstance, MulticoreEvaluation]:
    instance = schedule_instance(TINY, HARDWARE, "fused", 2, "one")
    return instance, manual_schedule(instance)


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _check_trace(trace: dict[str, Any], instance: MulticoreInstance, evaluation: MulticoreEvaluation) -> None:
    events = trace["traceEvents"]
    json.dumps(trace)  # serializable
    assert {e["pid"] for e in events} == {1}  # one process: the accelerator
    required = {"M": {"name", "ph", "pid", "args"}, "X": {"name", "ph", "ts", "dur", "pid", "tid", "args"},
                "C": {"name", "ph", "ts", "pid", "args"}}  # fmt: skip
    for e in events:
        assert required[e["ph"]] <= set(e), e
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    expected = [f"core {c.id} ({c.name})" for c in instance.accelerator.cores] + ["bus", "DRAM port"]
    assert list(names.values()) == expected
    complete = [e for e in events if e["ph"] == "X"]
    assert len(complete) == len(evaluation.activities)
    us = 1e6 / instance.accelerator.clock_hz
    per_thread: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for e in complete:
        assert e["tid"] in names
        assert e["dur"] >= 0 and e["ts"] >= 0
        assert e["ts"] == pytest.approx(e["args"]["start_cycle"] * us)
        assert e["dur"] == pytest.approx((e["args"]["end_cycle"] - e["args"]["start_cycle"]) * us)
        assert e["args"]["bytes"] >= 0 and e["args"]["layer"] in instance.workload
        per_thread[e["tid"]].append(e)
    for tid, items in per_thread.items():  # one resource runs one activity at a time
        items.sort(key=lambda e: e["args"]["start_cycle"])
        for a, b in itertools.pairwise(items):
            assert a["args"]["end_cycle"] <= b["args"]["start_cycle"], (names[tid], a["name"], b["name"])
    assert {names[t] for t in per_thread} >= {"bus", "DRAM port"}  # the tiny case uses both
    peaks: dict[str, int] = defaultdict(int)
    for e in events:
        if e["ph"] == "C":
            assert e["args"]["bytes"] >= 0
            peaks[e["name"]] = max(peaks[e["name"]], e["args"]["bytes"])
    assert peaks == {f"memory core {c}": p for c, p in evaluation.peak_memory_by_core.items()}
    assert max(e["ts"] + e["dur"] for e in complete) == pytest.approx(evaluation.report.latency_cycles * us)


def test_chrome_trace_is_a_valid_timeline(scheduled: tuple[MulticoreInstance, MulticoreEvaluation]) -> None:
    instance, evaluation = scheduled
    _check_trace(chrome_trace(instance, evaluation), instance, evaluation)


def test_gantt_png_is_written(scheduled: tuple[MulticoreInstance, MulticoreEvaluation], tmp_path: Path) -> None:
    path = tmp_path / "gantt.png"
    gantt_png(*scheduled, path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and 5_000 < len(data) < 300_000


def test_cli_writes_a_trace_and_a_gantt(tmp_path: Path) -> None:
    options = ["--workload", TINY, "--hardware", HARDWARE, "--rows", "2", "--stacks", "one", "--priority", "memory"]
    assert main(["trace", *options, "--out", str(tmp_path / "t.json")]) == 0
    assert main(["gantt", *options, "--out", str(tmp_path / "g.png")]) == 0
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    instance = schedule_instance(TINY, HARDWARE, "fused", 2, "one", "memory")
    _check_trace(_load(tmp_path / "t.json"), instance, manual_schedule(instance))


def test_resnet18_at_224_is_the_zoo_resnet18() -> None:
    assert tuple(resnet18_at(224)) == tuple(load_workload("resnet18"))
    assert resnet18_at(672)["layer4_1_conv2"].OY == 3 * resnet18_at(224)["layer4_1_conv2"].OY


def test_evals_writes_consistent_json(tmp_path: Path) -> None:
    out = tmp_path / "evals.json"
    cases = f"{TINY}:one,{TINY}:auto"
    args = ["evals", "--cases", cases, "--hardware", HARDWARE, "--rows", "2", "--allocations", "3", "--repeats", "2"]
    assert main([*args, "--out", str(out)]) == 0
    data = _load(out)
    assert data["kind"] == "evals" and data["python"] and data["cpu_count"] and "load_average_1_5_15" in data
    assert [r["case"] for r in data["cases"]] == cases.split(",")
    first = data["cases"][0]
    instance = schedule_instance(TINY, HARDWARE, "fused", 2, "one")
    assert (first["cns"], first["cn_edges"]) == (len(instance.graph.cns), len(instance.graph.edges))
    assert first["manual_latency_cycles"] == manual_schedule(instance).report.latency_cycles
    assert len(first["warm_passes_s"]) == 2 and first["allocations"] == 3
    assert min(first["warm_passes_s"]) <= first["warm_median_eval_s"] <= max(first["warm_passes_s"])
    assert first["warm_median_schedule_s"] < first["warm_median_eval_s"]
    assert data["within_budget"] == (first["warm_median_eval_s"] <= data["budget_s"])
    markdown = tmp_path / "evals.md"
    assert main(["render", str(out), "--out", str(markdown)]) == 0
    assert f"| {TINY}:auto |" in markdown.read_text(encoding="utf-8")


def test_deps_writes_consistent_json(tmp_path: Path) -> None:
    out = tmp_path / "deps.json"
    assert main(["deps", "--cases", "chain:16,random:5:0@16", "--repeats", "2", "--out", str(out)]) == 0
    data = _load(out)
    assert data["kind"] == "deps" and data["python"]
    chain, rand = data["cases"]
    assert (chain["layers"], chain["cns"], chain["max_cns_per_layer"]) == (8, 8 * 16, 16)
    assert chain["naive_pair_tests"] == 7 * 16 * 16  # each of 7 edges tests every pair of one-row CNs
    for row, spec in ((chain, "chain:16"), (rand, "random:5:0@16")):
        graph = build_cn_graph(load_bench_workload(spec), Granularity.FUSED, 1, None)
        assert (row["cns"], row["edges"]) == (len(graph.cns), len(graph.edges))
        assert row["naive_over_rtree"] == pytest.approx(row["naive_s"] / row["rtree_s"])
    markdown = tmp_path / "deps.md"
    assert main(["render", str(out), "--out", str(markdown)]) == 0
    assert "| chain:16 | 8 | 128 | 16 |" in markdown.read_text(encoding="utf-8")


def test_bad_cases_exit_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["evals", "--cases", f"{TINY}:sometimes", "--hardware", HARDWARE])
    assert exit_info.value.code == 2
    assert "evals case must be WORKLOAD:auto or WORKLOAD:one" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["trace", "--workload", "resnet51", "--out", "unused.json"])
    assert "unknown workload 'resnet51'" in capsys.readouterr().err
