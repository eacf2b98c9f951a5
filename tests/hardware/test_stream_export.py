"""Stream / ZigZag YAML export: the files parse back and say what the preset says."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from accelsched.hardware import Accelerator, Bus, Core, MemoryLevel, OffChip, load_accelerator, preset_names
from accelsched.hardware.stream_export import MEMORY_OPERANDS, export_stream, stream_documents, to_yaml
from accelsched.models.layer import OpKind

STREAM_PRESETS = [name for name in preset_names() if name.startswith("stream-")]


# ============================================================ a parser for the emitted subset of YAML
_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?")


def _scalar(text: str) -> Any:
    text = text.strip()
    if text.startswith('"'):
        return json.loads(text)
    if text.startswith("["):
        return _flow_list(text)
    if text == "{}":
        return {}
    if text in ("true", "false"):
        return text == "true"
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    assert text and text[0] not in "'{&*!|>%@`#", f"unexpected YAML scalar {text!r}"
    return text


def _flow_list(text: str) -> list[Any]:
    assert text.startswith("[") and text.endswith("]"), text
    body, items, i = text[1:-1], [], 0
    while i < len(body):
        if body[i] in " ,":
            i += 1
        elif body[i] == '"':
            value, end = json.JSONDecoder().raw_decode(body, i)
            items.append(value)
            i = end
        else:
            end = body.find(",", i)
            end = len(body) if end < 0 else end
            items.append(_scalar(body[i:end]))
            i = end
    return items


def _split_key(content: str) -> tuple[Any, str]:
    if content.startswith('"'):
        key, end = json.JSONDecoder().raw_decode(content)
        rest = content[end:]
    else:
        key_text, sep, rest = content.partition(":")
        assert sep, f"expected 'key: value', got {content!r}"
        key, rest = _scalar(key_text), ":" + rest
    assert rest.startswith(":"), content
    return key, rest[1:].strip()


def parse_yaml(text: str) -> Any:
    """Block mappings, block lists of mappings, flow lists of scalars, plain and double-quoted scalars."""
    lines = [(len(raw) - len(raw.lstrip(" ")), raw.strip()) for raw in text.splitlines()]
    lines = [(indent, content) for indent, content in lines if content and not content.startswith("#")]
    value, end = _block(lines, 0, lines[0][0])
    assert end == len(lines), f"unparsed line {lines[end]}"
    return value


def _block(lines: list[tuple[int, str]], i: int, indent: int) -> tuple[Any, int]:
    if lines[i][1].startswith("- "):
        items = []
        while i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("- "):
            lines[i] = (indent + 2, lines[i][1][2:])
            item, i = _block(lines, i, indent + 2)
            items.append(item)
        return items, i
    mapping: dict[Any, Any] = {}
    while i < len(lines) and lines[i][0] == indent and not lines[i][1].startswith("- "):
        key, rest = _split_key(lines[i][1])
        assert key not in mapping, f"duplicate key {key!r}"
        i += 1
        if rest:
            mapping[key] = _scalar(rest)
        else:
            assert i < len(lines) and lines[i][0] > indent, f"key {key!r} has no value"
            mapping[key], i = _block(lines, i, lines[i][0])
    assert i == len(lines) or lines[i][0] < indent, f"bad indentation at {lines[i]}"
    return mapping, i


# ============================================================ the preset files
@pytest.fixture(scope="module", params=STREAM_PRESETS)
def exported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    acc = load_accelerator(request.param)
    paths = export_stream(acc, tmp_path_factory.mktemp(request.param), dataflows=True)
    return {"acc": acc, "paths": paths, "docs": {p: parse_yaml(p.read_text()) for p in paths}}


def _core_doc(exported: dict[str, Any], core_id: int) -> dict[str, Any]:
    acc_path = exported["paths"][0]
    return exported["docs"][_resolve(acc_path, exported["docs"][acc_path]["cores"][core_id])]


def _resolve(acc_path: Path, ref: str) -> Path:
    return acc_path.parent / ref.removeprefix("./")


def test_there_are_seven_stream_presets() -> None:
    assert len(STREAM_PRESETS) == 7


def test_files_parse_back_to_the_documents(exported: dict[str, Any]) -> None:
    accelerator_doc, cores = stream_documents(exported["acc"], dataflows=True)
    paths = exported["paths"]
    assert exported["docs"][paths[0]] == accelerator_doc
    assert [p.stem for p in paths[1:]] == list(cores)
    for path in paths[1:]:
        assert exported["docs"][path] == cores[path.stem]


def test_cores_and_bus_agree_with_the_preset(exported: dict[str, Any]) -> None:
    acc: Accelerator = exported["acc"]
    doc = exported["docs"][exported["paths"][0]]
    assert doc["name"] == acc.name
    assert sorted(doc["cores"]) == list(range(acc.n_cores + 1))
    offchip = doc["offchip_core_id"]
    assert offchip == acc.n_cores
    for ref in doc["cores"].values():
        assert _resolve(exported["paths"][0], ref).is_file()
    assert isinstance(acc.interconnect, Bus)
    buses = [c for c in doc["core_connectivity"] if c["type"] == "bus"]
    assert len(buses) == 1
    assert sorted(buses[0]["cores"]) == list(range(acc.n_cores))
    assert buses[0]["bandwidth"] == acc.interconnect.bandwidth_bytes_per_cycle * 8
    bus_energy = buses[0]["unit_energy_cost"] / buses[0]["bandwidth"] * 8
    assert bus_energy == pytest.approx(acc.interconnect.energy_pj_per_byte)
    links = [c for c in doc["core_connectivity"] if c["type"] == "link"]
    assert sorted(tuple(c["cores"]) for c in links) == [(i, offchip) for i in range(acc.n_cores)]
    assert {c["bandwidth"] for c in links} == {acc.offchip.bandwidth_bytes_per_cycle * 8}
    pairs = [frozenset(p) for c in doc["core_connectivity"] for p in _pairs(c["cores"])]
    assert len(pairs) == len(set(pairs)), "Stream keeps one edge per core pair"
    dram_doc = _core_doc(exported, offchip)
    assert dram_doc["type"] == "zigzag.offchip"
    (dram,) = dram_doc["memories"].values()
    (port,) = dram["ports"]
    assert port["type"] == "read_write"
    assert port["bandwidth_max"] == acc.offchip.bandwidth_bytes_per_cycle * 8
    assert dram["r_cost"] / port["bandwidth_max"] * 8 == pytest.approx(acc.offchip.read_energy_pj_per_byte)
    assert dram["w_cost"] / port["bandwidth_max"] * 8 == pytest.approx(acc.offchip.write_energy_pj_per_byte)
    assert {a.split(", ")[0] for a in port["allocation"]} == {"I1", "I2", "O"}


def _pairs(cores: list[int]) -> list[tuple[int, int]]:
    return [(a, b) for i, a in enumerate(cores) for b in cores[i + 1 :]]


def test_every_core_agrees_with_the_preset(exported: dict[str, Any]) -> None:
    acc: Accelerator = exported["acc"]
    for core in acc.cores:
        doc = _core_doc(exported, core.id)
        assert doc["type"] == "zigzag.compute"
        array = doc["operational_array"]
        assert array["sizes"] == [size for _, size in core.spatial]
        assert math.prod(array["sizes"]) == core.n_macs
        assert array["unit_energy"] == pytest.approx(core.mac_energy_pj)
        assert [doc["dataflows"][d] for d in array["dimensions"]] == [[f"{loop}, {n}"] for loop, n in core.spatial]
        assert list(doc["memories"]) == sorted(doc["memories"], key=list(doc["memories"]).index)
        assert set(doc["memories"]) == {m.name for m in core.memories}
        for mem in core.memories:
            _check_memory(core, mem, doc["memories"][mem.name], array)
        for op in ("I", "W", "O"):  # innermost first, as ZigZag stacks the levels in file order
            positions = [list(doc["memories"]).index(name) for name in core.hierarchy[op]]
            assert positions == sorted(positions)
        types = set(doc.get("operator_types", ()))
        assert ("Conv" in types) == core.supports(OpKind.CONV)
        assert ("MaxPool" in types) == core.supports(OpKind.POOL)
        assert ("Add" in types) == core.supports(OpKind.ELTWISE)


def _check_memory(core: Core, mem: MemoryLevel, doc: dict[str, Any], array: dict[str, Any]) -> None:
    assert doc["size"] == mem.capacity_bytes * 8
    assert doc["operands"] == [MEMORY_OPERANDS[op] for op in core.operands_of(mem.name)]
    ports = {p["type"]: p for p in doc["ports"]}
    assert ports["read"]["bandwidth_max"] == mem.read_bandwidth_bytes_per_cycle * 8
    assert ports["write"]["bandwidth_max"] == mem.write_bandwidth_bytes_per_cycle * 8
    assert doc["r_cost"] / ports["read"]["bandwidth_max"] * 8 == pytest.approx(mem.read_energy_pj_per_byte)
    assert doc["w_cost"] / ports["write"]["bandwidth_max"] * 8 == pytest.approx(mem.write_energy_pj_per_byte)
    for port in doc["ports"]:
        assert port["bandwidth_min"] == min(8, port["bandwidth_max"])  # one byte: energy per byte, as accelsched
        directions = {a.split(", ")[1] for a in port["allocation"]}
        assert directions <= ({"tl", "th"} if port["type"] == "read" else {"fh", "fl"})
        assert {a.split(", ")[0] for a in port["allocation"]} == set(doc["operands"])
    sizes = dict(zip(array["dimensions"], array["sizes"], strict=True))
    unserved = [size for d, size in sizes.items() if d not in doc["served_dimensions"]]
    assert math.prod(unserved) == mem.instances


def test_served_dimensions_follow_operand_relevance() -> None:
    _, cores = stream_documents(load_accelerator("stream-mc-hetero"), dataflows=True)
    tpu, eyeriss, envision = cores["tpu"]["memories"], cores["eyeriss"]["memories"], cores["envision"]["memories"]
    assert cores["tpu"]["dataflows"] == {"D1": ["C, 32"], "D2": ["K, 32"]}
    assert tpu["i_rf"]["served_dimensions"] == ["D2"]  # one input file per C row, multicast along K
    assert tpu["o_rf"]["served_dimensions"] == ["D1"]  # one psum file per K column, reduces over C
    assert tpu["w_rf"]["served_dimensions"] == []
    assert eyeriss["w_rf"]["served_dimensions"] == ["D1"]  # one weight file per (FX, FY), shared along OX
    assert eyeriss["o_rf"]["served_dimensions"] == ["D2", "D3"]
    assert envision["i_rf"]["served_dimensions"] == ["D2"]  # inputs per OX, multicast along K
    assert envision["w_rf"]["served_dimensions"] == ["D1"]
    assert envision["io_l1"]["served_dimensions"] == ["D1", "D2"]


def test_export_is_deterministic(tmp_path: Path) -> None:
    acc = load_accelerator("stream-mc-hetero")
    first = export_stream(acc, tmp_path / "a")
    second = export_stream(acc, tmp_path / "b")
    assert [p.name for p in first] == [p.name for p in second]
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]


def test_core_types_with_one_name_and_different_configurations_get_distinct_files() -> None:
    acc = load_accelerator("stream-mc-homtpu")
    bigger = dataclasses.replace(acc.cores[1], memories=tuple(
        dataclasses.replace(m, capacity_bytes=2 * m.capacity_bytes) for m in acc.cores[1].memories))  # fmt: skip
    variant = acc.replace(cores=(acc.cores[0], bigger, *acc.cores[2:]))
    accelerator_doc, cores = stream_documents(variant)
    assert accelerator_doc["cores"][0] == "./cores/tpu.yaml"
    assert accelerator_doc["cores"][1] == "./cores/tpu_2.yaml"
    assert accelerator_doc["cores"][2] == "./cores/tpu.yaml"
    assert cores["tpu_2"]["memories"]["w_l1"]["size"] == 2 * cores["tpu"]["memories"]["w_l1"]["size"]


# ============================================================ bad input
def test_an_accelerator_without_a_bus_is_refused() -> None:
    with pytest.raises(ValueError, match="has a mesh interconnect; the Stream export needs a bus"):
        stream_documents(load_accelerator("set-edge-4x4"))
    single = load_accelerator("cocco-simba-shared")
    assert single.interconnect is None
    with pytest.raises(ValueError, match="has no interconnect; the Stream export needs a bus"):
        stream_documents(single)


def _tiny(core: Core) -> Accelerator:
    return Accelerator("tiny", (core,), OffChip(8, 80.0, 80.0), Bus(16, 0.0))


def _core(**changes: Any) -> Core:
    gb = MemoryLevel("gb", 1024, 1.0, 1.0, 8, 8)
    base = Core(0, "c", (("K", 4), ("C", 4)), (gb,), {"I": ("gb",), "W": ("gb",), "O": ("gb",)}, 0.1)
    return dataclasses.replace(base, **changes)


def test_a_core_without_a_weight_hierarchy_is_refused() -> None:
    core = _core()
    object.__setattr__(core, "hierarchy", {"I": ("gb",), "O": ("gb",)})  # bypasses Core's own check
    with pytest.raises(ValueError, match=r"core 0 \('c'\): no memory hierarchy for operand\(s\) \['W'\]"):
        stream_documents(_tiny(core))


def test_instances_no_array_dimensions_give_are_refused() -> None:
    rf = MemoryLevel("rf", 4, 0.1, 0.1, 1, 1, instances=8)
    gb = MemoryLevel("gb", 1024, 1.0, 1.0, 8, 8)
    core = _core(memories=(rf, gb), hierarchy={"I": ("gb",), "W": ("rf", "gb"), "O": ("gb",)})
    with pytest.raises(ValueError, match="memory 'rf' has 8 instances, but no set of array dimensions"):
        stream_documents(_tiny(core))


def test_a_bandwidth_of_a_fraction_of_a_bit_is_refused() -> None:
    gb = MemoryLevel("gb", 1024, 1.0, 1.0, 0.1, 8)
    core = _core(memories=(gb,))
    with pytest.raises(ValueError, match=r"memory 'gb' read bandwidth of 0\.1 B/cycle is not a whole number of bits"):
        stream_documents(_tiny(core))


def test_more_than_four_array_dimensions_are_refused() -> None:
    core = _core(spatial=(("K", 2), ("C", 2), ("OX", 2), ("OY", 2), ("FX", 2)))
    with pytest.raises(ValueError, match="5 spatial dimensions"):
        stream_documents(_tiny(core))


# ============================================================ the emitter
def test_scalars_yaml_could_misread_are_quoted_and_read_back() -> None:
    values = ["yes", "No", "null", "~", "12", "1e5", "0.5", "a: b", "#c", "", "./cores/x.yaml", "I1, fh", "- x",
              "[x]", "plain_name", "D1"]  # fmt: skip
    numbers = [0, -3, 10**10, 0.04, 1e-05, 2.5e20, -0.125, 52.199999999999996]
    data = {"strings": values, "numbers": numbers, "flags": [True, False], "empty": [], "none": {},
            "nested": [{"k": v} for v in values], "1e5": "key", "yes": 1}  # fmt: skip
    text = to_yaml(data, ["header line"])
    assert text.startswith("# header line\n")
    assert parse_yaml(text) == data
    written = text.split("numbers: [")[1].split("]")[0].split(", ")
    assert [w for w in written if "e" in w] == ["1.0e-05", "2.5e+20"]  # YAML 1.1 reads 1e-05 as a string
    assert "flags: [true, false]" in text
    with pytest.raises(ValueError, match="non-finite"):
        to_yaml({"x": math.inf})
    with pytest.raises(TypeError, match="cannot write"):
        to_yaml({"x": None})


def test_dataflows_are_written_only_when_asked() -> None:
    """Stream 2.1.1 drops unrollings that name loops (it names them by position): omitted by default."""
    plain, with_flows = (stream_documents(load_accelerator("stream-mc-hetero"), dataflows=d)[1] for d in (False, True))
    assert all("dataflows" not in doc for doc in plain.values())
    for stem, doc in with_flows.items():
        rest = {k: v for k, v in doc.items() if k != "dataflows"}
        assert rest == plain[stem]
