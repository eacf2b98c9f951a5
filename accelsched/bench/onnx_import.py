"""Time of :func:`~accelsched.models.onnx_import.load_onnx` on full-size exports.

Usage::

    python -m accelsched.bench.onnx_import [--dir tests/data/onnx] [--repeats 5]
                                           [--out bench/results/onnx_import]

Protocol: every ``*.onnx`` file of ``--dir`` (the stripped exports of
``tests/data/onnx/make_fixtures.py``) is first *inflated*: each tensor without
values gets as many bytes as its shape and element type take, so that the file
has the size of the real export (553 MB for VGG-16) and the import has to parse
every weight byte, as it does on a user's file. The inflated file is imported
``--repeats`` times; the figure is the median wall time of one ``load_onnx``,
beside the stripped file's median and the file sizes. A model the importer
refuses is listed with the first line of its error. ``--out`` writes
``OUT.json`` and ``OUT.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import onnx
from onnx import helper

from accelsched.entry import run_entry
from accelsched.errors import InputError
from accelsched.models.onnx_import import load_onnx

__all__ = ["inflate", "main", "measure"]


def inflate(src: Path, dst: Path) -> int:
    """Write ``src`` to ``dst`` with zero bytes in every initializer that has no values; the size written."""
    model = onnx.load(str(src), load_external_data=False)
    for init in model.graph.initializer:
        empty = not any(getattr(init, f) for f in ("raw_data", "float_data", "int32_data", "int64_data", "double_data"))
        if empty and init.dims:
            itemsize = helper.tensor_dtype_to_np_dtype(init.data_type).itemsize
            init.raw_data = bytes(math.prod(init.dims) * itemsize)
    onnx.save(model, str(dst))
    return dst.stat().st_size


def _median_seconds(path: Path, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        load_onnx(path)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(directory: Path, repeats: int) -> list[dict[str, Any]]:
    """One row per model file: sizes, medians of the inflated and the stripped import, or the error."""
    rows: list[dict[str, Any]] = []
    for src in sorted(directory.glob("*.onnx")):
        row: dict[str, Any] = {"model": src.name.removesuffix(".onnx"), "stripped_bytes": src.stat().st_size}
        try:
            workload = load_onnx(src)
        except InputError as exc:
            row["error"] = str(exc).splitlines()[0][:200]
            rows.append(row)
            print(f"{row['model']:32s} refused: {row['error'][:90]}", flush=True)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            full = Path(tmp) / src.name
            row["full_bytes"] = inflate(src, full)
            row["full_s"] = _median_seconds(full, repeats)
        row["stripped_s"] = _median_seconds(src, repeats)
        row["layers"] = len(workload)
        row["gmac"] = sum(layer.macs for layer in workload) / 1e9
        rows.append(row)
        print(
            f"{row['model']:32s} {row['full_bytes'] / 1e6:8.1f} MB  full {row['full_s']:6.3f} s  "
            f"stripped {row['stripped_s']:6.3f} s  {row['layers']:4d} layers",
            flush=True,
        )
    return rows


def _markdown(rows: list[dict[str, Any]], repeats: int) -> str:
    lines = [
        "# ONNX import time",
        "",
        f"`python -m accelsched.bench.onnx_import --repeats {repeats}`: median seconds of one `load_onnx` "
        "on the full-size file (stripped fixture re-inflated with zero weights) and on the stripped fixture.",
        "",
        "| model | full size (MB) | full (s) | stripped (s) | layers | GMAC |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | | refused: {r['error'].split(': ', 1)[-1][:80]} | | | |")
        else:
            lines.append(
                f"| {r['model']} | {r['full_bytes'] / 1e6:.1f} | {r['full_s']:.3f} | {r['stripped_s']:.3f} "
                f"| {r['layers']} | {r['gmac']:.3f} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("tests/data/onnx"), help="directory of .onnx files")
    parser.add_argument("--repeats", type=int, default=5, help="imports per file (the median is reported)")
    parser.add_argument("--out", type=Path, help="write OUT.json and OUT.md")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        raise InputError(f"--repeats must be at least 1, got {args.repeats}", "--repeats")
    if not args.dir.is_dir():
        raise InputError("not a directory", str(args.dir), "give the directory of the stripped exports")
    rows = measure(args.dir, args.repeats)
    if args.out is not None:
        machine = {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        payload = {"repeats": args.repeats, "machine": machine, "rows": rows}
        Path(f"{args.out}.json").write_text(json.dumps(payload, indent=1) + "\n")
        Path(f"{args.out}.md").write_text(_markdown(rows, args.repeats))
    return 0


if __name__ == "__main__":
    raise SystemExit(run_entry(main))
