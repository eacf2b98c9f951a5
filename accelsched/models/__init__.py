"""DNN workloads: layers, DAGs, the zoo, ONNX import/export and random DAGs."""

from accelsched.models.builder import NetBuilder, Tensor
from accelsched.models.layer import LOOP_DIMS, Layer, OpKind
from accelsched.models.workload import Workload

__all__ = ["LOOP_DIMS", "Layer", "NetBuilder", "OpKind", "Tensor", "Workload", "load_onnx", "to_onnx"]


def __getattr__(name: str) -> object:
    """Import the ONNX front end lazily (``import onnx`` takes a while)."""
    if name in ("load_onnx", "to_onnx"):
        from accelsched.models import onnx_io

        return getattr(onnx_io, name)
    raise AttributeError(f"module 'accelsched.models' has no attribute {name!r}")
