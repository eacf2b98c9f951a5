"""The Stream cross-check: its plumbing with a stand-in for Stream's interpreter (Stream itself is not installed
in CI; the committed bench/results/stream_crosscheck.md is the run against the real one)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from accelsched.bench.stream_crosscheck import main, render, run, run_stream

REPLY = {"cycles": 2.5e7, "group_cycles": [1.5e7, 1e7], "dispatch_cycles": 0}


def fake_python(tmp_path: Path, body: str) -> str:
    """An executable that takes Stream's interpreter's place: it records its arguments and runs ``body``."""
    script = tmp_path / "fake-python"
    script.write_text(f'#!/bin/sh\necho "$@" > "{tmp_path}/args"\n{body}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_a_run_sets_streams_cycles_beside_ours(tmp_path: Path) -> None:
    python = fake_python(tmp_path, f"echo 'ACCELSCHED-RESULT {json.dumps(REPLY)}'")
    out = tmp_path / "x.json"
    data = run(python, ["fsrcnn", "squeezenet"], ["stream-mc-homtpu"], timeout_s=30, out=str(out))
    fsrcnn, squeezenet = data["rows"]
    assert fsrcnn["stream"]["cycles"] == 2.5e7
    assert fsrcnn["stream_over_fused"] == pytest.approx(2.5e7 / fsrcnn["fused_latency_cycles"])
    assert fsrcnn["fused_cns"] > fsrcnn["layer_cns"] == 8
    args = (tmp_path / "args").read_text().split()
    assert args[0] == "-c" and args[-3].endswith("stream-mc-homtpu.yaml") and args[-2].endswith("fsrcnn.onnx")
    assert squeezenet["stream"]["error"].startswith("not exported: ") and "Concat" in squeezenet["stream"]["error"]
    assert squeezenet["stream_over_fused"] is None
    assert json.loads(out.read_text())["rows"][0]["stream"]["cycles"] == 2.5e7
    text = render(data)
    assert "| stream-mc-homtpu | fsrcnn |" in text and "2 fused groups" in text and "not exported" in text


def test_failures_are_recorded_with_their_reason(tmp_path: Path) -> None:
    hw, net = tmp_path / "hw.yaml", tmp_path / "net.onnx"
    crash = fake_python(tmp_path, "echo 'Traceback: boom' >&2; exit 3")
    assert run_stream(crash, hw, net, tmp_path, 30)["error"] == "exit status 3: Traceback: boom"
    slow = fake_python(tmp_path, "sleep 5")
    assert "did not finish within 0.2 s" in run_stream(slow, hw, net, tmp_path, 0.2)["error"]
    assert "cannot run" in run_stream(str(tmp_path / "missing"), hw, net, tmp_path, 30)["error"]


def test_the_command_line_needs_the_stream_interpreter(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run"])
    assert "run needs --stream-python" in capsys.readouterr().err
