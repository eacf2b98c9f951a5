"""The package's layer order, as import-linter checks it in CI (``[tool.importlinter]`` in pyproject.toml)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import accelsched

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(accelsched.__file__).resolve().parent
LINT = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))

pytestmark = pytest.mark.skipif(
    not Path(LINT).exists(), reason="import-linter is not installed (the test extra has it)"
)


def _config() -> dict:
    with (ROOT / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)["tool"]["importlinter"]


def _lint(package_parent: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run(
        [LINT, str(config), "--no-cache", "--no-logo"], capture_output=True, text=True, env=env, cwd=package_parent
    )


def _copy(tmp_path: Path) -> Path:
    """The package and its import-linter configuration, copied to ``tmp_path``; returns the config file."""
    shutil.copytree(PACKAGE, tmp_path / "accelsched", ignore=shutil.ignore_patterns("__pycache__"))
    config = tmp_path / "pyproject.toml"
    shutil.copy(ROOT / "pyproject.toml", config)
    return config


def test_the_contracts_carry_no_exceptions_and_cover_every_module() -> None:
    contracts = _config()["contracts"]
    kinds = {contract["type"] for contract in contracts}
    assert {"layers", "acyclic_siblings"} <= kinds
    for contract in contracts:
        assert "ignore_imports" not in contract, f"{contract['name']}: the layers hold without exceptions"
    layers = next(contract for contract in contracts if contract["type"] == "layers")
    assert layers["exhaustive"] is True  # every top-level module of the package sits in a layer
    listed = {name.strip() for layer in layers["layers"] for name in layer.split("|")}
    present = {path.stem for path in PACKAGE.iterdir() if path.suffix == ".py" or (path / "__init__.py").exists()}
    assert listed <= present, f"layers name modules that do not exist: {sorted(listed - present)}"


def test_the_package_keeps_its_layers(tmp_path: Path) -> None:
    run = _lint(tmp_path, _copy(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize(
    ("module", "imports", "message"),
    [
        ("hardware/_back_edge.py", "accelsched.problems", "accelsched.hardware is not allowed to import"),
        ("formulations/_back_edge.py", "accelsched.heuristics", "accelsched.formulations is not allowed to import"),
        ("solvers/_back_edge.py", "accelsched.hardware", "accelsched.solvers is not allowed to import"),
        ("problems/_back_edge.py", "accelsched.registry", "accelsched.problems is not allowed to import"),
    ],
)
def test_a_back_edge_breaks_the_layers(tmp_path: Path, module: str, imports: str, message: str) -> None:
    config = _copy(tmp_path)
    back_edge = f'"""A back edge."""\n\n\ndef f() -> None:\n    import {imports}  # noqa\n'
    (tmp_path / "accelsched" / module).write_text(back_edge)
    run = _lint(tmp_path, config)
    assert run.returncode != 0
    assert f"{message} {imports}" in " ".join(run.stdout.split())


def test_a_cycle_between_siblings_breaks_the_contract(tmp_path: Path) -> None:
    config = _copy(tmp_path)
    (tmp_path / "accelsched" / "models" / "_cycle_a.py").write_text("import accelsched.models._cycle_b  # noqa\n")
    (tmp_path / "accelsched" / "models" / "_cycle_b.py").write_text("import accelsched.models._cycle_a  # noqa\n")
    run = _lint(tmp_path, config)
    assert run.returncode != 0
    assert "No cycles are allowed in accelsched.models" in " ".join(run.stdout.split())
