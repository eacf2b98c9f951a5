"""accelsched: exact models and heuristics for scheduling DNNs on multi-core and tiled accelerators."""

__version__ = "0.1.0"
