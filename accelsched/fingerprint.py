"""The fingerprint of the code that computed a result: recorded beside results that outlive a run."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

__all__ = ["code_fingerprint"]

_FINGERPRINT_SKIP = ("bench", "cli.py")


def code_fingerprint(root: str | Path | None = None) -> str:
    """A short hash of the package's files that decide results (sources, presets, zoo data; not ``bench``, the CLI).

    Recorded with results that outlive a run (the lines of a sweep, a pair ledger), so that a resumed
    run can tell those computed by other code.
    """
    base = Path(root) if root is not None else Path(__file__).resolve().parent
    digest = hashlib.sha256()
    files: Iterable[Path] = sorted(p for p in base.rglob("*") if p.suffix in (".py", ".toml", ".txt"))
    for path in files:
        relative = path.relative_to(base).as_posix()
        if relative.split("/")[0] in _FINGERPRINT_SKIP:
            continue
        digest.update(relative.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]
