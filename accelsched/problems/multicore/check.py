"""The checker of multicore schedules: the six rules of :mod:`accelsched.problems.multicore`."""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict
from collections.abc import Iterable

from accelsched.errors import InfeasibleSolution
from accelsched.problems.multicore.costs import cn_cost, offchip_cycles, transfer_cycles
from accelsched.problems.multicore.instance import MulticoreInstance
from accelsched.problems.multicore.solution import MulticoreSolution, OffChipAccess

__all__ = ["CheckedSchedule", "check", "peak_bytes"]


def _fail(rule: int, message: str) -> InfeasibleSolution:
    return InfeasibleSolution(f"rule {rule}: {message}")


def _no_overlap(rule: int, resource: str, intervals: Iterable[tuple[int, int, str]]) -> None:
    ordered = sorted(intervals)
    for (s0, e0, a), (s1, _, b) in itertools.pairwise(ordered):
        if s1 < e0:
            raise _fail(rule, f"{a} [{s0}, {e0}) and {b} (from {s1}) overlap on {resource}")


class CheckedSchedule:
    """A solution resolved against the instance's CN graph and verified rule by rule."""

    def __init__(self, instance: MulticoreInstance, solution: MulticoreSolution) -> None:
        self.instance = instance
        self.graph = instance.graph
        self.solution = solution
        self.core_of = self._allocation()
        self.start = self._starts()
        self.cost = [cn_cost(instance, k, self.core_of[k]) for k in range(len(self.graph.cns))]
        self.end = [s + c.duration_cycles for s, c in zip(self.start, self.cost, strict=True)]
        self.spilled = [instance.spills(cn.layer, self.core_of[cn.index]) for cn in self.graph.cns]
        self.spills: dict[int, tuple[int, int]] = {}
        self.fetches: dict[tuple[int, int], tuple[int, int]] = {}
        self.transfers: dict[tuple[int, int], tuple[int, int]] = {}
        self.inputs: dict[int, tuple[int, int]] = {}
        self.outputs: dict[int, tuple[int, int]] = {}
        self.weights: dict[int, list[tuple[int, int, int]]] = defaultdict(list)  # layer's first CN -> loads
        self._transfers()
        self._offchip()
        self._resources()
        self._precedence()
        self.residency = self._weights()
        self._stacks()

    def _allocation(self) -> list[int]:
        """Rule 1: every layer on one allowed core."""
        allocation = self.solution.allocation
        unknown = sorted(set(allocation) - set(self.instance.workload.names))
        if unknown:
            raise _fail(1, f"allocation names unknown layer {unknown[0]!r}")
        for name in self.instance.workload.names:
            if name not in allocation:
                raise _fail(1, f"layer {name!r} has no core")
            if allocation[name] not in self.instance.allowed_cores[name]:
                raise _fail(1, f"layer {name!r} is on core {allocation[name]}, allowed: "
                               f"{list(self.instance.allowed_cores[name])}")  # fmt: skip
        return [allocation[cn.layer] for cn in self.graph.cns]

    def _cn(self, name: str, where: str) -> int:
        if name not in self.graph.names:
            raise _fail(2, f"{where} names unknown CN {name!r} (expected layer:part)")
        return self.graph.names[name]

    def _starts(self) -> list[int]:
        """Rule 2: a start cycle >= 0 for every CN."""
        start = [-1] * len(self.graph.cns)
        for name, s in self.solution.starts.items():
            k = self._cn(name, "the CN starts")
            if s < 0:
                raise _fail(2, f"CN {name} starts at {s} < 0")
            start[k] = s
        missing = [cn.name for cn in self.graph.cns if start[cn.index] < 0]
        if missing:
            raise _fail(2, f"CN {missing[0]} has no start ({len(missing)} CNs missing)")
        return start

    def _transfers(self) -> None:
        """Rule 3 (transfers): after the CN, to another core holding a consumer, once."""
        for t in self.solution.transfers:
            p = self._cn(t.cn, "a transfer")
            if t.start < 0:
                raise _fail(2, f"transfer of {t.cn} starts at {t.start} < 0")
            if self.spilled[p]:
                raise _fail(3, f"the output of {t.cn} is spilled to DRAM (too large for core {self.core_of[p]}'s "
                               "activation memory): it is fetched, not sent over the bus")  # fmt: skip
            if (p, t.core) in self.transfers:
                raise _fail(3, f"the output of {t.cn} is sent to core {t.core} twice")
            if t.core == self.core_of[p] or all(self.core_of[q] != t.core for q in self.graph.successors[p]):
                raise _fail(3, f"transfer of {t.cn} to core {t.core}: no consumer of it runs there "
                               f"(it runs on core {self.core_of[p]})")  # fmt: skip
            if t.start < self.end[p]:
                raise _fail(3, f"transfer of {t.cn} starts at {t.start}, before the CN ends ({self.end[p]})")
            self.transfers[p, t.core] = (t.start, t.start + transfer_cycles(self.instance, p))

    def _offchip(self) -> None:
        """Rules 4 and 5 (which accesses exist): input loads, output stores, weight loads."""
        workload = self.instance.workload
        fetches = []
        for a in self.solution.offchip:
            k = self._cn(a.cn, f"an off-chip {a.kind} access")
            if a.start < 0:
                raise _fail(2, f"off-chip {a.kind} access of {a.cn} starts at {a.start} < 0")
            if a.kind == "fetch":
                fetches.append((k, a))
                continue
            if a.core != self.core_of[k]:
                raise _fail(4, f"off-chip {a.kind} access of {a.cn} is on core {a.core}, the CN on {self.core_of[k]}")
            span = (a.start, a.start + offchip_cycles(self.instance, a.kind, k))
            if a.kind == "weights":
                layer = workload[self.graph.cns[k].layer]
                if not (layer.kind.has_parameters and layer.weight_bytes > 0):
                    raise _fail(5, f"weights loaded for {a.cn}, but layer {layer.name!r} has none")
                self.weights[self.graph.by_layer[layer.name][0]].append((a.start, span[1], k))
                continue
            table = {"input": self.inputs, "output": self.outputs, "spill": self.spills}[a.kind]
            if k in table:
                raise _fail(4, f"two off-chip {a.kind} accesses for {a.cn}")
            if a.kind == "input" and self.graph.input_bytes(k) == 0:
                raise _fail(4, f"input loaded for {a.cn}, which reads no new network-input rows")
            if a.kind == "output" and self.graph.cns[k].layer not in workload.sinks:
                raise _fail(4, f"output of {a.cn} stored off-chip, but it is not a CN of a sink layer")
            if a.kind == "spill" and not self.spilled[k]:
                raise _fail(4, f"output of {a.cn} spilled, but it stays on chip (fused, or it fits core "
                               f"{self.core_of[k]}'s activation memory)")  # fmt: skip
            if a.kind in ("output", "spill") and a.start < self.end[k]:
                raise _fail(4, f"{a.kind} of {a.cn} from {a.start}, before the CN ends ({self.end[k]})")
            table[k] = span
        for k, a in fetches:
            self._fetch(k, a)
        for k, cn in enumerate(self.graph.cns):
            if self.graph.input_bytes(k) > 0 and k not in self.inputs:
                raise _fail(4, f"CN {cn.name} reads network-input rows that are never loaded")
            if cn.layer in workload.sinks and k not in self.outputs:
                raise _fail(4, f"the output of {cn.name} (a sink layer) is never stored off-chip")
            if self.spilled[k] and k not in self.spills:
                raise _fail(4, f"the output of {cn.name} does not fit core {self.core_of[k]}'s activation memory "
                               "and is never spilled")  # fmt: skip

    def _fetch(self, k: int, a: OffChipAccess) -> None:
        """Rule 4 (fetches): a spilled output read back after its spill, once per consumer core."""
        if not self.spilled[k]:
            raise _fail(4, f"output of {a.cn} fetched from DRAM, but it is never spilled")
        if (k, a.core) in self.fetches:
            raise _fail(4, f"output of {a.cn} fetched into core {a.core} twice")
        if all(self.core_of[q] != a.core for q in self.graph.successors[k]):
            raise _fail(4, f"output of {a.cn} fetched into core {a.core}, where none of its consumers runs")
        if a.start < self.spills[k][1]:
            raise _fail(4, f"fetch of {a.cn} into core {a.core} from {a.start}, before its spill ends "
                           f"({self.spills[k][1]})")  # fmt: skip
        self.fetches[k, a.core] = (a.start, a.start + offchip_cycles(self.instance, "fetch", k))

    def _resources(self) -> None:
        """Rule 2 (resources): no overlap on a core, on the bus, on the DRAM port."""
        per_core: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
        for k, cn in enumerate(self.graph.cns):
            per_core[self.core_of[k]].append((self.start[k], self.end[k], f"CN {cn.name}"))
        for core, intervals in per_core.items():
            _no_overlap(2, f"core {core}", intervals)
        names = [cn.name for cn in self.graph.cns]
        _no_overlap(2, "the bus", ((s, e, f"transfer of {names[p]}") for (p, _), (s, e) in self.transfers.items()))
        port = [(s, e, f"input load of {names[k]}") for k, (s, e) in self.inputs.items()]
        port += [(s, e, f"output store of {names[k]}") for k, (s, e) in self.outputs.items()]
        port += [(s, e, f"spill of {names[k]}") for k, (s, e) in self.spills.items()]
        port += [(s, e, f"fetch of {names[k]} into core {c}") for (k, c), (s, e) in self.fetches.items()]
        port += [(s, e, f"weight load for {names[k]}") for loads in self.weights.values() for s, e, k in loads]
        _no_overlap(2, "the DRAM port", port)

    def _precedence(self) -> None:
        """Rules 3 and 4 (order): producers, transfers and input loads before each CN."""
        names = [cn.name for cn in self.graph.cns]
        for p, q in self.graph.edges:
            if self.spilled[p]:
                span = self.fetches.get((p, self.core_of[q]))
                if span is None:
                    raise _fail(4, f"CN {names[q]} on core {self.core_of[q]} reads {names[p]}, which is spilled, "
                                   "but it is never fetched there")  # fmt: skip
                ready, what = span[1], f"the fetch of {names[p]} ends"
            elif self.core_of[p] == self.core_of[q]:
                ready, what = self.end[p], f"CN {names[p]} ends"
            else:
                span = self.transfers.get((p, self.core_of[q]))
                if span is None:
                    raise _fail(3, f"CN {names[q]} on core {self.core_of[q]} reads {names[p]} (core "
                                   f"{self.core_of[p]}), but no transfer brings it there")  # fmt: skip
                ready, what = span[1], f"the transfer of {names[p]} ends"
            if self.start[q] < ready:
                raise _fail(3, f"CN {names[q]} starts at {self.start[q]}, before {what} ({ready})")
        for q in range(len(self.graph.cns)):
            if self.graph.input_rows[q] is None:
                continue
            for j in self.graph.input_reads[q]:
                if self.start[q] < self.inputs[j][1]:
                    raise _fail(4, f"CN {names[q]} starts at {self.start[q]}, before the input load for "
                                   f"{names[j]} ends ({self.inputs[j][1]})")  # fmt: skip

    def _weights(self) -> dict[int, list[tuple[int, int, int]]]:
        """Rule 5: every CN served by a finished weight load; resident weights fit the weight memory."""
        residency: dict[int, list[tuple[int, int, int]]] = defaultdict(list)  # core -> (start, end, bytes)
        workload = self.instance.workload
        for name in workload.names:
            layer = workload[name]
            if not (layer.kind.has_parameters and layer.weight_bytes > 0):
                continue
            members = self.graph.by_layer[name]
            loads = sorted(self.weights.get(members[0], []))
            core = self.core_of[members[0]]
            streamed = self.instance.streams_weights(name, core)
            starts = [s for s, _, _ in loads]
            served: dict[int, int] = {}
            for k in members:
                cn = self.graph.cns[k]
                if streamed:
                    mine = [(s, e) for s, e, j in loads if j == k]
                    if len(mine) != 1:
                        raise _fail(5, f"the weights of {name!r} do not fit core {core}'s weight memory and are "
                                       f"streamed once per CN: CN {cn.name} has {len(mine)} loads")  # fmt: skip
                    if mine[0][1] > self.start[k]:
                        raise _fail(5, f"CN {cn.name} starts at {self.start[k]}, before its weights arrive "
                                       f"({mine[0][1]})")  # fmt: skip
                    continue
                i = bisect.bisect_right(starts, self.start[k]) - 1
                if i < 0:
                    raise _fail(5, f"CN {cn.name} starts at {self.start[k]} with no weights of {name!r} loaded")
                if loads[i][1] > self.start[k]:
                    raise _fail(5, f"CN {cn.name} starts at {self.start[k]}, before the weight load serving it "
                                   f"ends ({loads[i][1]})")  # fmt: skip
                served[i] = max(served.get(i, 0), self.end[k])
            if streamed:
                if len(loads) != len(members):
                    raise _fail(5, f"layer {name!r} has {len(loads)} weight loads for {len(members)} CNs")
                continue
            for i, (s, e, j) in enumerate(loads):
                if i not in served:
                    raise _fail(5, f"the weight load of {name!r} for {self.graph.cns[j].name} at {s} serves no CN")
                residency[core].append((s, max(e, served[i]), layer.weight_bytes))
        for core, intervals in residency.items():
            capacity = self.instance.weight_capacity_bytes(self.instance.accelerator.core(core))
            held, time = peak_bytes(intervals)
            if held > capacity:
                raise _fail(5, f"core {core} holds {held} B of weights at cycle {time}, more than its "
                               f"{capacity} B weight memory")  # fmt: skip
        return residency

    def _stacks(self) -> None:
        """Rule 6: a stack starts after the earlier stacks end."""
        done = 0
        stacks = sorted({cn.stack for cn in self.graph.cns})
        for s in stacks:
            members = [cn.index for cn in self.graph.cns if cn.stack == s]
            first = min(members, key=lambda k: self.start[k])
            if self.start[first] < done:
                raise _fail(6, f"CN {self.graph.cns[first].name} of stack {s} starts at {self.start[first]}, "
                               f"before the earlier stacks end ({done})")  # fmt: skip
            done = max(done, max(self.end[k] for k in members))


def peak_bytes(intervals: Iterable[tuple[int, int, int]]) -> tuple[int, int]:
    """Largest sum of ``bytes`` over intervals ``[start, end)`` alive at once, and the first cycle it is reached."""
    events = sorted((t, d) for s, e, b in intervals if e > s for t, d in ((s, b), (e, -b)))
    held = best = when = 0
    for i, (t, d) in enumerate(events):
        held += d
        if (i + 1 == len(events) or events[i + 1][0] != t) and held > best:
            best, when = held, t
    return best, when


def check(instance: MulticoreInstance, solution: MulticoreSolution) -> None:
    """Raise :class:`InfeasibleSolution` naming the first rule of :mod:`accelsched.problems.multicore` ``solution``
    breaks."""
    CheckedSchedule(instance, solution)
