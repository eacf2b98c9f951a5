"""The claims table: verdicts, the run of a set of claims, the Markdown and the command line."""

from __future__ import annotations

import json
import math

import pytest

from accelsched.bench import claims as cl
from accelsched.bench.claims import Claim, ClaimKind, Measurement, PaperFigure, Scale, Verdict, judge


def _claim(key: str, value: float, kind: ClaimKind = ClaimKind.RATIO, paper: float = 2.0, **extra: str) -> Claim:
    def measure(scale: Scale) -> Measurement:
        if math.isnan(value):
            raise RuntimeError("the solver stopped")
        return Measurement(value, f"{value:g}x", f"toy at {scale.value}", extra.get("cause"))

    return Claim(key, "Toy", f"{key} holds", PaperFigure(paper, f"{paper:g}x", "Sec. 1"), kind, measure)


@pytest.mark.parametrize(
    ("paper", "ours", "verdict"),
    [
        (2.0, 2.0, Verdict.REPRODUCED),
        (2.0, 1.34, Verdict.REPRODUCED),  # 2.0 / 1.34 = 1.49
        (2.0, 2.99, Verdict.REPRODUCED),
        (2.0, 1.3, Verdict.DIRECTION_ONLY),  # 1.54x below
        (2.0, 3.2, Verdict.DIRECTION_ONLY),
        (2.0, 1.0, Verdict.NOT_REPRODUCED),  # no gain is not the paper's direction
        (2.0, 0.5, Verdict.NOT_REPRODUCED),
        (2.0, math.inf, Verdict.NOT_REPRODUCED),
        (2.0, math.nan, Verdict.NOT_REPRODUCED),
    ],
)
def test_a_ratio_is_judged_by_direction_then_magnitude(paper: float, ours: float, verdict: Verdict) -> None:
    assert judge(ClaimKind.RATIO, paper, ours) is verdict


def test_a_saving_is_judged_on_the_saved_fraction() -> None:
    small = cl.saving_as_ratio(1.89)
    # as a ratio 1.0001 is within 1.5x of 1.019; as a saving 0.01 % is far from 1.89 %
    assert judge(ClaimKind.RATIO, small, 1.0001) is Verdict.REPRODUCED
    assert judge(ClaimKind.RATIO, small, 1.0001, saving=True) is Verdict.DIRECTION_ONLY
    assert judge(ClaimKind.RATIO, small, cl.saving_as_ratio(2.5), saving=True) is Verdict.REPRODUCED
    assert judge(ClaimKind.RATIO, small, 0.95, saving=True) is Verdict.NOT_REPRODUCED
    figure = PaperFigure.of_saving(13.2, "13.2 % less", "abstract")
    assert figure.saving and figure.value == pytest.approx(1 / 0.868)
    assert judge(ClaimKind.RATIO, figure.value, cl.saving_as_ratio(38.0), saving=True) is Verdict.DIRECTION_ONLY


def test_a_fact_holds_or_not() -> None:
    assert judge(ClaimKind.FACT, 1.0, 1.0) is Verdict.REPRODUCED
    assert judge(ClaimKind.FACT, 1.0, 0.0) is Verdict.NOT_REPRODUCED


def test_a_saving_reads_as_a_ratio() -> None:
    assert cl.saving_as_ratio(50.0) == pytest.approx(2.0)
    assert cl.saving_as_ratio(13.2) == pytest.approx(1 / 0.868)
    with pytest.raises(ValueError, match="percentage"):
        cl.saving_as_ratio(100.0)


def test_a_failing_measurement_is_a_row_and_the_others_still_run() -> None:
    seen: list[str] = []
    rows = cl.measure_claims(
        [_claim("broken", math.nan), _claim("fine", 2.2)], Scale.FAST, on_row=lambda r: seen.append(r["key"])
    )
    assert seen == ["broken", "fine"]
    assert rows[0]["verdict"] == "error" and "the solver stopped" in rows[0]["error"]
    assert rows[1]["verdict"] == "reproduced" and rows[1]["ratio"] == pytest.approx(1.1)
    assert rows[1]["setup"] == "toy at fast"


def test_the_table_counts_verdicts_and_flags_a_missing_cause() -> None:
    rows = cl.measure_claims(
        [_claim("up", 2.1), _claim("far", 9.0), _claim("down", 0.8), _claim("why", 0.7, cause="port-bound: 14 %")],
        Scale.FAST,
    )
    data = {"scale": "fast", "rows": rows, "conditions": {"python": "3.11", "cpu_count": 2}, "wall_s": 1.0}
    text = cl.render(data)
    assert "| **Toy**: up holds | 2x | Sec. 1 | 2.1x | 1.05 | reproduced |" in text
    assert "| direction only |" in text
    assert "(cause not measured)" in text and "port-bound: 14 %" in text
    assert "4 claims: 1 reproduced, 1 direction only, 2 not reproduced (1 without a measured cause), 0 errors." in text
    assert cl.summary(rows)["not reproduced without cause"] == 1


def test_render_redraws_the_json(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rows = cl.measure_claims([_claim("up", 2.1)], Scale.FAST)
    data = {"scale": "full", "rows": rows, "conditions": {"python": "3.11", "cpu_count": 2}, "wall_s": 3.0}
    src = tmp_path / "claims.json"
    src.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "claims.md"
    assert cl.main(["render", str(src), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == cl.render(data)
    assert "Note: a second run." in cl.render(data | {"note": "a second run"})


def test_an_unknown_paper_or_claim_is_refused_by_name() -> None:
    claims = [_claim("up", 2.1)]
    with pytest.raises(SystemExit, match="unknown paper 'Nope'; known: Toy"):
        cl._select(claims, ["Nope"], [])
    with pytest.raises(SystemExit, match="unknown claim 'down'"):
        cl._select(claims, [], ["down"])
    assert cl._select(claims, ["toy"], []) == claims


def test_the_papers_state_at_least_twenty_claims_with_their_sources() -> None:
    claims = cl.all_claims()
    assert len(claims) >= 20
    assert {c.paper for c in claims} == {"Cocco", "SET", "Atomic Dataflow", "Stream", "DeFiNES"}
    for claim in claims:
        assert claim.figure.where.strip() and claim.figure.text.strip() and claim.statement.strip()
        if claim.kind is ClaimKind.RATIO:
            assert claim.figure.value > 1.0, claim.key
        else:
            assert claim.figure.value == 1.0, claim.key
