"""Random DAGs and the workload-name resolver."""

from __future__ import annotations

import json

import pytest

from accelsched.errors import InputError
from accelsched.models.random_dag import random_workload
from accelsched.models.registry import load_workload


@pytest.mark.parametrize("n", [1, 2, 7, 30])
def test_random_dags_are_valid_sized_and_seeded(n: int) -> None:
    for seed in range(25):
        w = random_workload(n, seed)
        assert len(w) == n
        assert w == random_workload(n, seed)
    shapes = {tuple(layer.shape_key() for layer in random_workload(n, s)) for s in range(10)}
    assert n == 1 or len(shapes) > 1


def test_random_dags_have_branches_and_joins() -> None:
    ws = [random_workload(30, s) for s in range(10)]
    assert any(not w.is_chain for w in ws)
    assert any(len(layer.inputs) > 1 for w in ws for layer in w)


def test_random_spec_and_bad_specs() -> None:
    assert load_workload("random:5:3") == random_workload(5, 3)
    assert load_workload("random:5:3", batch=2).batch == 2
    for bad in ("random:x:1", "random:0:1", "random:3"):
        with pytest.raises(InputError, match="random:N:SEED"):
            load_workload(bad)


def test_unknown_name_suggests(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match="unknown workload 'definitely-not-a-net'"):
        load_workload("definitely-not-a-net")


def test_json_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    w = random_workload(6, 1)
    path = tmp_path / "w.json"
    w.save_json(path)
    assert load_workload(str(path)) == w
    path.write_text("{not json")
    with pytest.raises(InputError, match="malformed JSON"):
        load_workload(str(path))
    path.write_text(json.dumps({"name": "x", "layers": [{"name": "a"}]}))
    with pytest.raises(InputError, match=str(path)):
        load_workload(str(path))
    with pytest.raises(InputError, match="cannot read the file"):
        load_workload(str(tmp_path / "missing.json"))
