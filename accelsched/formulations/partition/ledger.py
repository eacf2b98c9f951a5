r"""A file of what the capacity decomposition proved, so that a long proof can go on in later runs.

A co-exploration proof of a large graph can take hours per pair of capacity candidates
(:mod:`accelsched.formulations.partition.capacity`), more than one run of a benchmark may
have. What a solved pair proves does not depend on the
run: its bound :math:`L(p) \le E^*(p)` on the least metric under the pair holds for the
instance whatever the incumbent was (a settled pair's bound is
:math:`\min(E^*(p), c(p)) \le E^*(p)`), and the best partition found stays valid. So a
*ledger* keeps, per instance, the bound of every pair solved so far and the best partition,
and a run that opens it starts from them: the pairs' bounds are raised (at the pairs within
them too) and the partition becomes the incumbent when it is better than the warm start.
Pairs already settled are then below no incumbent and are not solved again. For each pair
left open the ledger also keeps the subgraphs its last solve generated, and its next solve
starts its column generation from them (with the cutoff of the best incumbent known): the
climb of the master's LP, most of a pair's time, is not repeated, only the proof of the
bound (the exact pricing at the new master's duals). The ledger also keeps each pair's best
root inner point (:class:`~accelsched.formulations.partition.common.InnerPoint`: duals and the
bound they prove), which the pair's next solve, and those of the pairs within it, start from:
its bound is not climbed again either. When a pair's solve stops in branch-and-price, the ledger
keeps the tree's open nodes (:class:`~accelsched.formulations.partition.common.TreeState`: each
node's pair rules, inner point and bound; the least bound of the nodes closed; the prune level
they were closed at; the cycles of subgraphs cut from the master; the subset-row cuts, whose
duals follow the layers' in a node's), and the pair's next solve
resumes the tree from them rather than from its root: a tree longer than one run is still
solved once. For a pair left open it also keeps the *ceiling*: the LP value of the pair's
restricted master over every subgraph its solves met (the least such value recorded), above
which no bound of its root's column generation can rise, so that a run can tell the pairs
whose own roots may still settle pairs within them from those that need a tree
(:mod:`~accelsched.formulations.partition.capacity`, "Ceilings").

The file is JSON, written again after each solved pair (to a temporary file, then renamed,
so that a run killed while writing leaves the previous ledger)::

    {"kind": "accelsched partition pair ledger", "version": 1,
     "instance": "<digest of the instance>", "workload": "<workload spec>",
     "incumbent": {"solution": {...}, "objective": 262500.0},
     "pairs": [{"act_bytes": 262144, "weight_bytes": 0, "lower": 120000.0,
                "seconds": 60.0, "code": "1a2b3c4d5e6f", "ceiling": 130000.0 or null,
                "columns": [[3, 4, 7], ...],
                "inner": {"bound": 120000.0, "duals": [...]} or null,
                "tree": {"level": 125000.0, "closed": 125500.0 or null,
                         "nodes": [{"rules": [[8, 16, true], ...], "bound": 121000.0,
                                    "duals": [...], "exact": false, "cut_rounds": 1}, ...],
                         "cycles": [[[3, 4], [5], [6, 7]], ...],
                         "cuts": [[6, 8, 82], ...]} or null}, ...]}

A ledger written before trees were kept has no ``tree`` fields, and is read as one whose pairs
left none; a tree written before subset-row cuts has no ``cuts``, and is read as one without;
a node written before its cut rounds were kept has no ``cut_rounds``, and is read as one that had none;
a pair written before ceilings were kept has no ``ceiling``, and is read as one of unknown ceiling.

A run holds its ledger against other processes from the moment it reads it until its last write
(:func:`ledger_lock`): a second run on the same file, which would overwrite the first one's pairs,
is refused with an error. Runs sharing a proof each take a copy, merged afterwards.

The instance digest covers the workload, the accelerator, the buffer design, the candidates,
the metric and alpha: a ledger opened for another instance is refused. The cost model is
checked through the incumbent: its objective is evaluated again and must equal the recorded
one, or the ledger is refused (its bounds were proven under another cost model). ``code``
is the package's fingerprint (:func:`accelsched.fingerprint.code_fingerprint`) when the pair
was last solved, recorded for provenance only: a bound proven by other code of the same
cost model is still a bound, and :meth:`Ledger.provenance` says which code proved them.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import math
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accelsched.errors import InfeasibleSolution, InputError
from accelsched.filelock import exclusive, write_atomic
from accelsched.formulations.partition.common import (
    InnerPoint,
    OpenNode,
    TreeState,
    keep_better_inner,
    keep_last_tree,
)
from accelsched.formulations.partition.rules import PairRule
from accelsched.problems.partition import (
    PartitionInstance,
    PartitionSolution,
    check,
    evaluate,
    objective,
    weakly_connected,
)

__all__ = [
    "LEDGER_KIND",
    "LEDGER_VERSION",
    "Ledger",
    "PairBound",
    "instance_digest",
    "keep_final",
    "lower_ceiling",
    "open_ledger",
]

LEDGER_KIND = "accelsched partition pair ledger"
LEDGER_VERSION = 1
OBJECTIVE_TOLERANCE = 1e-9
"""Relative difference allowed between the incumbent's recorded and recomputed objective."""


def instance_digest(instance: PartitionInstance) -> str:
    """A hash of everything that defines the instance (its dataclass fields, the cost model aside), the
    same in every process: sets are sorted (a ``repr`` lists a frozenset of enums in an order that
    changes with ``PYTHONHASHSEED``)."""
    text = json.dumps(_canonical(instance), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _canonical(value: Any) -> Any:
    """``value`` as JSON data that does not depend on the process: dataclass fields shown by their
    ``repr`` (not the cost model), enums by name, sets and mappings sorted, floats by ``repr``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value) if f.repr}
        return [type(value).__name__, fields]
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, set | frozenset):
        return sorted((_canonical(item) for item in value), key=json.dumps)
    if isinstance(value, Mapping):
        return sorted(([_canonical(k), _canonical(v)] for k, v in value.items()), key=json.dumps)
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    if isinstance(value, float):
        return repr(value)
    if value is None or isinstance(value, bool | int | str):
        return value
    raise TypeError(f"instance_digest: cannot describe a {type(value).__name__} field")


@dataclass(frozen=True)
class PairBound:
    """What the solves of one pair proved.

    Attributes
    ----------
    act_bytes, weight_bytes
        The pair's capacities (``weight_bytes`` 0 with a shared buffer).
    lower
        A lower bound of :math:`E^*(p)`, the least metric of a partition under the pair.
    seconds
        Time spent solving the pair, over every run.
    code
        Fingerprint of the code that last solved it.
    ceiling
        The least LP value of the pair's restricted master its solves recorded: an upper bound of
        the pair's LP optimum, so of every bound its root's column generation proves (None: unknown).
    """

    act_bytes: int
    weight_bytes: int
    lower: float
    seconds: float
    code: str
    ceiling: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible form."""
        return {
            "act_bytes": self.act_bytes,
            "weight_bytes": self.weight_bytes,
            "lower": self.lower,
            "seconds": round(self.seconds, 1),
            "code": self.code,
            "ceiling": self.ceiling,
        }


class Ledger:
    """The ledger file of one co-exploration instance.

    Parameters
    ----------
    path
        The JSON file; it need not exist yet (a run then starts it).
    instance
        The instance the ledger is for.

    Raises
    ------
    InputError
        The file exists and is not a ledger, is malformed, is for another instance, or its
        incumbent does not check or evaluate to its recorded objective.
    """

    def __init__(self, path: str | Path, instance: PartitionInstance) -> None:
        self.path = Path(path)
        self.instance = instance
        self.digest = instance_digest(instance)
        self.pairs: dict[tuple[int, int], PairBound] = {}
        self.columns: dict[tuple[int, int], tuple[tuple[int, ...], ...]] = {}
        """Per pair left open, the subgraphs its last solve generated (its next solve starts from them)."""
        self.inner: dict[tuple[int, int], InnerPoint] = {}
        """Per pair, the best root inner point its solves proved (its next solve, and those of the pairs
        within it, start from it)."""
        self.trees: dict[tuple[int, int], TreeState] = {}
        """Per pair whose last solve stopped in branch-and-price, the open nodes of its tree."""
        self.incumbent: PartitionSolution | None = None
        self.objective = math.inf
        if self.path.exists():
            self._read()

    # ---------------------------------------------------------- reading
    def _refuse(self, what: str, fix: str = "give another file, or delete this one to start again") -> InputError:
        return InputError(what, f"pair ledger {self.path}", fix)

    def _read(self) -> None:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise self._refuse(f"cannot read it as JSON ({exc})") from None
        if not isinstance(data, dict) or data.get("kind") != LEDGER_KIND:
            raise self._refuse(f'not a pair ledger (no "kind": {LEDGER_KIND!r})')
        if data.get("version") != LEDGER_VERSION:
            raise self._refuse(f"version {data.get('version')!r}, this code reads version {LEDGER_VERSION}")
        if data.get("instance") != self.digest:
            raise self._refuse(
                f"it is for another instance (digest {data.get('instance')!r}, workload {data.get('workload')!r}); "
                f"this one is {self.digest!r}, workload {self.instance.workload.name!r}"
            )
        try:
            pairs = [_pair_bound(entry) for entry in data["pairs"]]
            self.columns = {
                (entry["act_bytes"], entry["weight_bytes"]): self._subgraphs(entry.get("columns", []))
                for entry in data["pairs"]
                if entry.get("columns")
            }
            self.inner = {
                (entry["act_bytes"], entry["weight_bytes"]): self._inner_point(entry["inner"])
                for entry in data["pairs"]
                if entry.get("inner") is not None
            }
            self.trees = {
                (entry["act_bytes"], entry["weight_bytes"]): self._tree(entry["tree"])
                for entry in data["pairs"]
                if entry.get("tree") is not None
            }
            incumbent = data["incumbent"]
            if incumbent is not None:
                self._restore_incumbent(PartitionSolution.from_dict(incumbent["solution"]), incumbent["objective"])
        except (KeyError, TypeError, ValueError) as exc:
            raise self._refuse(f"malformed entry ({type(exc).__name__}: {exc})") from None
        self.pairs = {(pair.act_bytes, pair.weight_bytes): pair for pair in pairs}

    def _subgraphs(self, columns: Any) -> tuple[tuple[int, ...], ...]:
        """A pair's recorded subgraphs, validated: ``ValueError`` naming the first bad one."""
        if not isinstance(columns, list):
            raise ValueError(f"pair field columns must be a list of subgraphs, got {type(columns).__name__}")
        n = self.instance.n_layers
        kept = []
        for members in columns:
            valid = isinstance(members, list) and members and len(set(members)) == len(members)
            if not valid or not all(type(i) is int and 0 <= i < n for i in members):
                raise ValueError(f"pair field columns: {members!r} is not a set of layer indices in [0, {n})")
            if not weakly_connected(self.instance, set(members)):
                raise ValueError(f"pair field columns: {members!r} is not a weakly connected subgraph")
            kept.append(tuple(sorted(members)))
        return tuple(kept)

    def _inner_point(self, entry: Any, field: str = "inner", cuts: int = 0) -> InnerPoint:
        """A pair's recorded inner point (or a tree node's: ``field`` names it in the message, and
        its duals may go on with those of the tree's first ``cuts`` subset-row cuts), validated:
        ``ValueError`` saying what is wrong."""
        if not isinstance(entry, dict):
            raise ValueError(f"pair field {field} must be an object with bound and duals, got {type(entry).__name__}")
        bound, duals = entry["bound"], entry["duals"]
        n = self.instance.n_layers
        if not isinstance(duals, list) or not n <= len(duals) <= n + cuts:
            then = f", then at most one per subset-row cut ({cuts})" if cuts else ""
            raise ValueError(f"pair field {field}: duals must be a list of {n} numbers (one per layer{then})")
        if any(_finite(value) and value > 0 for value in duals[n:]):
            raise ValueError(f"pair field {field}: the duals of the subset-row cuts must be at most 0")
        for value in (bound, *duals):
            if not _finite(value):
                raise ValueError(f"pair field {field}: {value!r} is not a finite number")
        return InnerPoint(tuple(float(v) for v in duals), float(bound))

    def _tree(self, entry: Any) -> TreeState:
        """A pair's recorded tree, validated: ``ValueError`` saying what is wrong."""
        if not isinstance(entry, dict) or not isinstance(entry["nodes"], list):
            raise ValueError("pair field tree must be an object with level, closed and a list of nodes")
        level, closed = entry["level"], entry["closed"]
        if not _finite(level) or not (closed is None or _finite(closed)):
            raise ValueError(f"pair field tree: level {level!r} and closed {closed!r} must be finite numbers")
        cuts = self._cuts(entry.get("cuts", []))
        nodes = []
        for node in entry["nodes"]:
            if not isinstance(node, dict) or not isinstance(node.get("exact"), bool):
                raise ValueError("pair field tree: each node is an object with rules, bound, duals and exact")
            inner = self._inner_point(node, "tree", len(cuts))
            rounds = node.get("cut_rounds", 0)  # trees written before it was kept: none counted
            if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 0:
                raise ValueError(f"pair field tree: a node's cut_rounds {rounds!r} must be a whole number >= 0")
            nodes.append(OpenNode(self._rules(node["rules"]), inner, node["exact"], rounds))
        cycles = entry.get("cycles", [])
        if not isinstance(cycles, list):
            raise ValueError(f"pair field tree: cycles must be a list of subgraph lists, got {type(cycles).__name__}")
        closed_at = math.inf if closed is None else float(closed)
        subgraphs = tuple(self._subgraphs(cycle) for cycle in cycles)
        return TreeState(tuple(nodes), closed_at, float(level), subgraphs, cuts)

    def _cuts(self, cuts: Any) -> tuple[tuple[int, int, int], ...]:
        """A tree's subset-row cuts, validated: ``ValueError`` naming the first bad one."""
        if not isinstance(cuts, list):
            raise ValueError(f"pair field tree: cuts must be a list of layer triples, got {type(cuts).__name__}")
        n = self.instance.n_layers
        kept = []
        for cut in cuts:
            valid = isinstance(cut, list) and len(cut) == 3 and all(type(i) is int for i in cut)
            if not valid or not 0 <= cut[0] < cut[1] < cut[2] < n:
                raise ValueError(f"pair field tree: cut {cut!r} is not [a, b, c], 0 <= a < b < c < {n}")
            kept.append((cut[0], cut[1], cut[2]))
        if len(set(kept)) != len(kept):
            raise ValueError("pair field tree: a subset-row cut is listed twice")
        return tuple(kept)

    def _rules(self, rules: Any) -> frozenset[PairRule]:
        """A tree node's pair rules, validated: ``ValueError`` naming the first bad one."""
        if not isinstance(rules, list):
            raise ValueError(f"pair field tree: a node's rules must be a list, got {type(rules).__name__}")
        n = self.instance.n_layers
        kept = []
        for rule in rules:  # PairRule checks the order too, with a message that names no field
            valid = isinstance(rule, list) and len(rule) == 3 and isinstance(rule[2], bool)
            if not valid or not all(type(i) is int and 0 <= i < n for i in rule[:2]) or rule[0] >= rule[1]:
                raise ValueError(
                    f"pair field tree: rule {rule!r} is not [first, second, together], 0 <= first < second < {n}"
                )
            kept.append(PairRule(rule[0], rule[1], rule[2]))
        return frozenset(kept)

    def _restore_incumbent(self, solution: PartitionSolution, recorded: Any) -> None:
        if isinstance(recorded, bool) or not isinstance(recorded, int | float):
            raise ValueError(f"incumbent objective {recorded!r} is not a number")
        try:
            check(self.instance, solution)
        except Exception as exc:  # InfeasibleSolution, or a layer name of another workload
            raise self._refuse(f"its incumbent is not a valid partition of the instance: {exc}") from None
        value = objective(self.instance, solution, evaluate(self.instance, solution))
        if abs(value - recorded) > OBJECTIVE_TOLERANCE * max(1.0, abs(value)):
            raise self._refuse(
                f"its incumbent evaluates to {value:.12g}, it recorded {recorded:.12g}: its bounds were proven "
                "under another cost model"
            )
        self.incumbent, self.objective = solution, value

    def provenance(self) -> str:
        """Which code proved the recorded bounds: ``"3 pairs (code 1a2b..., 5e6f...)"``."""
        codes = sorted({pair.code for pair in self.pairs.values()})
        return f"{len(self.pairs)} pairs (code {', '.join(codes)})" if codes else "no pairs"

    # ---------------------------------------------------------- writing
    def record(
        self,
        act_bytes: int,
        weight_bytes: int,
        lower: float,
        seconds: float,
        code: str,
        columns: tuple[tuple[int, ...], ...] = (),
        inner: InnerPoint | None = None,
        tree: TreeState | None = None,
        ceiling: float | None = None,
    ) -> None:
        """Keep the better of a pair's bounds, of its inner points and of its ceilings (the lower), add
        its solve time, keep the subgraphs its solve generated when it is left open (none when
        settled) and the open nodes of the tree it stopped in (None: it did not, or it is settled);
        written by :meth:`save`."""
        key = (act_bytes, weight_bytes)
        before = self.pairs.get(key)
        if before is not None:
            lower, seconds = max(lower, before.lower), seconds + before.seconds
            ceiling = lower_ceiling(ceiling, before.ceiling)
        self.pairs[key] = PairBound(act_bytes, weight_bytes, lower, seconds, code, ceiling)
        self.columns[key] = columns
        keep_better_inner(self.inner, key, inner)
        keep_last_tree(self.trees, key, tree)

    def offer(self, solution: PartitionSolution, value: float) -> None:
        """Keep ``solution`` (checked, of co-exploration objective ``value``) when it beats the incumbent."""
        if value < self.objective:
            self.incumbent, self.objective = solution, value

    def merge(self, other: Ledger, base: Ledger | None = None) -> tuple[tuple[int, int], ...]:
        """Take in what another run proved: the pairs it solved and its partition when better.

        A proof divided between runs (processes or machines, each from a copy of one ledger, each
        solving pairs the others do not) is put back together here. Every recorded bound is a bound
        of the instance whatever run proved it, so merging is sound in any order: each pair keeps
        the higher bound (and the lower ceiling). ``base`` is the ledger both runs started from (None:
        an empty one); a pair counts as solved by ``other`` when it spent time on it beyond ``base``,
        and only that time is added. The subgraphs, tree and code of a pair are ``other``'s when this
        ledger did not solve it beyond ``base`` (its entry is the base's: ``other``'s state is the
        later one, even at the same bound, as when a tree branched without raising its least open
        bound), else those of the run whose bound is higher (this ledger's on a tie); its inner
        point is the one of higher bound.

        Parameters
        ----------
        other
            A ledger of the same instance.
        base
            The ledger ``other``'s run started from, or None.

        Returns
        -------
        tuple of (int, int)
            The pairs taken from ``other`` (activation and weight bytes), sorted.

        Raises
        ------
        InputError
            ``other`` is this ledger's file, ``other`` or ``base`` is for another instance, or
            ``other`` spent less time on a pair than ``base`` records (it did not start from ``base``).
        """
        if other.path.resolve() == self.path.resolve():
            raise self._refuse("cannot merge a ledger into itself", "merge the ledger of another run")
        for ledger in (other, base):
            if ledger is not None and ledger.digest != self.digest:
                raise self._refuse(
                    f"cannot merge {ledger.path} into it: that ledger is for another instance",
                    "merge ledgers of one instance",
                )
        solved = []  # checked before anything changes: a refused merge leaves this ledger as it was
        for key, pair in sorted(other.pairs.items()):
            before = None if base is None else base.pairs.get(key)
            spent = pair.seconds - (0.0 if before is None else before.seconds)
            if spent < -0.05:  # seconds are written to 0.1 s
                raise self._refuse(
                    f"cannot merge {other.path}: it spent {pair.seconds:.1f} s on pair {key[0]}/{key[1]} B, less than "
                    f"the {before.seconds if before else 0.0:.1f} s of {base.path if base else 'no base'}",
                    "give as base the ledger that run started from",
                )
            if _moved(pair, before):
                solved.append((key, pair, before, spent))
        for key, pair, before, spent in solved:
            mine = self.pairs.get(key)
            if mine is None:  # the time the base records is then the other run's too
                mine = PairBound(*key, -math.inf, 0.0 if before is None else before.seconds, pair.code)
            theirs = pair.lower > mine.lower or not _moved(mine, before)
            self.pairs[key] = PairBound(
                *key,
                max(pair.lower, mine.lower),
                mine.seconds + max(spent, 0.0),
                pair.code if theirs else mine.code,
                lower_ceiling(pair.ceiling, mine.ceiling),
            )
            if theirs:
                self.columns[key] = other.columns.get(key, ())
                keep_last_tree(self.trees, key, other.trees.get(key))
            keep_better_inner(self.inner, key, other.inner.get(key))
        if other.incumbent is not None:
            self.offer(other.incumbent, other.objective)
        return tuple(key for key, *_ in solved)

    def save(self) -> None:
        """Write the ledger (a temporary file renamed over it: never half-written)."""
        incumbent = None
        if self.incumbent is not None:
            incumbent = {"solution": self.incumbent.to_dict(), "objective": self.objective}
        payload = {
            "kind": LEDGER_KIND,
            "version": LEDGER_VERSION,
            "instance": self.digest,
            "workload": self.instance.workload.name,
            "incumbent": incumbent,
            "pairs": [self._entry(pair) for pair in sorted(self.pairs.values(), key=_pair_key)],
        }
        write_atomic(self.path, json.dumps(payload, separators=(",", ":")) + "\n")  # compact: thousands of subgraphs

    def _entry(self, pair: PairBound) -> dict[str, Any]:
        """A pair's JSON entry: its bound, its subgraphs, its inner point and its tree (null when none)."""
        key = _pair_key(pair)
        inner, tree = self.inner.get(key), self.trees.get(key)
        return pair.to_dict() | {
            "columns": [list(members) for members in self.columns.get(key, ())],
            "inner": None if inner is None else _point(inner),
            "tree": None if tree is None else _tree_entry(tree),
        }


def _point(inner: InnerPoint) -> dict[str, Any]:
    return {"bound": inner.bound, "duals": list(inner.duals)}


def _tree_entry(tree: TreeState) -> dict[str, Any]:
    """A tree's JSON form: each node's rules as [first, second, together], its ``exact`` flag, its rounds of
    subset-row cuts, its bound and duals."""
    nodes = [
        {
            "rules": [[rule.first, rule.second, rule.together] for rule in sorted(node.rules)],
            "exact": node.exact,
            "cut_rounds": node.cut_rounds,
        }
        | _point(node.inner)
        for node in tree.nodes
    ]
    closed = tree.closed if math.isfinite(tree.closed) else None
    cycles = [[list(members) for members in cycle] for cycle in tree.cycles]
    cuts = [list(cut) for cut in tree.cuts]
    return {"level": tree.level, "closed": closed, "nodes": nodes, "cycles": cycles, "cuts": cuts}


def _finite(value: Any) -> bool:
    """Whether ``value`` is a finite JSON number (not a bool)."""
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def _pair_key(pair: PairBound) -> tuple[int, int]:
    return pair.act_bytes, pair.weight_bytes


def _pair_bound(entry: Mapping[str, Any]) -> PairBound:
    """A pair's entry, validated: ``ValueError`` or ``KeyError`` naming what is wrong."""
    act, weight, lower, seconds = (entry[key] for key in ("act_bytes", "weight_bytes", "lower", "seconds"))
    for key, value in (("act_bytes", act), ("weight_bytes", weight)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"pair field {key} must be a whole number of bytes, got {value!r}")
    for key, value in (("lower", lower), ("seconds", seconds)):
        if not _finite(value):
            raise ValueError(f"pair field {key} must be a finite number, got {value!r}")
    ceiling = entry.get("ceiling")  # pairs written before ceilings were kept: unknown
    if ceiling is not None and not _finite(ceiling):
        raise ValueError(f"pair field ceiling must be a finite number or null, got {ceiling!r}")
    code = str(entry.get("code", ""))
    return PairBound(act, weight, float(lower), float(seconds), code, None if ceiling is None else float(ceiling))


def _moved(pair: PairBound, base: PairBound | None) -> bool:
    """Whether a run solved ``pair`` beyond the entry ``base`` it started from (None: none): it spent
    time on it or raised its bound (seconds are written to 0.1 s)."""
    return base is None or pair.seconds - base.seconds > 0.05 or pair.lower > base.lower


def lower_ceiling(first: float | None, second: float | None) -> float | None:
    """The lower of two ceilings of a pair (:attr:`PairBound.ceiling`), either unknown (None)."""
    known = [value for value in (first, second) if value is not None]
    return min(known) if known else None


def open_ledger(path: str | Path | None, instance: PartitionInstance) -> Ledger | None:
    """The ledger at ``path`` for a co-exploration instance (None without a path).

    Raises
    ------
    InputError
        The instance has fixed capacities (there are no pairs to keep), or the file is refused
        (:class:`Ledger`).
    """
    if path is None:
        return None
    if not instance.co_exploration:
        raise InputError(
            "a pair ledger keeps the capacity decomposition of co-exploration, and this instance has fixed capacities",
            f"pair ledger {path}",
            "give candidate lists (e.g. capacities=cocco), or leave the ledger out",
        )
    return Ledger(path, instance)


def ledger_lock(path: str | Path | None) -> AbstractContextManager[None]:
    """Hold the pair ledger at ``path`` against other processes while a run works with it (nothing
    without a path; :func:`accelsched.filelock.exclusive`).

    A run reads its ledger once and writes it after every pair: a second process on the same file
    would overwrite the first one's pairs with its own (or the other way round), hours of proof lost.

    Raises
    ------
    InputError
        Another process, a proof still running or a merge, uses the ledger.
    """
    if path is None:
        return nullcontext()
    return exclusive(
        path,
        what="pair ledger",
        fix="wait for the run using it to finish, or give this run a copy of it and merge the two afterwards "
        "(python -m accelsched.bench.partition_tables merge)",
    )


def check_ledger(path: str | Path | None, instance: PartitionInstance) -> None:
    """Refuse, before a run's long first steps (its warm start, its heuristics), a ledger that
    :func:`open_ledger` refuses or that another process uses (:func:`ledger_lock`); the run's
    solve holds it later.

    Raises
    ------
    InputError
        The ledger is refused or in use.
    """
    with ledger_lock(path):
        open_ledger(path, instance)


def keep_final(ledger: Ledger | None, solution: PartitionSolution | None) -> None:
    """Offer a method's final partition to its ledger, written when it beats the ledger's incumbent.

    The models solve over the table the decomposition leaves, after the pairs, and may find a
    better partition than the one the pairs wrote; the next run should start from it. It is
    checked and evaluated here, as a ledger's incumbent is when read (an invalid one is left to the
    registry's check, which reports it)."""
    if ledger is None or solution is None:
        return
    try:
        check(ledger.instance, solution)
    except InfeasibleSolution:
        return
    value = objective(ledger.instance, solution, evaluate(ledger.instance, solution))
    if value < ledger.objective:
        ledger.offer(solution, value)
        ledger.save()
