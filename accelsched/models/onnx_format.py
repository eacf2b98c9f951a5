"""What the ONNX import and export share: the metadata format of files written by
:func:`~accelsched.models.onnx_export.to_onnx`, element-type precisions and window geometry."""

from __future__ import annotations

from onnx import TensorProto

__all__ = [
    "DEFAULT_BITS",
    "ELEMENT_BITS",
    "FORMAT_PROP",
    "FORMAT_VERSION",
    "META_KEY",
    "META_KEYS",
    "token_grid",
    "window_extent",
]

META_KEY = "accelsched"
"""Key of the JSON object in a node's ``doc_string`` holding what ONNX cannot express."""

FORMAT_PROP = "accelsched.format"
"""Model ``metadata_props`` key marking a file written by :func:`~accelsched.models.onnx_export.to_onnx`."""

FORMAT_VERSION = "1"
"""Version of the metadata format; a file of another version is refused."""

DEFAULT_BITS = 8
"""Precision of a tensor whose element type is unknown."""

ELEMENT_BITS: dict[int, int] = {
    getattr(TensorProto, name): bits
    for name, bits in (
        ("FLOAT", 32), ("DOUBLE", 64), ("FLOAT16", 16), ("BFLOAT16", 16),
        ("INT8", 8), ("UINT8", 8), ("INT16", 16), ("UINT16", 16), ("INT32", 32), ("UINT32", 32),
        ("INT64", 64), ("UINT64", 64), ("BOOL", 8), ("INT4", 4), ("UINT4", 4), ("INT2", 2), ("UINT2", 2),
        ("FLOAT8E4M3FN", 8), ("FLOAT8E4M3FNUZ", 8), ("FLOAT8E5M2", 8), ("FLOAT8E5M2FNUZ", 8),
        ("FLOAT8E8M0", 8), ("FLOAT4E2M1", 4),
    )
    if hasattr(TensorProto, name)
}  # fmt: skip
"""Bits per element of the ONNX tensor element types."""

META_KEYS = frozenset({"input_bits", "weight_bits", "output_bits", "psum_bits", "padding", "kind", "dilation", "grid"})
"""Keys the metadata object of a layer node may hold."""


def token_grid(tokens: int, height: int, width: int) -> tuple[int, int]:
    """``(OY, OX)`` of ``tokens`` positions read from a ``height x width`` map.

    The tokens keep the producer's layout when they are its spatial positions
    (e.g. the patches of a vision transformer); otherwise they form one row.
    """
    return (height, width) if height * width == tokens else (1, tokens)


def window_extent(size: int, dilation: int) -> int:
    """Rows (or columns) of the input a window of ``size`` taps with ``dilation`` spans."""
    return (size - 1) * dilation + 1
