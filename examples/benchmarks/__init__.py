"""Benchmarks of the ops: `python -m benchmarks [op ...]` runs benchmarks/bench_<op>.py on the GPU."""
