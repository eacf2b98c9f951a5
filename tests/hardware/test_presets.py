"""The shipped accelerator presets: every platform of the five papers, checked against the
papers' numbers, plus the TOML reader's round trip, user files and error messages."""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from accelsched.errors import InputError
from accelsched.hardware.presets_io import accelerator_from_dict, dump_toml, load_accelerator, preset_names
from accelsched.hardware.spec import OPERANDS, Accelerator, Bus, Mesh
from accelsched.models.layer import OpKind

KIB = 1024
MIB = 1024 * KIB
SRAM_MIN_BYTES = KIB
"""Levels at least this large count as SRAM buffers; smaller ones are registers."""

ALL_KINDS = frozenset(OpKind)
COMPUTE_KINDS = frozenset({OpKind.CONV, OpKind.FC, OpKind.MATMUL})
SIMD_KINDS = frozenset({OpKind.POOL, OpKind.ELTWISE})

DEFINES_HW_TXT = Path(__file__).parents[1] / "data" / "defines" / "hw.txt"


# --------------------------------------------------------------------------------------
# Paper facts, one row per preset
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Facts:
    """What the papers state about a platform, in the units of the project."""

    name: str
    spatial: tuple[dict[str, int], ...]
    """Spatial unrolling of each core, in core-id order."""
    kinds: tuple[frozenset[OpKind], ...]
    """Operator kinds each core supports."""
    clock_hz: float
    dram_bytes_per_cycle: float
    dram_read_pj_per_byte: float
    dram_write_pj_per_byte: float
    sram_bytes: int | None
    """On-chip SRAM over all cores (levels of at least 1 KiB); None: checked elsewhere."""
    mesh: tuple[int, int] | None = None
    hop_pj_per_byte: float | None = None
    link_bytes_per_cycle: float | None = None
    bus_bytes_per_cycle: float | None = None


def _same(spatial: dict[str, int], n: int, kinds: frozenset[OpKind] = ALL_KINDS) -> dict[str, Any]:
    return {"spatial": (spatial,) * n, "kinds": (kinds,) * n}


def _stream(*compute: dict[str, int]) -> dict[str, Any]:
    """Stream: the compute cores, then the SIMD core that runs pooling and element-wise layers."""
    return {
        "spatial": (*compute, {"G": 64}),
        "kinds": (COMPUTE_KINDS,) * len(compute) + (SIMD_KINDS,),
    }


SET_COMMON: dict[str, Any] = {
    "clock_hz": 1e9,
    "dram_read_pj_per_byte": 7.5 * 8,
    "dram_write_pj_per_byte": 7.5 * 8,
    "hop_pj_per_byte": 0.7 * 8,
    "link_bytes_per_cycle": 24,
}
ATOMIC_COMMON: dict[str, Any] = {
    "clock_hz": 500e6,
    "dram_bytes_per_cycle": 128e9 / 500e6,
    "dram_read_pj_per_byte": 7 * 8,
    "dram_write_pj_per_byte": 7 * 8,
    "sram_bytes": 64 * 128 * KIB,
    "mesh": (8, 8),
    "hop_pj_per_byte": 0.61 * 8,
}
STREAM_COMMON: dict[str, Any] = {
    "clock_hz": 1e9,
    "dram_bytes_per_cycle": 64 / 8,
    "dram_read_pj_per_byte": 650 / 8,
    "dram_write_pj_per_byte": 650 / 8,
    "sram_bytes": MIB,
    "bus_bytes_per_cycle": 128 / 8,
}
COCCO_COMMON: dict[str, Any] = {
    "clock_hz": 1e9,
    "dram_bytes_per_cycle": 16e9 / 1e9,
    "dram_read_pj_per_byte": 12.5 * 8,
    "dram_write_pj_per_byte": 12.5 * 8,
    "sram_bytes": MIB + 1152 * KIB,
    **_same({"K": 32, "C": 32}, 1),
}

FACTS = [
    Facts(
        "set-edge-4x4",
        **_same({"K": 32, "C": 32}, 16),
        **SET_COMMON,
        dram_bytes_per_cycle=16,
        sram_bytes=16 * MIB,
        mesh=(4, 4),
    ),
    Facts(
        "set-cloud-12x12",
        **_same({"K": 32, "C": 32}, 144),
        **SET_COMMON,
        dram_bytes_per_cycle=144,
        sram_bytes=144 * MIB,
        mesh=(12, 12),
    ),
    Facts("atomic-8x8-kc", **_same({"K": 16, "C": 16}, 64), **ATOMIC_COMMON),
    Facts("atomic-8x8", **_same({"K": 16, "C": 16}, 64), **ATOMIC_COMMON),
    Facts("atomic-8x8-yx", **_same({"OY": 16, "OX": 16}, 64), **ATOMIC_COMMON),
    Facts("stream-sc-tpu", **_stream({"C": 64, "K": 64}), **STREAM_COMMON),
    Facts("stream-sc-eye", **_stream({"OX": 256, "FX": 4, "FY": 4}), **STREAM_COMMON),
    Facts("stream-sc-env", **_stream({"OX": 64, "K": 64}), **STREAM_COMMON),
    Facts("stream-mc-homtpu", **_stream(*[{"C": 32, "K": 32}] * 4), **STREAM_COMMON),
    Facts("stream-mc-homeye", **_stream(*[{"OX": 64, "FX": 4, "FY": 4}] * 4), **STREAM_COMMON),
    Facts("stream-mc-homenv", **_stream(*[{"OX": 32, "K": 32}] * 4), **STREAM_COMMON),
    Facts(
        "stream-mc-hetero",
        **_stream({"OX": 64, "FX": 4, "FY": 4}, {"OX": 32, "K": 32}, {"C": 32, "K": 32}, {"C": 32, "K": 32}),
        **STREAM_COMMON,
    ),
    Facts("cocco-simba-separate", **COCCO_COMMON),
    Facts("cocco-simba-shared", **COCCO_COMMON),
]

DEFINES_PRESETS = {
    "Meta_prototype": "defines-meta-proto",
    "Meta_prototype_DF": "defines-meta-proto-df",
    "TPU_like": "defines-tpu-artifact",
    "TPU_like_DF": "defines-tpu-df-artifact",
    "Edge_TPU_like": "defines-edge-tpu",
    "Edge_TPU_like_DF": "defines-edge-tpu-df",
    "Ascend_like": "defines-ascend-artifact",
    "Ascend_like_DF": "defines-ascend-df-artifact",
    "Tesla_NPU_like": "defines-tesla-npu",
    "Tesla_NPU_like_DF": "defines-tesla-npu-df",
}
DEFINES_SPATIAL = {
    "Meta_prototype": {"K": 32, "C": 2, "OX": 4, "OY": 4},
    "TPU_like": {"K": 32, "C": 32},
    "Edge_TPU_like": {"K": 8, "C": 8, "OX": 4, "OY": 4},
    "Ascend_like": {"K": 16, "C": 16, "OX": 2, "OY": 2},
    "Tesla_NPU_like": {"K": 32, "OX": 8, "OY": 4},
}
"""DeFiNES' array dimensions as loop dimensions (DeFiNES paper); the DF variants share them."""

FACTS += [
    Facts(
        name,
        spatial=(DEFINES_SPATIAL[arch.removesuffix("_DF")],),
        kinds=(ALL_KINDS,),
        clock_hz=1e9,
        dram_bytes_per_cycle=64 / 8,
        dram_read_pj_per_byte=700 / 8,
        dram_write_pj_per_byte=750 / 8,
        sram_bytes=None,
    )
    for arch, name in DEFINES_PRESETS.items()
]

PAPER_PRESETS = [f.name for f in FACTS]


def _sram_bytes(acc: Accelerator) -> int:
    return sum(m.total_capacity_bytes for c in acc.cores for m in c.memories if m.capacity_bytes >= SRAM_MIN_BYTES)


def test_every_paper_platform_is_a_preset() -> None:
    assert len(PAPER_PRESETS) == 24
    missing = sorted(set(PAPER_PRESETS) - set(preset_names()))
    assert not missing


@pytest.mark.parametrize("name", preset_names())
def test_preset_loads_and_documents_itself(name: str) -> None:
    acc = load_accelerator(name)
    assert acc.name == name
    assert acc.description
    text = (resources.files("accelsched.hardware") / "presets" / f"{name}.toml").read_text()
    assert text.startswith("#"), "every preset starts with a comment citing its sources"
    assert "Assum" in text, "every preset lists its assumptions"


@pytest.mark.parametrize("facts", FACTS, ids=lambda f: f.name)
def test_paper_facts(facts: Facts) -> None:
    acc = load_accelerator(facts.name)
    assert acc.n_cores == len(facts.spatial)
    assert [c.spatial_factors for c in acc.cores] == list(facts.spatial)
    expected_macs = [math.prod(s.values()) for s in facts.spatial]
    assert [c.n_macs for c in acc.cores] == expected_macs
    assert acc.n_macs == sum(expected_macs)
    assert [c.supported for c in acc.cores] == list(facts.kinds)
    assert acc.clock_hz == facts.clock_hz
    assert acc.offchip.bandwidth_bytes_per_cycle == pytest.approx(facts.dram_bytes_per_cycle)
    assert acc.offchip.read_energy_pj_per_byte == pytest.approx(facts.dram_read_pj_per_byte)
    assert acc.offchip.write_energy_pj_per_byte == pytest.approx(facts.dram_write_pj_per_byte)
    if facts.sram_bytes is not None:
        assert _sram_bytes(acc) == facts.sram_bytes
    net = acc.interconnect
    if facts.mesh is not None:
        assert isinstance(net, Mesh)
        assert (net.rows, net.cols) == facts.mesh
        assert net.hop_energy_pj_per_byte == pytest.approx(facts.hop_pj_per_byte)
        if facts.link_bytes_per_cycle is not None:
            assert net.link_bandwidth_bytes_per_cycle == facts.link_bytes_per_cycle
    elif facts.bus_bytes_per_cycle is not None:
        assert isinstance(net, Bus)
        assert net.bandwidth_bytes_per_cycle == facts.bus_bytes_per_cycle
    else:
        assert net is None
        assert acc.n_cores == 1


def test_set_tiles_have_the_papers_buffer_and_energies() -> None:
    for name in ("set-edge-4x4", "set-cloud-12x12"):
        acc = load_accelerator(name)
        for core in acc.cores:
            glb = core.memory("glb")
            assert glb.capacity_bytes == MIB
            assert (glb.read_energy_pj_per_byte, glb.write_energy_pj_per_byte) == (1.054, 1.872)
            assert core.mac_energy_pj == 0.018
            assert all(core.top_level(op).name == "glb" for op in OPERANDS)


def test_atomic_engines_and_default_variant() -> None:
    kc = load_accelerator("atomic-8x8-kc")
    yx = load_accelerator("atomic-8x8-yx")
    for acc in (kc, yx):
        for core in acc.cores:
            sram = core.memory("sram")
            assert sram.capacity_bytes == 128 * KIB
            # the paper's multi-bank SRAM: 16 banks of 64-bit ports feed the 16 x 16 PEs
            assert sram.read_bandwidth_bytes_per_cycle == 16 * 64 / 8
            assert core.n_macs == 16 * 16
    assert [c.memories for c in kc.cores] == [c.memories for c in yx.cores], "one engine, two dataflows"
    one_port = load_accelerator("atomic-8x8-kc-port64")  # the other reading: one 64-bit port per engine
    assert {c.memory("sram").read_bandwidth_bytes_per_cycle for c in one_port.cores} == {64 / 8}
    assert {c.memory("sram").capacity_bytes for c in one_port.cores} == {128 * KIB}
    default = load_accelerator("atomic-8x8")
    assert default.replace(name=kc.name, description=kc.description) == kc


def test_stream_architectures_share_compute_and_memory() -> None:
    names = [f.name for f in FACTS if f.name.startswith("stream-")]
    assert len(names) == 7
    for name in names:
        acc = load_accelerator(name)
        *compute, simd = acc.cores
        assert sum(c.n_macs for c in compute) == 4096
        assert acc.cores_for(OpKind.POOL) == (simd,)
        assert acc.cores_for(OpKind.ELTWISE) == (simd,)
        assert acc.cores_for(OpKind.CONV) == tuple(compute)
        assert MIB < acc.on_chip_bytes < 1.06 * MIB, "about 1 MB in total (1 MiB of SRAM plus registers)"


def test_cocco_buffer_organisations() -> None:
    separate = load_accelerator("cocco-simba-separate").cores[0]
    assert separate.top_level("I").name == separate.top_level("O").name == "gb"
    assert separate.top_level("I").capacity_bytes == 1024 * KIB
    assert separate.top_level("W").name == "wb"
    assert separate.top_level("W").capacity_bytes == 1152 * KIB
    shared = load_accelerator("cocco-simba-shared").cores[0]
    assert shared.top_level("I") == shared.top_level("W") == shared.top_level("O")
    assert shared.top_level("W").capacity_bytes == 2176 * KIB
    for core in (separate, shared):
        assert core.n_macs == 4 * 4 * 8 * 8


# --------------------------------------------------------------------------------------
# DeFiNES: every memory level converted from DeFiNES' hardware description
# --------------------------------------------------------------------------------------


class Level(NamedTuple):
    name: str
    ops: tuple[str, ...]
    size_bit: int
    r_bw: int
    w_bw: int
    r_cost: float
    w_cost: float
    unroll: int


class DefinesArch(NamedTuple):
    dims: tuple[int, ...]
    mac_pj: float
    levels: tuple[Level, ...]


_DEFINES_OPERAND = {"I1": "I", "I2": "W", "O": "O"}
_HEAD = re.compile(r"^===== (\S+): array dims=\[([\d, ]+)\] total=(\d+) MAC energy=([\d.]+)")
_LEVEL = re.compile(
    r"^\s+(\S+)\s+ops=\(([^)]*)\)\s+size_bit=(\d+).*?\br_bw=(\d+)\s+w_bw=(\d+)\s+"
    r"r_cost=([\d.]+)\s+w_cost=([\d.]+).*?\bunroll=(\d+)"
)


def _parse_hw_txt(text: str) -> dict[str, DefinesArch]:
    """Parse DeFiNES' architecture listing (the format of reference/defines/hw.txt)."""
    archs: dict[str, tuple[tuple[int, ...], float, list[Level]]] = {}
    current = ""
    for line in text.splitlines():
        head = _HEAD.match(line)
        if head:
            current = head.group(1)
            dims = tuple(int(d) for d in head.group(2).split(","))
            assert int(head.group(3)) == 1024
            archs[current] = (dims, float(head.group(4)), [])
            continue
        level = _LEVEL.match(line)
        if level:
            name, ops, size, r_bw, w_bw, r_cost, w_cost, unroll = level.groups()
            operands = tuple(op.strip().strip("'") for op in ops.split(",") if op.strip())
            archs[current][2].append(
                Level(name, operands, int(size), int(r_bw), int(w_bw), float(r_cost), float(w_cost), int(unroll))
            )
    return {arch: DefinesArch(dims, mac, tuple(levels)) for arch, (dims, mac, levels) in archs.items()}


@pytest.fixture(scope="module")
def defines_reference() -> dict[str, DefinesArch]:
    """DeFiNES' architectures, parsed from a verbatim copy of reference/defines/hw.txt in tests/data."""
    return _parse_hw_txt(DEFINES_HW_TXT.read_text())


@pytest.mark.parametrize("arch", sorted(DEFINES_PRESETS))
def test_defines_preset_converts_every_level(arch: str, defines_reference: dict[str, DefinesArch]) -> None:
    ref = defines_reference[arch]
    acc = load_accelerator(DEFINES_PRESETS[arch])
    (core,) = acc.cores
    assert acc.interconnect is None
    dims = tuple(DEFINES_SPATIAL[arch.removesuffix("_DF")])
    assert core.spatial == tuple(zip(dims, ref.dims, strict=True))
    assert core.n_macs == 1024
    assert core.mac_energy_pj == ref.mac_pj
    on_chip = [lv for lv in ref.levels if lv.name != "dram"]
    assert [m.name for m in core.memories] == [lv.name for lv in on_chip]
    for lv in on_chip:
        mem = core.memory(lv.name)
        assert mem.capacity_bytes == lv.size_bit / 8, lv.name
        assert mem.read_energy_pj_per_byte == pytest.approx(lv.r_cost / (lv.r_bw / 8), rel=1e-12), lv.name
        assert mem.write_energy_pj_per_byte == pytest.approx(lv.w_cost / (lv.w_bw / 8), rel=1e-12), lv.name
        assert mem.read_bandwidth_bytes_per_cycle == lv.r_bw / 8, lv.name
        assert mem.write_bandwidth_bytes_per_cycle == lv.w_bw / 8, lv.name
        assert mem.instances == lv.unroll, lv.name
        held = {_DEFINES_OPERAND[op] for op in lv.ops}
        assert core.operands_of(lv.name) == tuple(op for op in OPERANDS if op in held), lv.name
    for op in OPERANDS:
        expected = tuple(lv.name for lv in on_chip if op in {_DEFINES_OPERAND[o] for o in lv.ops})
        assert core.hierarchy[op] == expected, op
    (dram,) = [lv for lv in ref.levels if lv.name == "dram"]
    assert acc.offchip.bandwidth_bytes_per_cycle == dram.r_bw / 8
    assert acc.offchip.read_energy_pj_per_byte == pytest.approx(dram.r_cost / (dram.r_bw / 8))
    assert acc.offchip.write_energy_pj_per_byte == pytest.approx(dram.w_cost / (dram.w_bw / 8))
    assert acc.on_chip_bytes == sum(lv.size_bit // 8 * lv.unroll for lv in on_chip)


# --------------------------------------------------------------------------------------
# TOML round trip and user files
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", preset_names())
def test_dump_toml_round_trips(name: str) -> None:
    acc = load_accelerator(name)
    text = dump_toml(acc)
    again = accelerator_from_dict(tomllib.loads(text))
    assert again == acc
    assert dump_toml(again) == text


TINY = """\
name = "tiny"
description = "a user accelerator"
clock_hz = 1.0e9

[offchip]
bandwidth_bytes_per_cycle = 8
read_energy_pj_per_byte = 80.0
write_energy_pj_per_byte = 80.0

[core_types.tile]
spatial = { K = 4, C = 4 }
mac_energy_pj = 0.04
hierarchy = { I = ["gb"], W = ["wreg", "gb"], O = ["gb"] }

[[core_types.tile.memories]]
name = "wreg"
capacity_bytes = 1
read_energy_pj_per_byte = 0.0
write_energy_pj_per_byte = 0.0
read_bandwidth_bytes_per_cycle = 1
write_bandwidth_bytes_per_cycle = 1
instances = 16

[[core_types.tile.memories]]
name = "gb"
capacity_bytes = 65536
read_energy_pj_per_byte = 1.0
write_energy_pj_per_byte = 1.5
read_bandwidth_bytes_per_cycle = 16
write_bandwidth_bytes_per_cycle = 16

[[cores]]
type = "tile"
"""


def test_user_toml_file_loads_by_path(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    acc = load_accelerator(path)
    assert acc.name == "tiny"
    assert acc.n_cores == 1
    assert acc.n_macs == 16
    assert acc.cores[0].hierarchy["W"] == ("wreg", "gb")
    assert acc.on_chip_bytes == 16 + 65536
    assert load_accelerator(str(path)) == acc


def test_user_file_made_from_a_preset(tmp_path: Path) -> None:
    preset = load_accelerator("stream-mc-hetero").replace(name="my-hetero")
    path = tmp_path / "my-hetero.toml"
    path.write_text(dump_toml(preset))
    assert load_accelerator(path) == preset


# --------------------------------------------------------------------------------------
# Error paths: the message names the file, the key and the value
# --------------------------------------------------------------------------------------


def _load_error(tmp_path: Path, text: str) -> tuple[InputError, Path]:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_accelerator(path)
    return info.value, path


def _replace(old: str, new: str) -> str:
    assert TINY.count(old) == 1, old
    return TINY.replace(old, new)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        pytest.param(
            _replace("read_energy_pj_per_byte = 80.0", 'read_energy_pj_per_byte = 80.0\ncolour = "red"'),
            ["unknown key offchip.colour", "'red'", "allowed keys are"],
            id="unknown-key-offchip",
        ),
        pytest.param("frequency = 5\n" + TINY, ["unknown key frequency = 5"], id="unknown-key-top"),
        pytest.param(
            _replace("capacity_bytes = 65536", "capacity_bytes = 65536\nbanks = 4"),
            ["unknown key core_types.tile.memories[1].banks = 4"],
            id="unknown-key-memory",
        ),
        pytest.param(
            _replace("mac_energy_pj = 0.04\n", ""), ["missing key core_types.tile.mac_energy_pj"], id="missing-field"
        ),
        pytest.param(
            _replace("write_bandwidth_bytes_per_cycle = 16\n", ""),
            ["missing key core_types.tile.memories[1].write_bandwidth_bytes_per_cycle"],
            id="missing-memory-field",
        ),
        pytest.param(
            _replace("capacity_bytes = 65536", "capacity_bytes = 0"),
            ["memory 'gb'", "capacity_bytes", "> 0", "got 0"],
            id="zero-capacity",
        ),
        pytest.param(
            _replace("read_bandwidth_bytes_per_cycle = 16", "read_bandwidth_bytes_per_cycle = -16"),
            ["memory 'gb'", "read_bandwidth_bytes_per_cycle", "> 0", "got -16"],
            id="negative-bandwidth",
        ),
        pytest.param(
            _replace("bandwidth_bytes_per_cycle = 8", "bandwidth_bytes_per_cycle = -8"),
            ["offchip", "bandwidth_bytes_per_cycle", "got -8"],
            id="negative-dram-bandwidth",
        ),
        pytest.param(
            _replace('W = ["wreg", "gb"]', 'W = ["wregs", "gb"]'),
            ["hierarchy.W", "missing memory level 'wregs'", "'wreg'"],
            id="hierarchy-missing-level",
        ),
        pytest.param(
            _replace('type = "tile"', 'type = "gpu"'),
            ["cores[0].type = 'gpu'", "missing core type", "tile"],
            id="unknown-core-type",
        ),
        pytest.param(
            _replace("mac_energy_pj = 0.04", 'mac_energy_pj = 0.04\nsupported = ["conv", "softmax"]'),
            ["core_types.tile.supported", "'softmax'", "unknown operator kind"],
            id="unknown-op-kind",
        ),
        pytest.param(_replace("[offchip]", "[offchip"), ["malformed TOML"], id="malformed-toml"),
    ],
)
def test_bad_file_names_file_key_and_value(tmp_path: Path, text: str, parts: list[str]) -> None:
    error, path = _load_error(tmp_path, text)
    message = str(error)
    assert error.where == str(path)
    assert message.startswith(f"{path}: ")
    assert "\n" not in message
    for part in parts:
        assert part in message


def test_unreadable_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.toml"
    with pytest.raises(InputError) as info:
        load_accelerator(missing)
    assert info.value.where == str(missing)
    assert "cannot read the file" in str(info.value)
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    with pytest.raises(InputError) as info:
        load_accelerator(folder)
    assert info.value.where == str(folder)
    assert "cannot read the file" in str(info.value)


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [("set-edge-4x5", "set-edge-4x4"), ("stream-mc-hetro", "stream-mc-hetero"), ("defines-tpu-fd", "defines-tpu-df")],
)
def test_unknown_preset_suggests_close_names(name: str, suggestion: str) -> None:
    with pytest.raises(InputError) as info:
        load_accelerator(name)
    message = str(info.value)
    assert f"unknown hardware {name!r}" in message
    assert "did you mean" in message
    assert suggestion in message
    assert "\n" not in message
