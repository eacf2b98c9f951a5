"""Cocco's partition problem, heuristic: Cocco's GA, SA, Halide's greedy and Irregular-NN's DP over one
search space of cuts and capacities."""
