"""Cocco's partition problem, exact: the column MILP and CP-SAT models, the enumeration, column
generation with exact pricing, branch-and-price and the capacity decomposition with its ledger."""
