"""Exact models: one module per formulation, each a class with one method per constraint
family and a separate ``decode``, and the ``METHODS`` that run it."""
