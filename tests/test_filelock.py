"""Tests of :mod:`accelsched.filelock`: one process at a time per file, and atomic writes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from accelsched import filelock
from accelsched.errors import InputError
from accelsched.filelock import exclusive, lock_path, write_atomic

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no flock: exclusive holds nothing there")

HOLDER = """
import sys
from accelsched.filelock import exclusive
with exclusive(sys.argv[1], what="file", fix="-"):
    print("held", flush=True)
    sys.stdin.readline()
print("released", flush=True)
sys.stdin.readline()
"""


@contextmanager
def held_elsewhere(path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``path`` (:func:`exclusive`) until a line is written to its stdin;
    it then reports "released" and waits for its stdin to close."""
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert child.stdin is not None and child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "held"
        yield child
    finally:
        child.kill()
        child.wait(timeout=30)
        child.stdin.close()
        child.stdout.close()


def release(child: subprocess.Popen[str]) -> None:
    """Have a :func:`held_elsewhere` process release its file, and wait until it has."""
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write("\n")
    child.stdin.flush()
    assert child.stdout.readline().strip() == "released"


def test_a_file_another_process_holds_is_refused_with_what_where_and_how(tmp_path: Path) -> None:
    path = tmp_path / "ledger.json"
    with held_elsewhere(path), pytest.raises(InputError) as caught:
        exclusive(path, what="pair ledger", fix="give this run a copy").__enter__()
    assert caught.value.what == "another process is using it"
    assert caught.value.where == f"pair ledger {path}" and caught.value.fix == "give this run a copy"
    assert not path.exists()  # holding a file neither makes nor touches it, only its sidecar
    assert lock_path(path) == tmp_path / ".ledger.json.lock" and lock_path(path).exists()


def test_a_file_released_by_another_process_is_held_after_waiting(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    asked = threading.Event()

    def ask_to_release(child: subprocess.Popen[str]) -> None:
        asked.set()
        release(child)

    with held_elsewhere(path) as child:
        releaser = threading.Timer(0.3, ask_to_release, (child,))
        releaser.start()
        with exclusive(path, what="results file", fix="-", wait_s=60):
            # Held only once the other process was asked to let it go. (Not "once `release` has
            # returned": the child drops the lock before it reports so, and the wait may end between.)
            assert asked.is_set()
        releaser.join()


def test_a_wait_that_runs_out_says_how_long_it_waited(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    with held_elsewhere(path), pytest.raises(InputError, match=r"another process is using it \(waited 0.3 s\)"):
        exclusive(path, what="results file", fix="-", wait_s=0.3).__enter__()


def test_a_process_holds_a_file_again_and_releases_it_with_its_outer_hold(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "ledger.json"
    with exclusive(path, what="pair ledger", fix="-"):
        with exclusive(path, what="pair ledger", fix="-"):  # re-entrant: the CLI's hold, then the method's
            pass
        assert lock_path(path).resolve() in filelock._held  # the outer hold still holds it
        with pytest.raises(subprocess.CalledProcessError):  # another process cannot take it
            subprocess.run([sys.executable, "-c", HOLDER, str(path)], input="", capture_output=True, text=True,
                           check=True, timeout=60)  # fmt: skip
    assert not filelock._held
    with held_elsewhere(path):  # released: another process takes it
        pass


def test_a_killed_process_leaves_its_file_free(tmp_path: Path) -> None:
    path = tmp_path / "ledger.json"
    with held_elsewhere(path) as child:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        with exclusive(path, what="pair ledger", fix="-"):
            pass


def test_an_atomic_write_stopped_before_its_rename_leaves_the_previous_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "out" / "table.md"
    write_atomic(path, "first\n")
    assert path.read_text() == "first\n" and list(path.parent.iterdir()) == [path]

    def stopped(source: object, target: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(filelock.os, "replace", stopped)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, "second\n")
    assert path.read_text() == "first\n"
