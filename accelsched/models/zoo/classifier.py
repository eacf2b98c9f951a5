"""The ImageNet classification head the zoo's networks end with."""

from __future__ import annotations

from accelsched.models.builder import NetBuilder, Tensor

__all__ = ["IMAGENET_CLASSES", "classifier"]

IMAGENET_CLASSES = 1000
"""ImageNet classes."""


def classifier(b: NetBuilder, x: Tensor, classes: int = IMAGENET_CLASSES) -> Tensor:
    """Global average pooling (``avgpool``) followed by the fully connected classifier (``fc``)."""
    return b.fc(b.global_pool(x, name="avgpool"), classes, name="fc")
