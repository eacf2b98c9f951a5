"""The shared analytical cost model: primitives and one evaluator per schedule family."""

from accelsched.hardware.cost.layer_cost import LayerCost, TileChoice, cache_info, clear_cache, layer_cost
from accelsched.hardware.cost.report import CostReport

__all__ = ["CostReport", "LayerCost", "TileChoice", "cache_info", "clear_cache", "layer_cost"]
