"""Layer-core allocation and CN scheduling on a heterogeneous multi-core (Stream).

Instance
--------
A workload, a multi-core accelerator whose cores talk over a bus (cores of
different dataflows, and typically a SIMD core for pooling and element-wise
layers), the granularity (``layer``: one computation node (CN) per layer;
``fused``: CNs of ``rows_per_cn`` output rows, see
:mod:`accelsched.hardware.cost.cn_graph`), the layer stacks (every CN of a stack
finishes before any CN of the next one starts; one stack by default), the cores
allowed per operator kind (by default those whose ``supported`` kinds hold it),
the priority of the list scheduler (``latency`` or ``memory``) and the objective
(``latency``, ``energy``, ``edp`` or ``memory``, the peak on-chip footprint).

Solution
--------
The core of every layer (all CNs of a layer run on its core) and the start cycle
of every activity:

* every CN;
* every *transfer* on the bus: the output of a CN sent to another core that has a
  consumer of it (once per destination core);
* every *off-chip access* on the DRAM port: ``input`` (the network-input rows a
  CN of a source layer newly needs), ``weights`` (a layer's weights loaded into
  its core's weight memory; when they do not fit that memory they are streamed
  in again for every CN, and at fused granularity such a layer is one CN, see
  :attr:`MulticoreInstance.whole_layers`), ``output`` (a CN of a sink layer written back),
  ``spill`` (a CN's output written to DRAM because it cannot stay on chip, see
  below) and ``fetch`` (a spilled output read back into a consumer's core, once
  per core; its ``core`` is the destination).

*Spilled activations.* The output of a layer that is not fused with its
consumers (at layer granularity, every layer; at fused granularity, a layer
alone in its stack, or one with a consumer in a later stack)
goes through DRAM when the whole tensor exceeds the activation memory of the
core computing it (the capacity of that core's top level of operand O): Stream's
layer-by-layer baseline pays for its large feature maps there, which a fused
stack, whose CNs hold a few rows each, does not.

Durations are not part of the solution: the shared cost model gives them
(:mod:`accelsched.problems.multicore.costs`; the evaluator is :mod:`accelsched.problems.multicore.evaluate`).

Rules checked by :func:`check`
(:mod:`accelsched.problems.multicore.check`):

1. every layer has one core, allowed for its operator kind;
2. every CN has a start cycle >= 0; the CNs of a core do not overlap; the
   transfers do not overlap on the bus; the off-chip accesses do not overlap on
   the DRAM port;
3. a CN starts after each of its producer CNs: after its end on the same core,
   after the end of the transfer of its output to the consumer's core otherwise,
   after the end of the fetch of it into the consumer's core when it is spilled;
   a transfer starts after its CN ends, goes to a core other than the CN's that
   has a consumer of it, and exists once;
4. a CN of a source layer starts after the input loads of the rows it reads; an
   output store or a spill starts after its CN ends, a fetch after the spill
   ends, into a core with a consumer of it; each exists once (a spill and a
   fetch exactly where outputs are spilled);
5. a CN with weights starts after the end of the latest load of its layer's
   weights on its core that started before it; the loads resident on a core
   (from a load's start to the end of the last CN it serves) never exceed the
   capacity of the core's weight memory; weights that do not fit alone are
   streamed: one load per CN, just for that CN;
6. every CN of a stack starts after every CN of the earlier stacks ends.
"""

from accelsched.problems.multicore.check import CheckedSchedule, check
from accelsched.problems.multicore.costs import CNCost, cn_cost, offchip_bytes, offchip_cycles, transfer_cycles
from accelsched.problems.multicore.evaluate import Activity, MulticoreEvaluation, evaluate, evaluate_schedule, objective
from accelsched.problems.multicore.instance import OBJECTIVES, MulticoreInstance, Priority
from accelsched.problems.multicore.options import OPTIONS, auto_stacks, make_instance
from accelsched.problems.multicore.problem import PROBLEM
from accelsched.problems.multicore.scheduler import list_schedule
from accelsched.problems.multicore.solution import ACCESS_KINDS, MulticoreSolution, OffChipAccess, Transfer

__all__ = [
    "ACCESS_KINDS",
    "OBJECTIVES",
    "OPTIONS",
    "PROBLEM",
    "Activity",
    "CNCost",
    "CheckedSchedule",
    "MulticoreEvaluation",
    "MulticoreInstance",
    "MulticoreSolution",
    "OffChipAccess",
    "Priority",
    "Transfer",
    "auto_stacks",
    "check",
    "cn_cost",
    "evaluate",
    "evaluate_schedule",
    "list_schedule",
    "make_instance",
    "objective",
    "offchip_bytes",
    "offchip_cycles",
    "transfer_cycles",
]
