"""Heuristics: the SA and GA loops written once, and the papers' algorithms on top of them.

* :mod:`~accelsched.heuristics.stopping`: stopping criteria (iterations, runtime,
  no improvement), combinable.
* :mod:`~accelsched.heuristics.anneal`: the simulated-annealing loop.
* :mod:`~accelsched.heuristics.genetic`: the genetic-algorithm loop.
* Graph partition and buffer sizing (Cocco): :mod:`~accelsched.heuristics.partition.ga`
  (``ga``), :mod:`~accelsched.heuristics.partition.sa` (``sa``),
  :mod:`~accelsched.heuristics.partition.greedy` (``greedy``) and
  :mod:`~accelsched.heuristics.partition.dp` (``dp``), on the genome, repairs and
  operators of :mod:`~accelsched.heuristics.partition.space` and
  :mod:`~accelsched.heuristics.partition.moves`.

Heuristics import no formulation; a heuristic's solution is a warm start for them.
"""
