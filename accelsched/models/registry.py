"""Resolve a workload specification: a zoo name, ``random:N:SEED``, or a file."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from accelsched.errors import InputError
from accelsched.models import zoo
from accelsched.models.random_dag import random_workload
from accelsched.models.workload import Workload

__all__ = ["load_workload"]


def load_workload(spec: str | Path, *, batch: int = 1) -> Workload:
    """The workload named by ``spec``, at batch size ``batch``.

    ``spec`` is one of

    * a zoo name (``accelsched list workloads``);
    * ``random:N:SEED``: a seeded random DAG of ``N`` layers;
    * a path to an ``.onnx`` model or to a ``.json`` file written by
      :meth:`Workload.save_json`.

    Raises
    ------
    InputError
        Naming the specification and how to fix it.
    """
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise InputError(f"batch must be a positive integer, got {batch!r}", "--batch")
    text = str(spec)
    if text.startswith("random:"):
        return _random(text, batch)
    path = Path(text)
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        from accelsched.models.onnx_import import load_onnx  # onnx is heavy: imported only for an .onnx file

        return load_onnx(path, batch=batch)
    if suffix == ".json":
        return _json(path, batch)
    try:
        return zoo.get(text, batch)
    except KeyError:
        close = difflib.get_close_matches(text, zoo.names(), n=3)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise InputError(
            f"unknown workload {text!r}",
            "--workload",
            f"{hint}run 'accelsched list workloads', or give random:N:SEED, a .onnx or a .json file",
        ) from None


def _random(text: str, batch: int) -> Workload:
    parts = text.split(":")
    try:
        if len(parts) != 3:
            raise ValueError
        n, seed = int(parts[1]), int(parts[2])
        if n < 1:
            raise ValueError
    except ValueError:
        raise InputError(
            f"bad random workload {text!r}", "--workload", "write random:N:SEED with N >= 1 layers and an integer SEED"
        ) from None
    return random_workload(n, seed, batch=batch)


def _json(path: Path, batch: int) -> Workload:
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror})", str(path), "check the path") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON: {exc}", str(path), "fix the JSON syntax") from None
    try:
        workload = Workload.from_dict(data)
    except (ValueError, TypeError) as exc:
        raise InputError(str(exc), str(path), "fix the workload description") from None
    return workload if batch == 1 else workload.with_batch(batch)
