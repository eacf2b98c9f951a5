"""Where the co-exploration proofs kept in pair ledgers stand, and merging the ledgers of a divided proof:
the *ledger* and *merge* commands of :mod:`accelsched.bench.partition_tables`."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from accelsched.formulations.partition import capacity as partition_capacity
from accelsched.formulations.partition.ledger import Ledger, ledger_lock, open_ledger
from accelsched.formulations.partition.proof_params import ProofSettings
from accelsched.hardware import load_accelerator
from accelsched.models.registry import load_workload
from accelsched.problems.partition import PROBLEM
from accelsched.problems.partition_columns import ColumnSet
from accelsched.registry import make_instance
from accelsched.solvers import SolveOptions

__all__ = ["COEXPLORE_OPTIONS", "DESIGN_PRESETS", "ledger_name", "ledger_report", "merge_ledgers"]

COEXPLORE_OPTIONS = {"capacities": "cocco", "metric": "energy"}
"""The problem options of every co-exploration row (and of its ledger): Cocco's candidate ranges,
energy with alpha = 0.002."""

DESIGN_PRESETS = {"shared": "cocco-simba-shared", "separate": "cocco-simba-separate"}
"""The preset of each buffer design."""


def ledger_name(workload: str, design: str) -> str:
    """The pair ledger's file name of a row (a workload spec such as ``random:12:3`` made file-safe)."""
    return f"partition_coexplore_{re.sub(r'[^A-Za-z0-9_.-]', '-', workload)}_{design}.json"


def ledger_report(workloads: Sequence[str], designs: Sequence[str], ledger_dir: Path) -> str:
    """Where each co-exploration proof kept in ``ledger_dir`` stands (the *ledger* table).

    Per workload and design: the incumbent and the bound of the whole problem, then each pair of
    candidates still open or solved by some run: its floor, its bound :math:`L(p)`, its cutoff
    :math:`c(p)`, how far :math:`L(p)` is short of :math:`c(p)` (the pair settles when it reaches
    it), its ceiling :math:`C(p)` (its root's bound cannot pass it; "open, tree" when it is below
    :math:`c(p)`: only the pair's branch-and-price can settle it), the seconds spent on it, the
    subgraphs kept for its next solve and the open pairs within it that its root may settle.

    Raises
    ------
    InputError
        A ledger is refused (:class:`~accelsched.formulations.partition.ledger.Ledger`).
    """
    lines = []
    for design in designs:
        acc = load_accelerator(DESIGN_PRESETS[design])
        for name in workloads:
            path = ledger_dir / ledger_name(name, design)
            if not path.exists():
                lines.append(f"{name} ({design}): no ledger at {path}")
                continue
            instance = make_instance(PROBLEM, load_workload(name), acc, COEXPLORE_OPTIONS)
            nothing = ColumnSet((), False, 0, 0)  # no pair is solved here
            decomposition = partition_capacity.CapacityDecomposition(
                instance, None, SolveOptions(), nothing, ProofSettings(), open_ledger(path, instance)
            )
            states = decomposition.states()
            still = [state for state in states if state.open]
            found = decomposition.incumbent
            incumbent = "no incumbent" if found is None else (
                f"incumbent {decomposition.upper:.7g} ({found.act_capacity_bytes // 1024}/"
                f"{found.weight_capacity_bytes // 1024} KB)"
            )  # fmt: skip
            lines.append(
                f"{name} ({design}): {incumbent}, bound {decomposition.bound():.7g}, {len(still)} of "
                f"{len(states)} pairs open, {sum(state.seconds for state in states):.0f} s of pair solves"
                + ("" if found is None or still else f"; {_proven_text(decomposition)}")
            )
            lines.append(f"  {'pair KB':<12}{'floor':>14}{'bound L(p)':>16}{'cutoff c(p)':>16}{'short by':>10}"
                         f"{'ceiling C(p)':>16}{'seconds':>10}{'subgraphs':>11}{'within':>8}  state")  # fmt: skip
            for state in states:
                if state.open or state.seconds > 0:
                    short = "-" if math.isinf(state.cutoff) else f"{(state.cutoff - state.lower) / state.cutoff:.2%}"
                    ceiling = "-" if math.isinf(state.ceiling) else f"{state.ceiling:.7g}"
                    condition = "open, tree" if state.tree_only else "open"
                    lines.append(
                        f"  {f'{state.act_bytes // 1024}/{state.weight_bytes // 1024}':<12}{state.floor:>14.7g}"
                        f"{state.lower:>16.7g}{state.cutoff:>16.7g}{short:>10}{ceiling:>16}{state.seconds:>10.0f}"
                        f"{state.subgraphs:>11}{state.within:>8}  {condition if state.open else 'settled'}"
                    )
    return "\n".join(lines)


def _proven_text(decomposition: partition_capacity.CapacityDecomposition) -> str:
    r"""What a ledger whose pairs are all settled proves: its incumbent is optimal up to the proof's
    tolerance, by which its bound (the least settled floor) may lie below it.

    A pair settles when its bound passes its cutoff :math:`c(p)` less the pairs' tolerance: one
    step of a whole-bytes metric, else :meth:`ColumnGenerationParams.proof_tolerance
    <accelsched.formulations.partition.colgen_params.ColumnGenerationParams.proof_tolerance>` at :math:`c(p)`.
    Its floor :math:`\kappa(p) + \alpha L(p)` is then at most :math:`\alpha` below
    :math:`U`, or :math:`\alpha \, n \epsilon c(p) \le n \epsilon U` (as :math:`\alpha c(p) \le U`).
    """
    upper = decomposition.upper
    alpha = decomposition.instance.alpha
    colgen = decomposition.settings.params.colgen
    tolerance = alpha if decomposition.whole_bytes else colgen.proof_tolerance(decomposition.instance.n_layers, upper)
    below = upper - decomposition.bound()
    return (
        f"proven optimal (every pair settled): the bound is {below / upper:.4%} below the incumbent, "
        f"the proof's tolerance {tolerance / upper:.4%}"
    )


def merge_ledgers(
    workloads: Sequence[str], designs: Sequence[str], ledger_dir: Path, from_dir: Path, base_dir: Path | None
) -> str:
    """Merge the pair ledgers of ``from_dir`` into those of ``ledger_dir`` (the *merge* command).

    A proof divided between runs, each from a copy of ``base_dir``'s ledgers (processes or machines
    solving different pairs), is put back together: per workload and design,
    :meth:`~accelsched.formulations.partition.ledger.Ledger.merge` takes the pairs the other run
    solved beyond the base and its partition when better. The ledgers are written once every merge
    has been accepted (none when one is refused), each never half-written. Without ``base_dir`` (or
    without a base ledger there), every pair of the other ledger counts as solved by its run.
    Both ledgers of a merge are held against other processes while it runs (a proof still writing
    either is refused). Returns one line per workload and design.

    Raises
    ------
    InputError
        A ledger is refused, is in use, or is for another instance or did not start from its base.
    """
    lines, merged = [], []
    accelerators = {design: load_accelerator(DESIGN_PRESETS[design]) for design in designs}
    with ExitStack() as held:  # every ledger merged is held until all are written
        for design, name in itertools.product(designs, workloads):
            file = ledger_name(name, design)
            if not (from_dir / file).exists():
                lines.append(f"{name} ({design}): no ledger at {from_dir / file}, nothing merged")
                continue
            instance = make_instance(PROBLEM, load_workload(name), accelerators[design], COEXPLORE_OPTIONS)
            held.enter_context(ledger_lock(ledger_dir / file))
            held.enter_context(ledger_lock(from_dir / file))
            into, other = Ledger(ledger_dir / file, instance), Ledger(from_dir / file, instance)
            base = None if base_dir is None or not (base_dir / file).exists() else Ledger(base_dir / file, instance)
            taken = into.merge(other, base)
            merged.append(into)
            pairs = ", ".join(f"{act // 1024}/{weight // 1024}" for act, weight in taken) or "none"
            count = f"{len(taken)} pair{'' if len(taken) == 1 else 's'}"
            lines.append(
                f"{name} ({design}): {count} taken from {from_dir / file} (KB: {pairs}); incumbent {into.objective:.7g}"
            )
        for into in merged:  # each merge checked first: a refused one writes none of them
            into.save()
    return "\n".join(lines)
