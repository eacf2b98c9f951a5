"""DeFiNES' claims: each measures at ``Scale.FAST`` with a finite value and a setup, a miss names its cause."""

from __future__ import annotations

import math

import pytest

from accelsched.bench.claims import Claim, ClaimKind, Scale, Verdict, judge
from accelsched.bench.claims_defines import CLAIMS
from accelsched.bench.depth_first_render import PAPER_SL_OVER_BEST


def test_keys_are_unique_and_the_paper_is_named() -> None:
    assert len({c.key for c in CLAIMS}) == len(CLAIMS) >= 4
    assert {c.paper for c in CLAIMS} == {"DeFiNES"}
    for claim in CLAIMS:
        assert claim.figure.where and claim.figure.text
        assert claim.figure.value >= 1.0
        assert claim.figure.where.strip()


def test_case_study_2_covers_the_four_workloads_with_the_recorded_figures() -> None:
    cs2 = {c.key: c for c in CLAIMS if c.key.startswith("defines-sl-over-df-")}
    assert set(cs2) == {f"defines-sl-over-df-{n}" for n in ("fsrcnn", "dmcnn-vd", "mccnn", "mobilenet-v1")}
    assert [c.figure.value for c in cs2.values()] == [10.0, 10.0, 10.0, 5.7]
    assert PAPER_SL_OVER_BEST["mobilenet_v1_defines"] in cs2["defines-sl-over-df-mobilenet-v1"].figure.text
    assert all("case study 2" in c.figure.where for c in cs2.values())


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.key)
def test_claim_measures_at_fast_scale(claim: Claim) -> None:
    m = claim.measure(Scale.FAST)
    assert math.isfinite(m.value)
    assert m.setup and m.text
    if claim.kind is ClaimKind.FACT:
        assert m.value in (0.0, 1.0)
    if judge(claim.kind, claim.figure.value, m.value) is Verdict.NOT_REPRODUCED:
        assert m.cause
    if claim.key.startswith("defines-sl-over-df-"):  # the strategies taken are named
        assert all(method in m.setup for method in ("auto", "single", "fixed-df"))
