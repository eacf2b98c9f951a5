"""The results file of a sweep: one JSON line per finished cell, appended and flushed.

A line (a *record*) holds the cell's key, the instance, the method's kind, the full
:class:`accelsched.problems.result.Result` (``Result.to_dict()``, which carries the
``CostReport`` and the solution) and where and when it ran::

    {"v": 1, "key": {"problem", "instance", "method", "seed", "time_limit_s"},
     "instance": {"id", "workload", "hardware", "batch", "options"}, "kind", "seeded",
     "n_layers", "result": {...}, "error", "wall_s", "finished_at", "worker", "code"}

A sweep killed while writing leaves at most one partial last line;
:func:`load_records` ignores it and :func:`repair_tail` cuts it off before more
lines are appended. :func:`result_from_record` rebuilds the ``Result`` (solution,
cost report, statistics) from a line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from accelsched import registry
from accelsched.fingerprint import code_fingerprint
from accelsched.hardware.cost.report import CostReport
from accelsched.problems.result import Result
from accelsched.solvers import SolveStats, Status

__all__ = [
    "RECORD_VERSION",
    "Key",
    "Loaded",
    "RecordWriter",
    "code_fingerprint",
    "key_of",
    "load_records",
    "repair_tail",
    "result_from_dict",
    "result_from_record",
]

RECORD_VERSION = 1
"""Version of the line format (the ``v`` field)."""

Key = tuple[str, str, str, int, float]
"""``(problem, instance id, method, seed, time limit s)``: what identifies a cell."""

_KEY_FIELDS = ("problem", "instance", "method", "seed", "time_limit_s")


def key_of(record: Mapping[str, Any]) -> Key:
    """The cell key of a record.

    Raises
    ------
    ValueError
        The record has no well-formed ``key``.
    """
    key = record.get("key")
    if not isinstance(key, Mapping) or any(name not in key for name in _KEY_FIELDS):
        raise ValueError(f"record without a well-formed key: {str(key)[:80]!r}")
    try:
        return (str(key["problem"]), str(key["instance"]), str(key["method"]), int(key["seed"]),
                float(key["time_limit_s"]))  # fmt: skip
    except (TypeError, ValueError):
        raise ValueError(f"record with a malformed key: {dict(key)!r}") from None


@dataclass(frozen=True)
class Loaded:
    """Records read from a results file.

    Attributes
    ----------
    records
        The well-formed records, in file order.
    bad_lines
        Complete lines that are not a JSON record with a key (skipped).
    partial_tail
        Whether the file ends with a line without its newline (a write cut short).
    """

    records: tuple[dict[str, Any], ...]
    bad_lines: int
    partial_tail: bool


def load_records(path: str | Path) -> Loaded:
    """Read a results file; a missing file has no records.

    Lines that are not JSON records (a line cut by a crash, a stray edit) are
    skipped and counted, never fatal.
    """
    path = Path(path)
    if not path.exists():
        return Loaded((), 0, False)
    data = path.read_bytes()
    lines = data.split(b"\n")
    tail = lines.pop()  # the text after the last newline: empty unless a write was cut short
    records: list[dict[str, Any]] = []
    bad = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not an object")
            key_of(record)
        except ValueError:
            bad += 1
            continue
        records.append(record)
    return Loaded(tuple(records), bad, bool(tail.strip()))


def repair_tail(path: str | Path) -> int:
    """Cut a partial last line (no newline) off the file; returns the bytes removed."""
    path = Path(path)
    if not path.exists():
        return 0
    with path.open("rb+") as handle:
        data = handle.read()
        end = data.rfind(b"\n") + 1
        if end == len(data):
            return 0
        handle.truncate(end)
    return len(data) - end


class RecordWriter:
    """Appends records to a results file, one line each, flushed to disk per record."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: TextIO = self.path.open("a", encoding="utf-8")

    def write(self, record: Mapping[str, Any]) -> None:
        """Append one record and flush it, so that a crash loses at most the line being written."""
        self._handle.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        """Close the file."""
        self._handle.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def result_from_dict(data: Mapping[str, Any], solution_from_dict: Any = None) -> Result[Any]:
    """Inverse of ``Result.to_dict()``.

    Parameters
    ----------
    data
        A ``Result.to_dict()``.
    solution_from_dict
        The problem's ``solution_from_dict``; required when ``data`` holds a solution.

    Raises
    ------
    ValueError
        A field is missing or malformed.
    """
    try:
        stats = data["stats"]
        solution = data["solution"]
        if solution is not None:
            if solution_from_dict is None:
                raise ValueError("the result holds a solution: give the problem's solution_from_dict")
            solution = solution_from_dict(solution)
        return Result(
            status=Status[data["status"]],
            problem=data["problem"],
            method=data["method"],
            solution=solution,
            objective=data["objective"],
            bound=data["bound"],
            cost=None if data["cost"] is None else CostReport.from_dict(data["cost"]),
            runtime_s=data["runtime_s"],
            backend=data["backend"],
            seed=data["seed"],
            sense=data["sense"],
            stats=SolveStats(
                iterations=stats["iterations"],
                nodes=stats["nodes"],
                trace=tuple((t, v) for t, v in stats["trace"]),
                native_status=stats["native_status"],
            ),
        )
    except KeyError as exc:
        raise ValueError(f"result without field {exc.args[0]!r}") from None


def result_from_record(record: Mapping[str, Any]) -> Result[Any]:
    """The checked ``Result`` of a results line, solution included (via the problem's registry entry)."""
    problem = registry.get_problem(key_of(record)[0])
    return result_from_dict(record["result"], problem.solution_from_dict)
