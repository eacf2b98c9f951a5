"""Stream's claims measure at Scale.FAST: a finite value and a setup each, and a cause where not reproduced."""

from __future__ import annotations

import math

import pytest

from accelsched.bench.claims import Scale, Verdict, judge
from accelsched.bench.claims_stream import CLAIMS


def test_claims_have_unique_keys_and_cite_a_paper_version() -> None:
    assert len(CLAIMS) >= 4
    assert len({c.key for c in CLAIMS}) == len(CLAIMS)
    assert all(c.paper == "Stream" and "2212.10612v" in c.figure.where for c in CLAIMS)


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.key for c in CLAIMS])
def test_every_claim_measures_at_fast_scale(claim) -> None:  # type: ignore[no-untyped-def]
    m = claim.measure(Scale.FAST)
    assert math.isfinite(m.value) and m.setup
    if judge(claim.kind, claim.figure.value, m.value) is not Verdict.REPRODUCED:
        assert m.cause and any(ch.isdigit() for ch in m.cause)
