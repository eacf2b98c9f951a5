"""The atomic Gantt chart from the command line, and its clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelsched.bench.atomic import main


def test_the_gantt_chart_is_written(tmp_path: Path) -> None:
    out = tmp_path / "g.png"
    assert main(["gantt", "--workload", "random:4:1", "--option", "engines=2", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_options_exit_with_the_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["gantt", "--workload", "random:4:1", "--option", "engines=0", "--out", str(tmp_path / "g.png")])
    assert stop.value.code == 2 and "engines='0'" in capsys.readouterr().err
