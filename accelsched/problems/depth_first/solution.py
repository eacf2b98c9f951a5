"""The depth-first solution: stacks of consecutive layers, each with a tile size and an overlap mode."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DepthFirstSolution", "OverlapMode", "Stack", "Strategy", "parse_tile"]


class OverlapMode(enum.Enum):
    """How the overlap between neighbouring tiles is handled."""

    FULLY_RECOMPUTE = "fully-recompute"
    H_CACHED = "h-cached"
    FULLY_CACHED = "fully-cached"

    @property
    def caches_x(self) -> bool:
        """Whether the horizontal overlap (along a row of tiles) is cached."""
        return self is not OverlapMode.FULLY_RECOMPUTE

    @property
    def caches_y(self) -> bool:
        """Whether the vertical overlap (between rows of tiles) is cached."""
        return self is OverlapMode.FULLY_CACHED

    @classmethod
    def parse(cls, text: str) -> OverlapMode:
        """The mode called ``text``; ``ValueError`` naming the three modes otherwise."""
        for mode in cls:
            if mode.value == text:
                return mode
        names = ", ".join(m.value for m in cls)
        raise ValueError(f"unknown overlap mode {text!r}; modes are {names}")


@dataclass(frozen=True)
class Strategy:
    """Tile size (of the stack's last output, in pixels) and overlap mode of one stack."""

    tile_x: int
    tile_y: int
    mode: OverlapMode

    def __post_init__(self) -> None:
        for name in ("tile_x", "tile_y"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"strategy: {name} must be a positive integer, got {value!r}")
        if not isinstance(self.mode, OverlapMode):
            raise ValueError(f"strategy: mode must be an OverlapMode, got {self.mode!r}")

    def __str__(self) -> str:
        return f"{self.tile_x}x{self.tile_y} {self.mode.value}"

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {"tile_x": self.tile_x, "tile_y": self.tile_y, "mode": self.mode.value}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Strategy:
        """Inverse of :meth:`to_dict`; ``ValueError`` naming the bad field."""
        try:
            return cls(int(data["tile_x"]), int(data["tile_y"]), OverlapMode.parse(str(data["mode"])))
        except KeyError as exc:
            raise ValueError(f"strategy: field {exc.args[0]!r} is missing") from None
        except TypeError:
            raise ValueError(f"strategy: expected an object with tile_x, tile_y, mode, got {data!r}") from None


@dataclass(frozen=True)
class Stack:
    """Consecutive layers fused into one stack, with their strategy."""

    layers: tuple[str, ...]
    strategy: Strategy

    def __post_init__(self) -> None:
        object.__setattr__(self, "layers", tuple(self.layers))
        if not self.layers:
            raise ValueError("stack: field layers is empty")

    @property
    def last(self) -> str:
        """The stack's last layer, whose output is tiled."""
        return self.layers[-1]

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {"layers": list(self.layers), **self.strategy.to_dict()}


@dataclass(frozen=True)
class DepthFirstSolution:
    """The stacks, in execution order."""

    stacks: tuple[Stack, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "stacks", tuple(self.stacks))
        if not self.stacks:
            raise ValueError("depth-first solution: field stacks is empty")

    def to_dict(self) -> dict[str, Any]:
        """Plain data (``{"stacks": [{"layers": [...], "tile_x":, "tile_y":, "mode":}, ...]}``)."""
        return {"stacks": [s.to_dict() for s in self.stacks]}

    @classmethod
    def from_dict(cls, data: Any) -> DepthFirstSolution:
        """Inverse of :meth:`to_dict`; ``ValueError`` naming the bad field."""
        if not isinstance(data, Mapping) or not isinstance(data.get("stacks"), list):
            raise ValueError("depth-first solution: expected an object with a list 'stacks'")
        stacks = []
        for i, item in enumerate(data["stacks"]):
            if not isinstance(item, Mapping) or not isinstance(item.get("layers"), list):
                raise ValueError(f"depth-first solution: stacks[{i}] needs a list 'layers'")
            try:
                stacks.append(Stack(tuple(str(n) for n in item["layers"]), Strategy.from_dict(item)))
            except ValueError as exc:
                raise ValueError(f"depth-first solution: stacks[{i}]: {exc}") from None
        return cls(tuple(stacks))

    def describe(self) -> str:
        """One line per stack."""
        return "\n".join(
            f"stack {i}: {s.layers[0]}..{s.last} ({len(s.layers)} layers) {s.strategy}"
            for i, s in enumerate(self.stacks)
        )



def parse_tile(text: str) -> tuple[int, int]:
    """``"TXxTY"`` as two positive integers; ``ValueError`` saying how to write it."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if match is None:
        raise ValueError(f"bad tile {text!r}; write TXxTY, e.g. 60x72")
    tile_x, tile_y = int(match[1]), int(match[2])
    if tile_x < 1 or tile_y < 1:
        raise ValueError(f"bad tile {text!r}: both sizes must be at least 1")
    return tile_x, tile_y
