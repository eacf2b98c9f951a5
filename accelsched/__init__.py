"""accelsched: exact models and heuristics for scheduling DNNs on multi-core and tiled accelerators.

Layers
------
The package is built in layers; each imports only the layers below it, and import-linter
checks the order in CI (``[tool.importlinter]`` in ``pyproject.toml``; ``lint-imports``).
From the top:

``cli``
    The ``accelsched`` command.
``bench``
    Instance suites, the gap runner, one module per paper reproduction, tables and plots.
``registry``
    Finds every problem (``PROBLEM``), method (``METHODS``) and instance step (``STEPS``)
    in the modules of ``problems``, ``formulations`` and ``heuristics``; :func:`run_method`
    runs a method, times it, re-checks its solution and re-evaluates it. This is the only
    place where a heuristic's solution meets an exact model (as a warm start).
``formulations`` | ``heuristics``
    Exact models (MILP, CP-SAT, exact searches) and heuristics (SA, GA, DP, greedy rules).
    The two are independent: neither imports the other.
``problems``
    One module or subpackage per problem: its instance, solution, ``check`` and its
    evaluator, built from the cost model's primitives; and :class:`~accelsched.problems.Result`,
    which carries the evaluator's report.
``hardware``
    Accelerator specifications, TOML presets and the cost model's primitives
    (``hardware.cost``: the cost of a layer or part of one on a core, transfers,
    footprints, the :class:`~accelsched.hardware.cost.CostReport`); it knows no problem.
``models`` | ``solvers``
    Workloads (layers, DAGs, the zoo, ONNX import and export) and the solver layer
    (statuses, options, a backend-neutral linear model, the HiGHS / PuLP / Pyomo / CP-SAT
    adapters); independent of each other.
``logs`` | ``filelock`` | ``fingerprint`` | ``processes`` | ``entry``
    Small utilities.
``errors``
    The error types every layer raises.

Within each package, sibling modules import each other in one direction only (an
``acyclic_siblings`` contract). Imports inside functions are kept for optional heavy
backends (matplotlib, Dask, OR-Tools where a module is otherwise light), each with its reason.
"""

__version__ = "0.1.0"
