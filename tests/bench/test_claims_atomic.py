"""Atomic Dataflow's claims measure at Scale.FAST: a finite value and a setup each, and a measured cause where not
reproduced."""

from __future__ import annotations

import math

import pytest

from accelsched.bench.claims import Claim, ClaimKind, Scale, Verdict, judge
from accelsched.bench.claims_atomic import CLAIMS


def test_claims_have_unique_keys_and_say_where_the_paper_prints_them() -> None:
    assert len(CLAIMS) >= 4
    assert len({c.key for c in CLAIMS}) == len(CLAIMS)
    assert all(c.paper == "Atomic Dataflow" and c.figure.where for c in CLAIMS)
    assert all(c.figure.value > 1 for c in CLAIMS if c.kind is ClaimKind.RATIO)


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.key for c in CLAIMS])
def test_every_claim_measures_at_fast_scale(claim: Claim) -> None:
    m = claim.measure(Scale.FAST)
    assert (math.isfinite(m.value) and m.value > 0) or claim.kind is ClaimKind.FACT
    assert m.setup and m.text
    if judge(claim.kind, claim.figure.value, m.value) is not Verdict.REPRODUCED:
        assert m.cause and any(ch.isdigit() for ch in m.cause)
