"""The accelsched command: listings, evaluation, demo and error paths."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from accelsched import cli
from accelsched.cli import main

ZOO = (
    "resnet18 resnet50 resnet152 vgg16 vgg19 googlenet inception_v3 inception_resnet_v1 mobilenet_v1 "
    "mobilenet_v2 efficientnet_b0 squeezenet tiny_yolo fsrcnn dmcnn_vd mccnn transformer_base "
    "transformer_large gpt2 randwire_a randwire_b nasnet pnasnet"
).split()
PRESETS = (
    "set-edge-4x4 set-cloud-12x12 atomic-8x8 stream-sc-tpu stream-sc-eye stream-sc-env stream-mc-homtpu "
    "stream-mc-homeye stream-mc-homenv stream-mc-hetero cocco-simba-shared cocco-simba-separate "
    "defines-meta-proto defines-meta-proto-df defines-tpu defines-tpu-df defines-edge-tpu defines-edge-tpu-df "
    "defines-ascend defines-ascend-df defines-tesla-npu defines-tesla-npu-df"
).split()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_workloads_shows_every_zoo_network_with_macs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "workloads")
    assert code == 0
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    for name in ZOO:
        assert name in rows, name
        assert float(rows[name][2]) > 0  # GMAC column


def test_list_hardware_shows_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "hardware")
    assert code == 0
    listed = {line.split(":")[0] for line in out.splitlines()}
    assert set(PRESETS) <= listed


def test_list_methods(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "methods")
    assert code == 0 and out.strip()


def test_evaluate_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "evaluate", "--workload", "random:6:1", "--hardware", "set-edge-4x4", "--json")
    assert code == 0
    data = json.loads(out)
    cost = data["cost"]
    for key in ("energy_pj", "latency_cycles", "dram_bytes", "noc_byte_hops", "peak_memory_bytes", "breakdown"):
        assert key in cost
    assert cost["energy_pj"] == pytest.approx(sum(cost["breakdown"].values()))


def test_evaluate_text_per_layer_and_cores(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "evaluate", "--workload", "random:4:2", "--hardware", "set-edge-4x4", "--cores", "0,1", "--per-layer"
    )
    assert code == 0
    assert "energy" in out and "utilization" in out and "L3" in out


def test_demo_prints_a_cost_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "demo")
    assert code == 0
    for word in ("resnet50", "energy", "mac", "dram", "latency", "DRAM traffic", "utilization"):
        assert word in out
    rows = {line.split()[0]: line.split() for line in out.split("partition (Cocco)")[1].splitlines()[1:5]}
    assert rows["milp-highs"][1] == "OPTIMAL" and rows["milp-highs"][5] == "0.00%"
    assert {rows[m][1] for m in ("greedy", "dp", "sa")} == {"FEASIBLE"}
    assert all(float(rows[m][2]) >= float(rows["milp-highs"][2]) for m in rows)


def test_a_closed_pipe_is_not_a_traceback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``accelsched ... | head``: the reader leaving is exit status 1 without a traceback. The standard
    output is a stream whose reader has gone (every write raises), on a file of its own for the
    redirection to the null device."""

    class Gone(io.StringIO):
        def __init__(self, fd: int) -> None:
            super().__init__()
            self.fd = fd

        def write(self, text: str) -> int:
            raise BrokenPipeError

        def fileno(self) -> int:
            return self.fd

    with (tmp_path / "stdout").open("w") as file:
        monkeypatch.setattr(sys, "stdout", Gone(file.fileno()))
        assert cli.main(["list", "methods"]) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["evaluate", "--workload", "resnet51", "--hardware", "set-edge-4x4"], "unknown workload 'resnet51'"),
        (["evaluate", "--workload", "resnet18", "--hardware", "set-egde-4x4"], "did you mean set-edge-4x4"),
        (["evaluate", "--workload", "random:x", "--hardware", "set-edge-4x4"], "random:N:SEED"),
        (["evaluate", "--workload", "random:3:1", "--hardware", "set-edge-4x4", "--cores", "0,99"], "no core 99"),
        (["evaluate", "--workload", "random:3:1", "--hardware", "set-edge-4x4", "--cores", "a"], "bad core list"),
        (["solve", "nosuchproblem", "--workload", "random:3:1", "--hardware", "set-edge-4x4", "--method", "x"],
         "unknown problem 'nosuchproblem'"),
        (["evaluate", "--workload", "resnet18", "--hardware", "stream-sc-tpu", "--cores", "0"],
         "no chosen core of stream-sc-tpu runs layer 'maxpool' (pool)"),
        (["frobnicate"], "invalid choice"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_nonzero(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    _, err = capsys.readouterr()
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_bad_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad_toml = tmp_path / "hw.toml"
    bad_toml.write_text("name = [unclosed")
    code, _, err = run(capsys, "evaluate", "--workload", "random:3:1", "--hardware", str(bad_toml))
    assert code == 2 and "malformed TOML" in err and str(bad_toml) in err
    bad_onnx = tmp_path / "m.onnx"
    bad_onnx.write_bytes(b"\x00garbage\xff")
    code, _, err = run(capsys, "evaluate", "--workload", str(bad_onnx), "--hardware", "set-edge-4x4")
    assert code == 2 and str(bad_onnx) in err
    code, _, err = run(capsys, "evaluate", "--workload", "random:3:1", "--hardware", str(tmp_path / "none.toml"))
    assert code == 2 and "cannot read the file" in err


def test_console_entry_point_has_no_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "accelsched.cli", "evaluate", "--workload", "nope", "--hardware", "set-edge-4x4"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("accelsched: error:") and "Traceback" not in proc.stderr


def test_ci_runs_the_readme_test_line() -> None:
    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text().splitlines()
    ci = [line for line in (root / ".ci/run").read_text().splitlines() if line and not line.startswith("#")]
    assert "accelsched demo" in readme[0]
    assert "pytest" in readme[1]
    assert ci[-1] == readme[1]
