"""DNN workloads: layers, DAGs, the zoo, ONNX import/export and random DAGs."""

from accelsched.models.builder import NetBuilder, Tensor
from accelsched.models.layer import LOOP_DIMS, Layer, OpKind
from accelsched.models.workload import Workload

__all__ = ["LOOP_DIMS", "Layer", "NetBuilder", "OpKind", "Tensor", "Workload"]
