"""Writing benchmark results and redrawing their Markdown: shared by the benchmark modules' command lines."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["render_command", "write_json"]


def write_json(path: str | Path, data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON through a temporary file, so that an interrupted run leaves no half file."""
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1)
    os.replace(tmp, path)


def render_command(
    parser: argparse.ArgumentParser, files: Sequence[str], out: str | None, render: Callable[[dict[str, Any]], str]
) -> int:
    """The ``render FILE.json [--out FILE.md]`` subcommand: Markdown to ``out`` or to standard output."""
    if len(files) != 1:
        parser.error("render takes one JSON file")
    with open(files[0], encoding="utf-8") as handle:
        text = render(json.load(handle))
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0
