"""The process pools of accelsched: can_spawn, the check each makes before it starts workers, and
exit_with_parent, which takes each pool's workers down with a parent killed outright."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from accelsched import processes


def test_a_process_with_a_main_file_can_spawn() -> None:
    assert processes.can_spawn()


def test_a_main_module_without_a_file_cannot_spawn() -> None:
    assert not processes.can_spawn(main=SimpleNamespace(__file__="/nonexistent/piped-script.py"))
    assert processes.can_spawn(main=SimpleNamespace())  # an interactive session: no file to import again


def test_a_daemonic_process_cannot_spawn() -> None:
    assert not processes.can_spawn(process=SimpleNamespace(daemon=True))


BUSY_WORKERS = """
import sys, time
from accelsched.bench import runner
from accelsched.formulations.partition import capacity as partition_capacity
from accelsched.formulations.partition import pair_solver
from accelsched.heuristics import ra_tree_sa

def busy(*args):  # module level: the spawned workers import this script again and run it
    time.sleep(600)

pair_solver.PairSolver.solve = busy
ra_tree_sa._run_plan = busy

if __name__ == "__main__":
    sys.path.insert(0, sys.argv[1])
    if sys.argv[2] == "capacity-decomposition":
        from tests.formulations.partition.test_capacity import instance_of
        from accelsched.problems.partition_columns import enumerate_columns
        from accelsched.solvers import SolveOptions
        from accelsched.formulations.partition.proof_params import ProofSettings
        instance = instance_of(1)
        columns = enumerate_columns(instance, 12)
        settings = ProofSettings(12, 100)
        partition_capacity.CapacityDecomposition(instance, None, SolveOptions(threads=2), columns, settings).run(None)
    elif sys.argv[2] == "bench-runner":
        list(runner._run_processes(["cell-a", "cell-b"], 2, run=busy))
    else:
        ra_tree_sa._in_processes(["plan-a", "plan-b"])
"""


def _workers_of(parent: int) -> list[int]:
    """The live pool workers (``spawn_main`` processes) whose parent is ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == parent and state != "Z" and b"spawn_main" in command:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("pool", ["capacity-decomposition", "bench-runner", "ra-tree-sa"])
def test_the_workers_exit_when_the_process_that_started_them_is_killed(pool: str, tmp_path: Path) -> None:
    """A killed parent cannot shut its pool down: its workers must not work on, orphaned, for hours."""
    script = tmp_path / "busy_workers.py"
    script.write_text(BUSY_WORKERS)
    root = Path(__file__).resolve().parents[1]
    parent = subprocess.Popen([sys.executable, str(script), str(root), pool], cwd=root)
    try:
        deadline = time.monotonic() + 60
        while len(workers := _workers_of(parent.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(workers) == 2, "the pool did not start its two workers"
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in workers)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc, forks")
def test_without_prctl_the_watching_thread_exits_the_worker(tmp_path: Path) -> None:
    """Where the kernel cannot kill a worker with its parent, the thread does, within a check or two."""
    script = tmp_path / "orphan.py"
    script.write_text(
        "import os, sys, time\n"
        "from accelsched import processes\n"
        "sys.platform = 'elsewhere'  # no prctl: only the thread\n"
        "if os.fork() == 0:\n"
        "    processes.exit_with_parent(os.getppid(), check_s=0.1)\n"
        "    print(os.getpid(), flush=True)\n"
        "    time.sleep(600)\n"
        "else:\n"
        "    time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child)
