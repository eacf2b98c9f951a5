"""Run the same multicore case in KU Leuven's Stream and here, and set the latencies side by side.

Usage::

    python -m accelsched.bench.stream_crosscheck run --stream-python PY [--workloads fsrcnn,...]
        [--presets stream-mc-homtpu,...] [--timeout S] [--out FILE.json]
    python -m accelsched.bench.stream_crosscheck render FILE.json [--out FILE.md]

``PY`` is the interpreter of a separate environment with Stream (Python >= 3.12;
``python3.12 -m venv zz && zz/bin/pip install stream-dse==2.1.1 six``); accelsched
never imports Stream. Per preset the hardware goes through
:func:`accelsched.hardware.stream_export.export_stream` (no fixed dataflows: Stream
2.1.1 drops them, see there), per workload the network through
:func:`accelsched.models.onnx_export.to_onnx` with ``flavor="stream"``; ``PY`` then runs
``stream.api.evaluate_mapping(hardware, onnx, out)``: Stream's own mapping
generator proposes the fused groups and core allocation, and its constraint
solver allocates each group. Its estimate (the sum of the groups' cycles plus the
dispatch overhead) is set beside accelsched's latency of the same workload on the
same preset at layer-by-layer and fused granularity (manual allocation, automatic
stacks, one row per CN), every one checked and re-evaluated by the shared cost
model. A workload the Stream flavor cannot write (a concatenation) or a Stream run
that fails is recorded with the reason.

The two models differ (Stream 2.1.1 prices a steady-state allocation per fused
group with ZigZag's per-layer unrolling search; accelsched list-schedules
computation nodes on the preset's fixed unrollings), so the ratio is a sanity
check of the exported case, not a validation of either number.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from accelsched.bench.commands import run_or_render, run_render_parser
from accelsched.bench.conditions import machine_conditions
from accelsched.bench.files import write_json
from accelsched.entry import run_entry
from accelsched.errors import InputError
from accelsched.hardware import load_accelerator
from accelsched.hardware.stream_export import export_stream
from accelsched.models.onnx_export import to_onnx
from accelsched.models.registry import load_workload
from accelsched.problems.multicore import PROBLEM, make_instance
from accelsched.registry import get_method, run_method
from accelsched.solvers import SolveOptions

__all__ = ["DRIVER", "main", "ours", "render", "run", "run_stream"]

WORKLOADS = ("fsrcnn", "tiny_yolo", "mobilenet_v2", "resnet18", "squeezenet")
"""Stream's five workloads (SqueezeNet concatenates: the Stream flavor refuses it, and says so)."""

PRESETS = ("stream-mc-homtpu", "stream-mc-hetero")
"""The homogeneous and heterogeneous quad-cores."""

DRIVER = """
import json, sys, time, traceback
start = time.perf_counter()
try:
    from stream.api import evaluate_mapping
    estimate = evaluate_mapping(sys.argv[1], sys.argv[2], sys.argv[3])
    out = {"cycles": estimate.cycles, "group_cycles": list(estimate.group_cycles),
           "dispatch_cycles": estimate.dispatch_cycles}
except BaseException as exc:
    out = {"error": f"{type(exc).__name__}: {exc}".splitlines()[0][:300], "trace": traceback.format_exc()[-2000:]}
out["seconds"] = time.perf_counter() - start
print("ACCELSCHED-RESULT " + json.dumps(out))
"""
"""Program run by the Stream interpreter: hardware YAML, ONNX file and output folder as arguments."""

_MARK = "ACCELSCHED-RESULT "


def run_stream(python: str, hardware_yaml: Path, onnx_path: Path, out_dir: Path, timeout_s: float) -> dict[str, Any]:
    """Stream's estimate of one case: ``cycles``, ``group_cycles``, ``seconds``, or ``error`` with the reason."""
    start = time.perf_counter()
    try:
        done = subprocess.run([python, "-c", DRIVER, str(hardware_yaml), str(onnx_path), str(out_dir)],
                              capture_output=True, text=True, timeout=timeout_s, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"error": f"Stream did not finish within {timeout_s:g} s", "seconds": time.perf_counter() - start}
    except OSError as exc:
        return {"error": f"cannot run {python!r}: {exc}", "seconds": time.perf_counter() - start}
    lines = [line for line in done.stdout.splitlines() if line.startswith(_MARK)]
    if not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"exit status {done.returncode}: {tail[0][:300]}", "seconds": time.perf_counter() - start}
    result: dict[str, Any] = json.loads(lines[-1][len(_MARK) :])
    return result


def ours(workload: str, preset: str) -> dict[str, Any]:
    """accelsched's latency (cycles) of the manual allocation, layer-by-layer and fused (auto stacks)."""
    net, acc = load_workload(workload), load_accelerator(preset)
    row: dict[str, Any] = {}
    for granularity, options in (("layer", {"granularity": "layer"}),
                                 ("fused", {"granularity": "fused", "stacks": "auto"})):  # fmt: skip
        instance = make_instance(net, acc, {**options, "objective": "latency"})
        result = run_method(PROBLEM, instance, get_method("multicore", "manual"), SolveOptions())
        assert result.cost is not None
        row[f"{granularity}_latency_cycles"] = result.cost.latency_cycles
        row[f"{granularity}_cns"] = len(instance.graph.cns)
    return row


def run(
    python: str,
    workloads: Sequence[str] = WORKLOADS,
    presets: Sequence[str] = PRESETS,
    timeout_s: float = 1800.0,
    out: str | None = None,
    verbose: bool = False,
) -> dict[str, Any]:
    """Every workload x preset in Stream and here; the JSON written to ``out`` when given."""
    rows = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="accelsched-stream-") as tmp:
        folder = Path(tmp)
        for preset in presets:
            hardware = export_stream(load_accelerator(preset), folder / preset)[0]
            for workload in workloads:
                row: dict[str, Any] = {"workload": workload, "preset": preset, **ours(workload, preset)}
                onnx_path = folder / f"{workload}.onnx"
                try:
                    to_onnx(load_workload(workload), onnx_path, flavor="stream")
                except InputError as exc:
                    row["stream"] = {"error": f"not exported: {exc.one_line()}", "seconds": 0.0}
                else:
                    row["stream"] = run_stream(python, hardware, onnx_path, folder / f"out-{preset}-{workload}",
                                               timeout_s)  # fmt: skip
                cycles = row["stream"].get("cycles")
                row["stream_over_fused"] = cycles / row["fused_latency_cycles"] if cycles else None
                rows.append(row)
                if verbose:
                    print(f"  {preset:<17} {workload:<13} ours fused {row['fused_latency_cycles']:>12,} cycles  "
                          f"Stream {cycles if cycles else row['stream'].get('error')}", flush=True)  # fmt: skip
    data = {"kind": "stream_crosscheck", "stream_python": python, "timeout_s": timeout_s,
            "wall_s": time.perf_counter() - start, "conditions": machine_conditions(), "rows": rows}  # fmt: skip
    if out:
        write_json(out, data)
    return data


def _g(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def render(data: dict[str, Any]) -> str:
    """Markdown of a :func:`run` result."""
    lines = ["# The same case in Stream 2.1.1 and in accelsched", "",
             "Latency in cycles. accelsched: manual allocation, checked schedule; Stream: `evaluate_mapping` with its "
             "own mapping generator (fused groups, allocation by its solver). The models differ (see "
             "`accelsched/bench/stream_crosscheck.py`): the ratio checks that the exported case is the same order of "
             "magnitude, it validates neither number.", "",
             "| preset | workload | accelsched LBL | accelsched fused | Stream | Stream / fused | Stream s | note |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in data["rows"]:
        s = r["stream"]
        note = s.get("error", f"{len(s.get('group_cycles', []))} fused groups")
        lines.append(f"| {r['preset']} | {r['workload']} | {_g(r['layer_latency_cycles'])} | "
                     f"{_g(r['fused_latency_cycles'])} | {_g(s.get('cycles'))} | {_g(r['stream_over_fused'])} | "
                     f"{s.get('seconds', 0):.0f} | {note} |")  # fmt: skip
    c = data["conditions"]
    lines += ["", f"Conditions: Python {c['python']} (accelsched), {c['cpu_count']} CPUs; {data['wall_s']:.0f} s wall."]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry (see the module docstring)."""
    parser = run_render_parser("python -m accelsched.bench.stream_crosscheck", __doc__)
    parser.add_argument("--stream-python", default=None, help="interpreter of an environment with stream-dse 2.1.1")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per Stream run")
    args = parser.parse_args(argv)
    if args.command == "run" and not args.stream_python:
        parser.error("run needs --stream-python (a Python >= 3.12 with `pip install stream-dse==2.1.1 six`)")
    if args.command == "run" and not args.timeout > 0:
        parser.error(f"--timeout must be > 0, got {args.timeout}")
    split = [[p.strip() for p in text.split(",") if p.strip()] for text in (args.workloads, args.presets)]
    return run_or_render(
        parser, args, render, lambda: run(args.stream_python, split[0], split[1], args.timeout, args.out, verbose=True)
    )


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(run_entry(main))
