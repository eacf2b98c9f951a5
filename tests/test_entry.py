"""Entry points: a reader that goes away (``... | head``) ends the command without a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from accelsched.entry import run_entry

FLOOD = (
    "from accelsched.entry import run_entry\n"
    "def main():\n"
    "    for _ in range(100_000):\n"
    "        print('x' * 100)\n"
    "    return 0\n"
    "raise SystemExit(run_entry(main))\n"
)


def test_run_entry_returns_the_entry_points_status() -> None:
    assert run_entry(lambda: 0) == 0
    assert run_entry(lambda: 2) == 2


def test_other_errors_go_through() -> None:
    def broken() -> int:
        raise ValueError("not a pipe")

    with pytest.raises(ValueError, match="not a pipe"):
        run_entry(broken)


@pytest.mark.parametrize("guarded", [True, False])
def test_a_reader_that_goes_away_is_status_1_without_a_traceback(guarded: bool) -> None:
    """10 MB printed into a pipe whose reader stops after one line: status 1 and no traceback (without
    ``run_entry``, the traceback this guards against)."""
    code = FLOOD if guarded else FLOOD.replace("run_entry(main)", "main()")
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline() == b"x" * 100 + b"\n"
    process.stdout.close()
    err = process.stderr.read().decode()
    process.stderr.close()
    status = process.wait(timeout=60)
    if guarded:
        assert status == 1 and "Traceback" not in err, err
    else:
        assert status != 0 and "BrokenPipeError" in err
