"""can_spawn: the one check every process pool of accelsched makes before it starts workers."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from accelsched import processes


def test_a_process_with_a_main_file_can_spawn() -> None:
    assert processes.can_spawn()


def test_a_main_module_without_a_file_cannot_spawn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules["__main__"], "__file__", "/nonexistent/piped-script.py", raising=False)
    assert not processes.can_spawn()


def test_a_daemonic_process_cannot_spawn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "current_process", lambda: SimpleNamespace(daemon=True))
    assert not processes.can_spawn()
