"""Export an accelerator with a bus to the hardware description of KU Leuven's Stream (YAML).

:func:`export_stream` writes one *accelerator file* and one *core file* per core
type, the two-layer hardware input that Stream reads, so that a case solved here
can be run in Stream too (the workload goes through :func:`accelsched.models.onnx_export.to_onnx`).

Format followed
---------------
Stream ``stream-dse`` 2.1.1 (PyPI; it pins ``zigzag-dse`` 3.9.1), as checked by its
``stream/parser/accelerator_validator.py`` and ``core_validator.py``, ZigZag's
``zigzag/parser/accelerator_validator.py`` (the schema of a core), and the shipped
examples ``stream/inputs/examples/hardware/*.yaml`` and ``cores/*.yaml``:

* accelerator file: ``name``; ``cores``, a map core id -> core file (``./cores/X.yaml``);
  ``offchip_core_id``; ``unit_energy_cost``; ``core_connectivity``, a list of
  connections ``{type: bus | link, cores: [...], bandwidth, unit_energy_cost}``;
* core file (ZigZag core): ``name``; ``type`` (``zigzag.compute`` or
  ``zigzag.offchip``); ``memories``, innermost first, each with ``size`` (bits, one
  instance), ``r_cost`` / ``w_cost`` (pJ per access of one port word, i.e.
  ``bandwidth_max`` bits), ``area``, ``latency``, ``operands``, ``ports`` (``name``,
  ``type`` read / write / read_write, ``bandwidth_min`` / ``bandwidth_max`` in
  bits per cycle, ``allocation`` as ``"operand, direction"``) and
  ``served_dimensions``; ``operational_array`` (``unit_energy`` pJ per MAC,
  ``unit_area``, ``dimensions`` ``D1..Dn``, ``sizes``); optionally ``dataflows``
  (``D1: ["K, 32"]``, the spatial unrolling, see below); and Stream's ``operator_types``
  extension.

Translation
-----------
* Operands: ZigZag's default memory-operand links (Stream's
  ``INTRA_CORE_MAPPING_DEFAULT``): layer operand ``I`` -> memory operand ``I1``,
  ``W`` -> ``I2``, ``O`` -> ``O``.
* Sizes: ``capacity_bytes x 8`` bits per instance. Port widths: bandwidth in
  bytes/cycle x 8 (it must be a whole number of bits). Access energy: ZigZag
  charges ``r_cost`` per access of ``bandwidth_max`` bits and counts accesses in
  steps of ``bandwidth_min`` bits, so ``r_cost = read energy per byte x read bytes
  per cycle`` (likewise ``w_cost``) and ``bandwidth_min = 8`` (one byte): for any
  whole number of bytes ZigZag then charges what accelsched does (energy per byte).
* Ports: one read port ``r_port_1`` and one write port ``w_port_1`` per memory;
  ``I1`` / ``I2`` use ``fh`` (written from above) and ``tl`` (read towards the
  array), ``O`` all four directions (``fh``, ``fl`` written; ``th``, ``tl`` read).
* ``served_dimensions``: the spec gives only the number of instances of a level.
  The array dimensions an instance does *not* serve are those whose sizes
  multiply to the instance count; when several sets do, the one whose loops are
  relevant to the level's operands is taken (an input register per ``C`` row of a
  ``C|K`` array serves the ``K`` dimension, where inputs are multicast), as in
  accelsched's reuse model. The dimensions follow the order of ``Core.spatial``.
* Operators: a core that does not run every operator kind gets
  ``operator_types`` with the ONNX types of its kinds (``conv`` -> ``Conv``,
  ``fc`` -> ``Gemm``, ``MatMul``, ``matmul`` -> ``MatMul``, ``pool`` -> ``MaxPool``,
  ``AveragePool``, ``GlobalAveragePool``, ``GlobalMaxPool``, ``eltwise`` -> ``Add``,
  ``Sum``, ``Mul``); a core that runs all kinds omits it (Stream: any operator).
* Interconnect: the bus becomes a ``bus`` connection between all cores of the
  accelerator, ``bandwidth`` in bits/cycle, ``unit_energy_cost`` = energy per byte x
  bus bytes per cycle (Stream charges ``unit_energy_cost / bandwidth`` per bit).
* Off-chip memory and the DRAM port: an extra core ``zigzag.offchip`` (the last
  id, ``offchip_core_id``) holding one ``dram`` memory of all operands with a
  single ``read_write`` port of the DRAM bandwidth, shared by every core (as
  accelsched's single DRAM port); each core reaches it over its own ``link`` of
  that bandwidth with zero energy (DRAM energy is the memory's ``r_cost`` /
  ``w_cost``). The links do not repeat a pair of the bus: Stream keeps one edge
  per core pair.

Assumed, not in accelsched's spec: ``area: 0`` for every memory and
``unit_area: 1`` per MAC (area is not modelled here; Stream's examples use the
same), ``latency: 1`` cycle per access, the DRAM capacity (10^10 bits, as Stream's
``offchip.yaml``), and the off-chip core's array (``[D1, D2]`` of size ``[0, 0]``,
as in Stream's example). The SIMD core of the ``stream-*`` presets is exported
like any core: a ``G``-unrolled array (``dataflows: D1: ["G, 64"]``) with
``operator_types`` of pooling and element-wise operators. Operand precisions are
per layer in accelsched, so the optional ``operand_precision`` is not written.

*Dataflows.* Stream 2.1.1 names the loops of a parsed ONNX layer by position
(``D0``, ``D1``, ...), not ``K`` / ``C`` / ``OX``: a ``dataflows`` entry naming a loop
is dropped with the warning "User provided spatial unrolling C is not defined in
Loop Dimension Sizes ... Removing C", which leaves the array idle (every MAC in
series). So by default no ``dataflows`` are written and ZigZag searches each
layer's unrolling on the array's sizes, as Stream's own examples do;
``dataflows=True`` writes the preset's unrolling for a Stream that names loops.
The array sizes and memories are the same either way.

Running the case in Stream: export the workload with
``accelsched.models.onnx_export.to_onnx(workload, "net.onnx", flavor="stream")`` and the
preset with :func:`export_stream`, then in a Python 3.12 environment with
``pip install stream-dse==2.1.1 six``::

    from stream.api import evaluate_mapping
    evaluate_mapping("hw/<preset>.yaml", "net.onnx", "out/")

``python -m accelsched.bench.stream_crosscheck`` runs that for a list of workloads
and presets and sets Stream's figures beside accelsched's.

The YAML is written by a small emitter for this subset (mappings, lists, numbers,
strings; strings that YAML could misread are double-quoted, floats always carry a
``.``), in a fixed key order: the same accelerator always gives the same bytes.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from accelsched.hardware.spec import OPERANDS, Accelerator, Bus, Core, MemoryLevel
from accelsched.models.layer import OpKind

__all__ = [
    "MEMORY_OPERANDS",
    "OFFCHIP_SIZE_BITS",
    "STREAM_VERSION",
    "ZIGZAG_VERSION",
    "core_document",
    "export_stream",
    "offchip_document",
    "stream_documents",
    "to_yaml",
]

STREAM_VERSION = "2.1.1"
"""Version of ``stream-dse`` whose input format is written."""

ZIGZAG_VERSION = "3.9.1"
"""Version of ``zigzag-dse`` (core schema) that Stream 2.1.1 pins."""

MEMORY_OPERANDS: Mapping[str, str] = {"I": "I1", "W": "I2", "O": "O"}
"""accelsched operand -> ZigZag memory operand (ZigZag's default memory-operand links)."""

OFFCHIP_SIZE_BITS = 10**10
"""Capacity given to the off-chip DRAM (accelsched does not bound it); Stream's example value."""

_RELEVANT: Mapping[str, frozenset[str]] = {
    "I": frozenset({"B", "C", "G", "OY", "OX", "FY", "FX"}),
    "W": frozenset({"K", "C", "G", "FY", "FX"}),
    "O": frozenset({"B", "K", "G", "OY", "OX"}),
}
"""Loops that index each operand (used to pick the array dimensions a memory instance does not serve)."""

_ONNX_TYPES: Mapping[OpKind, tuple[str, ...]] = {
    OpKind.CONV: ("Conv",),
    OpKind.FC: ("Gemm", "MatMul"),
    OpKind.MATMUL: ("MatMul",),
    OpKind.POOL: ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"),
    OpKind.ELTWISE: ("Add", "Sum", "Mul"),
}
"""ONNX operator types of each operator kind, for Stream's ``operator_types``."""

_DIRECTIONS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "I1": (("w", "fh"), ("r", "tl")),
    "I2": (("w", "fh"), ("r", "tl")),
    "O": (("w", "fh"), ("w", "fl"), ("r", "th"), ("r", "tl")),
}
"""Port (``r`` / ``w``) and direction of each data movement of a memory operand."""

_MAX_DIMENSIONS = 4
"""ZigZag's ``dataflows`` schema names D1 to D4 only."""


# ====================================================================== helpers
def _bits(owner: str, what: str, bytes_per_cycle: float) -> int:
    """A bandwidth in bytes/cycle as whole bits/cycle (ValueError otherwise)."""
    bits = bytes_per_cycle * 8
    if not math.isfinite(bits) or bits < 1 or abs(bits - round(bits)) > 1e-9:
        raise ValueError(
            f"{owner}: {what} of {bytes_per_cycle!r} B/cycle is not a whole number of bits per cycle; "
            "Stream's port and link widths are integers (bits/cycle)"
        )
    return round(bits)


def _number(value: float) -> float:
    """``value`` rounded to 12 significant digits (drops binary noise such as 52.199999999999996)."""
    return float(f"{value:.12g}")


def _file_stem(name: str) -> str:
    """A file name Stream's core-reference pattern accepts (letters, digits, ``_`` and ``-``)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name) or "core"


def _memory_order(core: Core, owner: str) -> list[MemoryLevel]:
    """The core's memories innermost first, consistent with every operand's chain (ZigZag adds them in order)."""
    names = [m.name for m in core.memories]
    after: dict[str, set[str]] = {n: set() for n in names}  # level -> levels that must come before it
    for op in OPERANDS:
        for inner, outer in itertools.pairwise(core.hierarchy[op]):
            after[outer].add(inner)
    order: list[str] = []
    while len(order) < len(names):
        ready = [n for n in names if n not in order and after[n] <= set(order)]
        if not ready:
            left = [n for n in names if n not in order]
            raise ValueError(f"{owner}: the operand chains order memories {left} in a cycle; no innermost-first "
                             "order exists for ZigZag")  # fmt: skip
        order.append(ready[0])
    return [core.memory(n) for n in order]


def _served_dimensions(core: Core, mem: MemoryLevel, owner: str) -> list[str]:
    """Array dimensions one instance of ``mem`` serves (see the module docstring)."""
    dims = [(f"D{i + 1}", loop, size) for i, (loop, size) in enumerate(core.spatial)]
    relevant = frozenset().union(*(_RELEVANT[op] for op in core.operands_of(mem.name)))
    candidates = []
    for r in range(len(dims) + 1):
        for unserved in itertools.combinations(dims, r):
            if math.prod(size for _, _, size in unserved) == mem.instances:
                irrelevant = sum(loop not in relevant for _, loop, _ in unserved)
                candidates.append((irrelevant, {d for d, _, _ in unserved}))
    if not candidates:
        sizes = ", ".join(f"{d}={loop}{size}" for d, loop, size in dims)
        raise ValueError(
            f"{owner}: memory {mem.name!r} has {mem.instances} instances, but no set of array dimensions "
            f"({sizes}) multiplies to that; ZigZag needs one instance per point of the dimensions it does not serve"
        )
    unserved_dims = min(candidates, key=lambda c: c[0])[1]
    return [d for d, _, _ in dims if d not in unserved_dims]


def _ports(owner: str, mem: MemoryLevel, operands: Sequence[str]) -> list[dict[str, Any]]:
    read_bits = _bits(owner, f"memory {mem.name!r} read bandwidth", mem.read_bandwidth_bytes_per_cycle)
    write_bits = _bits(owner, f"memory {mem.name!r} write bandwidth", mem.write_bandwidth_bytes_per_cycle)
    ports = []
    for kind, name, port_type, bits in (("r", "r_port_1", "read", read_bits), ("w", "w_port_1", "write", write_bits)):
        allocation = [f"{op}, {d}" for op in operands for k, d in _DIRECTIONS[op] if k == kind]
        ports.append({"name": name, "type": port_type, "bandwidth_min": min(8, bits), "bandwidth_max": bits,
                      "allocation": allocation})  # fmt: skip
    return ports


def core_document(core: Core, name: str, dataflows: bool) -> dict[str, Any]:
    """The ZigZag core file of ``core`` (with its spatial unrolling as ``dataflows`` if asked)."""
    owner = f"core {core.id} ({core.name!r})"
    missing = [op for op in OPERANDS if not core.hierarchy.get(op)]
    if missing:
        raise ValueError(f"{owner}: no memory hierarchy for operand(s) {missing}; Stream needs levels for I, W and O")
    if len(core.spatial) > _MAX_DIMENSIONS:
        raise ValueError(f"{owner}: {len(core.spatial)} spatial dimensions; ZigZag's dataflows name at most "
                         f"{_MAX_DIMENSIONS} (D1-D4)")  # fmt: skip
    memories: dict[str, Any] = {}
    for mem in _memory_order(core, owner):
        operands = [MEMORY_OPERANDS[op] for op in core.operands_of(mem.name)]
        ports = _ports(owner, mem, operands)
        memories[mem.name] = {
            "size": mem.capacity_bytes * 8,
            "r_cost": _number(mem.read_energy_pj_per_byte * mem.read_bandwidth_bytes_per_cycle),
            "w_cost": _number(mem.write_energy_pj_per_byte * mem.write_bandwidth_bytes_per_cycle),
            "area": 0.0,
            "latency": 1,
            "operands": operands,
            "ports": ports,
            "served_dimensions": _served_dimensions(core, mem, owner),
        }
    dims = [f"D{i + 1}" for i in range(len(core.spatial))]
    doc: dict[str, Any] = {
        "name": name,
        "type": "zigzag.compute",
        "memories": memories,
        "operational_array": {
            "unit_energy": _number(core.mac_energy_pj),
            "unit_area": 1.0,
            "dimensions": dims,
            "sizes": [size for _, size in core.spatial],
        },
    }
    if dataflows:
        doc["dataflows"] = {d: [f"{loop}, {size}"] for d, (loop, size) in zip(dims, core.spatial, strict=True)}
    if core.supported != frozenset(OpKind):
        types = (t for kind in OpKind if kind in core.supported for t in _ONNX_TYPES[kind])
        doc["operator_types"] = list(dict.fromkeys(types))
    return doc


def offchip_document(acc: Accelerator, name: str) -> dict[str, Any]:
    """The off-chip core: one DRAM of every operand behind a single read-write port (the DRAM port)."""
    owner = f"accelerator {acc.name!r}"
    off = acc.offchip
    bits = _bits(owner, "offchip bandwidth", off.bandwidth_bytes_per_cycle)
    allocation = [f"{op}, {d}" for op in ("I1", "I2", "O") for _, d in _DIRECTIONS[op]]
    port = {"name": "rw_port_1", "type": "read_write", "bandwidth_min": min(8, bits), "bandwidth_max": bits,
            "allocation": allocation}  # fmt: skip
    return {
        "name": name,
        "type": "zigzag.offchip",
        "memories": {
            "dram": {
                "size": OFFCHIP_SIZE_BITS,
                "r_cost": _number(off.read_energy_pj_per_byte * off.bandwidth_bytes_per_cycle),
                "w_cost": _number(off.write_energy_pj_per_byte * off.bandwidth_bytes_per_cycle),
                "area": 0.0,
                "latency": 1,
                "operands": ["I1", "I2", "O"],
                "ports": [port],
                "served_dimensions": ["D1", "D2"],
            }
        },
        "operational_array": {"unit_energy": 0.0, "unit_area": 0.0, "dimensions": ["D1", "D2"], "sizes": [0, 0]},
    }


def stream_documents(
    accelerator: Accelerator, *, dataflows: bool = False
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The accelerator file and the core files of ``accelerator`` as plain (JSON-compatible) data.

    ``dataflows`` writes each core's spatial unrolling (off by default: Stream 2.1.1
    drops named unrollings, see the module docstring).

    Returns
    -------
    (accelerator document, {core file stem: core document})
        The accelerator document refers to each core file as ``./cores/<stem>.yaml``;
        core files appear in the order of their first core, the off-chip core last.

    Raises
    ------
    ValueError
        When the accelerator cannot be written in Stream's format: no bus
        interconnect, a core without levels for I, W or O, more than four spatial
        dimensions, instance counts no set of array dimensions gives, or a
        bandwidth that is not a whole number of bits per cycle.
    """
    bus = accelerator.interconnect
    if not isinstance(bus, Bus):
        kind = "no interconnect" if bus is None else f"a {bus.kind} interconnect"
        raise ValueError(f"accelerator {accelerator.name!r} has {kind}; the Stream export needs a bus "
                         "(Stream's multi-core presets, e.g. stream-mc-hetero)")  # fmt: skip
    owner = f"accelerator {accelerator.name!r}"
    bus_bits = _bits(owner, "bus bandwidth", bus.bandwidth_bytes_per_cycle)
    dram_bits = _bits(owner, "offchip bandwidth", accelerator.offchip.bandwidth_bytes_per_cycle)
    cores: dict[str, dict[str, Any]] = {}
    refs: dict[int, str] = {}
    for core in accelerator.cores:
        stem = base = _file_stem(core.name)
        doc = core_document(core, core.name, dataflows)
        for suffix in itertools.count(2):
            if stem not in cores or cores[stem] == doc:
                break
            stem = f"{base}_{suffix}"
        cores[stem] = doc
        refs[core.id] = f"./cores/{stem}.yaml"
    offchip_id = accelerator.n_cores
    stem = base = "offchip"
    for suffix in itertools.count(2):
        if stem not in cores:
            break
        stem = f"{base}_{suffix}"
    cores[stem] = offchip_document(accelerator, "offchip")
    refs[offchip_id] = f"./cores/{stem}.yaml"
    on_chip = [c.id for c in accelerator.cores]
    connectivity: list[dict[str, Any]] = []
    if len(on_chip) > 1:
        connectivity.append({"type": "bus", "cores": on_chip, "bandwidth": float(bus_bits),
                             "unit_energy_cost": _number(bus.energy_pj_per_byte * bus_bits / 8)})  # fmt: skip
    connectivity += [
        {"type": "link", "cores": [c, offchip_id], "bandwidth": float(dram_bits), "unit_energy_cost": 0.0}
        for c in on_chip
    ]
    accelerator_doc: dict[str, Any] = {
        "name": accelerator.name,
        "cores": refs,
        "offchip_core_id": offchip_id,
        "unit_energy_cost": 0.0,
        "core_connectivity": connectivity,
    }
    return accelerator_doc, cores


def export_stream(accelerator: Accelerator, directory: str | Path, *, dataflows: bool = False) -> list[Path]:
    """Write ``accelerator`` as Stream hardware input under ``directory``.

    ``dataflows`` as in :func:`stream_documents`.

    Files: ``<directory>/<name>.yaml`` (the accelerator) and
    ``<directory>/cores/<core type>.yaml`` (one per core type, plus ``offchip.yaml``).
    The directory is created when missing; existing files of the same names are
    overwritten.

    Returns
    -------
    list of Path
        The accelerator file first, then the core files.

    Raises
    ------
    ValueError
        See :func:`stream_documents`.
    """
    accelerator_doc, cores = stream_documents(accelerator, dataflows=dataflows)
    folder = Path(directory)
    (folder / "cores").mkdir(parents=True, exist_ok=True)
    header = [f"Stream {STREAM_VERSION} hardware input (zigzag-dse {ZIGZAG_VERSION} cores) written by accelsched",
              f"from accelerator {accelerator.name!r}: {accelerator.summary()}"]  # fmt: skip
    paths = [folder / f"{_file_stem(accelerator.name)}.yaml"]
    paths[0].write_text(to_yaml(accelerator_doc, header), encoding="utf-8")
    for stem, doc in cores.items():
        path = folder / "cores" / f"{stem}.yaml"
        path.write_text(to_yaml(doc, [f"ZigZag core {doc['name']!r} of accelerator {accelerator.name!r}"]),
                        encoding="utf-8")  # fmt: skip
        paths.append(path)
    return paths


# ====================================================================== YAML
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_RESERVED = frozenset({"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~"})


def _scalar(value: Any) -> str:
    """One YAML scalar: plain when unambiguous, else a double-quoted (JSON) string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot write the non-finite number {value!r} to YAML")
        text = repr(value)
        if "." not in text and "e" in text:  # 1e-05 -> 1.0e-05 (YAML 1.1 floats need a dot)
            mantissa, _, exponent = text.partition("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    if isinstance(value, str):
        plain = _PLAIN.fullmatch(value) and value.lower() not in _RESERVED
        return value if plain else json.dumps(value, ensure_ascii=False)
    raise TypeError(f"cannot write {value!r} ({type(value).__name__}) to YAML")


def _is_scalar(value: Any) -> bool:
    return isinstance(value, bool | int | float | str)


def _block(value: Any, indent: int) -> list[str]:
    """Lines of a mapping or a list of mappings at ``indent`` spaces."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            head = f"{pad}{_scalar(key)}:"
            if _is_scalar(item):
                lines.append(f"{head} {_scalar(item)}")
            elif item and (isinstance(item, Mapping) or not all(_is_scalar(v) for v in item)):
                lines += [head, *_block(item, indent + 2)]
            else:
                lines.append(f"{head} {_flow(item)}")
        return lines
    for item in value:
        if not isinstance(item, Mapping) or not item:
            raise TypeError(f"a block list holds only non-empty mappings, got {item!r}")
        inner = _block(item, indent + 2)
        lines.append(f"{pad}- {inner[0][indent + 2 :]}")
        lines += inner[1:]
    return lines


def _flow(value: Any) -> str:
    """An empty mapping, or a flow list of scalars."""
    if isinstance(value, Mapping) and not value:
        return "{}"
    if isinstance(value, list | tuple) and all(_is_scalar(v) for v in value):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} to YAML")


def to_yaml(data: Mapping[str, Any], header: Sequence[str] = ()) -> str:
    """``data`` (nested mappings, lists, numbers, strings) as block-style YAML, ``header`` as comment lines."""
    comments = [f"# {line}" for text in header for line in text.splitlines()]
    return "\n".join([*comments, *_block(data, 0)]) + "\n"
