"""Exact models: one module per formulation, each a class with one method per constraint
family and a separate ``decode``; a module that solves a registered problem also exports the
``METHODS`` that run it (``ra_tree_tiles`` is a sub-model used by the RA-tree problem)."""
