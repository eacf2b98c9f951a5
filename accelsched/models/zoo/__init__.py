"""The workload zoo: every network used by the five papers, with real layer shapes.

Networks register themselves with :func:`register`; :func:`get` builds one by
name. Each entry records the published MAC count it is checked against (when a
public figure exists) and where its shapes come from.

The classic CNNs (:mod:`~accelsched.models.zoo.resnet`, ``vgg``, ``inception``,
``mobilenet``, ``squeezenet``, ``yolo``) are built at their standard input resolution
(224x224 unless noted) and end with their ImageNet classifier. Batch normalization, ReLU / ReLU6 / SiLU,
sigmoid, LRN, dropout and softmax cost no MACs and are not layers. The published
MAC counts that ``reference_gmac`` records count convolutions and fully connected
layers only (as torchvision's and the papers' figures do); the workloads' ``macs``
also count pooling windows and element-wise operations, a fraction of a percent.
"""

from __future__ import annotations

from accelsched.models.workload import Workload
from accelsched.models.zoo.catalog import ZooEntry, catalog, register

# Each network module registers its networks on import, in this order (the order of ``names()``).
# isort: off
from accelsched.models.zoo import (  # noqa: F401
    resnet,
    vgg,
    inception,
    mobilenet,
    squeezenet,
    yolo,
    defines,
    nas,
    randwire,
    set_ref,
    transformer,
)

# isort: on

__all__ = ["ZooEntry", "entries", "get", "names", "register"]


def entries() -> dict[str, ZooEntry]:
    """All registered networks by name, in registration order."""
    return catalog()


def names() -> list[str]:
    """Names of all zoo networks."""
    return list(entries())


def get(name: str, batch: int = 1) -> Workload:
    """Build the zoo network ``name`` at batch size ``batch``.

    Raises
    ------
    KeyError
        If no network has that name.
    """
    table = entries()
    if name not in table:
        raise KeyError(name)
    return table[name].build(batch)
