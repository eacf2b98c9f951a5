"""The parameters of the partition models' proof: branch-and-price, the proof driver, the method's settings.

Every limit and share that steers the proof is a field of a frozen parameter object, validated on
creation, which the exact methods pass down from their options (the defaults are the methods'):
:class:`BranchParams` for the tree (:mod:`~accelsched.formulations.partition.branch`),
:class:`ProofParams` for the driver (:mod:`~accelsched.formulations.partition.proof`), which carries
the column generation's
(:class:`~accelsched.formulations.partition.colgen_params.ColumnGenerationParams`) and the tree's,
and :class:`ProofSettings`, what a method's own options choose (column budget, rounds, backend,
pairs), which carries the parameters. A test builds the parameters it needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from accelsched.formulations.partition.colgen_params import ColumnGenerationParams
from accelsched.problems.partition_columns import DEFAULT_BUDGET
from accelsched.solvers import BACKENDS

__all__ = [
    "DEFAULT_BRANCH",
    "DEFAULT_PROOF",
    "DEFAULT_SETTINGS",
    "WHOLE_TABLES",
    "BranchParams",
    "ProofParams",
    "ProofSettings",
]


def _check(params: object, name: str, valid: bool) -> None:
    if not valid:
        value = getattr(params, name)
        raise ValueError(f"{type(params).__name__}.{name} is out of range: {value!r}")


@dataclass(frozen=True)
class BranchParams:
    """Limits of branch-and-price (:class:`~accelsched.formulations.partition.branch.BranchAndPrice`).

    Attributes
    ----------
    master_columns
        Largest number of enumerated columns the master starts from (the smallest ones;
        :func:`~accelsched.formulations.partition.fixed_capacity.master_columns`).
    node_integer_s
        Most seconds the integer program over a node's columns gets (0: none runs, so that no node
        is settled by its integer program).
    subset_row_rounds
        Rounds of subset-row cuts a node gets before it is branched (0: no cuts).
    subset_rows_per_round
        Most subset-row cuts one round adds.
    subset_rows_max
        Most subset-row cuts in the master (each is a variable and three rows of the pricing MILP).
    strong_candidates
        Pairs nearest 1/2 whose children strong branching probes (at most 1: the pair nearest 1/2,
        unprobed).
    tree_note_lines
        Most lines of the tree's log a result's note repeats.
    prune_ratio
        None: a node is pruned above the proof's prune level
        (:meth:`~accelsched.formulations.partition.colgen.ColumnGeneration.prune_level`). A number
        :math:`r`: only above :math:`r\\,U` (:math:`U` the incumbent's objective), so that with
        :math:`r > 1` no node is pruned by the incumbent and the tree alone decides (rules, integral
        vertices, cycle cuts, phase one): the tree stays exact, as pruning only saves work. A
        parameter for tests of the tree's own exactness.

    Raises
    ------
    ValueError
        A field out of its range; the message names the field and the value.
    """

    master_columns: int = 20_000
    node_integer_s: float = 60.0
    subset_row_rounds: int = 3
    subset_rows_per_round: int = 50
    subset_rows_max: int = 600
    strong_candidates: int = 8
    tree_note_lines: int = 12
    prune_ratio: float | None = None

    def __post_init__(self) -> None:
        for name in ("master_columns", "tree_note_lines"):
            _check(self, name, getattr(self, name) >= 1)
        for name in ("subset_row_rounds", "subset_rows_per_round", "subset_rows_max", "strong_candidates"):
            _check(self, name, getattr(self, name) >= 0)
        _check(self, "node_integer_s", self.node_integer_s >= 0.0)
        _check(self, "prune_ratio", self.prune_ratio is None or self.prune_ratio > 0.0)


@dataclass(frozen=True)
class ProofParams:
    """Shares and thresholds of the proof driver (:func:`~accelsched.formulations.partition.proof.prepare`).

    Attributes
    ----------
    final_share
        Share of the time limit a listing of the columns below the gap (and the capacity
        decomposition's pairs) leave to the models' final solve.
    pair_log_lines
        Most lines of the capacity decomposition's log of pairs a result's note repeats.
    decompose_columns
        Above this many columns, a co-exploration instance is decomposed even when its enumeration
        is complete (the pairs' tables are then its columns that fit each pair;
        :attr:`ProofSettings.decompose_above`): the co-exploration MILP mixes the capacities in its
        LP, and over a large table its solve may not end in the time where the pairs do. None: only
        an incomplete enumeration is decomposed (the CP-SAT method's default: it proves a complete
        table whole).
    root_rounds
        Most pricing rounds of the root's column generation before the tree takes it over as a root
        stopped at its deadline (priced on as the tree's first node, with the round limit again;
        :func:`~accelsched.formulations.partition.fixed_capacity.prove_fixed`). None: the round limit
        alone. A deadline stops a root at a round that depends on the machine; this stops it at a
        fixed one, for tests of the hand-over.
    colgen
        The column generation's parameters, at the root, in every node and in every pair.
    branch
        The tree's parameters.

    Raises
    ------
    ValueError
        A field out of its range; the message names the field and the value.
    """

    final_share: float = 0.05
    pair_log_lines: int = 12
    decompose_columns: int | None = 10_000
    root_rounds: int | None = None
    colgen: ColumnGenerationParams = field(default_factory=ColumnGenerationParams)
    branch: BranchParams = field(default_factory=BranchParams)

    def __post_init__(self) -> None:
        _check(self, "final_share", 0.0 <= self.final_share < 1.0)
        _check(self, "decompose_columns", self.decompose_columns is None or self.decompose_columns >= 0)
        _check(self, "pair_log_lines", self.pair_log_lines >= 1)
        _check(self, "root_rounds", self.root_rounds is None or self.root_rounds >= 1)

    def proof_deadline(self, start: float, limit_s: float | None) -> float | None:
        """Until when the proof (column generation's listing, the tree, the capacity decomposition's
        pairs) may run: all but :attr:`final_share` of the time limit ``limit_s`` counted from
        ``start`` (a :func:`time.perf_counter` value); None without a limit."""
        return None if limit_s is None else start + (1 - self.final_share) * limit_s


@dataclass(frozen=True)
class ProofSettings:
    """How an exact partition method lists its columns and proves its bound (validated on creation).

    Attributes
    ----------
    budget
        Column budget of the enumeration
        (:func:`~accelsched.problems.partition_columns.enumerate_columns`); beyond it, column
        generation completes the column set.
    rounds
        Largest number of column-generation rounds (of each pair, in co-exploration; None: the
        column generation's ``max_rounds``).
    decompose_above
        A complete co-exploration table of more columns than this is solved pair by pair too
        (None: only incomplete ones; the methods give :attr:`ProofParams.decompose_columns`).
    backend
        The linear backend (:data:`accelsched.solvers.BACKENDS`) of the MILPs of the capacity
        decomposition's pairs.
    pairs
        The pairs of candidates (activation bytes, weight bytes; 0 with a shared buffer) the
        capacity decomposition may solve, the others left as they are: a run's share of a proof
        divided between runs, each recording in its own copy of one ledger
        (:meth:`Ledger.merge <accelsched.formulations.partition.ledger.Ledger.merge>` puts them
        together). None: every pair.
    params
        The proof's limits and shares (:class:`ProofParams`).

    Raises
    ------
    ValueError
        A budget or round limit below 1, a negative ``decompose_above``, an unknown backend, an
        empty ``pairs`` or one with a negative capacity.
    """

    budget: int = DEFAULT_BUDGET
    rounds: int | None = None
    decompose_above: int | None = None
    backend: str = "highs"
    pairs: frozenset[tuple[int, int]] | None = None
    params: ProofParams = field(default_factory=ProofParams)

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise ValueError(f"the column budget must be at least 1, got {self.budget}")
        if self.rounds is not None and self.rounds < 1:
            raise ValueError(f"the round limit must be at least 1, got {self.rounds}")
        if self.decompose_above is not None and self.decompose_above < 0:
            raise ValueError(f"decompose_above must be None or at least 0, got {self.decompose_above}")
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown linear backend {self.backend!r}; known: {', '.join(BACKENDS)}")
        if self.pairs is not None and (not self.pairs or any(min(pair) < 0 for pair in self.pairs)):
            raise ValueError(f"pairs must be None or pairs of capacities of at least 0 bytes, got {self.pairs}")

    @property
    def round_limit(self) -> int:
        """The largest number of column-generation rounds: :attr:`rounds`, else the column generation's."""
        return self.params.colgen.max_rounds if self.rounds is None else self.rounds


DEFAULT_BRANCH = BranchParams()
"""The tree's default limits (the methods')."""

DEFAULT_PROOF = ProofParams()
"""The proof's default parameters (the methods')."""

WHOLE_TABLES = ProofParams(decompose_columns=None)
"""The proof's default parameters for a model that proves a complete co-exploration table whole (CP-SAT)."""

DEFAULT_SETTINGS = ProofSettings()
"""The default settings of :func:`~accelsched.formulations.partition.proof.prepare`."""
