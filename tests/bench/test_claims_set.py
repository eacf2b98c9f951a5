"""SET's claims measure at the fast scale: finite values, a setup, and a cause whenever one is not reproduced."""

from __future__ import annotations

import math

import pytest

from accelsched.bench.claims import Claim, ClaimKind, Scale, Verdict, judge
from accelsched.bench.claims_set import CLAIMS


def test_set_has_its_abstract_claims_with_unique_keys() -> None:
    assert len(CLAIMS) >= 4
    assert len({c.key for c in CLAIMS}) == len(CLAIMS)
    assert all(c.paper == "SET" and c.figure.where for c in CLAIMS)
    assert next(c.figure.value for c in CLAIMS if c.kind is ClaimKind.RATIO) == pytest.approx(1.78)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.key)
def test_each_claim_measures_at_the_fast_scale(claim: Claim) -> None:
    m = claim.measure(Scale.FAST)
    assert math.isfinite(m.value) and m.setup
    if judge(claim.kind, claim.figure.value, m.value) is Verdict.NOT_REPRODUCED:
        assert m.cause
