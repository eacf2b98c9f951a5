"""Benchmarks: speed of the cost model, instance suites and gap runners."""
