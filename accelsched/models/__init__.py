"""DNN workloads: layers, DAGs, the zoo, ONNX import/export and random DAGs."""

from accelsched.models.builder import NetBuilder, Tensor
from accelsched.models.layer import LOOP_DIMS, Layer, OpKind
from accelsched.models.workload import Workload

__all__ = ["LOOP_DIMS", "Layer", "NetBuilder", "OpKind", "Tensor", "Workload", "load_onnx", "to_onnx"]


def __getattr__(name: str) -> object:
    """Import the ONNX front end lazily (``import onnx`` takes a while)."""
    if name == "load_onnx":
        from accelsched.models.onnx_import import load_onnx  # onnx is heavy: imported on first use

        return load_onnx
    if name == "to_onnx":
        from accelsched.models.onnx_export import to_onnx  # onnx is heavy: imported on first use

        return to_onnx
    raise AttributeError(f"module 'accelsched.models' has no attribute {name!r}")
