"""Reading and writing accelerator descriptions (TOML), and the preset registry.

File format (every key is checked; unknown keys are errors)::

    name = "my-accel"
    description = "where the numbers come from"
    clock_hz = 1.0e9

    [offchip]
    bandwidth_bytes_per_cycle = 16
    read_energy_pj_per_byte = 60.0
    write_energy_pj_per_byte = 60.0

    [interconnect]                  # optional for one core
    kind = "mesh"                   # mesh | bus | crossbar
    rows = 4
    cols = 4
    hop_energy_pj_per_byte = 5.6
    link_bandwidth_bytes_per_cycle = 24
    dram_nodes = [[0, 0], [3, 3]]   # optional (mesh only)

    [core_types.tile]
    spatial = { K = 32, C = 32 }
    mac_energy_pj = 0.018
    supported = ["conv", "fc", "matmul", "pool", "eltwise"]   # optional, default all
    hierarchy = { I = ["gb"], W = ["gb"], O = ["gb"] }        # innermost first

    [[core_types.tile.memories]]
    name = "gb"
    capacity_bytes = 1048576
    read_energy_pj_per_byte = 1.054
    write_energy_pj_per_byte = 1.872
    read_bandwidth_bytes_per_cycle = 64
    write_bandwidth_bytes_per_cycle = 64
    instances = 1                   # optional

    [[cores]]                       # cores get ids 0.. in this order
    type = "tile"
    count = 16                      # optional, default 1
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from accelsched.errors import InputError
from accelsched.hardware.spec import Accelerator, Bus, Core, Crossbar, Interconnect, MemoryLevel, Mesh, OffChip
from accelsched.models.layer import OpKind

__all__ = ["accelerator_from_dict", "accelerator_to_dict", "dump_toml", "load_accelerator", "preset_names"]

_TOP_KEYS = {"name", "description", "clock_hz", "offchip", "interconnect", "core_types", "cores"}
_OFFCHIP_KEYS = {"bandwidth_bytes_per_cycle", "read_energy_pj_per_byte", "write_energy_pj_per_byte"}
_NET_KEYS = {
    "mesh": {"kind", "rows", "cols", "hop_energy_pj_per_byte", "link_bandwidth_bytes_per_cycle", "dram_nodes"},
    "bus": {"kind", "bandwidth_bytes_per_cycle", "energy_pj_per_byte"},
    "crossbar": {"kind", "bandwidth_bytes_per_cycle", "energy_pj_per_byte"},
}
_CORE_TYPE_KEYS = {"spatial", "mac_energy_pj", "supported", "hierarchy", "memories"}
_MEMORY_KEYS = {
    "name",
    "capacity_bytes",
    "read_energy_pj_per_byte",
    "write_energy_pj_per_byte",
    "read_bandwidth_bytes_per_cycle",
    "write_bandwidth_bytes_per_cycle",
    "instances",
}
_OPTIONAL = {"description", "clock_hz", "interconnect", "supported", "instances", "dram_nodes", "count"}


def preset_names() -> list[str]:
    """Names of the presets shipped with accelsched, sorted."""
    folder = resources.files("accelsched.hardware") / "presets"
    return sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_accelerator(spec: str | Path) -> Accelerator:
    """Load a preset by name, or an accelerator TOML file by path.

    Raises
    ------
    InputError
        For an unknown preset, an unreadable file, malformed TOML, an unknown or
        missing key, or a value the spec rejects; the message names the file, the
        key and the value.
    """
    text_spec = str(spec)
    if text_spec in preset_names():
        resource = resources.files("accelsched.hardware") / "presets" / f"{text_spec}.toml"
        return _parse(resource.read_text(), f"preset {text_spec}")
    path = Path(text_spec)
    if path.suffix.lower() != ".toml":
        close = difflib.get_close_matches(text_spec, preset_names(), n=3)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise InputError(
            f"unknown hardware {text_spec!r}",
            "--hardware",
            f"{hint}run 'accelsched list hardware' for the presets, or give a .toml file",
        )
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror})", str(path), "check the path") from None
    return _parse(text, str(path))


def _parse(text: str, where: str) -> Accelerator:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"malformed TOML: {exc}", where, "fix the TOML syntax") from None
    return accelerator_from_dict(data, where)


def _check_keys(table: Mapping[str, Any], allowed: set[str], where: str, context: str) -> None:
    if not isinstance(table, Mapping):
        raise InputError(f"{context} must be a table, got {table!r}", where)
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise InputError(
            f"unknown key {context + '.' if context else ''}{unknown[0]} = {table[unknown[0]]!r}",
            where,
            f"allowed keys are {', '.join(sorted(allowed))}",
        )
    missing = sorted(allowed - _OPTIONAL - set(table))
    if missing:
        raise InputError(
            f"missing key {context + '.' if context else ''}{missing[0]}", where, "add it (see the preset files)"
        )


def accelerator_from_dict(data: Mapping[str, Any], where: str = "<dict>") -> Accelerator:
    """Build an :class:`Accelerator` from the TOML structure (see the module docstring).

    Raises
    ------
    InputError
        Naming ``where`` and the offending key and value.
    """
    _check_keys(data, _TOP_KEYS, where, "")
    try:
        offchip_data = data["offchip"]
        _check_keys(offchip_data, _OFFCHIP_KEYS, where, "offchip")
        offchip = OffChip(**offchip_data)
        interconnect = _interconnect(data.get("interconnect"), where)
        core_types = data["core_types"]
        if not isinstance(core_types, Mapping) or not core_types:
            raise InputError("core_types must be a non-empty table of core types", where)
        cores: list[Core] = []
        entries = data["cores"]
        if not isinstance(entries, list) or not entries:
            raise InputError("cores must be a non-empty array of tables ([[cores]])", where)
        for i, entry in enumerate(entries):
            _check_keys(entry, {"type", "count"}, where, f"cores[{i}]")
            type_name = entry["type"]
            if type_name not in core_types:
                raise InputError(
                    f"cores[{i}].type = {type_name!r} refers to a missing core type",
                    where,
                    f"core types are {', '.join(core_types)}",
                )
            count = entry.get("count", 1)
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise InputError(f"cores[{i}].count must be a positive integer, got {count!r}", where)
            for _ in range(count):
                cores.append(_core(len(cores), type_name, core_types[type_name], where))
        return Accelerator(
            name=data["name"],
            cores=tuple(cores),
            offchip=offchip,
            interconnect=interconnect,
            clock_hz=data.get("clock_hz", 1e9),
            description=data.get("description", ""),
        )
    except InputError:
        raise
    except (ValueError, TypeError) as exc:
        raise InputError(str(exc), where, "fix the value in the file") from None


def _interconnect(data: Mapping[str, Any] | None, where: str) -> Interconnect | None:
    if data is None:
        return None
    kind = data.get("kind") if isinstance(data, Mapping) else None
    if kind not in _NET_KEYS:
        raise InputError(f"interconnect.kind = {kind!r} is not one of mesh, bus, crossbar", where)
    _check_keys(data, _NET_KEYS[kind], where, "interconnect")
    values = {k: v for k, v in data.items() if k != "kind"}
    if kind == "mesh":
        values["dram_nodes"] = tuple(tuple(node) for node in values.get("dram_nodes", ()))
        return Mesh(**values)
    if kind == "bus":
        return Bus(**values)
    return Crossbar(**values)


def _core(core_id: int, type_name: str, data: Mapping[str, Any], where: str) -> Core:
    context = f"core_types.{type_name}"
    _check_keys(data, _CORE_TYPE_KEYS, where, context)
    memories = []
    if not isinstance(data["memories"], list):
        raise InputError(f"{context}.memories must be an array of tables ([[{context}.memories]])", where)
    for j, mem in enumerate(data["memories"]):
        _check_keys(mem, _MEMORY_KEYS, where, f"{context}.memories[{j}]")
        try:
            memories.append(MemoryLevel(**mem))
        except (ValueError, TypeError) as exc:
            raise InputError(f"{context}.memories[{j}]: {exc}", where, "fix the value in the file") from None
    spatial = data["spatial"]
    if not isinstance(spatial, Mapping):
        raise InputError(f"{context}.spatial must be a table such as {{ K = 32, C = 32 }}, got {spatial!r}", where)
    supported_names = data.get("supported", [k.value for k in OpKind])
    try:
        supported = frozenset(OpKind(s) for s in supported_names)
    except ValueError:
        raise InputError(
            f"{context}.supported = {supported_names!r} has an unknown operator kind",
            where,
            f"kinds are {', '.join(k.value for k in OpKind)}",
        ) from None
    hierarchy = data["hierarchy"]
    if not isinstance(hierarchy, Mapping):
        raise InputError(f"{context}.hierarchy must be a table {{ I = [...], W = [...], O = [...] }}", where)
    for op, levels in hierarchy.items():
        if not isinstance(levels, list) or not all(isinstance(level, str) for level in levels):
            raise InputError(
                f"{context}.hierarchy.{op} = {levels!r} must be a list of level names", where, 'write e.g. ["rf", "gb"]'
            )
    try:
        return Core(
            id=core_id,
            name=type_name,
            spatial=tuple(spatial.items()),
            memories=tuple(memories),
            hierarchy={op: tuple(levels) for op, levels in hierarchy.items()},
            mac_energy_pj=data["mac_energy_pj"],
            supported=supported,
        )
    except (ValueError, TypeError) as exc:
        raise InputError(f"{context}: {exc}", where, "fix the value in the file") from None


def accelerator_to_dict(acc: Accelerator) -> dict[str, Any]:
    """The TOML structure of an accelerator; :func:`accelerator_from_dict` inverts it.

    Consecutive cores of the same type and configuration become one ``[[cores]]``
    entry with a ``count``.
    """
    core_types: dict[str, dict[str, Any]] = {}
    entries: list[dict[str, Any]] = []
    for core in acc.cores:
        body = {
            "spatial": dict(core.spatial),
            "mac_energy_pj": core.mac_energy_pj,
            "supported": [k.value for k in OpKind if k in core.supported],
            "hierarchy": {op: list(core.hierarchy[op]) for op in ("I", "W", "O")},
            "memories": [
                {
                    "name": m.name,
                    "capacity_bytes": m.capacity_bytes,
                    "read_energy_pj_per_byte": m.read_energy_pj_per_byte,
                    "write_energy_pj_per_byte": m.write_energy_pj_per_byte,
                    "read_bandwidth_bytes_per_cycle": m.read_bandwidth_bytes_per_cycle,
                    "write_bandwidth_bytes_per_cycle": m.write_bandwidth_bytes_per_cycle,
                    "instances": m.instances,
                }
                for m in core.memories
            ],
        }
        name = core.name
        suffix = 1
        while name in core_types and core_types[name] != body:
            suffix += 1
            name = f"{core.name}_{suffix}"
        core_types[name] = body
        if entries and entries[-1]["type"] == name:
            entries[-1]["count"] += 1
        else:
            entries.append({"type": name, "count": 1})
    data: dict[str, Any] = {
        "name": acc.name,
        "description": acc.description,
        "clock_hz": acc.clock_hz,
        "offchip": {
            "bandwidth_bytes_per_cycle": acc.offchip.bandwidth_bytes_per_cycle,
            "read_energy_pj_per_byte": acc.offchip.read_energy_pj_per_byte,
            "write_energy_pj_per_byte": acc.offchip.write_energy_pj_per_byte,
        },
        "core_types": core_types,
        "cores": entries,
    }
    net = acc.interconnect
    if isinstance(net, Mesh):
        data["interconnect"] = {
            "kind": "mesh",
            "rows": net.rows,
            "cols": net.cols,
            "hop_energy_pj_per_byte": net.hop_energy_pj_per_byte,
            "link_bandwidth_bytes_per_cycle": net.link_bandwidth_bytes_per_cycle,
            "dram_nodes": [list(n) for n in net.dram_nodes],
        }
    elif isinstance(net, Bus | Crossbar):
        data["interconnect"] = {
            "kind": net.kind,
            "bandwidth_bytes_per_cycle": net.bandwidth_bytes_per_cycle,
            "energy_pj_per_byte": net.energy_pj_per_byte,
        }
    return data


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # JSON string escapes are valid TOML basic strings
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {value!r} as TOML")


def _toml_key(key: str) -> str:
    """A bare key when TOML allows it, else a quoted one."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def dump_toml(acc: Accelerator) -> str:
    """The accelerator as TOML text in the preset format."""
    data = accelerator_to_dict(acc)
    lines = [f"{k} = {_toml_value(data[k])}" for k in ("name", "description", "clock_hz")]
    for table in ("offchip", "interconnect"):
        if table in data:
            lines += ["", f"[{table}]"] + [f"{k} = {_toml_value(v)}" for k, v in data[table].items()]
    for type_name, body in data["core_types"].items():
        lines += ["", f"[core_types.{_toml_key(type_name)}]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in body.items() if k != "memories"]
        for mem in body["memories"]:
            lines += ["", f"[[core_types.{_toml_key(type_name)}.memories]]"]
            lines += [f"{k} = {_toml_value(v)}" for k, v in mem.items()]
    for entry in data["cores"]:
        lines += ["", "[[cores]]"] + [f"{k} = {_toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"
