"""Building an atomic instance from a workload, an accelerator and the ``--option`` pairs."""

from __future__ import annotations

from collections.abc import Mapping

from accelsched.errors import InputError
from accelsched.hardware.spec import Accelerator
from accelsched.models.workload import Workload
from accelsched.problems.atomic.atoms import atomize, clip_size, split_size
from accelsched.problems.atomic.dag import AtomSize, Partition
from accelsched.problems.atomic.instance import AtomicInstance
from accelsched.problems.atomic.sizes import SizeTable, format_sizes, instance_size_table, parse_sizes

__all__ = [
    "OPTIONS",
    "SOLVED_SIZES",
    "engines_option",
    "make_instance",
    "size_step_table",
    "sized_options",
    "validate_options",
]

OPTIONS: tuple[str, ...] = ("atom", "atoms", "engines", "mapping", "objective", "sizes")
"""The ``--option`` keys of :func:`make_instance`."""

SOLVED_SIZES: tuple[str, ...] = ("exact", "sa")
"""Values of ``atoms=`` whose sizes a solver chooses, in a step before the instance (``sizes=`` then carries them)."""


def engines_option(accelerator: Accelerator, options: Mapping[str, str]) -> int:
    """The ``engines=N`` option (default: every core of ``accelerator``).

    Raises
    ------
    InputError
        Not an integer in ``1 .. accelerator.n_cores``.
    """
    text = options.get("engines", str(accelerator.n_cores))
    if not text.isdigit() or not 1 <= int(text) <= accelerator.n_cores:
        raise InputError(f"engines={text!r}", "--option engines",
                         f"give an integer in 1..{accelerator.n_cores} (the accelerator's cores)")  # fmt: skip
    return int(text)


def validate_options(workload: Workload, accelerator: Accelerator, options: Mapping[str, str]) -> int:
    """Check what :func:`make_instance` and the size steps both need, and return the number of engines.

    Raises
    ------
    InputError
        Unknown option, a batch of 0, ``engines`` not in 1..cores, both ``atom=`` and ``atoms=``, an unknown
        ``atoms=`` value.
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise InputError(f"unknown option(s) {unknown}", "--option", f"atomic options: {', '.join(OPTIONS)}")
    if workload.batch < 1:
        raise InputError(f"batch {workload.batch}", "--batch", "use a batch of at least 1")
    n_engines = engines_option(accelerator, options)
    if "atom" in options and "atoms" in options:
        raise InputError("both atom= and atoms= given", "--option", "give one atom size for all layers or a method")
    mode = options.get("atoms", "even")
    if mode not in ("even", *SOLVED_SIZES):
        raise InputError(f"atoms={mode!r}", "--option atoms", "use even, exact or sa")
    return n_engines


def make_instance(workload: Workload, accelerator: Accelerator, options: Mapping[str, str]) -> AtomicInstance:
    """The atomic instance of ``workload`` on ``accelerator``.

    Options: the atom sizes, one of ``atoms=even`` (the default: each layer split evenly over the engines, see
    :func:`accelsched.problems.atomic.atoms.split_size`), ``atom=h,w,ci,co`` (every layer, clipped to it) or
    ``sizes=layer:h,w,ci,co;...`` (one size per layer, see :mod:`accelsched.problems.atomic.sizes`);
    ``atoms=exact|sa`` (the sizes of least atom-cycle variance, exactly or by Algorithm 1's annealing) need a
    solver: :func:`accelsched.registry.make_instance` runs that step and passes its sizes as ``sizes=`` with
    ``atoms=exact|sa`` kept, which the instance's ``meta["atoms"]`` records. ``engines=N`` (default: every core);
    ``objective=latency|energy|edp``; ``mapping=assignment|zigzag`` (how the round methods place atoms).

    Raises
    ------
    InputError
        Unknown option, bad atom size, ``atoms=exact|sa`` without ``sizes=`` (the registry's ``make_instance``
        chooses them), ``engines`` not in 1..cores, a batch of 0, an accelerator whose engines are not KC- or
        YX-partitioned.
    """
    n_engines = validate_options(workload, accelerator, options)
    partition = Partition.of(accelerator.cores[0])
    mode = options.get("atoms", "even")
    if "sizes" in options:
        if "atom" in options or (mode == "even" and "atoms" in options):
            raise InputError("sizes= given with atom= or atoms=even", "--option sizes", "give one way of sizing atoms")
        sizes = _layer_sizes(workload, parse_sizes(options["sizes"]))
        label = mode if "atoms" in options else "sizes"
    elif mode in SOLVED_SIZES:
        raise InputError(f"atoms={mode} needs a solver to choose the sizes", "--option atoms",
                         "build the instance with accelsched.registry.make_instance, which runs that step")  # fmt: skip
    elif "atom" in options:
        size = AtomSize.parse(options["atom"])
        sizes = {layer.name: clip_size(layer, size) for layer in workload}
        label = "atom"
    else:
        sizes = {layer.name: split_size(layer, accelerator, n_engines) for layer in workload}
        label = "even"
    dag = atomize(workload, accelerator, sizes)
    meta = {"workload": workload.name, "accelerator": accelerator.name, "partition": partition.value, "atoms": label}
    objective_name, mapping = options.get("objective", "latency"), options.get("mapping", "assignment")
    return AtomicInstance(dag, n_engines, accelerator, workload, tuple(sizes.items()), objective_name, mapping, meta)


def _layer_sizes(workload: Workload, sizes: dict[str, AtomSize]) -> dict[str, AtomSize]:
    """``sizes`` in workload order.

    Raises
    ------
    InputError
        A layer without a size, or a size for a layer the workload does not have.
    """
    missing = [layer.name for layer in workload if layer.name not in sizes]
    extra = sorted(set(sizes) - set(workload.names))
    if missing or extra:
        raise InputError(f"sizes= misses layers {missing[:5]} or names unknown layers {extra[:5]}", "--option sizes",
                         "give one layer:h,w,ci,co item per layer of the workload")  # fmt: skip
    return {layer.name: sizes[layer.name] for layer in workload}


def size_step_table(workload: Workload, accelerator: Accelerator, options: Mapping[str, str]) -> SizeTable:
    """The candidates a size step (``atoms=exact|sa``) chooses from, after the checks of :func:`validate_options`
    (:func:`accelsched.problems.atomic.sizes.instance_size_table`).

    Raises
    ------
    InputError
        What :func:`validate_options` raises, or ``sizes=`` given as well.
    """
    n_engines = validate_options(workload, accelerator, options)
    if "sizes" in options:
        raise InputError(f"sizes= given with atoms={options.get('atoms')}", "--option sizes",
                         "give the sizes, or let atoms=exact|sa choose them")  # fmt: skip
    return instance_size_table(workload, accelerator, n_engines)


def sized_options(options: Mapping[str, str], sizes: Mapping[str, AtomSize]) -> dict[str, str]:
    """``options`` with the sizes a step chose as ``sizes=`` (``atoms=`` kept, for the instance's ``meta``)."""
    return {**options, "sizes": format_sizes(sizes)}
