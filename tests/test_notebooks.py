"""Every notebook under notebooks/ runs from top to bottom without error.

The kernel inherits ``ACCELSCHED_NOTEBOOK_SMALL=1``: the notebooks with time-limited searches (atomic, multicore,
partition, ra_tree) read it in their first code cell and give those searches about a second instead of the budget a
reader's run gets (same cells, same instances, shorter searches).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCELSCHED_NOTEBOOK_SMALL", "1")
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
