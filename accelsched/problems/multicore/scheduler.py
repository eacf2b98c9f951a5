"""Stream's list scheduler: from a layer-core allocation to a timed CN schedule.

The scheduler takes CNs one at a time from the set of *ready* CNs (all producers
scheduled, stack open) by the instance's priority:

* ``latency``: the CN whose inputs are available earliest (its producers'
  latest end; for a CN reading the network input, when the DRAM port would have
  streamed its rows in row order), then the shallower layer, then row order;
* ``memory``: the CN of the deepest layer (latest in the topological order),
  which consumes and frees the data its producers hold, then as for latency.

A CN is placed on its core after the core's previous CN (cores run their CNs in
the order they are scheduled). Before it, in this order:

* each producer on another core sends its output over the bus, once per
  destination core (first come, first served: the transfer takes the earliest
  gap of the bus after the producer ends);
* the network-input rows it reads are loaded through the DRAM port (earliest
  gap from cycle 0: inputs are prefetched);
* its layer's weights are loaded into the core's weight memory through the DRAM
  port unless resident. The weight memory holds layers first in, first out
  (FIFO): when the new weights do not fit, the oldest layers are evicted until
  they do, the others stay, and an evicted layer is loaded again only when a
  later CN of it needs it; the load then waits until the core has finished
  every CN scheduled on it so far. Weights that do not fit the weight memory at
  all are streamed in before each CN of their layer; at fused granularity such
  a layer is one CN (:attr:`~accelsched.problems.multicore.MulticoreInstance.whole_layers`),
  so they cross the DRAM port once.

  Stream's artifact (``MemoryManager.find_best_tensor_combination_to_evict_fast``
  in ``stream/classes/cost_model/memory_manager.py``) evicts, when a tensor does
  not fit a core's top memory, the stored tensors of lowest ``priority x size``
  first, where a tensor's priority is the number of CNs on that core still to
  use it, and drops a tensor as soon as its priority reaches 0. In a fused
  schedule, which runs the layers of a stack in topological order, the oldest
  weights on a core are those of its earliest layer, which has the fewest CNs
  left: FIFO evicts them first as well. The two differ when an older layer
  still has more CNs to run than a newer one; FIFO is kept here because it
  makes the residency of every load an interval that the checker, the CP-SAT
  model and the enumeration verify (rule 5 of :mod:`accelsched.problems.multicore`).

A CN of a sink layer writes its output back through the DRAM port after it ends;
so does a CN whose output is spilled (see :mod:`accelsched.problems.multicore`),
and each core with a consumer of it fetches it back (once, at the first request).
Every CN of a stack waits for the end of every CN of the earlier stacks.
"""

from __future__ import annotations

import bisect
import heapq
from collections import OrderedDict, defaultdict
from collections.abc import Mapping

from accelsched.problems.multicore.costs import cn_cost, offchip_cycles, transfer_cycles
from accelsched.problems.multicore.instance import MulticoreInstance, Priority
from accelsched.problems.multicore.solution import MulticoreSolution, OffChipAccess, Transfer

__all__ = ["list_schedule"]


class _Timeline:
    """Busy intervals of a unit-capacity resource (the bus or the DRAM port); requests fill the earliest gap."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def place(self, release: int, duration: int) -> int:
        """Book ``duration`` cycles at the earliest start >= ``release`` that overlaps nothing; return the start."""
        if duration <= 0:
            return release
        t = release
        j = bisect.bisect_right(self.ends, release)
        while j < len(self.starts) and t + duration > self.starts[j]:
            t = max(t, self.ends[j])
            j += 1
        self.starts.insert(j, t)
        self.ends.insert(j, t + duration)
        return t


class _ListScheduler:
    """One run of the list scheduler (see the module docstring)."""

    def __init__(self, instance: MulticoreInstance, allocation: Mapping[str, int], priority: Priority) -> None:
        self.instance = instance
        self.graph = instance.graph
        self.priority = priority
        missing = [n for n in instance.workload.names if n not in allocation]
        if missing:
            raise ValueError(f"list_schedule: layer {missing[0]!r} has no core in the allocation")
        self.allocation = dict(allocation)
        self.core_of = [allocation[cn.layer] for cn in self.graph.cns]
        n = len(self.graph.cns)
        self.start = [0] * n
        self.end = [0] * n
        self.core_free: dict[int, int] = defaultdict(int)
        self.bus, self.port = _Timeline(), _Timeline()
        self.transfers: dict[tuple[int, int], int] = {}  # (CN, core) -> end
        self.input_end: dict[int, int] = {}
        self.spill_end: dict[int, int] = {}
        self.fetches: dict[tuple[int, int], int] = {}  # (CN, core) -> end
        self.resident: dict[int, OrderedDict[str, int]] = defaultdict(OrderedDict)
        self.weight_ready: dict[tuple[str, int], int] = {}
        self.state_since: dict[int, int] = defaultdict(int)  # cycle from which a core's FIFO set is exact
        self.solution_transfers: list[Transfer] = []
        self.offchip: list[OffChipAccess] = []

    def _key(self, k: int, available: int) -> tuple[int, int, int]:
        cn = self.graph.cns[k]
        if self.priority is Priority.MEMORY:
            return (-cn.layer_index, available, cn.part)
        return (available, cn.layer_index, cn.part)

    def run(self) -> MulticoreSolution:
        graph = self.graph
        waiting = [len(p) for p in graph.predecessors]
        stacks = max(cn.stack for cn in graph.cns) + 1
        left = [0] * stacks
        for cn in graph.cns:
            left[cn.stack] += 1
        held: list[list[int]] = [[] for _ in range(stacks)]  # ready CNs of stacks not open yet
        current, barrier = 0, 0
        heap: list[tuple[tuple[int, int, int], int]] = []
        for cn in graph.cns:
            if waiting[cn.index] == 0:
                held[cn.stack].append(cn.index)
        self.input_estimate = self._input_estimate()
        while True:
            while current < stacks and left[current] == 0:
                current += 1
            if current == stacks:
                break
            for k in held[current]:
                heapq.heappush(heap, (self._key(k, max(barrier, self.input_estimate.get(k, 0))), k))
            held[current] = []
            while heap:
                _, k = heapq.heappop(heap)
                self._place(k, barrier)
                left[graph.cns[k].stack] -= 1
                for q in graph.successors[k]:
                    waiting[q] -= 1
                    if waiting[q] == 0:
                        if graph.cns[q].stack == current:
                            available = max([barrier, *(self.end[p] for p in graph.predecessors[q])])
                            heapq.heappush(heap, (self._key(q, available), q))
                        else:
                            held[graph.cns[q].stack].append(q)
            barrier = max(barrier, max(self.end[cn.index] for cn in graph.cns if cn.stack == current))
        names = [cn.name for cn in graph.cns]
        return MulticoreSolution(
            self.allocation, {names[k]: s for k, s in enumerate(self.start)}, tuple(self.solution_transfers),
            tuple(self.offchip),
        )  # fmt: skip

    def _input_estimate(self) -> dict[int, int]:
        """When each source CN's input rows would be loaded if the DRAM port streamed them in row order."""
        estimate, t = {}, 0
        for name in self.instance.workload.sources:
            for k in self.graph.by_layer[name]:
                t += offchip_cycles(self.instance, "input", k)
                estimate[k] = t
        return estimate

    def _place(self, k: int, barrier: int) -> None:
        """Schedule CN ``k``: its transfers, input and weight loads, itself, and its output store."""
        graph, core = self.graph, self.core_of[k]
        cn = graph.cns[k]
        ready = barrier
        for p in graph.predecessors[k]:
            if p in self.spill_end:
                ready = max(ready, self._fetch(p, core))
            else:
                ready = max(ready, self.end[p] if self.core_of[p] == core else self._transfer(p, core))
        if graph.input_rows[k] is not None:
            for j in graph.input_reads[k]:
                if j not in self.input_end:
                    s = self.port.place(0, offchip_cycles(self.instance, "input", j))
                    self.input_end[j] = s + offchip_cycles(self.instance, "input", j)
                    self.offchip.append(OffChipAccess("input", graph.cns[j].name, core, s))
                ready = max(ready, self.input_end[j])
        layer = self.instance.workload[cn.layer]
        if layer.kind.has_parameters and layer.weight_bytes > 0:
            ready = max(ready, self._weights(k, core))
        start = max(ready, self.core_free[core])
        self.start[k] = start
        self.end[k] = start + cn_cost(self.instance, k, core).duration_cycles
        self.core_free[core] = self.end[k]
        if cn.layer in self.instance.workload.sinks:
            s = self.port.place(self.end[k], offchip_cycles(self.instance, "output", k))
            self.offchip.append(OffChipAccess("output", cn.name, core, s))
        if self.instance.spills(cn.layer, core):
            duration = offchip_cycles(self.instance, "spill", k)
            s = self.port.place(self.end[k], duration)
            self.spill_end[k] = s + duration
            self.offchip.append(OffChipAccess("spill", cn.name, core, s))

    def _fetch(self, p: int, core: int) -> int:
        """End of the fetch of spilled CN ``p``'s output into ``core`` (booked at the first request)."""
        if (p, core) not in self.fetches:
            duration = offchip_cycles(self.instance, "fetch", p)
            s = self.port.place(self.spill_end[p], duration)
            self.fetches[p, core] = s + duration
            self.offchip.append(OffChipAccess("fetch", self.graph.cns[p].name, core, s))
        return self.fetches[p, core]

    def _transfer(self, p: int, core: int) -> int:
        """End of the transfer of CN ``p``'s output to ``core`` (booked on the bus at the first request)."""
        if (p, core) not in self.transfers:
            duration = transfer_cycles(self.instance, p)
            s = self.bus.place(self.end[p], duration)
            self.transfers[p, core] = s + duration
            self.solution_transfers.append(Transfer(self.graph.cns[p].name, core, s))
        return self.transfers[p, core]

    def _weights(self, k: int, core: int) -> int:
        """Cycle from which CN ``k``'s weights are in its core's weight memory (loading them if needed)."""
        cn = self.graph.cns[k]
        nbytes = self.instance.workload[cn.layer].weight_bytes
        duration = offchip_cycles(self.instance, "weights", k)
        if self.instance.streams_weights(cn.layer, core):
            s = self.port.place(self.core_free[core], duration)
            self.offchip.append(OffChipAccess("weights", cn.name, core, s))
            return s + duration
        fifo = self.resident[core]
        if cn.layer in fifo:
            return self.weight_ready[cn.layer, core]
        capacity = self.instance.weight_capacity_bytes(self.instance.accelerator.core(core))
        release = self.state_since[core]
        if sum(fifo.values()) + nbytes > capacity:
            while sum(fifo.values()) + nbytes > capacity:
                fifo.popitem(last=False)
            release = self.state_since[core] = max(release, self.core_free[core])
        s = self.port.place(release, duration)
        fifo[cn.layer] = nbytes
        self.weight_ready[cn.layer, core] = s + duration
        self.offchip.append(OffChipAccess("weights", cn.name, core, s))
        return s + duration


def list_schedule(
    instance: MulticoreInstance, allocation: Mapping[str, int], priority: Priority | None = None
) -> MulticoreSolution:
    """A timed schedule of ``instance`` for a core per layer, by Stream's list scheduling.

    Parameters
    ----------
    instance
        The instance (its CN graph, costs and stacks).
    allocation
        Core id of every layer (not checked here: :func:`~accelsched.problems.multicore.check.check` does).
    priority
        The scheduling priority; None uses the instance's.
    """
    return _ListScheduler(instance, allocation, priority or instance.priority).run()
